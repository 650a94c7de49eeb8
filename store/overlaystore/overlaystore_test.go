package overlaystore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/overlaystore"
	"github.com/kvschema/kvschema/store/storetest"
)

// TestConformance runs the store suite on an overlay that never commits:
// every row read comes from the pending writes alone.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return overlaystore.New(memstore.New()) })
}

// committing commits its overlay after every other Apply, so reads merge
// rows of the base with pending writes over them.
type committing struct {
	*overlaystore.Store
	n atomic.Int64
}

func (c *committing) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := c.Store.Apply(ctx, muts); err != nil {
		return err
	}
	if c.n.Add(1)%2 == 0 {
		return c.Commit(ctx)
	}
	return nil
}

func TestConformanceCommitting(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return &committing{Store: overlaystore.New(memstore.New())} })
}

func dump(t interface{ Fatal(...any) }, s store.Store, table string, rs store.RowSet, opts store.ReadOptions) string {
	var b strings.Builder
	err := s.ReadRows(context.Background(), table, rs, opts, func(r store.Row) bool {
		fmt.Fprintf(&b, "%q:", r.Key)
		for _, c := range r.Cells {
			fmt.Fprintf(&b, " %s:%q=%q", c.Family, c.Qualifier, c.Value)
		}
		b.WriteString("\n")
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCommitDiscard checks, over random mutations, commits and discards,
// that the overlay reads as a store holding the writes applied since the
// last discard, that the base holds exactly the committed ones, and that
// ReadRow agrees with ReadRows.
func TestCommitDiscard(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		base, ref := memstore.New(), memstore.New()
		for _, s := range []store.Store{base, ref} {
			if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f", "g"}}); err != nil {
				rt.Fatal(err)
			}
		}
		ov := overlaystore.New(base)
		committed, err := ref.Snapshot(ctx) // ref as of the last commit or discard
		if err != nil {
			rt.Fatal(err)
		}
		key := rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 'a', 'b', 0xff}), 1, 2)
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for range steps {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 7:
				var muts []store.Mutation
				for range rapid.IntRange(1, 3).Draw(rt, "muts") {
					m := store.Mutation{
						Kind:  rapid.SampledFrom([]store.MutationKind{store.SetCell, store.SetCell, store.DeleteCell, store.DeleteRow, store.DeleteFamily}).Draw(rt, "kind"),
						Table: "t",
						Row:   key.Draw(rt, "row"),
					}
					if m.Kind != store.DeleteRow {
						m.Family = rapid.SampledFrom([]string{"f", "g"}).Draw(rt, "family")
					}
					if m.Kind == store.SetCell || m.Kind == store.DeleteCell {
						m.Qualifier = []byte(rapid.SampledFrom([]string{"", "q", "r"}).Draw(rt, "qualifier"))
					}
					if m.Kind == store.SetCell {
						m.Value = []byte(rapid.StringN(0, 2, 2).Draw(rt, "value"))
					}
					muts = append(muts, m)
				}
				if err := ov.Apply(ctx, muts); err != nil {
					rt.Fatal(err)
				}
				if err := ref.Apply(ctx, muts); err != nil {
					rt.Fatal(err)
				}
			case op < 8:
				if err := ov.Commit(ctx); err != nil {
					rt.Fatal(err)
				}
				if ov.Pending() != 0 {
					rt.Fatalf("%d mutations pending after Commit", ov.Pending())
				}
				committed.Release()
				if committed, err = ref.Snapshot(ctx); err != nil {
					rt.Fatal(err)
				}
			default:
				ov.Discard()
				if err := committed.Restore(ctx); err != nil {
					rt.Fatal(err)
				}
			}
			if got, want := dump(rt, ov, "t", store.All(), store.ReadOptions{}), dump(rt, ref, "t", store.All(), store.ReadOptions{}); got != want {
				rt.Fatalf("overlay reads\n%s\nwant\n%s", got, want)
			}
			rs := store.RowSet{Ranges: []store.Range{{Start: key.Draw(rt, "start"), End: key.Draw(rt, "end")}}, Keys: [][]byte{key.Draw(rt, "key")}}
			opts := store.ReadOptions{Limit: rapid.IntRange(0, 3).Draw(rt, "limit"), Reverse: rapid.Bool().Draw(rt, "reverse")}
			if got, want := dump(rt, ov, "t", rs, opts), dump(rt, ref, "t", rs, opts); got != want {
				rt.Fatalf("overlay reads %v %+v as\n%s\nwant\n%s", rs, opts, got, want)
			}
			k := key.Draw(rt, "point")
			got, gotOK, err := ov.ReadRow(ctx, "t", k)
			if err != nil {
				rt.Fatal(err)
			}
			want, wantOK, _ := ref.ReadRow(ctx, "t", k)
			if gotOK != wantOK || fmt.Sprint(got) != fmt.Sprint(want) {
				rt.Fatalf("ReadRow(%q) = %v %v, want %v %v", k, got, gotOK, want, wantOK)
			}
		}
		// The base holds what was committed, nothing pending.
		ov.Discard()
		if err := committed.Restore(ctx); err != nil {
			rt.Fatal(err)
		}
		if got, want := dump(rt, base, "t", store.All(), store.ReadOptions{}), dump(rt, ref, "t", store.All(), store.ReadOptions{}); got != want {
			rt.Fatalf("base holds\n%s\nwant the committed writes\n%s", got, want)
		}
		committed.Release()
	})
}

