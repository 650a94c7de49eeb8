package solver

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// fixSome fixes a few of m's variables to drawn values.
func fixSome(t *rapid.T, m *Model) {
	for v := range m.NumVars() {
		if rapid.IntRange(0, 3).Draw(t, fmt.Sprint("fix ", v)) == 0 {
			m.Fix(Var(v), float64(rapid.IntRange(0, 1).Draw(t, fmt.Sprint("to ", v))))
		}
	}
}

// assignments calls f with every 0-1 assignment of m's variables that
// keeps its fixes and satisfies its constraints.
func assignments(m *Model, f func(values []float64)) {
	n := m.NumVars()
	values := make([]float64, n)
	for mask := 0; mask < 1<<n; mask++ {
		keeps := true
		for i := range values {
			values[i] = float64(mask >> i & 1)
			if x, ok := m.FixedValue(Var(i)); ok && x != values[i] {
				keeps = false
			}
		}
		if _, violated := m.Evaluate(values); keeps && len(violated) == 0 {
			f(values)
		}
	}
}

// Property: Propagate fixes only what every solution agrees on, and says
// a model is infeasible only when it is.
func TestPropagateKeepsSolutions(t *testing.T) {
	fixed, infeasible := 0, 0
	defer func() { t.Logf("%d variables fixed, %d models found infeasible", fixed, infeasible) }()
	rapid.Check(t, func(t *rapid.T) {
		m := randomModel(t)
		fixSome(t, m)
		var sols [][]float64
		assignments(m, func(v []float64) { sols = append(sols, append([]float64(nil), v...)) })
		n, ok := m.Propagate()
		fixed += n
		if !ok {
			infeasible++
			if len(sols) > 0 {
				t.Fatalf("Propagate says infeasible; %v satisfies every row", sols[0])
			}
			return
		}
		for _, s := range sols {
			for v := range s {
				if x, ok := m.FixedValue(Var(v)); ok && x != s[v] {
					t.Fatalf("Propagate fixed %s to %v; the solution %v has %v", m.VarName(Var(v)), x, s, s[v])
				}
			}
		}
	})
}

// Property: ReducedCosts' bound holds, for any duals, at every solution,
// with each variable's reduced cost added as it moves off its bound.
func TestReducedCostsBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := randomModel(t)
		fixSome(t, m)
		duals := make([]float64, m.NumConstraints())
		for i := range duals {
			duals[i] = float64(rapid.IntRange(-6, 6).Draw(t, fmt.Sprint("dual ", i))) / 2
		}
		bound, d := m.ReducedCosts(duals)
		assignments(m, func(x []float64) {
			obj, _ := m.Evaluate(x)
			lower := bound
			for v := range x {
				lo, hi := m.bounds(Var(v))
				if d[v] > 0 {
					lower += d[v] * (x[v] - lo)
				} else {
					lower += -d[v] * (hi - x[v])
				}
			}
			if obj < lower-1e-9 {
				t.Fatalf("objective %v at %v, below the bound %v (%v with the reduced costs %v)", obj, x, bound, lower, d)
			}
		})
	})
}

// Property: with variables fixed, cbc finds the optimum an exhaustive search
// over the other variables finds, and gives the fixed ones their values.
func TestCBCFixedMatchesExhaustive(t *testing.T) {
	c := requireCBC(t)
	rapid.Check(t, func(t *rapid.T) {
		m := randomModel(t)
		fixSome(t, m)
		m.Propagate()
		want := solve(t, Exhaustive{}, m)
		got := solve(t, c, m)
		if got.Status != want.Status {
			t.Fatalf("cbc status %v, exhaustive %v", got.Status, want.Status)
		}
		if got.Status != Optimal {
			return
		}
		if math.Abs(got.Objective-want.Objective) > 1e-6 {
			t.Fatalf("cbc objective %v, exhaustive %v", got.Objective, want.Objective)
		}
		checkSolution(t, m, got)
		for v, x := range got.Values {
			if f, ok := m.FixedValue(Var(v)); ok && f != x {
				t.Fatalf("%s fixed to %v, cbc gives %v", m.VarName(Var(v)), f, x)
			}
		}
	})
}

