package exec_test

import (
	"context"
	"github.com/kvschema/kvschema/types"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/workload"
)

// countedEngine advises w in mode at 161MB and loads tiny generated data into
// its schema on a memory store whose calls are counted.
func countedEngine(t *testing.T, m *catalog.Model, w *workload.Workload, mode advisor.Mode) (*exec.Engine, *countstore.Store, *gen.Data) {
	t.Helper()
	res := advise(t, m, w, mode, 161e6)
	cs := countstore.New(memstore.New())
	en := exec.New(cs, m, res.Schema, cost.Cassandra)
	if err := en.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, tinyRUBiS, 3, 0)
	if _, err := en.Load(context.Background(), source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	return en, cs, d
}

// TestOneRoundTripPerStep: a query with an answer issues exactly one read
// per plan step, however many rows each step carries.
func TestOneRoundTripPerStep(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	for _, mode := range []advisor.Mode{advisor.WithSI, advisor.Normalized} {
		en, cs, d := countedEngine(t, m, w, mode)
		r := rand.New(rand.NewPCG(1, 1))
		multi := 0
		for _, s := range w.Statements {
			if s.Query == nil {
				continue
			}
			st, err := en.PrepareAST(s.AST)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				cs.Reset()
				got, err := st.Query(ctx, st.Resolved.SampleArgs(r, d.Rows)...)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Rows) == 0 {
					continue
				}
				stats := cs.Stats()
				if stats.RoundTrips != int64(len(st.Plan.Steps)) || stats.ReadRows != stats.RoundTrips {
					t.Fatalf("%s (%s): %d steps, store calls %v\n%s", s.Tag, mode, len(st.Plan.Steps), stats, st.Explain())
				}
				if len(st.Plan.Steps) > 1 && len(got.Rows) > 1 {
					multi++
				}
				break
			}
		}
		if mode == advisor.Normalized && multi == 0 {
			t.Fatal("no multi-step plan returned several rows: the test checks no batching")
		}
	}
}

// TestSupportQueryOncePerWrite: upkeeps that need the same support query
// share one run of it, as the advisor costs it.
func TestSupportQueryOncePerWrite(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	en, cs, _ := countedEngine(t, m, w, advisor.WithSI)
	st, err := en.Prepare("INSERT INTO bids SET id = ?, qty = 1, bid = 2.5, date = '2026-01-01 00:00:00' AND CONNECT TO item(?), user(?)")
	if err != nil {
		t.Fatal(err)
	}
	runs, plans := 0, map[*plan.Query]bool{}
	for _, u := range st.Upkeeps {
		for _, sp := range u.AllSupports() {
			runs++
			plans[sp.Plan] = true
		}
	}
	if runs <= len(plans) {
		t.Skipf("no two upkeeps share a support query (%d runs, %d plans): nothing to check", runs, len(plans))
	}
	cs.Reset()
	if _, err := st.Exec(ctx, int64(100000), int64(3), int64(2)); err != nil {
		t.Fatal(err)
	}
	if got := cs.Stats().ReadRows + cs.Stats().ReadRow; got != int64(len(plans)) {
		t.Fatalf("%d reads for %d distinct support queries (%d upkeep uses)\n%s", got, len(plans), runs, st.Explain())
	}
}

// TestSupportReadOnceUncontended: with no other writer, a write reads its
// support queries once, though they find entities it locks only after
// reading them (the items' categories and bids, the users of bids): no
// writer held those since the reads began (Locks.Unchanged), so a second
// read would find the same. Reads ≤ the steps of the distinct support
// plans plus the existence checks.
func TestSupportReadOnceUncontended(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	en, cs, _ := countedEngine(t, m, w, advisor.WithSI)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		stmt string
		args []types.Value
	}{
		{"UPDATE items SET quantity = ?, nb_of_bids = ?, end_date = ? WHERE items.id = ?", []types.Value{int64(5), int64(6), at, int64(3)}},
		{"UPDATE items SET nb_of_bids = ?, max_bid = ? WHERE items.id = ?", []types.Value{int64(7), 9.5, int64(3)}},
		{"UPDATE users SET rating = ? WHERE users.id = ?", []types.Value{int64(4), int64(2)}},
		{"INSERT INTO bids SET id = ?, qty = 1, bid = 2.5, date = '2026-01-01 00:00:00' AND CONNECT TO item(?), user(?)", []types.Value{int64(100001), int64(3), int64(2)}},
		{"INSERT INTO comments SET id = ?, rating = 1, date = '2026-01-01 00:00:00', comment = 'x' AND CONNECT TO to_user(?), from_user(?), item(?)", []types.Value{int64(100001), int64(2), int64(1), int64(3)}},
	} {
		st, err := en.Prepare(c.stmt)
		if err != nil {
			t.Fatal(err)
		}
		steps, plans := 0, map[*plan.Query]bool{}
		for _, u := range st.Upkeeps {
			for _, sp := range u.AllSupports() {
				if !plans[sp.Plan] {
					plans[sp.Plan] = true
					steps += len(sp.Plan.Steps)
				}
			}
		}
		ex := st.Explain()
		steps += strings.Count(ex, "CHECK ")
		cs.Reset()
		if _, err := st.Exec(ctx, c.args...); err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if got := cs.Stats().ReadRows + cs.Stats().ReadRow; got > int64(steps) {
			t.Errorf("%s: %d reads, the support plans and checks take %d\n%s", c.stmt, got, steps, ex)
		}
	}
}
