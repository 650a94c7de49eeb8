package solver

import (
	"context"
	"math"
	"testing"
)

// Relax solves the LP relaxation: fractional values, every row's dual,
// and a bound from those duals equal to the relaxation's optimum; a
// fixed variable keeps its value and moves the optimum.
func TestCBCRelax(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	x := m.AddVar("x", Binary, 0, 1)
	y := m.AddVar("y", Binary, 0, 1)
	z := m.AddVar("z", Binary, 0, 1)
	m.SetObjective([]Term{{x, -2}, {y, -2}, {z, -1}})
	m.AddConstraint("pair", []Term{{x, 1}, {y, 1}}, LE, 1.5)
	m.AddConstraint("z", []Term{{z, 1}, {x, 1}}, LE, 1)
	r, err := c.Relax(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Optimal || math.Abs(r.Objective-(-3.5)) > 1e-6 {
		t.Fatalf("status %v objective %v, want optimal -3.5", r.Status, r.Objective)
	}
	// The relaxation's optimum: x = 0.5, y = 1, z = 0.5.
	want := []float64{0.5, 1, 0.5}
	for v, w := range want {
		if math.Abs(r.Values[v]-w) > 1e-6 {
			t.Errorf("values %v, want %v", r.Values, want)
			break
		}
	}
	if len(r.Duals) != m.NumConstraints() {
		t.Fatalf("%d duals for %d constraints", len(r.Duals), m.NumConstraints())
	}
	if bound, _ := m.ReducedCosts(r.Duals); math.Abs(bound-(-3.5)) > 1e-6 {
		t.Errorf("bound %v from the duals %v, want -3.5", bound, r.Duals)
	}
	// y fixed to 0: x = 1, z = 0 (objective -2), or any mix up to x = 1.
	m.Fix(y, 0)
	r, err = c.Relax(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Optimal || math.Abs(r.Objective-(-2)) > 1e-6 || r.Values[y] != 0 {
		t.Errorf("y fixed to 0: status %v objective %v values %v, want optimal -2 with y = 0", r.Status, r.Objective, r.Values)
	}
	if bound, _ := m.ReducedCosts(r.Duals); bound > -2+1e-6 || bound < -2-1e-6 {
		t.Errorf("y fixed to 0: bound %v from the duals %v, want -2", bound, r.Duals)
	}
}

// An infeasible relaxation is a status, not an error.
func TestCBCRelaxInfeasible(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	x := m.AddVar("x", Binary, 0, 1)
	y := m.AddVar("y", Binary, 0, 1)
	m.SetObjective([]Term{{x, 1}, {y, 1}})
	m.AddConstraint("both", []Term{{x, 1}, {y, 1}}, GE, 3)
	r, err := c.Relax(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Infeasible || r.Values != nil || r.Duals != nil {
		t.Errorf("got %+v, want Infeasible without values", r)
	}
}

// A solve of a model with fixed variables reports its gap against the
// whole objective: cbc's bound leaves out the fixed variables' part.
func TestCBCGapWithFixes(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	// A knapsack whose search a one-node limit stops, from a poor start;
	// the fixed variable's large cost is left out of the LP file.
	var terms, weights []Term
	for i := range 40 {
		v := m.AddVar("v", Binary, 0, 1)
		w := float64(1000 + (i*7919)%997)
		terms = append(terms, Term{v, -(w + float64((i*31)%7))})
		weights = append(weights, Term{v, w})
	}
	big := m.AddVar("big", Binary, 0, 1)
	terms = append(terms, Term{big, 1e5})
	m.SetObjective(terms)
	m.AddConstraint("cap", weights, LE, 20000.5)
	m.AddConstraint("big", []Term{{big, 1}}, GE, 1)
	m.Fix(big, 1)
	m.SetTuning(Tuning{NodeLimit: 1, NoHeuristics: true})
	c.Args = []string{"cutsOnOff", "off"}
	start := make([]float64, m.NumVars())
	start[big], start[0] = 1, 1
	m.SetStart(start)
	sol := solve(t, c, m)
	if sol.Status != Feasible {
		t.Fatalf("status %v: the node limit should stop the search", sol.Status)
	}
	// The relaxation's bound is 1e5 - 20071.5; the start, 99000.
	if !(sol.Gap > 0.15 && sol.Gap < 0.25) {
		t.Errorf("gap %v of objective %v: the bound must count the fixed variable's 1e5", sol.Gap, sol.Objective)
	}
	l := cbcLog{bound: -60, hasBound: true}
	if got := l.gap(940, 1000); math.Abs(got-0) > 1e-12 {
		t.Errorf("gap(940, offset 1000) = %v against a bound of -60, want 0", got)
	}
}
