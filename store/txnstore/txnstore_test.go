package txnstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/faultstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
	"github.com/kvschema/kvschema/store/txnstore"
)

func TestConformanceMem(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return txnstore.New(faultstore.New(memstore.New())) })
}

func TestConformanceBigtable(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return txnstore.New(bttestserver.Open(t)) })
}

func TestSnapshot(t *testing.T) {
	storetest.RunSnapshot(t, func(*testing.T) store.Store { return txnstore.New(memstore.New()) })
}

func set(table, row, q, v string) store.Mutation {
	return store.Mutation{Kind: store.SetCell, Table: table, Row: []byte(row), Family: "f", Qualifier: []byte(q), Value: []byte(v)}
}

func delCell(table, row, q string) store.Mutation {
	return store.Mutation{Kind: store.DeleteCell, Table: table, Row: []byte(row), Family: "f", Qualifier: []byte(q)}
}

func delRow(table, row string) store.Mutation {
	return store.Mutation{Kind: store.DeleteRow, Table: table, Row: []byte(row)}
}

// rows reads a table through s as "key{q=v,…}" per row key.
func rows(t testing.TB, s store.Store, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.ReadRows(context.Background(), table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
		}
		out[string(r.Key)] = strings.Join(cells, ",")
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// content is every user row of the tables t and u.
func content(t testing.TB, s store.Store) map[string]string {
	out := map[string]string{}
	for _, tab := range []string{"t", "u"} {
		for k, v := range rows(t, s, tab) {
			out[tab+"/"+k] = v
		}
	}
	return out
}

// setup creates tables t and u with base rows through a fresh txnstore.
func setup(t testing.TB, raw txnstore.Inner) {
	s := txnstore.New(raw)
	ctx := context.Background()
	for _, name := range []string{"t", "u"} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Apply(ctx, []store.Mutation{
		set("t", "a", "q", "1"), set("t", "b", "q", "1"), set("t", "c", "q", "1"),
		set("u", "x", "q", "1"), set("u", "x", "r", "1"),
	}); err != nil {
		t.Fatal(err)
	}
}

// write is the logical write the fault tests cut short: it changes, adds
// and deletes rows and cells in two tables.
var write = []store.Mutation{
	set("t", "a", "q", "2"), delRow("t", "b"), set("t", "d", "q", "2"),
	delCell("u", "x", "q"), set("u", "y", "q", "2"), set("t", "a", "r", "2"),
}

// raw lists the bookkeeping left in the inner store: intents and markers.
func leftovers(t testing.TB, raw store.Store) []string {
	var out []string
	for _, tab := range []string{txnstore.IntentTable, "t", "u"} {
		err := raw.ReadRows(context.Background(), tab, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			for _, c := range r.Cells {
				if tab == txnstore.IntentTable || (c.Family == txnstore.Family && string(c.Qualifier) == "txn") {
					out = append(out, fmt.Sprintf("%s/%s %s:%s", tab, r.Key, c.Family, c.Qualifier))
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestFaults cuts the write short at each of its row mutations, failing
// (the writer goes on) or stopping (the writer dies). Afterwards a reader
// of another process (started before, so only the write's rows can lead it
// to the write) must see every row before or after the write, never lose an
// acknowledged write, and after seeing any of it see all of it; after a
// roll-forward the store holds the write (if committed) and no bookkeeping.
func TestFaults(t *testing.T) {
	for _, backend := range []string{"mem", "bigtable"} {
		t.Run(backend, func(t *testing.T) {
			open := func(t *testing.T) txnstore.Inner {
				if backend == "mem" {
					return memstore.New()
				}
				return bttestserver.Open(t)
			}
			// The states before and after, and how many row mutations the
			// write takes.
			ref := open(t)
			setup(t, ref)
			before := content(t, txnstore.New(ref))
			counter := faultstore.New(ref)
			if err := txnstore.New(counter).Apply(t.Context(), write); err != nil {
				t.Fatal(err)
			}
			after := content(t, txnstore.New(ref))
			total := counter.Count()
			if total != 1+5+5+1 { // intent; apply and clear 5 rows; delete intent
				t.Errorf("the write took %d row mutations, want 12", total)
			}
			for _, mode := range []faultstore.Mode{faultstore.Fail, faultstore.Stop} {
				for k := 1; k <= total; k++ {
					t.Run(fmt.Sprintf("mode%d/k%d", mode, k), func(t *testing.T) {
						raw := open(t)
						setup(t, raw)
						f := faultstore.New(raw)
						w := txnstore.New(f)
						if _, err := w.Tables(t.Context()); err != nil {
							t.Fatal(err)
						}
						// A reader in another process, started before the
						// write: it meets the write only through its rows.
						r := txnstore.New(raw)
						content(t, r)
						f.Arm(k, mode)
						err := w.Apply(t.Context(), write)
						committed := k > 1
						if mode == faultstore.Fail && (err == nil) != committed {
							t.Fatalf("Apply = %v; a failure at row mutation %d should fail it iff before the commit", err, k)
						}
						if mode == faultstore.Stop && err == nil && k <= 1+5 {
							t.Fatalf("Apply = nil although the writer died at row mutation %d, before the write was whole", k)
						}
						acked := err == nil
						got := content(t, r)
						sawAfter := false
						for key, a := range after {
							if b := before[key]; got[key] != a && got[key] != b {
								t.Errorf("row %s = %q, neither before (%q) nor after (%q)", key, got[key], b, a)
							}
						}
						for key, b := range before {
							if _, inAfter := after[key]; !inAfter && got[key] != b && got[key] != "" {
								t.Errorf("row %s = %q, want before (%q) or gone", key, got[key], b)
							}
						}
						for key := range union(before, after) {
							if before[key] != after[key] && got[key] == after[key] {
								sawAfter = true
							}
						}
						if acked || sawAfter {
							if again := content(t, r); !equal(again, after) {
								t.Errorf("after the write was acknowledged (%v) or seen (%v), a read shows %v, want %v", acked, sawAfter, again, after)
							}
						}
						// Died with some rows written and marked (k = 3…6):
						// the reader met a marker and finished the write.
						if mode == faultstore.Stop && k >= 3 && k <= 1+5 && r.RolledForward() != 1 {
							t.Errorf("the reader rolled forward %d writes, want 1 (read repair)", r.RolledForward())
						}
						n, err := r.RollForward(t.Context(), nil)
						if err != nil {
							t.Fatal(err)
						}
						want := before
						if committed {
							want = after
						}
						if got := content(t, r); !equal(got, want) {
							t.Errorf("after rolling forward %d writes: %v, want %v", n, got, want)
						}
						if l := leftovers(t, raw); len(l) > 0 {
							t.Errorf("bookkeeping left after rolling forward: %v", l)
						}
					})
				}
			}
		})
	}
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRecoverBeforeWrite: a writer that died leaves an intent; the next
// writer's first Apply finishes it first, so its own write (of the same
// row) comes after and wins.
func TestRecoverBeforeWrite(t *testing.T) {
	raw := memstore.New()
	setup(t, raw)
	f := faultstore.New(raw)
	w := txnstore.New(f)
	if _, err := w.Tables(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.Arm(2, faultstore.Stop) // dies right after the commit
	if err := w.Apply(t.Context(), []store.Mutation{set("t", "a", "q", "dead"), set("u", "x", "q", "dead")}); err == nil {
		t.Fatal("Apply succeeded")
	}
	next := txnstore.New(raw)
	if err := next.Apply(t.Context(), []store.Mutation{set("t", "a", "q", "new")}); err != nil {
		t.Fatal(err)
	}
	if got := content(t, next); got["t/a"] != "f:q=new" || got["u/x"] != "f:q=dead,f:r=1" {
		t.Errorf("content = %v", got)
	}
	if next.RolledForward() != 1 {
		t.Errorf("RolledForward = %d, want 1", next.RolledForward())
	}
}

// TestConcurrentMonotonic runs multi-row writes of increasing values to the
// same key of t and u (the inner store writes rows one at a time) while
// readers read t, then u: u's value must never be older than t's, because
// a write seen on t is finished before the read of t returns.
func TestConcurrentMonotonic(t *testing.T) {
	raw := faultstore.New(memstore.New())
	s := txnstore.New(raw)
	ctx := t.Context()
	for _, name := range []string{"t", "u"} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	const writes = 200
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for i := 1; i <= writes; i++ {
			v := fmt.Sprintf("%04d", i)
			if err := s.Apply(ctx, []store.Mutation{set("t", "k", "q", v), set("u", "k", "q", v)}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			r := txnstore.New(raw) // another process's view
			for !done.Load() {
				tv := value(t, r, "t")
				uv := value(t, r, "u")
				if uv < tv {
					t.Errorf("read t=%q then u=%q: u went back", tv, uv)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := value(t, s, "u"); got != fmt.Sprintf("%04d", writes) {
		t.Errorf("last value %q", got)
	}
}

func value(t *testing.T, s store.Store, table string) string {
	r, ok, err := s.ReadRow(context.Background(), table, []byte("k"))
	if err != nil {
		t.Error(err)
		return ""
	}
	if !ok {
		return ""
	}
	return string(r.Cells[0].Value)
}

// TestHiddenFromUsers: the bookkeeping family and the intent table are not
// visible, and cannot be written.
func TestHiddenFromUsers(t *testing.T) {
	s := txnstore.New(memstore.New())
	ctx := t.Context()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	specs, err := s.Tables(ctx)
	if err != nil || len(specs) != 1 || strings.Join(specs[0].Families, ",") != "f" {
		t.Errorf("Tables = %+v, %v", specs, err)
	}
	for _, spec := range []store.TableSpec{{Name: txnstore.IntentTable, Families: []string{"f"}}, {Name: "v", Families: []string{txnstore.Family}}} {
		if err := s.CreateTable(ctx, spec); err == nil {
			t.Errorf("CreateTable(%+v) succeeded", spec)
		}
	}
	for _, m := range []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: txnstore.Family, Qualifier: []byte("seq"), Value: []byte("x")},
		{Kind: store.DeleteRow, Table: txnstore.IntentTable, Row: []byte("a")},
	} {
		if err := s.Apply(ctx, []store.Mutation{m}); err == nil {
			t.Errorf("Apply(%v) succeeded", m)
		}
	}
	if err := s.ReadRows(ctx, txnstore.IntentTable, store.All(), store.ReadOptions{}, func(store.Row) bool { return true }); !errors.Is(err, store.ErrNoTable) {
		t.Errorf("reading the intent table: %v", err)
	}
}

// TestRepair: stale markers (a writer died after a reader had finished its
// write) are cleared, old tombstones removed, and rows keep their content.
func TestRepair(t *testing.T) {
	raw := memstore.New()
	setup(t, raw)
	s := txnstore.New(raw)
	ctx := t.Context()
	if err := s.Apply(ctx, []store.Mutation{delRow("t", "c"), set("u", "z", "q", "1")}); err != nil {
		t.Fatal(err)
	}
	// A stale marker: a finished write's marker with no intent.
	stale := store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: txnstore.Family, Qualifier: []byte("txn"), Value: []byte("\x00\x00\x00\x00\x00\x00\x00\x01abcd")}
	if err := raw.Apply(ctx, []store.Mutation{stale}); err != nil {
		t.Fatal(err)
	}
	before := content(t, s)
	st, err := s.Repair(ctx, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.StaleMarkers != 1 || st.Tombstones != 0 || st.Rows != 5 {
		t.Errorf("Repair = %v; want 1 stale marker, no tombstone (too young), 5 rows (t/a, b, c; u/x, z)", st)
	}
	if st, err = s.Repair(ctx, 0, nil); err != nil || st.Tombstones != 1 || st.StaleMarkers != 0 {
		t.Errorf("Repair with age 0 = %v, %v; want the tombstone of t/c removed", st, err)
	}
	if after := content(t, s); !equal(before, after) {
		t.Errorf("Repair changed the content: %v, was %v", after, before)
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
	if _, found, _ := raw.ReadRow(ctx, "t", []byte("c")); found {
		t.Error("tombstone t/c still there")
	}
}

// TestRejectedBeforeCommit: a batch with a row key Bigtable refuses fails
// before anything is written, so no write is left that could never finish.
func TestRejectedBeforeCommit(t *testing.T) {
	raw := bttestserver.Open(t)
	setup(t, raw)
	s := txnstore.New(raw)
	before := content(t, s)
	err := s.Apply(t.Context(), []store.Mutation{set("t", "a", "q", "9"), set("u", "", "q", "9")})
	if !errors.Is(err, bigtablestore.ErrRowKey) {
		t.Fatalf("Apply = %v, want ErrRowKey", err)
	}
	if got := content(t, s); !equal(got, before) {
		t.Errorf("content %v, want %v", got, before)
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}

// TestLimitOverTombstones: a limited read that meets deleted rows reads on
// until it has its rows, in both directions.
func TestLimitOverTombstones(t *testing.T) {
	s := txnstore.New(memstore.New())
	ctx := t.Context()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := s.Apply(ctx, []store.Mutation{set("t", fmt.Sprint(i), "q", "v")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"1", "2", "3", "6", "7", "8"} {
		if err := s.Apply(ctx, []store.Mutation{delRow("t", k)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		rs      store.RowSet
		limit   int
		reverse bool
		want    string
	}{
		{store.All(), 3, false, "0,4,5"},
		{store.All(), 3, true, "9,5,4"},
		{store.All(), 10, false, "0,4,5,9"},
		{store.RowSet{Keys: [][]byte{[]byte("1"), []byte("2"), []byte("4"), []byte("9")}}, 2, false, "4,9"},
		{store.RowSet{Ranges: []store.Range{{Start: []byte("1"), End: []byte("4")}, {Start: []byte("6"), End: []byte("9\x00")}}}, 1, true, "9"},
		{store.RowSet{Ranges: []store.Range{{Start: []byte("1"), End: []byte("5")}}}, 2, true, "4"},
	} {
		var got []string
		err := s.ReadRows(ctx, "t", c.rs, store.ReadOptions{Limit: c.limit, Reverse: c.reverse}, func(r store.Row) bool {
			got = append(got, string(r.Key))
			return true
		})
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("ReadRows(%v, limit %d, reverse %v) = %v, %v; want %s", c.rs, c.limit, c.reverse, got, err, c.want)
		}
	}
}