// failing fails every Apply.
type failing struct{ store.Store }

var errDown = errors.New("down")

func (failing) Apply(context.Context, []store.Mutation) error { return errDown }

// TestCommitFails checks that a failed commit keeps the pending writes, so
// the transaction can be retried or discarded, and that a closed overlay
// leaves its base open and unwritten.
func TestCommitFails(t *testing.T) {
	ctx := context.Background()
	base := memstore.New()
	if err := base.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	ov := overlaystore.New(failing{base})
	m := store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Value: []byte("1")}
	if err := ov.Apply(ctx, []store.Mutation{m}); err != nil {
		t.Fatal(err)
	}
	if err := ov.Commit(ctx); !errors.Is(err, errDown) {
		t.Fatalf("Commit = %v, want %v", err, errDown)
	}
	if ov.Pending() != 1 {
		t.Fatalf("%d pending after a failed commit, want 1", ov.Pending())
	}
	if _, ok, _ := ov.ReadRow(ctx, "t", []byte("a")); !ok {
		t.Fatal("the pending write is not read after a failed commit")
	}
	if err := ov.Apply(ctx, []store.Mutation{m, {Kind: store.SetCell, Table: "nope", Row: []byte("a"), Family: "f"}}); !errors.Is(err, store.ErrNoTable) {
		t.Fatalf("Apply to a missing table = %v, want ErrNoTable", err)
	}
	if ov.Pending() != 1 {
		t.Fatalf("a refused Apply left %d pending, want 1", ov.Pending())
	}
	if err := ov.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := base.ReadRow(ctx, "t", []byte("a")); ok || err != nil {
		t.Fatalf("base after Close: ok=%v err=%v, want an open store without the row", ok, err)
	}
}

// TestIndexer runs the local-index suite on an overlay that never commits
// (entries of pending rows only) and on one that commits every other
// Apply (the base's entries merged with pending rows over them).
func TestIndexer(t *testing.T) {
	t.Run("Pending", func(t *testing.T) {
		storetest.RunIndexer(t, func(*testing.T) store.Store { return overlaystore.New(memstore.New()) })
	})
	t.Run("Committing", func(t *testing.T) {
		storetest.RunIndexer(t, func(*testing.T) store.Store { return &committing{Store: overlaystore.New(memstore.New())} })
	})
}

