package advisor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// plainCBC is cbc without its LP relaxations (no solver.Relaxer): solve's
// run from start.go's start, without narrow.
type plainCBC struct{ cbc *solver.CBC }

func (p plainCBC) Name() string { return p.cbc.Name() }
func (p plainCBC) Solve(ctx context.Context, m *solver.Model) (*solver.Solution, error) {
	return p.cbc.Solve(ctx, m)
}

// narrowCount counts, from an advisor run's progress, the runs narrow
// prepared with fixed variables and the starts relaxStart found.
type narrowCount struct {
	mu               sync.Mutex
	fixedRuns, fixed int
	relaxStarts      int
}

func (c *narrowCount) progress(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n, of int
	switch {
	case strings.Contains(s, "variables fixed by reduced costs against the start's cost"):
		if _, err := fmt.Sscanf(s, "%d of %d", &n, &of); err == nil && n > 0 {
			c.fixedRuns++
			c.fixed += n
		}
	case strings.HasPrefix(s, "a start from the relaxation"):
		c.relaxStarts++
	}
}

// adviseNarrowed advises with cbc, narrowed, and without narrow (plainCBC),
// and fails unless both give the same least cost (a relative 1e-9) and
// the same least size of that cost, or both find the budget too small.
func adviseNarrowed(t tb, m *catalog.Model, w *workload.Workload, opt Options, count *narrowCount, what string) {
	t.Helper()
	opt.Progress = count.progress
	opt.Solver = &solver.CBC{}
	narrowed, err1 := Advise(context.Background(), m, w, opt)
	opt.Progress = nil
	opt.Solver = plainCBC{&solver.CBC{}}
	opt.noLocalStart = false
	plain, err2 := Advise(context.Background(), m, w, opt)
	var inf1, inf2 *InfeasibleError
	switch {
	case asInfeasible(err1, &inf1) && asInfeasible(err2, &inf2):
		if !sameCost(inf1.MinBudget, inf2.MinBudget) {
			t.Fatalf("least budget %v narrowed, %v plain\n%s", inf1.MinBudget, inf2.MinBudget, what)
		}
		return
	case err1 != nil || err2 != nil:
		t.Fatalf("narrowed: %v; plain: %v\n%s", err1, err2, what)
	}
	if !sameCost(narrowed.TotalCost, plain.TotalCost) || narrowed.TotalSize != plain.TotalSize ||
		narrowed.Stats.Optimal != plain.Stats.Optimal || narrowed.Stats.Smallest != plain.Stats.Smallest {
		t.Fatalf("narrowed: cost %.12g size %.0f (optimal %v, smallest %v); plain: cost %.12g size %.0f (optimal %v, smallest %v)\n%s",
			narrowed.TotalCost, narrowed.TotalSize, narrowed.Stats.Optimal, narrowed.Stats.Smallest,
			plain.TotalCost, plain.TotalSize, plain.Stats.Optimal, plain.Stats.Smallest, what)
	}
}

func asInfeasible(err error, inf **InfeasibleError) bool {
	e, ok := err.(*InfeasibleError)
	*inf = e
	return ok
}

// TestNarrowRUBiS: narrow (a start from the relaxation's support,
// variables fixed by reduced costs against it) keeps RUBiS's optima: the
// same least cost and least size as the run without it, where the local
// search's start is more than subStartGap above the relaxation's bound
// (so relaxStart runs) and from no local start at all.
func TestNarrowRUBiS(t *testing.T) {
	needCBC(t)
	m, w := loadRUBiS(t, "workload.kvs")
	var count narrowCount
	for _, c := range []struct {
		mix     string
		budget  float64
		profile cost.Profile
		noLocal bool
	}{
		{"bidding", 65.85e6, cost.Cassandra, false},
		{"browsing", 65.85e6, cost.Pebble, false},
		{"bidding", 0, cost.Pebble, true},
		{"bidding", 65.85e6, cost.Cassandra, true},
	} {
		what := fmt.Sprintf("%s within %v, %s, no local start %v", c.mix, c.budget, c.profile.Name, c.noLocal)
		adviseNarrowed(t, m, w, Options{Mix: c.mix, Budget: c.budget, Profile: c.profile, noLocalStart: c.noLocal}, &count, what)
	}
	t.Logf("%d runs with %d variables fixed; %d starts from the relaxation", count.fixedRuns, count.fixed, count.relaxStarts)
	if count.fixedRuns == 0 || count.relaxStarts == 0 {
		t.Fatalf("narrow fixed nothing (%d runs) or found no start (%d): the test checks nothing", count.fixedRuns, count.relaxStarts)
	}
}

// Property: on random instances (genWide's), unconstrained and under
// budgets below the unconstrained optimum's size, with and without the
// local search's start, advise finds the same least cost and least size
// with narrow as without.
func TestNarrowKeepsOptimumProperty(t *testing.T) {
	needCBC(t)
	var count narrowCount
	defer func() {
		t.Logf("%d runs with %d variables fixed; %d starts from the relaxation", count.fixedRuns, count.fixed, count.relaxStarts)
	}()
	rapid.Check(t, func(rt *rapid.T) {
		in := genWide(rt, 1)
		m, w := parse(rt, in.model, in.workload(nil))
		free, err := adviseCost(m, w, 0, WithSI)
		if err != nil {
			rt.Fatalf("%v\n%s", err, in)
		}
		budget := drawBudget(rt, free)
		noLocal := rapid.Bool().Draw(rt, "noLocalStart")
		mode := rapid.SampledFrom([]Mode{WithSI, NoSI}).Draw(rt, "mode")
		adviseNarrowed(rt, m, w, Options{Mix: "m", Budget: budget, Profile: cost.Cassandra, Mode: mode, noLocalStart: noLocal}, &count, in.String())
	})
	if count.fixedRuns == 0 || count.relaxStarts == 0 {
		t.Fatalf("narrow fixed nothing (%d runs) or found no start (%d): the property checks nothing", count.fixedRuns, count.relaxStarts)
	}
}
