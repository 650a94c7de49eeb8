package storetest

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/kvschema/kvschema/store"
)

// RunGuarded checks, as subtests of t, a store's store.Guarded. open
// returns one or more handles on one fresh store, as processes sharing it
// would have (for a store one process holds, one): Holds gets the row as
// ReadRow returns it (none when absent), a batch over several rows and
// tables applies wholly when Holds says so and not at all otherwise, and
// read-modify-writes racing through the handles, each guarded by "the row
// is as I read it", lose no update; and the same under several guards
// (runGuards), which also hold rows they do not write
// (runGuardsSkew).
func RunGuarded(t *testing.T, open func(t *testing.T) []store.Store) {
	t.Run("OneGuard", func(t *testing.T) {
		s := open(t)[0]
		ctx := t.Context()
		create(t, s, "t", "f", "g")
		create(t, s, "u", "f")
		apply(t, s, set("t", "r", "f", "v", "1"), set("t", "r", "g", "w", "2"))
		want, _, err := s.ReadRow(ctx, "t", []byte("r"))
		if err != nil {
			t.Fatal(err)
		}
		batch := []store.Mutation{set("t", "r", "f", "v", "3"), set("t", "s", "f", "v", "4"), set("u", "x", "f", "v", "5")}
		for _, k := range []struct {
			row   string
			holds bool
			seen  []store.Cell
		}{
			{"r", false, want.Cells},
			{"missing", false, nil},
			{"r", true, want.Cells},
		} {
			var seen []store.Cell
			applied, err := guarded(t, s).ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte(k.row), Holds: func(cells []store.Cell) bool {
				for _, c := range cells {
					seen = append(seen, store.Cell{Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Value: append([]byte(nil), c.Value...)})
				}
				return k.holds
			}}}, batch)
			if err != nil || applied != k.holds {
				t.Fatalf("ApplyGuards(%s, holds %v) = %v, %v", k.row, k.holds, applied, err)
			}
			if !store.SameCells(seen, k.seen) {
				t.Fatalf("ApplyGuards(%s): Holds saw %v, want the row as read: %v", k.row, seen, k.seen)
			}
			for _, m := range batch {
				r, _, err := s.ReadRow(ctx, m.Table, m.Row)
				if err != nil {
					t.Fatal(err)
				}
				got := false
				for _, c := range r.Cells {
					got = got || c.Family == m.Family && string(c.Qualifier) == string(m.Qualifier) && string(c.Value) == string(m.Value)
				}
				if got != k.holds {
					t.Fatalf("ApplyGuards(%s, holds %v): %s %q has the batch's cell: %v", k.row, k.holds, m.Table, m.Row, got)
				}
			}
		}
	})
	t.Run("OneGuardRace", func(t *testing.T) {
		handles := open(t)
		ctx := t.Context()
		create(t, handles[0], "t", "f")
		const workers, incs = 6, 20
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			s := handles[w%len(handles)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range incs {
					for {
						r, _, err := s.ReadRow(ctx, "t", []byte("c"))
						if err != nil {
							errs <- err
							return
						}
						n := 0
						for _, c := range r.Cells {
							if string(c.Qualifier) == "n" {
								n, _ = strconv.Atoi(string(c.Value))
							}
						}
						next := strconv.Itoa(n + 1)
						applied, err := guarded(t, s).ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("c"), Holds: func(cells []store.Cell) bool {
							runtime.Gosched() // let a racing writer in, if the store lets it
							return store.SameCells(cells, r.Cells)
						}}}, []store.Mutation{set("t", "c", "f", "n", next), set("t", "log"+next, "f", "by", fmt.Sprint(w))})
						if err != nil {
							errs <- err
							return
						}
						if applied {
							break
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		r, _, err := handles[0].ReadRow(ctx, "t", []byte("c"))
		if err != nil || len(r.Cells) != 1 || string(r.Cells[0].Value) != strconv.Itoa(workers*incs) {
			t.Fatalf("counter row %v (%v) after %d guarded increments", r.Cells, err, workers*incs)
		}
		logs := 0
		if err := handles[0].ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(r store.Row) bool {
			if string(r.Key) != "c" {
				logs++
			}
			return true
		}); err != nil || logs != workers*incs {
			t.Fatalf("%d log rows (%v), want %d: each increment's batch applied whole, once", logs, err, workers*incs)
		}
	})
	runGuards(t, open)
	runGuardsSkew(t, open)
}

