package undostore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/store/undostore"
)

func dump(t testing.TB, s store.Store) string {
	var b strings.Builder
	for _, table := range []string{"a", "b"} {
		err := s.ReadRows(context.Background(), table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			fmt.Fprintf(&b, "%s/%q", table, r.Key)
			for _, c := range r.Cells {
				fmt.Fprintf(&b, " %s:%q=%q", c.Family, c.Qualifier, c.Value)
			}
			b.WriteByte('\n')
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestRestore writes random batches after a snapshot and checks that
// Restore brings back exactly the content at the snapshot, several times.
func TestRestore(t *testing.T) {
	for _, backend := range []string{"mem", "bigtable"} {
		t.Run(backend, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				var inner store.Store = memstore.New()
				if backend == "bigtable" {
					inner = txnstore.New(bttestserver.Open(t))
				}
				s := undostore.New(inner)
				ctx := context.Background()
				for _, name := range []string{"a", "b"} {
					if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f", "g"}}); err != nil {
						rt.Fatal(err)
					}
				}
				key := rapid.SampledFrom([]string{"k1", "k2", "k3", "\x00", "\xff"})
				mutation := rapid.Custom(func(rt *rapid.T) store.Mutation {
					m := store.Mutation{
						Kind:      rapid.SampledFrom([]store.MutationKind{store.SetCell, store.DeleteCell, store.DeleteRow, store.DeleteFamily}).Draw(rt, "kind"),
						Table:     rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "table"),
						Row:       []byte(key.Draw(rt, "row")),
						Family:    rapid.SampledFrom([]string{"f", "g"}).Draw(rt, "family"),
						Qualifier: []byte(rapid.SampledFrom([]string{"", "q", "r"}).Draw(rt, "qualifier")),
						Value:     []byte(rapid.StringN(0, 3, -1).Draw(rt, "value")),
					}
					switch m.Kind {
					case store.DeleteRow:
						m.Family, m.Qualifier, m.Value = "", nil, nil
					case store.DeleteFamily:
						m.Qualifier, m.Value = nil, nil
					}
					return m
				})
				batch := rapid.SliceOfN(mutation, 1, 6)
				for _, b := range rapid.SliceOfN(batch, 0, 4).Draw(rt, "before") {
					if err := s.Apply(ctx, b); err != nil {
						rt.Fatal(err)
					}
				}
				saved := dump(t, s)
				sn, err := s.Snapshot(ctx)
				if err != nil {
					rt.Fatal(err)
				}
				if err := s.CreateTable(ctx, store.TableSpec{Name: "c", Families: []string{"f"}}); err == nil {
					rt.Fatal("CreateTable succeeded while a snapshot is held")
				}
				for round := range 2 {
					for _, b := range rapid.SliceOfN(batch, 1, 4).Draw(rt, fmt.Sprintf("after%d", round)) {
						if err := s.Apply(ctx, b); err != nil {
							rt.Fatal(err)
						}
					}
					if err := sn.Restore(ctx); err != nil {
						rt.Fatal(err)
					}
					if got := dump(t, s); got != saved {
						rt.Fatalf("after Restore:\n%s\nwant\n%s", got, saved)
					}
				}
				if err := sn.Release(); err != nil {
					rt.Fatal(err)
				}
				if err := sn.Restore(ctx); err == nil {
					rt.Fatal("Restore after Release succeeded")
				}
			})
		})
	}
}

