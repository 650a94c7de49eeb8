package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/rttstore"
	"github.com/kvschema/kvschema/types"
)

// The catch-up tests' model: parts p in groups g. The deployed schema
// reads a group's parts by group (cf_g_ps), so the rows of a group are
// one rows query; the migration adds two indexes partitioned by group,
// one with the group's name in every row, one with it static.
const (
	catchUpModel = `
DEFINE RELATION g ROWS 6 { id BIGINT KEY, name STRING CARDINALITY 6 };
DEFINE RELATION p ROWS 60 { id BIGINT KEY, a0 STRING CARDINALITY 5, grp BIGINT REFERENCES g REVERSE ps };`
	catchUpDeployed = `
DEFINE COLUMN FAMILY cf_g_by_id FOR g { PARTITION KEY (g.id), VALUES (g.name) };
DEFINE COLUMN FAMILY cf_p_by_id FOR p { PARTITION KEY (p.id), VALUES (p.a0) };
DEFINE COLUMN FAMILY cf_p_grp FOR p { PARTITION KEY (p.id), CLUSTERING KEY (p.grp.id) };
DEFINE COLUMN FAMILY cf_g_ps FOR g { PARTITION KEY (g.id), CLUSTERING KEY (g.ps.id), VALUES (g.ps.a0) };`
	catchUpAdded = `
DEFINE COLUMN FAMILY cf_g_ps_named FOR g { PARTITION KEY (g.id), CLUSTERING KEY (g.ps.id), VALUES (g.name, g.ps.a0) };
DEFINE COLUMN FAMILY cf_g_ps_static FOR g { PARTITION KEY (g.id), CLUSTERING KEY (g.ps.id), STATIC (g.name), VALUES (g.ps.a0) };`
	catchUpWorkload = `DEFINE WORKLOAD w MIXES (m) { GROUP q WEIGHTS (m 1) { SELECT p.a0 FROM p WHERE p.id = ?; } }`
)

var catchUpBuilt = []string{"cf_g_ps_named", "cf_g_ps_static"}

// catchUpData is the data the catch-up tests write, kept as the store
// should hold it: rows by entity and key, in Entity.Columns order.
type catchUpData struct {
	mu   sync.Mutex
	m    *catalog.Model
	rows map[*catalog.Entity]map[int64][]types.Value
	next int64 // the last new part's key
}

func newCatchUpData(m *catalog.Model, d *gen.Data) *catchUpData {
	cd := &catchUpData{m: m, rows: map[*catalog.Entity]map[int64][]types.Value{}, next: 1000}
	for e, rows := range d.Rows {
		cd.rows[e] = map[int64][]types.Value{}
		for _, r := range rows {
			cd.rows[e][r[col(e, "id")].(int64)] = slices.Clone(r)
		}
	}
	return cd
}

func col(e *catalog.Entity, name string) int {
	for i, c := range e.Columns {
		if c.Name == name {
			return i
		}
	}
	panic("no column " + name)
}

// data returns the rows as generated data, in key order.
func (cd *catchUpData) data() *gen.Data {
	cd.mu.Lock()
	defer cd.mu.Unlock()
	d := &gen.Data{Order: gen.ParentsFirst(cd.m), Rows: map[*catalog.Entity][][]types.Value{}}
	for e, rows := range cd.rows {
		for _, id := range slices.Sorted(func(yield func(int64) bool) {
			for id := range rows {
				if !yield(id) {
					return
				}
			}
		}) {
			d.Rows[e] = append(d.Rows[e], slices.Clone(rows[id]))
		}
	}
	return d
}

// catchUpWriter runs the writes of the tests through an engine and keeps
// cd as the store should hold the data.
type catchUpWriter struct {
	cd                                  *catchUpData
	rename, setA0, move, delete, insert *exec.Stmt
	insertG                             *exec.Stmt
}

