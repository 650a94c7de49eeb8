package pebblestore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/pebblestore"
)

// BenchmarkReadIndex reads the 10,000 rows of one indexed value (every
// other row of 20,000) through the index, beside a scan of all 20,000.
func BenchmarkReadIndex(b *testing.B) {
	ctx := context.Background()
	s, err := pebblestore.Open(b.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ix := store.IndexSpec{Name: "byq", Family: "v", Qualifier: []byte("q")}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"v"}, Indexes: []store.IndexSpec{ix}}); err != nil {
		b.Fatal(err)
	}
	var muts []store.Mutation
	for i := 0; i < 20000; i++ {
		row := []byte(fmt.Sprintf("row%06d", i))
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: "t", Row: row, Family: "v", Qualifier: []byte("q"), Value: []byte{byte(i % 2)}},
			store.Mutation{Kind: store.SetCell, Table: "t", Row: row, Family: "v", Qualifier: []byte("name"), Value: []byte("some name of an item")})
		if len(muts) > 2000 {
			if err := s.Apply(ctx, muts); err != nil {
				b.Fatal(err)
			}
			muts = muts[:0]
		}
	}
	if err := s.Apply(ctx, muts); err != nil {
		b.Fatal(err)
	}
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := s.ReadIndex(ctx, "t", "byq", store.RowSet{Keys: [][]byte{{1}}}, store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil {
				b.Fatal(err)
			}
			if n != 10000 {
				b.Fatal(n)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