// TestReadIndex: the inner store's local indexes are read through
// undostore, and a Restore (Applies of the undo images) keeps them.
func TestReadIndex(t *testing.T) {
	ctx := t.Context()
	s := undostore.New(memstore.New())
	ix := store.IndexSpec{Name: "byv", Family: "f", Qualifier: []byte("v")}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}, Indexes: []store.IndexSpec{ix}}); err != nil {
		t.Fatal(err)
	}
	set := func(row, v string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: "f", Qualifier: []byte("v"), Value: []byte(v)}
	}
	read := func(v string) string {
		var keys []string
		if err := store.ReadIndex(ctx, s, "t", "byv", store.RowSet{Keys: [][]byte{[]byte(v)}}, store.ReadOptions{}, func(r store.Row) bool {
			keys = append(keys, string(r.Key))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(keys, ",")
	}
	if err := s.Apply(ctx, []store.Mutation{set("a", "1"), set("b", "1")}); err != nil {
		t.Fatal(err)
	}
	sn, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, []store.Mutation{set("a", "2")}); err != nil {
		t.Fatal(err)
	}
	if got1, got2 := read("1"), read("2"); got1 != "b" || got2 != "a" {
		t.Fatalf("after the write: value 1 -> %q, 2 -> %q; want b, a", got1, got2)
	}
	if err := sn.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got1, got2 := read("1"), read("2"); got1 != "a,b" || got2 != "" {
		t.Fatalf("after Restore: value 1 -> %q, 2 -> %q; want a,b and none", got1, got2)
	}
}

// TestRestoreDeleteFamily: the undo of a DeleteFamily brings back every
// cell the family had — of a row that keeps other families, and of one
// it emptied — and the inner store's index entries on the family's cells.
func TestRestoreDeleteFamily(t *testing.T) {
	ctx := t.Context()
	s := undostore.New(memstore.New())
	ix := store.IndexSpec{Name: "byv", Family: "f", Qualifier: []byte("v")}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "a", Families: []string{"f", "g"}, Indexes: []store.IndexSpec{ix}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "b", Families: []string{"f", "g"}}); err != nil {
		t.Fatal(err)
	}
	cell := func(table, row, fam, q, v string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: table, Row: []byte(row), Family: fam, Qualifier: []byte(q), Value: []byte(v)}
	}
	delFam := func(table, row, fam string) store.Mutation {
		return store.Mutation{Kind: store.DeleteFamily, Table: table, Row: []byte(row), Family: fam}
	}
	if err := s.Apply(ctx, []store.Mutation{
		cell("a", "k1", "f", "v", "1"), cell("a", "k1", "f", "w", "x"), cell("a", "k1", "g", "", "y"),
		cell("a", "k2", "f", "v", "2"),
		cell("b", "k1", "g", "q", "z"),
	}); err != nil {
		t.Fatal(err)
	}
	saved := dump(t, s)
	indexed := func() string {
		var keys []string
		if err := store.ReadIndex(ctx, s, "a", "byv", store.All(), store.ReadOptions{}, func(r store.Row) bool {
			keys = append(keys, string(r.Key))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(keys, ",")
	}
	sn, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Release()
	for round := range 2 {
		batch := []store.Mutation{delFam("a", "k1", "f"), delFam("a", "k2", "f"), delFam("b", "k1", "g"), delFam("b", "k9", "f")}
		if round == 1 { // a family deleted, then written again, in one batch
			batch = append(batch, cell("a", "k1", "f", "new", "n"))
		}
		if err := s.Apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
		want := `a/"k1" g:""="y"` + "\n"
		if round == 1 {
			want = `a/"k1" f:"new"="n" g:""="y"` + "\n"
		}
		if got := dump(t, s); got != want {
			t.Fatalf("round %d: after the DeleteFamily batch:\n%s\nwant\n%s", round, got, want)
		}
		if got := indexed(); got != "" {
			t.Fatalf("round %d: index after the DeleteFamily batch: %q, want none", round, got)
		}
		if err := sn.Restore(ctx); err != nil {
			t.Fatal(err)
		}
		if got := dump(t, s); got != saved {
			t.Fatalf("round %d: after Restore:\n%s\nwant\n%s", round, got, saved)
		}
		if got := indexed(); got != "k1,k2" {
			t.Fatalf("round %d: index after Restore: %q, want k1,k2", round, got)
		}
	}
}

// TestExpiryRefused checks that undostore keeps no cell expiry, even over
// a store that does (its undo images would lose it): the conformance
// suite's refusal test, and the rest of it, over memstore.
func TestExpiryRefused(t *testing.T) {
	if !memstore.New().Capabilities().Expiry {
		t.Fatal("memstore has no cell expiry")
	}
	storetest.Run(t, func(*testing.T) store.Store { return undostore.New(memstore.New()) })
}