func newCatchUpWriter(t testing.TB, en *exec.Engine, cd *catchUpData) *catchUpWriter {
	prep := func(s string) *exec.Stmt {
		p, err := en.Prepare(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return p
	}
	return &catchUpWriter{cd: cd,
		rename:  prep("UPDATE g SET name = ? WHERE g.id = ?"),
		setA0:   prep("UPDATE p SET a0 = ? WHERE p.id = ?"),
		move:    prep("CONNECT p(?) TO grp(?)"),
		delete:  prep("DELETE p WHERE p.id = ?"),
		insert:  prep("INSERT INTO p SET id = ?, a0 = ? AND CONNECT TO grp(?)"),
		insertG: prep("INSERT INTO g SET id = ?, name = ?"),
	}
}

func (w *catchUpWriter) entity(name string) *catalog.Entity { return w.cd.m.Entity(name) }

// do runs one write and records it.
func (w *catchUpWriter) do(ctx context.Context, what string, args ...any) error {
	w.cd.mu.Lock()
	defer w.cd.mu.Unlock()
	return w.doLocked(ctx, what, args...)
}

// doLocked is do with cd.mu held: the writes of the tests' writers land
// in the store in the order they change cd.
func (w *catchUpWriter) doLocked(ctx context.Context, what string, args ...any) error {
	g, p := w.entity("g"), w.entity("p")
	var err error
	switch what {
	case "rename":
		if _, err = w.rename.Exec(ctx, args...); err == nil {
			w.cd.rows[g][args[1].(int64)][col(g, "name")] = args[0]
		}
	case "setA0":
		if _, err = w.setA0.Exec(ctx, args...); err == nil {
			w.cd.rows[p][args[1].(int64)][col(p, "a0")] = args[0]
		}
	case "move":
		if _, err = w.move.Exec(ctx, args...); err == nil {
			w.cd.rows[p][args[0].(int64)][col(p, "grp")] = args[1]
		}
	case "delete":
		if _, err = w.delete.Exec(ctx, args...); err == nil {
			delete(w.cd.rows[p], args[0].(int64))
		}
	case "insert":
		if _, err = w.insert.Exec(ctx, args...); err == nil {
			r := make([]types.Value, len(p.Columns))
			r[col(p, "id")], r[col(p, "a0")], r[col(p, "grp")] = args[0], args[1], args[2]
			w.cd.rows[p][args[0].(int64)] = r
		}
	case "insertG":
		if _, err = w.insertG.Exec(ctx, args...); err == nil {
			r := make([]types.Value, len(g.Columns))
			r[col(g, "id")], r[col(g, "name")] = args[0], args[1]
			w.cd.rows[g][args[0].(int64)] = r
		}
	default:
		panic(what)
	}
	if err != nil {
		return fmt.Errorf("%s %v: %w", what, args, err)
	}
	return nil
}

// parts returns the keys of the parts, in order; the caller holds cd.mu.
func (w *catchUpWriter) parts() []int64 {
	var ids []int64
	for id := range w.cd.rows[w.entity("p")] {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// newPart returns a key no part has had; the caller holds cd.mu.
func (w *catchUpWriter) newPart() int64 {
	w.cd.next++
	return w.cd.next
}

// random runs a random write: a part moved, renamed, deleted or inserted,
// or a group renamed.
func (w *catchUpWriter) random(ctx context.Context, r *rand.Rand, groups int64) error {
	w.cd.mu.Lock()
	defer w.cd.mu.Unlock()
	ids := w.parts()
	id := ids[r.IntN(len(ids))]
	switch r.IntN(6) {
	case 0, 1:
		return w.doLocked(ctx, "move", id, 1+r.Int64N(groups))
	case 2:
		return w.doLocked(ctx, "setA0", fmt.Sprint("w", r.IntN(100)), id)
	case 3:
		return w.doLocked(ctx, "delete", id)
	case 4:
		return w.doLocked(ctx, "insert", w.newPart(), "new", 1+r.Int64N(groups))
	default:
		return w.doLocked(ctx, "rename", fmt.Sprint("r", r.IntN(100)), 1+r.Int64N(groups))
	}
}

// catchUpEngines loads the model's data into st under the deployed
// schema and returns an engine with the added indexes write-only, another
// on the same store (its own locks: another process's writers), the
// model, the target schema (every index readable) and the data.
func catchUpEngines(t *testing.T, st store.Store, parts int) (en, other *exec.Engine, m *catalog.Model, target *catalog.Schema, cd *catchUpData) {
	t.Helper()
	ctx := context.Background()
	m, deployed, _ := parseSchema(t, catchUpModel, catchUpDeployed, catchUpWorkload)
	en = exec.New(st, m, deployed, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, func(e *catalog.Entity) int { return map[string]int{"g": 6, "p": parts}[e.Name] }, 5, 0)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	parse := func() *catalog.Schema {
		ss, err := lang.ParseScript("target.kvs", []byte(catchUpDeployed+catchUpAdded))
		if err != nil {
			t.Fatal(err)
		}
		s, err := catalog.ParseSchema(m, ss)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	building := parse()
	building.WriteOnly = map[*catalog.Index]bool{}
	for _, name := range catchUpBuilt {
		building.WriteOnly[building.Index(name)] = true
	}
	en = exec.New(st, m, building, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	return en, exec.New(st, m, building, cost.Cassandra), m, parse(), newCatchUpData(m, d)
}

// dumpTable returns the rows of table, each key with its cells.
func dumpTable(t testing.TB, st store.Store, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.ReadRows(context.Background(), table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		var b strings.Builder
		for _, c := range r.Cells {
			fmt.Fprintf(&b, "%s:%q=%q ", c.Family, c.Qualifier, c.Value)
		}
		out[string(r.Key)] = b.String()
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCatchUpBatches: writes during the bulk copy rename groups (every
// row of their partitions changes), move parts between groups (a row
// leaves one partition for another), change, delete and insert parts and
// add a group (a new partition row), and a writer keeps writing while the
// catch-up runs, in batches of a few rows. Then both indexes built verify
// clean and hold, cell for cell, what a fresh load of the data gives.
func TestCatchUpBatches(t *testing.T) {
	ctx := context.Background()
	// A round trip per call, so that the writer's writes land while
	// batches run.
	st := rttstore.New(memstore.New(), 20*time.Microsecond)
	en, other, m, target, cd := catchUpEngines(t, st, 60)
	total := int64(0)
	w := newCatchUpWriter(t, en, cd)
	ow := newCatchUpWriter(t, other, cd)
	r := rand.New(rand.NewPCG(1, 2))
	var werr error
	var errMu sync.Mutex
	groups := int64(6)
	check := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if err != nil && werr == nil {
			werr = err
		}
	}
	for _, name := range catchUpBuilt {
		wrote := false
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var concurrent, foreign atomic.Int64
		var fg sync.WaitGroup
		stopForeign, foreignStopped := make(chan struct{}), false
		stats, err := en.Backfill(ctx, name, exec.BackfillOptions{Batch: 7, MaxRounds: 10, Progress: func(ev exec.BackfillEvent) {
			switch {
			case ev.Step == "copy" && ev.Rows > 0 && !wrote:
				wrote = true
				for _, g := range []int64{1, 2, 3} {
					check(w.do(ctx, "rename", fmt.Sprint("renamed", g), g))
				}
				// No other writer runs yet.
				cd.mu.Lock()
				ids := w.parts()
				for _, id := range ids[:20] {
					check(w.doLocked(ctx, "move", id, 1+id%4))
				}
				for _, id := range ids[20:24] {
					check(w.doLocked(ctx, "delete", id))
				}
				for _, id := range ids[24:31] {
					check(w.doLocked(ctx, "setA0", "changed", id))
				}
				groups++
				check(w.doLocked(ctx, "insertG", groups, "added"))
				for i := range int64(8) {
					check(w.doLocked(ctx, "insert", w.newPart(), "new", 1+i%groups))
				}
				cd.mu.Unlock()
			case ev.Step == "copy" && ev.Done:
				// A writer through the catch-up.
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(3, uint64(len(name))))
					for {
						select {
						case <-stop:
							return
						default:
						}
						check(w.random(ctx, r, groups))
						concurrent.Add(1)
					}
				}()
				// And one of another process's (its marks are the next
				// pass's), stopped during the first pass.
				fg.Add(1)
				go func() {
					defer fg.Done()
					r := rand.New(rand.NewPCG(4, uint64(len(name))))
					for {
						select {
						case <-stopForeign:
							return
						default:
						}
						check(ow.random(ctx, r, groups))
						foreign.Add(1)
					}
				}()
			case ev.Step == "catch-up" && !ev.Done && ev.Rows > 0:
				if ev.Rows > 45 && !foreignStopped {
					foreignStopped = true
					close(stopForeign)
					fg.Wait()
				}
				// Writes between batches too, whatever the scheduler does.
				check(w.random(ctx, r, groups))
			}
		}})
		if !foreignStopped {
			close(stopForeign)
		}
		fg.Wait()
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if werr != nil {
			t.Fatal(werr)
		}
		t.Logf("%s: %d rows copied, %d recomputed in %d rounds; %d writes ran with the catch-up, %d of another process's", name, stats.Rows, stats.Recounted, stats.Rounds, concurrent.Load(), foreign.Load())
		total += min(concurrent.Load(), foreign.Load())
		if !wrote || stats.Recounted < 40 {
			t.Fatalf("%s: %d rows recomputed (writes during the copy: %v): the test checks little", name, stats.Recounted, wrote)
		}
	}
	if total == 0 {
		t.Fatal("no write ran with the catch-ups, or none of another process's")
	}
	rep, err := en.VerifyBuilt(ctx, catchUpBuilt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Fatalf("after the catch-up:\n%s", rep)
	}
	// A fresh load of the data as it now is.
	fresh := memstore.New()
	fen := exec.New(fresh, m, target, cost.Cassandra)
	if err := fen.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fen.Load(ctx, source(cd.data()), exec.LoadOptions{Identity: "fresh"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range catchUpBuilt {
		got, want := dumpTable(t, st, name), dumpTable(t, fresh, name)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s row %q: %s, a fresh load has %s", name, k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s row %q: %s, which a fresh load has not", name, k, v)
			}
		}
		if len(want) < 60 {
			t.Fatalf("%s: %d rows after a fresh load", name, len(want))
		}
	}
}

// TestCatchUpReadsPerPartition: a catch-up of N rows marked in k
// partitions reads the store O(k) times, not O(N): one rows query per
// partition, one read of the rows' cells and one guarded apply per batch.
// Counted, for k of 1 and 3 groups renamed during the copy (each renaming
// marks every row of its partition).
func TestCatchUpReadsPerPartition(t *testing.T) {
	ctx := context.Background()
	for _, k := range []int64{1, 3} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			st := countstore.New(memstore.New())
			en, _, _, _, cd := catchUpEngines(t, st, 180)
			w := newCatchUpWriter(t, en, cd)
			var werr error
			var atCopy, atEnd countstore.Stats
			wrote := false
			stats, err := en.Backfill(ctx, "cf_g_ps_named", exec.BackfillOptions{Progress: func(ev exec.BackfillEvent) {
				switch {
				case ev.Step == "copy" && ev.Rows == 0 && !ev.Done && !wrote:
					wrote = true
					for g := range k {
						if err := w.do(ctx, "rename", "renamed", 1+g); err != nil && werr == nil {
							werr = err
						}
					}
				case ev.Step == "copy" && ev.Done:
					atCopy = st.Stats()
				case ev.Step == "catch-up" && ev.Done:
					atEnd = st.Stats()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if werr != nil {
				t.Fatal(werr)
			}
			n := stats.Recounted
			reads := (atEnd.ReadRow + atEnd.ReadRows + atEnd.ReadIndex) - (atCopy.ReadRow + atCopy.ReadRows + atCopy.ReadIndex)
			t.Logf("%d rows recomputed in %d rounds: %d reads (%d applies)", n, stats.Rounds, reads, atEnd.Apply-atCopy.Apply)
			if n < 20*k {
				t.Fatalf("%d rows recomputed: the renamings marked too few to tell", n)
			}
			// Per pass one read of the markers; per partition one rows
			// query (two reads: the group, its parts); per batch one read
			// of the rows' cells and one guarded apply.
			if limit := int64(stats.Rounds) + 2*k + 2; reads > limit {
				t.Fatalf("the catch-up of %d rows in %d partitions read the store %d times, want at most %d", n, k, reads, limit)
			}
			rep, err := en.VerifyBuilt(ctx, []string{"cf_g_ps_named"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Clean() {
				t.Fatalf("after the catch-up:\n%s", rep)
			}
		})
	}
}

// markHookStore runs hook, once, before the first guarded batch that deletes
// migration markers.
type markHookStore struct {
	store.Store
	mu   sync.Mutex
	hook func()
}

func (s *markHookStore) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	s.mu.Lock()
	hook := s.hook
	if len(gs) > 0 && gs[0].Table == exec.MarkTable {
		s.hook = nil
	} else {
		hook = nil
	}
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.Store.(store.Guarded).ApplyGuards(ctx, gs, muts)
}

// TestCatchUpForeignWriteInBatch: a writer of another process renames
// every group after a catch-up batch has read its rows and before it
// applies them: the batch writes the old names over the new, so it must
// keep those rows' markers (their guards refuse), and the next pass
// rewrites them. Deleting a marker whatever it holds leaves the old
// names behind.
func TestCatchUpForeignWriteInBatch(t *testing.T) {
	ctx := context.Background()
	st := &markHookStore{Store: memstore.New()}
	en, other, _, _, cd := catchUpEngines(t, st, 60)
	w, ow := newCatchUpWriter(t, en, cd), newCatchUpWriter(t, other, cd)
	var werr error
	st.hook = func() {
		for g := range int64(6) {
			if err := ow.do(ctx, "rename", "foreign", 1+g); err != nil && werr == nil {
				werr = err
			}
		}
	}
	wrote := false
	stats, err := en.Backfill(ctx, "cf_g_ps_named", exec.BackfillOptions{Progress: func(ev exec.BackfillEvent) {
		if ev.Step == "copy" && !wrote {
			wrote = true
			for g := range int64(6) {
				if err := w.do(ctx, "rename", "during copy", 1+g); err != nil && werr == nil {
					werr = err
				}
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	if st.hook != nil || stats.Rounds < 2 {
		t.Fatalf("the foreign write did not run in a batch (%d rounds)", stats.Rounds)
	}
	rep, err := en.VerifyBuilt(ctx, []string{"cf_g_ps_named"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Fatalf("after the catch-up:\n%s", rep)
	}
}
