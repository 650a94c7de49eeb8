package txnstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/faultstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
	"github.com/kvschema/kvschema/store/txnstore"
)

func TestConformanceMem(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return txnstore.New(faultstore.New(memstore.New())) })
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

func delFamily(table, row, family string) store.Mutation {
	return store.Mutation{Kind: store.DeleteFamily, Table: table, Row: []byte(row), Family: family}
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
// and deletes rows, cells and families in two tables.
var write = []store.Mutation{
	set("t", "a", "q", "2"), delRow("t", "b"), set("t", "d", "q", "2"),
	delCell("u", "x", "q"), set("u", "y", "q", "2"), set("t", "a", "r", "2"),
	delFamily("t", "c", "f"),
}

// leftovers lists the bookkeeping left in the inner store: intents and
// locks.
func leftovers(t testing.TB, raw store.Store) []string {
	var out []string
	for _, tab := range []string{txnstore.IntentTable, "t", "u"} {
		err := raw.ReadRows(context.Background(), tab, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			for _, c := range r.Cells {
				if tab == txnstore.IntentTable || c.Family == txnstore.Family {
					out = append(out, fmt.Sprintf("%s/%q %s:%s=%.20q", tab, r.Key, c.Family, c.Qualifier, c.Value))
				}
			}
			return true
		})
		if err != nil && !errors.Is(err, store.ErrNoTable) {
			t.Fatal(err)
		}
	}
	return out
}

// backends open the raw stores the fault tests run on (bigtable_test.go
// adds the Bigtable emulator).
var backends = map[string]func(t testing.TB) txnstore.Inner{
	"mem": func(testing.TB) txnstore.Inner { return memstore.New() },
}

// short is the lock timeout of the tests' stores: writers left prepared
// by dead writers are aborted after it.
var short = txnstore.Options{LockTimeout: 20 * time.Millisecond}

