package pebblestore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
)

// TestRangeDelsFlush: the memtable is flushed once maxMemRangeDels range
// deletions (of rows and of families, alternately) gather in it, and not
// before.
func TestRangeDelsFlush(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	flushes := func() int64 { return s.db.Metrics().Flush.Count }
	del := func(i int) {
		t.Helper()
		row := fmt.Appendf(nil, "r%05d", i)
		d := store.Mutation{Kind: store.DeleteRow, Table: "t", Row: row}
		if i%2 == 1 {
			d.Kind, d.Family = store.DeleteFamily, "f"
		}
		if err := s.Apply(ctx, []store.Mutation{
			{Kind: store.SetCell, Table: "t", Row: row, Family: "f", Qualifier: []byte("q"), Value: []byte("v")},
			d,
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := flushes()
	for i := range maxMemRangeDels - 1 {
		del(i)
	}
	if n := flushes() - before; n != 0 {
		t.Fatalf("%d flushes after %d row deletions", n, maxMemRangeDels-1)
	}
	del(maxMemRangeDels)
	for deadline := time.Now().Add(10 * time.Second); flushes() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no flush after %d row deletions", maxMemRangeDels)
		}
	}
	if got := s.rangeDels.Load(); got != 0 {
		t.Errorf("%d range deletions counted after the flush", got)
	}
}
