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
// is as I read it", lose no update.
func RunGuarded(t *testing.T, open func(t *testing.T) []store.Store) {
	t.Run("ApplyGuarded", func(t *testing.T) {
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
			applied, err := guarded(t, s).ApplyGuarded(ctx, store.Guard{Table: "t", Row: []byte(k.row), Holds: func(cells []store.Cell) bool {
				for _, c := range cells {
					seen = append(seen, store.Cell{Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Value: append([]byte(nil), c.Value...)})
				}
				return k.holds
			}}, batch)
			if err != nil || applied != k.holds {
				t.Fatalf("ApplyGuarded(%s, holds %v) = %v, %v", k.row, k.holds, applied, err)
			}
			if !store.SameCells(seen, k.seen) {
				t.Fatalf("ApplyGuarded(%s): Holds saw %v, want the row as read: %v", k.row, seen, k.seen)
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
					t.Fatalf("ApplyGuarded(%s, holds %v): %s %q has the batch's cell: %v", k.row, k.holds, m.Table, m.Row, got)
				}
			}
		}
	})
	t.Run("ApplyGuardedRace", func(t *testing.T) {
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
						applied, err := guarded(t, s).ApplyGuarded(ctx, store.Guard{Table: "t", Row: []byte("c"), Holds: func(cells []store.Cell) bool {
							runtime.Gosched() // let a racing writer in, if the store lets it
							return store.SameCells(cells, r.Cells)
						}}, []store.Mutation{set("t", "c", "f", "n", next), set("t", "log"+next, "f", "by", fmt.Sprint(w))})
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
}

func guarded(t *testing.T, s store.Store) store.Guarded {
	t.Helper()
	g, ok := s.(store.Guarded)
	if !ok {
		t.Fatalf("%T is no store.Guarded", s)
	}
	return g
}