// dieAt applies muts through a writer of its own process over raw that
// dies at its k-th row mutation, and returns what Apply returned.
func dieAt(t *testing.T, raw txnstore.Inner, k int, muts []store.Mutation) error {
	t.Helper()
	f := faultstore.New(raw)
	w := txnstore.New(f)
	if _, err := w.Tables(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.Arm(k, faultstore.Stop)
	return w.Apply(t.Context(), muts)
}

// TestFaults cuts the write short at each of its row mutations: failing
// the call (the writer goes on), failing it after the mutation was written
// (the reply was lost), or stopping (the writer dies). Afterwards a reader
// of another process (started before) must see every row before or after
// the write, never lose an acknowledged write, and after seeing any of it
// see all of it; Apply's error must say truly whether the write happened;
// after Repair the store holds the write (if committed) and no
// bookkeeping.
func TestFaults(t *testing.T) {
	const rows = 6 // t/a, t/b, t/d, u/x, u/y, t/c
	// prepare; lock 5 rows; commit; apply 5 rows; delete the intent
	const total, commit = 1 + rows + 1 + rows + 1, 1 + rows + 1
	for _, backend := range slices.Sorted(maps.Keys(backends)) {
		open := backends[backend]
		t.Run(backend, func(t *testing.T) {
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
			if n := counter.Count(); n != total {
				t.Errorf("the write took %d row mutations, want %d", n, total)
			}
			for _, mode := range []faultstore.Mode{faultstore.Fail, faultstore.FailAfter, faultstore.Stop} {
				for k := 1; k <= total; k++ {
					t.Run(fmt.Sprintf("mode%d/k%d", mode, k), func(t *testing.T) {
						raw := open(t)
						setup(t, raw)
						f := faultstore.New(raw)
						w := txnstore.New(f, short)
						if _, err := w.Tables(t.Context()); err != nil {
							t.Fatal(err)
						}
						// A reader in another process, started before the
						// write: it meets the write only through its rows.
						r := txnstore.New(raw, short)
						content(t, r)
						f.Arm(k, mode)
						err := w.Apply(t.Context(), write)
						committed := k > commit || (k == commit && mode == faultstore.FailAfter)
						switch {
						case err == nil && !committed:
							t.Fatalf("Apply = nil, but a fault at row mutation %d (mode %d) leaves the write uncommitted", k, mode)
						case err != nil && mode != faultstore.Stop && committed:
							t.Fatalf("Apply = %v; a fault the writer survives at row mutation %d (mode %d), after the commit, should not fail it", err, k, mode)
						case errors.Is(err, txnstore.ErrPending) && !committed:
							t.Fatalf("Apply = %v (pending), but the write is not committed", err)
						case err != nil && committed && !errors.Is(err, txnstore.ErrPending) && k < total:
							t.Fatalf("Apply = %v, want ErrPending: the write is committed", err)
						case err != nil && !committed && k == commit && mode == faultstore.Stop && !errors.Is(err, txnstore.ErrAmbiguous):
							t.Fatalf("Apply = %v, want ErrAmbiguous: the writer died at its commit", err)
						case err != nil && !committed && (k < commit || mode != faultstore.Stop) && (errors.Is(err, txnstore.ErrAmbiguous) || errors.Is(err, txnstore.ErrPending)):
							t.Fatalf("Apply = %v; the write failed before its commit (or learnt its commit failed): nothing was written, and the error should say so", err)
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
						if sawAfter && !committed {
							t.Errorf("a reader saw the write, which never committed: %v", got)
						}
						if acked || sawAfter || committed {
							if again := content(t, r); !equal(again, after) {
								t.Errorf("after the write was acknowledged (%v), seen (%v) or committed (%v), a read shows %v, want %v", acked, sawAfter, committed, again, after)
							}
						}
						// Died with the write committed and some rows not
						// applied: the reader met a lock and finished it.
						if mode == faultstore.Stop && k > commit && k <= commit+rows && r.RolledForward() != 1 {
							t.Errorf("the reader rolled forward %d writes, want 1 (read repair)", r.RolledForward())
						}
						if _, err := r.Repair(t.Context(), nil); err != nil {
							t.Fatal(err)
						}
						want := before
						if committed {
							want = after
						}
						if got := content(t, r); !equal(got, want) {
							t.Errorf("after Repair: %v, want %v", got, want)
						}
						if l := leftovers(t, raw); len(l) > 0 {
							t.Errorf("bookkeeping left after Repair: %v", l)
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
	// Prepare, lock 2 rows, commit: dies right after.
	if err := dieAt(t, raw, 5, []store.Mutation{set("t", "a", "q", "dead"), set("u", "x", "q", "dead")}); err == nil {
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
		delFamily("t", "a", txnstore.Family), // the row's lock
		delFamily("t", "a", "nofamily"),
		delFamily(txnstore.IntentTable, "a", "i"),
	} {
		if err := s.Apply(ctx, []store.Mutation{m}); err == nil {
			t.Errorf("Apply(%v) succeeded", m)
		}
	}
	if err := s.ReadRows(ctx, txnstore.IntentTable, store.All(), store.ReadOptions{}, func(store.Row) bool { return true }); !errors.Is(err, store.ErrNoTable) {
		t.Errorf("reading the intent table: %v", err)
	}
}

// TestRepair: a committed write its writer left unfinished is finished, a
// prepared one aborted, stale locks (of aborted writes) removed, and
// format-1 row versions cleared; rows keep their content otherwise.
func TestRepair(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	setup(t, raw)
	// A writer that dies after its commit (prepare, lock 2 rows, commit),
	// and one that dies at it.
	if err := dieAt(t, raw, 5, []store.Mutation{set("t", "a", "q", "w1"), set("u", "z", "q", "w1")}); err == nil {
		t.Fatal("Apply succeeded")
	}
	if err := dieAt(t, raw, 4, []store.Mutation{set("t", "c", "q", "w2"), set("u", "w", "q", "w2")}); err == nil {
		t.Fatal("Apply succeeded")
	}
	// A stale lock (no intent) and a format-1 row version.
	for _, m := range []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("b"), Family: txnstore.Family, Qualifier: []byte("txn"), Value: []byte("0123456789abcdef")},
		{Kind: store.SetCell, Table: "u", Row: []byte("x"), Family: txnstore.Family, Qualifier: []byte("seq"), Value: []byte("0123456789ab")},
	} {
		if err := raw.Apply(ctx, []store.Mutation{m}); err != nil {
			t.Fatal(err)
		}
	}
	s := txnstore.New(raw, short)
	before := content(t, s)
	if before["t/a"] != "f:q=w1" || before["u/z"] != "f:q=w1" || before["t/c"] != "f:q=1" || before["u/w"] != "" {
		t.Errorf("before Repair: %v; want w1's write finished by the reader, w2's not visible", before)
	}
	st, err := s.Repair(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.RolledForward != 0 || st.Aborted != 1 || st.StaleLocks != 2 || st.Legacy != 1 || st.Rows != 6 {
		t.Errorf("Repair = %v; want 0 rolled forward (the reads did it), 1 aborted, 2 stale locks (w2's t/c and u/w; the reads removed t/b's), 1 legacy row, 6 rows (t/a, b, c; u/w, x, z)", st)
	}
	if after := content(t, s); !equal(after, before) {
		t.Errorf("Repair changed the content: %v, was %v", after, before)
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}

// TestRepairRollsForward: Repair finishes a committed write no reader met.
func TestRepairRollsForward(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	setup(t, raw)
	if err := dieAt(t, raw, 5, []store.Mutation{set("t", "a", "q", "w"), set("u", "x", "q", "w")}); !errors.Is(err, txnstore.ErrPending) {
		t.Fatalf("Apply = %v, want ErrPending", err)
	}
	s := txnstore.New(raw, short)
	st, err := s.Repair(ctx, nil)
	if err != nil || st.RolledForward != 1 {
		t.Fatalf("Repair = %v, %v; want 1 rolled forward", st, err)
	}
	if got := content(t, s); got["t/a"] != "f:q=w" || got["u/x"] != "f:q=w,f:r=1" {
		t.Errorf("content %v", got)
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}

// TestLimitOverLockedRows: a limited read that meets rows holding only a
// lock (rows a dead writer was inserting) reads on until it has its rows,
// in both directions.
func TestLimitOverLockedRows(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	s := txnstore.New(raw)
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"0", "4", "5", "9"} {
		if err := s.Apply(ctx, []store.Mutation{set("t", k, "q", "v")}); err != nil {
			t.Fatal(err)
		}
	}
	var ins []store.Mutation
	for _, k := range []string{"1", "2", "3", "6", "7", "8"} {
		ins = append(ins, set("t", k, "q", "v"))
	}
	// Locks every row, dies at the commit.
	if err := dieAt(t, raw, 1+len(ins)+1, ins); err == nil {
		t.Fatal("Apply succeeded")
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

// TestConflictingWriters: three processes, two writers each, write the
// same four rows (listed in random orders, so lock orders cross) through
// one store that writes rows one at a time. Writers conflict on every
// write; wait-die must settle every conflict (no deadlock, no error), and
// afterwards every row holds the same last write.
func TestConflictingWriters(t *testing.T) {
	raw := faultstore.New(memstore.New())
	setup(t, raw)
	keys := []store.Mutation{set("t", "a", "q", ""), set("t", "b", "q", ""), set("u", "x", "q", ""), set("u", "y", "q", "")}
	const perWriter = 40
	var wg sync.WaitGroup
	procs := make([]*txnstore.Store, 3)
	for p := range procs {
		procs[p] = txnstore.New(raw)
		for g := range 2 {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(p), uint64(g)))
				for i := range perWriter {
					v := fmt.Sprintf("%d-%d-%d", p, g, i)
					muts := slices.Clone(keys)
					rnd.Shuffle(len(muts), func(i, j int) { muts[i], muts[j] = muts[j], muts[i] })
					for j := range muts {
						muts[j].Value = []byte(v)
					}
					if err := procs[p].Apply(t.Context(), muts); err != nil {
						t.Errorf("write %s: %v", v, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	got := content(t, txnstore.New(raw))
	last := got["t/a"]
	for _, k := range []string{"t/b", "u/x", "u/y"} {
		if strings.Split(got[k], ",")[0] != last {
			t.Errorf("rows disagree about the last write: %v", got)
			break
		}
	}
	var aborted, conflicts int64
	for _, p := range procs {
		aborted += p.Aborted()
		conflicts += p.Conflicts()
	}
	if aborted != 0 {
		t.Errorf("%d live writes were aborted as dead", aborted)
	}
	if conflicts == 0 {
		t.Error("no write met another's lock: the test tested nothing")
	}
	t.Logf("%d conflicts", conflicts)
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}

// TestDeadWriterAborted: a writer that dies holding its locks, before its
// commit, is aborted by the next writer of those rows after the lock
// timeout; its write never shows.
func TestDeadWriterAborted(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	setup(t, raw)
	// Prepare, lock 2 rows, dies at the commit.
	if err := dieAt(t, raw, 4, []store.Mutation{set("t", "a", "q", "dead"), set("u", "x", "q", "dead")}); err == nil {
		t.Fatal("Apply succeeded")
	}
	next := txnstore.New(raw, short)
	if got := content(t, next); got["t/a"] != "f:q=1" || got["u/x"] != "f:q=1,f:r=1" {
		t.Errorf("a reader sees the dead write: %v", got)
	}
	start := time.Now()
	if err := next.Apply(ctx, []store.Mutation{set("t", "a", "q", "next"), set("u", "x", "q", "next")}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < short.LockTimeout {
		t.Errorf("the write went past live-looking locks after %v, before the lock timeout %v", waited, short.LockTimeout)
	}
	if next.Aborted() != 1 {
		t.Errorf("Aborted = %d, want 1", next.Aborted())
	}
	if got := content(t, next); got["t/a"] != "f:q=next" || got["u/x"] != "f:q=next,f:r=1" {
		t.Errorf("content %v", got)
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}

// TestApplyRows: a load's rows go in one bulk write, without intent or
// locks, and read back as written.
func TestApplyRows(t *testing.T) {
	raw := memstore.New()
	setup(t, raw)
	f := faultstore.New(raw)
	s := txnstore.New(f)
	if err := store.ApplyRows(t.Context(), s, []store.Mutation{set("t", "a", "q", "L"), set("t", "e", "q", "L"), set("u", "y", "q", "L")}); err != nil {
		t.Fatal(err)
	}
	if n := f.Count(); n != 3 {
		t.Errorf("ApplyRows took %d row mutations, want 3 (one per row, no bookkeeping)", n)
	}
	if got := content(t, s); got["t/a"] != "f:q=L" || got["t/e"] != "f:q=L" || got["u/y"] != "f:q=L" {
		t.Errorf("content %v", got)
	}
	if err := store.ApplyRows(t.Context(), s, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: txnstore.Family, Qualifier: []byte("txn"), Value: []byte("x")}}); err == nil {
		t.Error("ApplyRows wrote the hidden family")
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}

// TestGuarded: guarded writes (store.Guarded) through two txnstore
// clients of one row-atomic store — two processes — decide on the guard
// row as it is at their commit, so racing read-modify-writes lose nothing.
func TestGuarded(t *testing.T) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			storetest.RunGuarded(t, func(t *testing.T) []store.Store {
				inner := open(t)
				return []store.Store{txnstore.New(inner), txnstore.New(inner)}
			})
		})
	}
}

// TestDeleteFamilyReplay: a multi-row write whose intent holds
// DeleteFamily mutations, its writer dead right after the commit, is
// finished by a reader of another process that meets one of its rows
// (read repair) or by Repair, from the intent alone: each row loses
// exactly the family's cells (a cell of it the batch then writes stays,
// other families stay), and no bookkeeping is left.
func TestDeleteFamilyReplay(t *testing.T) {
	for _, backend := range slices.Sorted(maps.Keys(backends)) {
		open := backends[backend]
		for _, by := range []string{"reader", "repair"} {
			t.Run(backend+"/"+by, func(t *testing.T) {
				ctx := t.Context()
				raw := open(t)
				s := txnstore.New(raw)
				for _, name := range []string{"t", "u"} {
					if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f", "g"}}); err != nil {
						t.Fatal(err)
					}
				}
				g := func(table, row, q, v string) store.Mutation {
					m := set(table, row, q, v)
					m.Family = "g"
					return m
				}
				if err := s.Apply(ctx, []store.Mutation{
					set("t", "a", "q", "1"), set("t", "a", "r", "1"), g("t", "a", "q", "1"),
					set("u", "x", "q", "1"), g("u", "x", "q", "1"), g("u", "x", "r", "1"),
					g("u", "y", "q", "1"),
				}); err != nil {
					t.Fatal(err)
				}
				// Prepare, lock 3 rows, commit: dies at the first row's apply.
				muts := []store.Mutation{
					delFamily("t", "a", "f"), set("t", "a", "new", "2"),
					delFamily("u", "x", "g"),
					delFamily("u", "y", "g"), delFamily("u", "y", "f"),
				}
				if err := dieAt(t, raw, 6, muts); !errors.Is(err, txnstore.ErrPending) {
					t.Fatalf("Apply = %v, want ErrPending (committed, not applied)", err)
				}
				r := txnstore.New(raw, short)
				if by == "reader" {
					row, ok, err := r.ReadRow(ctx, "u", []byte("x"))
					if err != nil || !ok || formatCells(row) != "f:q=1" {
						t.Fatalf("ReadRow(u/x) = %v, %v, %v; want f:q=1", formatCells(row), ok, err)
					}
					if r.RolledForward() != 1 {
						t.Errorf("the reader rolled forward %d writes, want 1", r.RolledForward())
					}
				}
				st, err := r.Repair(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := map[string]int{"reader": 0, "repair": 1}[by]; st.RolledForward != want {
					t.Errorf("Repair rolled forward %d writes, want %d", st.RolledForward, want)
				}
				want := map[string]string{"t/a": "f:new=2,g:q=1", "u/x": "f:q=1"}
				if got := content(t, r); !equal(got, want) {
					t.Errorf("content %v, want %v", got, want)
				}
				if l := leftovers(t, raw); len(l) > 0 {
					t.Errorf("left: %v", l)
				}
			})
		}
	}
}

func formatCells(r store.Row) string {
	var cells []string
	for _, c := range r.Cells {
		cells = append(cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
	}
	return strings.Join(cells, ",")
}