// runGuards checks ApplyGuards: a batch under guards on rows of two
// tables (one row absent) applies wholly when every guard holds and not at
// all when one refuses; the guards are asked in order, each about its own
// row, up to the first that refuses; with no guard the batch applies; and
// read-modify-writes of two counters each, guarded by both as read and
// racing through the handles, lose no update.
func runGuards(t *testing.T, open func(t *testing.T) []store.Store) {
	t.Run("ApplyGuards", func(t *testing.T) {
		s := open(t)[0]
		ctx := t.Context()
		create(t, s, "t", "f")
		create(t, s, "u", "f")
		apply(t, s, set("t", "a", "f", "v", "1"), set("u", "b", "f", "v", "2"))
		rowOf := func(table, row string) []store.Cell {
			r, _, err := s.ReadRow(ctx, table, []byte(row))
			if err != nil {
				t.Fatal(err)
			}
			return r.Cells
		}
		rows := []struct{ table, row string }{{"t", "a"}, {"u", "missing"}, {"u", "b"}}
		want := [][]store.Cell{rowOf("t", "a"), nil, rowOf("u", "b")}
		for _, k := range []struct {
			refuse int // the guard that refuses; -1: none
			asked  int // the guards asked
		}{{1, 2}, {0, 1}, {2, 3}, {-1, 3}} {
			asked := 0
			gs := make([]store.Guard, len(rows))
			for i, r := range rows {
				gs[i] = store.Guard{Table: r.table, Row: []byte(r.row), Holds: func(cells []store.Cell) bool {
					asked = i + 1
					if !store.SameCells(cells, want[i]) {
						t.Errorf("guard %d (%s %q) saw %v, want the row as read: %v", i, r.table, r.row, cells, want[i])
					}
					return i != k.refuse
				}}
			}
			batch := []store.Mutation{set("t", "a", "f", "w", fmt.Sprint(k.refuse)), set("t", "n", "f", "v", fmt.Sprint(k.refuse)), set("u", "m", "f", "v", fmt.Sprint(k.refuse))}
			applied, err := guarded(t, s).ApplyGuards(ctx, gs, batch)
			if err != nil || applied != (k.refuse < 0) {
				t.Fatalf("ApplyGuards(guard %d refuses) = %v, %v", k.refuse, applied, err)
			}
			// A store may try again (txnstore): the last attempt's guards.
			if asked != k.asked {
				t.Fatalf("ApplyGuards(guard %d refuses): the guards asked end at %d, want %d (in order, up to the first refusal)", k.refuse, asked, k.asked)
			}
			for _, m := range batch {
				got := false
				for _, c := range rowOf(m.Table, string(m.Row)) {
					got = got || c.Family == m.Family && string(c.Qualifier) == string(m.Qualifier) && string(c.Value) == string(m.Value)
				}
				if got != applied {
					t.Fatalf("ApplyGuards(guard %d refuses): %s %q has the batch's cell: %v", k.refuse, m.Table, m.Row, got)
				}
			}
			want[0] = rowOf("t", "a")
		}
		if applied, err := guarded(t, s).ApplyGuards(ctx, nil, []store.Mutation{set("t", "z", "f", "v", "1")}); err != nil || !applied || len(rowOf("t", "z")) != 1 {
			t.Fatalf("ApplyGuards with no guard = %v, %v (row %v): want the batch applied", applied, err, rowOf("t", "z"))
		}
		// A DeleteFamily goes with its batch: not at all when a guard
		// refuses, else before the batch's next write of the family.
		before := rowOf("t", "a")
		for _, holds := range []bool{false, true} {
			applied, err := guarded(t, s).ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("a"), Holds: func([]store.Cell) bool { return holds }}},
				[]store.Mutation{delFamily("t", "a", "f"), set("t", "a", "f", "after", "x"), delFamily("u", "b", "f")})
			if err != nil || applied != holds {
				t.Fatalf("ApplyGuards of DeleteFamily (holds %v) = %v, %v", holds, applied, err)
			}
			want, wantB := before, 1
			if holds {
				want, wantB = []store.Cell{{Family: "f", Qualifier: []byte("after"), Value: []byte("x")}}, 0
			}
			if got := rowOf("t", "a"); !store.SameCells(got, want) {
				t.Fatalf("ApplyGuards of DeleteFamily (holds %v): row t/a = %v, want %v", holds, got, want)
			}
			if got := len(rowOf("u", "b")); got != wantB {
				t.Fatalf("ApplyGuards of DeleteFamily (holds %v): row u/b has %d cells, want %d", holds, got, wantB)
			}
		}
	})
	t.Run("ApplyGuardsRace", func(t *testing.T) {
		handles := open(t)
		ctx := t.Context()
		create(t, handles[0], "t", "f")
		const workers, incs, counters = 6, 15, 3
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			s := handles[w%len(handles)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range incs {
					// Two counters, both read, both guarded, both written.
					ks := []string{fmt.Sprint("c", (w+i)%counters), fmt.Sprint("c", (w+i+1)%counters)}
					for {
						var gs []store.Guard
						var muts []store.Mutation
						for _, k := range ks {
							r, _, err := s.ReadRow(ctx, "t", []byte(k))
							if err != nil {
								errs <- err
								return
							}
							n := 0
							if len(r.Cells) == 1 {
								n, _ = strconv.Atoi(string(r.Cells[0].Value))
							}
							gs = append(gs, store.Guard{Table: "t", Row: []byte(k), Holds: func(cells []store.Cell) bool {
								runtime.Gosched()
								return store.SameCells(cells, r.Cells)
							}})
							muts = append(muts, set("t", k, "f", "n", strconv.Itoa(n+1)))
						}
						applied, err := guarded(t, s).ApplyGuards(ctx, gs, muts)
						if err != nil {
							errs <- err
							return
						}
						if applied {
							break
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		sum := 0
		for c := range counters {
			r, _, err := handles[0].ReadRow(ctx, "t", []byte(fmt.Sprint("c", c)))
			if err != nil || len(r.Cells) != 1 {
				t.Fatalf("counter c%d: %v (%v)", c, r.Cells, err)
			}
			n, _ := strconv.Atoi(string(r.Cells[0].Value))
			sum += n
		}
		if sum != 2*workers*incs {
			t.Fatalf("the counters sum to %d after %d guarded double increments, want %d", sum, workers*incs, 2*workers*incs)
		}
	})
}

// runGuardsSkew checks that ApplyGuards holds the rows of guards its batch
// does not write: in each round, writers racing through the handles each
// claim their own row of a pair only if both are empty, guarded by both;
// exactly one claim of a pair lands (no write skew).
func runGuardsSkew(t *testing.T, open func(t *testing.T) []store.Store) {
	t.Run("ApplyGuardsSkew", func(t *testing.T) {
		handles := open(t)
		ctx := t.Context()
		create(t, handles[0], "t", "f")
		const rounds, writers = 30, 3
		for round := range rounds {
			pair := make([]string, writers)
			for w := range pair {
				pair[w] = fmt.Sprintf("r%d-%d", round, w)
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				s := handles[w%len(handles)]
				wg.Add(1)
				go func() {
					defer wg.Done()
					gs := make([]store.Guard, len(pair))
					for i, k := range pair {
						gs[i] = store.Guard{Table: "t", Row: []byte(k), Holds: func(cells []store.Cell) bool {
							runtime.Gosched() // let a racing claim in, if the store lets it
							return len(cells) == 0
						}}
					}
					if _, err := guarded(t, s).ApplyGuards(ctx, gs, []store.Mutation{set("t", pair[w], "f", "v", "claimed")}); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			claimed := 0
			for _, k := range pair {
				r, _, err := handles[0].ReadRow(ctx, "t", []byte(k))
				if err != nil {
					t.Fatal(err)
				}
				claimed += len(r.Cells)
			}
			if claimed != 1 {
				t.Fatalf("round %d: %d rows claimed, want 1: each claim is guarded by every row of the round being empty", round, claimed)
			}
		}
	})
}

func guarded(t *testing.T, s store.Store) store.Guarded {
	t.Helper()
	g, ok := s.(store.Guarded)
	if !ok {
		t.Fatalf("%T is no store.Guarded", s)
	}
	return g
}