// A fixed variable stays out of the LP file: its terms move to the
// right-hand sides, a row it leaves empty goes if it holds and stays
// (violated) if it does not.
func TestWriteLPFixed(t *testing.T) {
	m := NewModel()
	a := m.AddVar("a", Binary, 0, 1)
	b := m.AddVar("b", Binary, 0, 1)
	c := m.AddVar("c", Binary, 0, 1)
	m.SetObjective([]Term{{a, 1}, {b, 2}, {c, 3}})
	m.AddConstraint("ab", []Term{{a, 1}, {b, 1}}, LE, 1)
	m.AddConstraint("c only", []Term{{c, 1}}, GE, 1)
	m.AddConstraint("c never", []Term{{c, 1}}, LE, 0)
	m.Fix(c, 1)
	var out strings.Builder
	if err := m.WriteLP(&out); err != nil {
		t.Fatal(err)
	}
	lp := out.String()
	body := lp[strings.Index(lp, "Minimize"):]
	for _, want := range []string{"obj: 1 x0 + 2 x1\n", " c0: 1 x0 + 1 x1 <= 1\n", " c2: 0 x0 <= -1\n", "Binaries\n x0 x1\n", "3 variables, 3 constraints, 1 variables fixed"} {
		if !strings.Contains(lp, want) {
			t.Errorf("LP file lacks %q:\n%s", want, lp)
		}
	}
	if strings.Contains(body, "x2") || strings.Contains(body, "c1:") {
		t.Errorf("the fixed variable or the row it satisfies is in the LP file:\n%s", body)
	}
	before := m.Fingerprint()
	m.ClearFixes()
	if m.Fingerprint() == before {
		t.Error("fixing a variable keeps the fingerprint")
	}
	if _, ok := m.FixedValue(c); ok || m.NumFixed() != 0 {
		t.Error("ClearFixes left a fix")
	}
}

// Every variable fixed: no LP file, the fixed values are the solution.
func TestCBCAllFixed(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	a := m.AddVar("a", Binary, 0, 1)
	b := m.AddVar("b", Binary, 0, 1)
	m.SetObjective([]Term{{a, 1}, {b, 2}})
	m.AddConstraint("one", []Term{{a, 1}, {b, 1}}, EQ, 1)
	m.Fix(a, 0)
	m.Fix(b, 1)
	sol := solve(t, c, m)
	if sol.Status != Optimal || sol.Objective != 2 || sol.Values[0] != 0 || sol.Values[1] != 1 {
		t.Fatalf("got %v %v %v", sol.Status, sol.Objective, sol.Values)
	}
	m.Fix(b, 0)
	if sol := solve(t, c, m); sol.Status != Infeasible {
		t.Fatalf("a violated row with every variable fixed: status %v", sol.Status)
	}
}

// cbc reports the duals of the LP relaxation; their bound is the
// relaxation's optimum, below the integer one.
func TestCBCDuals(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	x := m.AddVar("x", Binary, 0, 1)
	y := m.AddVar("y", Binary, 0, 1)
	z := m.AddVar("z", Binary, 0, 1)
	m.SetObjective([]Term{{x, -2}, {y, -2}, {z, -1}})
	m.AddConstraint("pair", []Term{{x, 1}, {y, 1}}, LE, 1.5)
	m.AddConstraint("z", []Term{{z, 1}, {x, 1}}, LE, 1)
	m.SetTuning(Tuning{Duals: true})
	sol := solve(t, c, m)
	if sol.Status != Optimal || sol.Objective != -3 { // y and z
		t.Fatalf("got %v %v", sol.Status, sol.Objective)
	}
	if len(sol.Duals) != m.NumConstraints() {
		t.Fatalf("%d duals for %d constraints", len(sol.Duals), m.NumConstraints())
	}
	// The relaxation's optimum: x = 0.5, y = 1, z = 0.5.
	bound, d := m.ReducedCosts(sol.Duals)
	if math.Abs(bound-(-3.5)) > 1e-6 {
		t.Errorf("bound %v (reduced costs %v), the relaxation's optimum is -3.5", bound, d)
	}
	m.SetTuning(Tuning{})
	if sol := solve(t, c, m); sol.Duals != nil {
		t.Errorf("duals %v without asking", sol.Duals)
	}
}
