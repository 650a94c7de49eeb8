package advisor

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
)

// TestApplyCostDecidesNothing: a write statement's one batch
// (cost.Profile.ApplyCost) is in every write's cost once, whatever the
// schema: on RUBiS's bidding mix the advisor chooses the same schema with
// it and without it, each write plan costs ApplyCost more, the total the
// writes' weights times ApplyCost more, and Evaluate agrees.
func TestApplyCostDecidesNothing(t *testing.T) {
	needCBC(t)
	m, w := loadRUBiS(t, "workload.kvs")
	base := cost.Cassandra
	with := base
	with.ApplyCost = 0.002
	advise := func(p cost.Profile) *Result {
		t.Helper()
		res, err := Advise(context.Background(), m, w, Options{Mix: "bidding", Profile: p, Solver: &solver.CBC{}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := advise(base), advise(with)
	names := func(r *Result) []string {
		var out []string
		for _, x := range r.Indexes {
			out = append(out, x.Key)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(names(a), names(b)) {
		t.Fatalf("ApplyCost changed the schema:\n%v\n%v", names(a), names(b))
	}
	weights := 0.0
	for i, wp := range b.Writes {
		weights += wp.Weight
		if d := wp.Cost - a.Writes[i].Cost; math.Abs(d-with.ApplyCost) > 1e-12 {
			t.Errorf("%s: write cost %v with ApplyCost, %v without", wp.Statement.Tag, wp.Cost, a.Writes[i].Cost)
		}
	}
	if weights == 0 {
		t.Fatal("no write in the mix: the test checks nothing")
	}
	if d := b.TotalCost - a.TotalCost; math.Abs(d-weights*with.ApplyCost) > 1e-9 {
		t.Errorf("total %v with ApplyCost, %v without: %v more, want %v", b.TotalCost, a.TotalCost, d, weights*with.ApplyCost)
	}
	ev, err := Evaluate(m, w, b.Schema, Options{Mix: "bidding", Profile: with})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ev.TotalCost-b.TotalCost) > 1e-9*b.TotalCost {
		t.Errorf("Evaluate: %v, Advise: %v", ev.TotalCost, b.TotalCost)
	}
}
