package advisor

import (
	"context"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/solver"
)

// Property: the size tie-break's fixes (fixByReducedCosts, from the first
// run's LP duals) hold for every schema the tie-break admits: every set of
// candidates within the budget that costs no more than the first run's
// schema (each query and support query on its cheapest plan in it, as
// Evaluate prices it) has each fixed index in or out as fixed.
func TestTieFixesKeepSchemasProperty(t *testing.T) {
	needCBC(t)
	fixed, checked := 0, 0
	defer func() { t.Logf("%d variables fixed, checked against %d schemas of least cost", fixed, checked) }()
	rapid.Check(t, func(t *rapid.T) {
		_, _, m, w, pb := smallInstance(t)
		budget := math.Inf(1)
		if frac := rapid.SampledFrom([]float64{0, 0.5, 0.7, 0.9}).Draw(t, "budget"); frac > 0 {
			free, err := advise(t, m, w, "m", 0, WithSI)
			if err != nil {
				t.Fatal(err)
			}
			budget = math.Floor(frac * free.TotalSize)
		}
		opt := Options{Mix: "m", Budget: budget, Profile: cost.Cassandra, Mode: WithSI, Solver: &solver.CBC{}}
		pr := buildILP(opt, pb.queries, pb.qdags, pb.writes, pb.upkeeps, pb.supports, pb.pool)
		sol, err := pr.solve(context.Background(), opt, &Stats{})
		if err == errInfeasible {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if pr.reduced == nil {
			t.Fatal("the first run gave no duals")
		}
		c1 := pr.costOf(sol.Values)
		pr.pinCost(c1)
		if pr.fixByReducedCosts(c1, sol.Values) == 0 {
			return
		}
		cands := pb.pool.Indexes()
		for mask := 1; mask < 1<<len(cands); mask++ {
			var set []*catalog.Index
			in := map[*catalog.Index]bool{}
			size := 0.0
			for i, x := range cands {
				if mask&(1<<i) != 0 {
					set = append(set, x)
					in[x] = true
					size += x.Size
				}
			}
			if size > budget {
				continue
			}
			p := planner.NewPool(set)
			valid := true
			for _, x := range set {
				if _, ok := pr.x[x]; !ok || x.Kind == catalog.SI && len(p.Bases[x]) == 0 {
					valid = false
				}
			}
			if !valid {
				continue
			}
			res, err := Evaluate(m, w, &catalog.Schema{Indexes: set, Base: map[*catalog.Index]*catalog.Index{}}, Options{Mix: "m", Profile: cost.Cassandra})
			if err != nil || res.TotalCost > c1*(1+1e-9) {
				continue
			}
			checked++
			for x, v := range pr.x {
				if f, ok := pr.m.FixedValue(v); ok && (f == 1) != in[x] {
					t.Fatalf("%s is fixed to %v; the schema %v costs %v, no more than the first run's %v", x.Key, f, describeSet(set), res.TotalCost, c1)
				}
			}
		}
		fixed += pr.m.NumFixed()
	})
}

func describeSet(xs []*catalog.Index) []string {
	var out []string
	for _, x := range xs {
		out = append(out, x.Describe())
	}
	return out
}
