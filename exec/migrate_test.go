//go:build !race

package exec_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/faultstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// TestMigrateUnderLoad migrates a loaded RUBiS store (migrationTarget)
// while writers and readers run through the same DB: the writers' every
// statement also goes to SQLite, under one lock, so SQLite holds what the
// store must. After it, verify is clean against SQLite's data and on its
// own, and every workload query answers as SQLite does; during it, no
// statement failed, and some rows the backfills copied were changed by
// writers and recomputed (the catch-up rounds did something).
func TestMigrateUnderLoad(t *testing.T) {
	for _, kind := range []string{"mem", "pebble"} {
		t.Run(kind, func(t *testing.T) {
			var st store.Store = memstore.New()
			if kind == "pebble" {
				var err error
				if st, err = pebblestore.Open(filepath.Join(t.TempDir(), "db"), pebblestore.Options{NoSync: true}); err != nil {
					t.Fatal(err)
				}
				defer st.Close()
			}
			testMigrateUnderLoad(t, st, map[string]float64{"mem": 600, "pebble": 400}[kind])
		})
	}
}

func testMigrateUnderLoad(t *testing.T, st store.Store, rate float64) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	db := deployedDB(t, st, from)
	before, _ := db.Advised(ctx)
	or := oracleFor(t, m)
	d := gen.Generate(m, tinyRUBiS, 5, 0)
	insertAll(t, ctx, before, or, d)

	plan, err := migrateRUBiS(db, to, kvschema.MigrateOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dry run:\n%s", plan)
	if len(plan.Add) != 4 || len(plan.Drop) != 2 {
		t.Fatalf("dry run: %d to add, %d to drop; want 4 and 2:\n%s", len(plan.Add), len(plan.Drop), plan)
	}

	// Writers and readers until the migration is over.
	var (
		mu      sync.Mutex // a write and its SQLite twin, as one step
		stop    atomic.Bool
		wg      sync.WaitGroup
		writes  atomic.Int64
		reads   atomic.Int64
		errs    = make(chan error, 8)
		next    = map[*catalog.Entity]int{}
		writers []*workload.Statement
		readers []*workload.Statement
	)
	for _, e := range m.Entities {
		next[e] = len(d.Rows[e]) + 1
	}
	for _, s := range w.Statements {
		switch {
		case s.Write != nil && s.Write.Kind != catalog.Delete:
			writers = append(writers, s)
		case s.Query != nil:
			readers = append(readers, s)
		}
	}
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
		stop.Store(true)
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 11))
			for n := 0; !stop.Load(); n++ {
				s := writers[r.IntN(len(writers))]
				mu.Lock()
				if anyEmpty(d, s.Write) {
					mu.Unlock()
					continue
				}
				args := writeArgs(r, d, s.Write, next)
				_, err := db.Exec(ctx, lang.Print(s.AST), goArgs(args)...)
				if err == nil {
					err = or.Write(s.Write, args)
				}
				if err == nil && n%20 == 0 {
					refresh(t, d, or)
				}
				mu.Unlock()
				if err != nil {
					fail(errors.New(lang.Print(s.AST) + ": " + err.Error()))
					return
				}
				writes.Add(1)
				time.Sleep(200 * time.Microsecond) // a pace, not a flood
			}
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 12))
			for !stop.Load() {
				s := readers[r.IntN(len(readers))]
				mu.Lock()
				args := s.Query.SampleArgs(r, d.Rows)
				mu.Unlock()
				rows, err := db.Query(ctx, lang.Print(s.AST), goArgs(args)...)
				if err == nil {
					err = rows.Close()
				}
				if err != nil {
					fail(errors.New(lang.Print(s.AST) + ": " + err.Error()))
					return
				}
				reads.Add(1)
			}
		}()
	}
	var phases []string
	time.Sleep(50 * time.Millisecond)
	res, err := migrateRUBiS(db, to, kvschema.MigrateOptions{
		Rate: rate, // rows a second: slow enough that writers meet the backfills
		Progress: func(ev kvschema.MigrateEvent) {
			if ev.Done && (len(phases) == 0 || phases[len(phases)-1] != ev.Phase) {
				phases = append(phases, ev.Phase)
			}
		},
	})
	time.Sleep(50 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var recounted int64
	for name, s := range res.Stats {
		t.Logf("%s: %d rows copied, %d recomputed in %d rounds, %v", name, s.Rows, s.Recounted, s.Rounds, s.Elapsed)
		recounted += s.Recounted
	}
	t.Logf("%d writes, %d reads during the migration; phases %v", writes.Load(), reads.Load(), phases)
	if writes.Load() < 50 || reads.Load() < 50 {
		t.Fatal("too few statements ran during the migration: the test checks little")
	}
	if recounted == 0 {
		t.Fatal("no row a backfill copied was changed by a writer: the catch-up went untested")
	}
	want := "count add backfill catch-up verify switch drop done"
	if got := strings.Join(phases, " "); !strings.Contains(got, "switch drop done") || !regexp.MustCompile(`^(count )+add backfill`).MatchString(got) {
		t.Fatalf("phases %q, want them in the order %q", got, want)
	}

	after, _ := db.Advised(ctx)
	if len(after.Schema().WriteOnly) > 0 || len(after.Advised().Dropping) > 0 {
		t.Fatalf("the migration left a state behind:\n%s", after.Advised().SchemaSrc)
	}
	if after.Schema().Index("cf_users_by_rating") != nil || after.Schema().Index("si_users_by_rating") == nil {
		t.Fatal("the schema after the migration is not the target")
	}
	refresh(t, d, or)
	checkMigrated(t, ctx, after, or, w, d, rand.New(rand.NewPCG(9, 9)), 3)
	// The dropped tables hold nothing.
	for _, name := range []string{"cf_users_by_rating", "cf_comments_users_by_rating"} {
		if x := after.Schema().Index(name); x != nil && name == "cf_comments_users_by_rating" {
			continue // the target's name, taken by the new family once the old was gone? (it is renamed)
		}
		n := 0
		if err := st.ReadRows(ctx, name, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil && !errors.Is(err, store.ErrNoTable) {
			t.Fatal(err)
		}
		if n > 0 {
			t.Fatalf("dropped %s still holds %d rows", name, n)
		}
	}
	// Migrating again to the same target changes nothing.
	again, err := migrateRUBiS(db, to, kvschema.MigrateOptions{})
	if err != nil || again.Changes() {
		t.Fatalf("a second migration: %v\n%s", err, again)
	}
}

func goArgs(vs []types.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

func oracleFor(t testing.TB, m *catalog.Model) *oracle.Oracle {
	t.Helper()
	or, err := oracle.NewOracle(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { or.DB.Close() })
	return or
}

// TestMigrateCrashResume stops a migration (migrationTarget, on the
// intent-logged store Bigtable runs on) at row mutations spread over the
// whole of it — as if the process died there — then a new client writes
// through whatever state the store was left in, and runs the migration
// again: it finishes, verify is clean against SQLite, and every workload
// query answers as SQLite does.
func TestMigrateCrashResume(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	raw := memstore.New()
	open := func(s txnstore.Inner) *kvschema.DB {
		// A short lock timeout: the crash leaves intents of writes that
		// will never commit, which a new client waits out.
		db, err := kvschema.New(ctx, txnstore.New(s, txnstore.Options{LockTimeout: 200 * time.Millisecond}), kvschema.Options{NoWorkloadCounts: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open(raw)
	if _, err := db.Deploy(ctx, "model.kvs", []byte(examples.RUBiSModel), "schema.kvs", from, cost.Cassandra); err != nil {
		t.Fatal(err)
	}
	en, _ := db.Advised(ctx)
	d := gen.Generate(m, tinyRUBiS, 6, 0)
	insertAll(t, ctx, en, oracleFor(t, m), d)
	snap, err := raw.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	migrate := func(db *kvschema.DB) (*kvschema.Migration, error) {
		return migrateRUBiS(db, to, kvschema.MigrateOptions{Grace: -1})
	}
	// How many row mutations a whole migration makes.
	f := faultstore.New(raw)
	if _, err := migrate(open(f)); err != nil {
		t.Fatal(err)
	}
	total := f.Count()
	var writes []*workload.Statement
	for _, s := range w.Statements {
		if s.Write != nil {
			writes = append(writes, s)
		}
	}
	r := rand.New(rand.NewPCG(5, 5))
	ks := []int{1, 2, 3, total / 2, total - 1, total}
	for len(ks) < 12 {
		ks = append(ks, 1+r.IntN(total))
	}
	for _, k := range ks {
		t.Run(fmt.Sprint("k", k), func(t *testing.T) {
			if err := snap.Restore(ctx); err != nil {
				t.Fatal(err)
			}
			or := oracleFor(t, m)
			dk := gen.Generate(m, tinyRUBiS, 6, 0)
			for _, e := range dk.Order {
				for _, row := range dk.Rows[e] {
					if err := or.Insert(e, row); err != nil {
						t.Fatal(err)
					}
				}
			}
			f := faultstore.New(raw)
			f.Arm(k, faultstore.Stop)
			if _, err := migrate(open(f)); err == nil && k < total {
				t.Fatalf("the migration succeeded although the store stopped at row mutation %d of %d", k, total)
			}
			// A new client writes through the state the crash left.
			db := open(raw)
			next := map[*catalog.Entity]int{}
			for _, e := range m.Entities {
				next[e] = len(dk.Rows[e]) + 1
			}
			for i := 0; i < 30; i++ {
				s := writes[r.IntN(len(writes))]
				if anyEmpty(dk, s.Write) {
					continue
				}
				args := writeArgs(r, dk, s.Write, next)
				if _, err := db.Exec(ctx, lang.Print(s.AST), goArgs(args)...); err != nil {
					t.Fatalf("%s %v: %v", lang.Print(s.AST), args, err)
				}
				if err := or.Write(s.Write, args); err != nil {
					t.Fatal(err)
				}
				refresh(t, dk, or)
			}
			res, err := migrate(db)
			if err != nil {
				t.Fatalf("resuming: %v", err)
			}
			if k < total && !res.Changes() {
				t.Fatalf("stopped at row mutation %d of %d, the store needed nothing more", k, total)
			}
			after, _ := db.Advised(ctx)
			if len(after.Schema().WriteOnly) > 0 || len(after.Advised().Dropping) > 0 || after.Schema().Index("si_users_by_rating") == nil {
				t.Fatalf("the migration did not reach the target:\n%s", after.Advised().SchemaSrc)
			}
			checkVerify(t, ctx, after, or)
			da := byName(dk, after.Model())
			runQueries(t, ctx, after, or, w, da, r, 1)
		})
	}
}

// TestMigrateToAdvised: what advise recommends against a deployed schema
// (RUBiS write-heavy's, to the bidding mix, without a reload) a migration
// builds from the store: the pre-flight finds every new index's rows, and
// the migrated store verifies clean and answers as SQLite does.
func TestMigrateToAdvised(t *testing.T) {
	needCBC(t)
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	from, _ := migrationTarget(t)
	stmts, err := lang.ParseScript("schema.kvs", from)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := advisor.Advise(ctx, m, w, advisor.Options{Mix: "bidding", Profile: cost.Cassandra, Solver: &solver.CBC{}, Budget: 161e6,
		Current: cur, Rate: 200, Amortize: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Migration.Add) == 0 {
		t.Fatal("the recommendation adds nothing: the test checks nothing")
	}
	var ddl strings.Builder
	if err := res.WriteDDL(&ddl, m.Defs); err != nil {
		t.Fatal(err)
	}
	db := deployedDB(t, memstore.New(), from)
	before, _ := db.Advised(ctx)
	or := oracleFor(t, m)
	d := gen.Generate(m, tinyRUBiS, 8, 0)
	insertAll(t, ctx, before, or, d)
	mg, err := db.Migrate(ctx, "next.kvs", []byte(ddl.String()), "next.kvs", []byte(ddl.String()), cost.Cassandra, kvschema.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d added, %d dropped, %d kept", len(mg.Add), len(mg.Drop), len(mg.Keep))
	after, _ := db.Advised(ctx)
	checkMigrated(t, ctx, after, or, w, d, rand.New(rand.NewPCG(1, 2)), 2)
}

// TestMigrateStaleReader: a client that only reads (another process on a
// shared store: here a second DB on the same store) and last read the
// catalog before a migration dropped the tables its plans read finds them
// gone, reads the newest definitions and answers as a fresh client does.
func TestMigrateStaleReader(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	st := memstore.New()
	open := func() *kvschema.DB {
		db, err := kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a := open()
	if _, err := a.Deploy(ctx, "model.kvs", []byte(examples.RUBiSModel), "schema.kvs", from, cost.Cassandra); err != nil {
		t.Fatal(err)
	}
	en, _ := a.Advised(ctx)
	d := gen.Generate(m, tinyRUBiS, 3, 0)
	insertAll(t, ctx, en, oracleFor(t, m), d)
	b := open()
	r := rand.New(rand.NewPCG(3, 3))
	type q struct {
		text string
		args []any
	}
	var qs []q
	for _, s := range w.Statements {
		if s.Query != nil {
			qs = append(qs, q{lang.Print(s.AST), goArgs(s.Query.SampleArgs(r, d.Rows))})
		}
	}
	answer := func(db *kvschema.DB, q q) []string {
		rows, err := db.Query(ctx, q.text, q.args...)
		if err != nil {
			t.Fatalf("%s: %v", q.text, err)
		}
		var out []string
		for rows.Next() {
			vals := make([]any, len(rows.Columns()))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		slices.Sort(out)
		return out
	}
	for _, q := range qs {
		answer(b, q) // b plans every query on the deployed schema
	}
	if _, err := migrateRUBiS(a, to, kvschema.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if got, want := answer(b, q), answer(a, q); !slices.Equal(got, want) {
			t.Fatalf("%s: the stale client answers %v, a fresh one %v", q.text, got, want)
		}
	}
}

// checkMigrated checks the engine after a migration against the oracle:
// verify clean, and the workload's queries, times each, answering as
// SQLite does (and not all of them nothing).
func checkMigrated(t testing.TB, ctx context.Context, after *exec.Engine, or *oracle.Oracle, w *workload.Workload, d *gen.Data, r *rand.Rand, times int) {
	t.Helper()
	checkVerify(t, ctx, after, or)
	if runQueries(t, ctx, after, or, w, byName(d, after.Model()), r, times) == 0 {
		t.Fatal("every query answered nothing")
	}
}

// byName returns d keyed by the entities of m (another parse of d's model,
// as a migrated engine's is).
func byName(d *gen.Data, m *catalog.Model) *gen.Data {
	out := &gen.Data{Rows: map[*catalog.Entity][][]types.Value{}}
	for _, e := range d.Order {
		me := m.Entity(e.Name)
		out.Order = append(out.Order, me)
		out.Rows[me] = d.Rows[e]
	}
	return out
}

// TestShortSIs: a store an earlier kvschema wrote, whose SI rows do not
// hold their base's whole key (catalog.Advised.ShortSIs: its catalog has
// no si-rows cell), reads, writes and verifies as it did, the base lookup
// after such an SI reading the partition and filtering it; a migration to
// the same schema rebuilds the short SI, whose base lookup is then a
// point lookup, and records that no SI is short.
func TestShortSIs(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	schema, err := os.ReadFile("testdata/store-bytes-workload_secondary-161MB.kvs")
	if err != nil {
		t.Fatal(err)
	}
	const name = "si_users_buynow_items_by_items_id" // its base is clustered by bought_now.date
	st := memstore.New()
	db := deployedDB(t, st, schema)
	fresh, _ := db.Advised(ctx)
	if x := fresh.Schema().Index(name); x == nil || x.BaseOrder == nil || len(fresh.Advised().ShortSIs) > 0 {
		t.Fatalf("a new deployment: %s holds no base key, or short SIs %v", name, fresh.Advised().ShortSIs)
	}
	// The catalog as an earlier kvschema saved it: no si-rows cell.
	version, stored, err := catalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if stored.SIRows != "base-key" {
		t.Fatalf("stored si-rows %q, want base-key", stored.SIRows)
	}
	stored.SIRows = ""
	if _, err := catalog.Save(ctx, st, version, stored); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Opened by this kvschema.
	db, err = kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old, err := db.Advised(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if x := old.Schema().Index(name); !slices.Contains(old.Advised().ShortSIs, name) || x.BaseOrder != nil {
		t.Fatalf("short SIs %v: want %s among them, without a base key", old.Advised().ShortSIs, name)
	}

	or := oracleFor(t, m)
	d := gen.Generate(m, tinyRUBiS, 5, 0)
	insertAll(t, ctx, old, or, d) // the short SI's rows written short
	r := rand.New(rand.NewPCG(3, 3))
	next := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		next[e] = len(d.Rows[e]) + 1
	}
	do := byName(d, old.Model())
	runQueries(t, ctx, old, or, w, do, r, 1)
	runWrites(t, ctx, old, or, w, do, r, next, 2)
	refresh(t, do, or)
	checkVerify(t, ctx, old, or)
	if runQueries(t, ctx, old, or, w, do, r, 2) == 0 {
		t.Fatal("every query answered nothing")
	}

	res, err := migrateRUBiS(db, schema, kvschema.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("migration:\n%s", res)
	if len(res.Add) != 1 || len(res.Drop) != 1 || res.Drop[0].Name != name || res.Add[0].Was != name {
		t.Fatalf("migration: want %s rebuilt (one added under another name, the short one dropped):\n%s", name, res)
	}
	after, err := db.Advised(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Advised().ShortSIs) > 0 || after.Schema().Index(res.Add[0].Name).BaseOrder == nil {
		t.Fatalf("after the migration: short SIs %v", after.Advised().ShortSIs)
	}
	if _, stored, err = catalog.Load(ctx, st); err != nil || stored.SIRows != "base-key" {
		t.Fatalf("stored si-rows %q (%v), want base-key", stored.SIRows, err)
	}
	da := byName(d, after.Model())
	checkVerify(t, ctx, after, or)
	runWrites(t, ctx, after, or, w, da, r, next, 2)
	refresh(t, da, or)
	checkVerify(t, ctx, after, or)
	if runQueries(t, ctx, after, or, w, da, r, 2) == 0 {
		t.Fatal("every query answered nothing")
	}
}

// TestMigrateWaves: from RUBiS browsing's advice (keeping the data) to
// bidding's, the new indexes are built in waves (kvschema.Migration.Waves:
// an index whose upkeep would scan a table until another new one is
// readable comes after it), each added, backfilled, verified and switched
// before the next, while a writer runs the bidding writes; the store
// verifies clean against SQLite after it and answers as SQLite does.
func TestMigrateWaves(t *testing.T) {
	needCBC(t)
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	ddl := func(res *advisor.Result) []byte {
		var b strings.Builder
		if err := res.WriteDDL(&b, m.Defs); err != nil {
			t.Fatal(err)
		}
		return []byte(b.String())
	}
	browsing, err := advisor.Advise(ctx, m, w, advisor.Options{Mix: "browsing", Profile: cost.Cassandra, Solver: &solver.CBC{}, KeepData: true})
	if err != nil {
		t.Fatal(err)
	}
	from := ddl(browsing)
	stmts, err := lang.ParseScript("from.kvs", from)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	bidding, err := advisor.Advise(ctx, m, w, advisor.Options{Mix: "bidding", Profile: cost.Cassandra, Solver: &solver.CBC{}, KeepData: true,
		Current: cur, Rate: 200, Amortize: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	to := ddl(bidding)

	db := deployedDB(t, memstore.New(), from)
	before, _ := db.Advised(ctx)
	or := oracleFor(t, m)
	d := gen.Generate(m, tinyRUBiS, 4, 0)
	insertAll(t, ctx, before, or, d)
	plan, err := migrateRUBiS(db, to, kvschema.MigrateOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dry run:\n%s", plan)
	if len(plan.Waves) < 2 {
		t.Fatalf("one wave: the test checks nothing\n%s", plan)
	}
	inWaves := map[string]int{}
	for _, wave := range plan.Waves {
		for _, n := range wave {
			inWaves[n]++
		}
	}
	for _, x := range plan.Add {
		if inWaves[x.Name] != 1 {
			t.Errorf("%s is in %d waves", x.Name, inWaves[x.Name])
		}
	}
	if len(inWaves) != len(plan.Add) {
		t.Errorf("the waves hold %d indexes, the migration adds %d", len(inWaves), len(plan.Add))
	}

	var (
		mu      sync.Mutex
		stop    atomic.Bool
		wg      sync.WaitGroup
		werr    error
		writes  int
		next    = map[*catalog.Entity]int{}
		writers []*workload.Statement
	)
	for _, e := range m.Entities {
		next[e] = len(d.Rows[e]) + 1
	}
	for _, s := range w.Statements {
		if s.Write != nil && s.Write.Kind != catalog.Delete && s.Weight("bidding") > 0 {
			writers = append(writers, s)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(5, 5))
		for !stop.Load() {
			s := writers[r.IntN(len(writers))]
			mu.Lock()
			if anyEmpty(d, s.Write) {
				mu.Unlock()
				continue
			}
			args := writeArgs(r, d, s.Write, next)
			_, err := db.Exec(ctx, lang.Print(s.AST), goArgs(args)...)
			if err == nil {
				err = or.Write(s.Write, args)
			}
			if err == nil && writes%20 == 0 {
				refresh(t, d, or)
			}
			writes++
			mu.Unlock()
			if err != nil {
				werr = errors.New(lang.Print(s.AST) + ": " + err.Error())
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	var seq []string // phase@wave, as they happen
	res, err := migrateRUBiS(db, to, kvschema.MigrateOptions{Rate: 3000, Progress: func(ev kvschema.MigrateEvent) {
		if ev.Done && ev.Phase != "backfill" && ev.Phase != "catch-up" {
			step := fmt.Sprintf("%s@%d", ev.Phase, ev.Wave)
			if len(seq) == 0 || seq[len(seq)-1] != step {
				seq = append(seq, step)
			}
		}
	}})
	stop.Store(true)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"count@0"} // the relations of the indexes to add, first
	for k := range res.Waves {
		want = append(want, fmt.Sprintf("add@%d", k+1), fmt.Sprintf("verify@%d", k+1), fmt.Sprintf("switch@%d", k+1))
	}
	if got := regexp.MustCompile(`^(count@0 )+`).ReplaceAllString(strings.Join(seq, " "), "count@0 "); !strings.HasPrefix(got, strings.Join(want, " ")) {
		t.Errorf("steps %q, want the waves in order: %q", got, strings.Join(want, " "))
	}
	t.Logf("%d writes during the migration; steps %v", writes, seq)
	if writes < 20 {
		t.Fatal("too few writes ran during the migration: the test checks little")
	}
	after, _ := db.Advised(ctx)
	if len(after.Schema().WriteOnly) > 0 || len(after.Advised().Dropping) > 0 {
		t.Fatalf("the migration left a state behind:\n%s", after.Advised().SchemaSrc)
	}
	refresh(t, d, or)
	checkMigrated(t, ctx, after, or, w, d, rand.New(rand.NewPCG(3, 4)), 2)
}

// TestCatchUpAfterCopy: a backfill's catch-up recomputes a row a write
// marked during the copy, or one another DB's writer marked (it takes
// none of this DB's locks), but not a row this DB's writers first
// changed after the copy ended: they keep it right themselves. Writes of
// bids and items, run when cf_items_bids_static's copy ends, through the
// migrating DB leave its catch-up nothing to recompute; through a second
// DB on the store, something. Either way the store verifies clean.
func TestCatchUpAfterCopy(t *testing.T) {
	ctx := context.Background()
	m, _ := loadRUBiS(t, "workload_secondary.kvs")
	const built = "cf_items_bids_static"
	for _, foreign := range []bool{false, true} {
		t.Run(map[bool]string{false: "same DB", true: "another DB"}[foreign], func(t *testing.T) {
			st := memstore.New()
			from, to := migrationTarget(t)
			db := deployedDB(t, st, from)
			d := gen.Generate(m, tinyRUBiS, 6, 0)
			if _, err := db.Load(ctx, source(d), exec.LoadOptions{Identity: "catch-up"}); err != nil {
				t.Fatal(err)
			}
			writer := db
			if foreign {
				var err error
				if writer, err = kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true}); err != nil {
					t.Fatal(err)
				}
				defer writer.Close()
			}
			items := int64(tinyRUBiS(m.Entity("items")))
			fired, n := false, 0
			var werr error
			res, err := migrateRUBiS(db, to, kvschema.MigrateOptions{Progress: func(ev kvschema.MigrateEvent) {
				if ev.Phase != "backfill" || !ev.Done || ev.Index != built || fired {
					return
				}
				fired = true
				for i := int64(1); i <= 5 && werr == nil; i++ {
					item := 1 + i*7%items
					_, werr = writer.Exec(ctx, "INSERT INTO bids SET id=?, qty=?, bid=?, date=? AND CONNECT TO item(?), user(?)",
						int64(2_000_000)+i, int64(1), 2.5, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), item, int64(1))
					if werr == nil {
						_, werr = writer.Exec(ctx, "UPDATE items SET max_bid = ? WHERE items.id = ?", float64(90+i), item)
					}
					n++
				}
			}})
			if werr != nil {
				t.Fatal(werr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !fired || n != 5 {
				t.Fatalf("the writes did not run when %s's copy ended", built)
			}
			s := res.Stats[built]
			t.Logf("%s: %d rows copied, %d recomputed in %d rounds", built, s.Rows, s.Recounted, s.Rounds)
			switch {
			case foreign && s.Recounted == 0:
				t.Error("rows another DB wrote after the copy were not recomputed")
			case !foreign && s.Recounted != 0:
				t.Errorf("%d rows the migrating DB wrote after the copy were recomputed", s.Recounted)
			}
			after, _ := db.Advised(ctx)
			rep, err := after.Verify(ctx, exec.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Differences) > 0 {
				t.Fatalf("verify: %d differences, first %s", len(rep.Differences), rep.Differences[0])
			}
		})
	}
}
