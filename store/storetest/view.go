package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kvschema/kvschema/store"
)

// RunView checks store.Viewer: a view reads the content of the moment it
// was taken — rows, cells by ReadCells too — whatever is written after,
// refuses writes, reads concurrently and from inside its own read
// callbacks, and fails once closed. open is as
// for Run. A store that is no Viewer skips the suite.
func RunView(t *testing.T, open func(t *testing.T) store.Store) {
	runCases(t, open, []testCase{
		{"PointInTime", testViewPointInTime},
		{"TablesInTime", testViewTablesInTime},
		{"ReadOnly", testViewReadOnly},
		{"Concurrent", testViewConcurrent},
		{"ReadInsideCallback", testViewReadInsideCallback},
		{"Closed", testViewClosed},
	})
}

func view(t *testing.T, s store.Store) store.View {
	t.Helper()
	vr, ok := s.(store.Viewer)
	if !ok {
		t.Skipf("%T is no store.Viewer", s)
	}
	v, err := vr.View(t.Context())
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// rowsOf renders the rows of the tables a and b of s (as fillForSnapshot
// makes them), with ReadCells too when s has it.
func rowsOf(t *testing.T, s store.Store) string {
	t.Helper()
	out := ""
	for _, name := range []string{"a", "b"} {
		out += name + ":" + format(readRows(t, s, name, store.All(), store.ReadOptions{})) + "\n"
		if cr, ok := s.(store.CellReader); ok {
			var rows []store.Row
			err := cr.ReadCells(t.Context(), name, store.All(), store.ReadOptions{}, func(row []byte, c store.Cell, first bool) bool {
				if first {
					rows = append(rows, store.Row{Key: append([]byte(nil), row...)})
				}
				r := &rows[len(rows)-1]
				r.Cells = append(r.Cells, store.Cell{Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Value: append([]byte(nil), c.Value...)})
				return true
			})
			if err != nil {
				t.Fatalf("ReadCells %s: %v", name, err)
			}
			out += name + " cells:" + format(sortCells(rows)) + "\n"
		}
	}
	return out
}

func testViewPointInTime(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	before := rowsOf(t, s)
	v := view(t, s)
	// Writes after the view: new rows, changed cells, deleted families and
	// rows.
	apply(t, s, set("a", "zz", "f", "q", "new"), set("b", "r1", "f", "", "changed"), store.Mutation{Kind: store.DeleteRow, Table: "b", Row: []byte("r2")},
		delFamily("a", "a", "g"), delFamily("a", "b", "f"))
	if got := rowsOf(t, v); got != before {
		t.Errorf("view after writes:\n%s\nwant\n%s", got, before)
	}
	if r, ok, err := v.ReadRow(t.Context(), "b", []byte("r2")); err != nil || !ok || format([]store.Row{r}) != format([]store.Row{{Key: []byte("r2"), Cells: []store.Cell{{Family: "f", Qualifier: []byte("q"), Value: []byte("2")}}}}) {
		t.Errorf("view ReadRow of a row deleted since: %v %v %v", format([]store.Row{r}), ok, err)
	}
	if rowsOf(t, s) == before {
		t.Error("the store did not change")
	}
}

// testViewTablesInTime: a table created after a view opened is none of
// the view's, nor is an index added since (for stores that keep indexes):
// the view answers ErrNoTable and ErrNoIndex, and lists the tables as they
// were.
func testViewTablesInTime(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	before, err := s.Tables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v := view(t, s)
	create(t, s, "c", "f")
	apply(t, s, set("c", "r", "f", "q", "v"))
	if err := s.CreateTable(t.Context(), store.TableSpec{Name: "a", Families: []string{"f"}, Indexes: []store.IndexSpec{{Name: "byq", Family: "f", Qualifier: []byte("q")}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.ReadRow(t.Context(), "c", []byte("r")); !errors.Is(err, store.ErrNoTable) {
		t.Errorf("view ReadRow of a table created since: %v", err)
	}
	if got, err := v.Tables(t.Context()); err != nil || fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("view Tables: %v (%v), want %v", got, err, before)
	}
	if ix, ok := v.(store.Indexer); ok {
		err := ix.ReadIndex(t.Context(), "a", "byq", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
		if !errors.Is(err, store.ErrNoIndex) {
			t.Errorf("view ReadIndex of an index added since: %v", err)
		}
	}
}

func testViewReadOnly(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	v := view(t, s)
	if err := v.Apply(t.Context(), []store.Mutation{set("a", "x", "f", "q", "v")}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Apply through a view: %v", err)
	}
	if err := v.CreateTable(t.Context(), store.TableSpec{Name: "c", Families: []string{"f"}}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("CreateTable through a view: %v", err)
	}
}

func testViewConcurrent(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	v := view(t, s)
	want := rowsOf(t, v)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := rowsOf(t, v); got != want {
					t.Errorf("concurrent view read:\n%s\nwant\n%s", got, want)
					return
				}
			}
		}()
	}
	for i := range 20 {
		apply(t, s, set("a", "w"+string(rune('a'+i)), "f", "q", "v"))
	}
	wg.Wait()
}

func testViewClosed(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	v := view(t, s)
	if err := v.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, _, err := v.ReadRow(t.Context(), "a", []byte("m")); err == nil {
		t.Error("ReadRow on a closed view")
	}
}

// testViewReadInsideCallback: a callback of a read through a view reads
// the view (a pipelined query joins its first step's rows as they come),
// and sees the view's point in time there too.
func testViewReadInsideCallback(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "idx", "f")
	create(t, s, "t", "f")
	apply(t, s, set("idx", "1", "f", "", "b"), set("idx", "2", "f", "", "a"), set("t", "a", "f", "", "A"), set("t", "b", "f", "", "B"))
	v := view(t, s)
	apply(t, s, set("t", "a", "f", "", "changed"))
	var got []string
	err := v.ReadRows(ctx, "idx", store.All(), store.ReadOptions{}, func(r store.Row) bool {
		key := r.Cells[0].Value
		err := v.ReadRows(ctx, "t", store.RowSet{Keys: [][]byte{key}}, store.ReadOptions{}, func(row store.Row) bool {
			got = append(got, string(row.Cells[0].Value))
			return true
		})
		if err != nil {
			t.Errorf("ReadRows inside a callback: %v", err)
			return false
		}
		if cr, ok := v.(store.CellReader); ok {
			err := cr.ReadCells(ctx, "t", store.RowSet{Keys: [][]byte{key}}, store.ReadOptions{}, func(_ []byte, c store.Cell, _ bool) bool {
				got = append(got, string(c.Value))
				return true
			})
			if err != nil {
				t.Errorf("ReadCells inside a callback: %v", err)
				return false
			}
		}
		return true
	})
	want := []string{"B", "A"}
	if _, ok := v.(store.CellReader); ok {
		want = []string{"B", "B", "A", "A"}
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}