// TestElementIndexOverBase: through an element index, the base delivers
// a row once per selected element, which the overlay merges, in order,
// with the pending rows' entries: each base delivery stands for its own
// element (the first of a reversed read for the row's last), also when a
// limit stops the base's read between two elements of a row; a pending
// row is found by its merged elements only.
func TestElementIndexOverBase(t *testing.T) {
	ctx := t.Context()
	base := memstore.New()
	byE := store.IndexSpec{Name: "bye", Family: "e", Elements: true}
	if err := base.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"e"}, Indexes: []store.IndexSpec{byE}}); err != nil {
		t.Fatal(err)
	}
	set := func(row, q string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: "e", Qualifier: []byte(q)}
	}
	if err := base.Apply(ctx, []store.Mutation{set("a", "1"), set("a", "3"), set("b", "2")}); err != nil {
		t.Fatal(err)
	}
	ov := overlaystore.New(base)
	if err := ov.Apply(ctx, []store.Mutation{set("c", "2")}); err != nil {
		t.Fatal(err)
	}
	read := func(values store.RowSet, opts store.ReadOptions) string {
		t.Helper()
		var ks []string
		if err := ov.ReadIndex(ctx, "t", "bye", values, opts, func(r store.Row) bool {
			ks = append(ks, string(r.Key))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(ks, " ")
	}
	for _, tc := range []struct {
		values store.RowSet
		opts   store.ReadOptions
		want   string
	}{
		{store.All(), store.ReadOptions{}, "a b c a"},
		{store.All(), store.ReadOptions{Reverse: true}, "a c b a"},
		{store.All(), store.ReadOptions{Limit: 2}, "a b"},
		{store.All(), store.ReadOptions{Limit: 2, Reverse: true}, "a c"},
		{store.All(), store.ReadOptions{Limit: 3, Reverse: true}, "a c b"},
		{store.RowSet{Keys: [][]byte{[]byte("1"), []byte("2")}}, store.ReadOptions{Reverse: true}, "c b a"},
		{store.RowSet{Keys: [][]byte{[]byte("3")}}, store.ReadOptions{}, "a"},
	} {
		if got := read(tc.values, tc.opts); got != tc.want {
			t.Errorf("ReadIndex(%v, %+v) = %s, want %s", tc.values, tc.opts, got, tc.want)
		}
	}
	// Row a pending too: its entries are its merged elements'.
	if err := ov.Apply(ctx, []store.Mutation{{Kind: store.DeleteCell, Table: "t", Row: []byte("a"), Family: "e", Qualifier: []byte("3")}, set("a", "4")}); err != nil {
		t.Fatal(err)
	}
	if got := read(store.All(), store.ReadOptions{Reverse: true}); got != "a c b a" {
		t.Errorf("ReadIndex after a pending change of row a = %s, want a c b a", got)
	}
	if got := read(store.RowSet{Keys: [][]byte{[]byte("3")}}, store.ReadOptions{}); got != "" {
		t.Errorf("ReadIndex of a's pending deleted element = %s, want none", got)
	}
}

// TestDeleteFamilyOverBase: a pending DeleteFamily hides the family's
// cells of the base row (and only those), a cell of the family written
// after it shows, the row is gone from reads once no cell is left, and
// Commit gives the base the same rows. A DeleteFamily of a family the
// table lacks is refused.
func TestDeleteFamilyOverBase(t *testing.T) {
	ctx := t.Context()
	base := memstore.New()
	if err := base.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f", "g"}}); err != nil {
		t.Fatal(err)
	}
	set := func(row, fam, q, v string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: fam, Qualifier: []byte(q), Value: []byte(v)}
	}
	delFam := func(row, fam string) store.Mutation {
		return store.Mutation{Kind: store.DeleteFamily, Table: "t", Row: []byte(row), Family: fam}
	}
	if err := base.Apply(ctx, []store.Mutation{
		set("a", "f", "q", "1"), set("a", "f", "r", "2"), set("a", "g", "q", "3"),
		set("b", "f", "q", "4"),
		set("c", "f", "q", "5"), set("c", "g", "q", "6"),
	}); err != nil {
		t.Fatal(err)
	}
	ov := overlaystore.New(base)
	if err := ov.Apply(ctx, []store.Mutation{delFam("a", "f"), delFam("b", "f"), delFam("c", "g"), delFam("c", "f"), set("c", "f", "new", "7")}); err != nil {
		t.Fatal(err)
	}
	const want = "\"a\": g:\"q\"=\"3\"\n\"c\": f:\"new\"=\"7\"\n"
	if got := dump(t, ov, "t", store.All(), store.ReadOptions{}); got != want {
		t.Fatalf("overlay reads\n%s\nwant\n%s", got, want)
	}
	if got := dump(t, ov, "t", store.All(), store.ReadOptions{Limit: 1, Reverse: true}); got != "\"c\": f:\"new\"=\"7\"\n" {
		t.Fatalf("overlay reads, reversed, limit 1:\n%s", got)
	}
	if _, ok, err := ov.ReadRow(ctx, "t", []byte("b")); ok || err != nil {
		t.Fatalf("ReadRow(b) = %v, %v: want no row, its only family deleted", ok, err)
	}
	if err := ov.Apply(ctx, []store.Mutation{delFam("a", "nofamily")}); err == nil {
		t.Fatal("DeleteFamily of a family the table lacks was accepted")
	}
	if err := ov.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, base, "t", store.All(), store.ReadOptions{}); got != want {
		t.Fatalf("base after Commit\n%s\nwant\n%s", got, want)
	}
}
