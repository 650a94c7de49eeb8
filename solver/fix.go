package solver

import (
	"fmt"
	"math"
)

// Fixed variables. A variable fixed to a value is out of the problem a
// solver sees: the LP file leaves its column out (its terms move to the
// right-hand sides, rows left without terms go when they hold), and the
// solution gives it the value. Fixing is how a caller passes on what it
// has proven about every solution it wants, e.g. by reduced costs
// (ReducedCosts) and by what the rows then imply (Propagate); the smaller
// program is quicker to solve.

// Fix fixes v to value: 0 or 1 for a binary variable, an integer within
// its bounds for an integer one, a value within its bounds otherwise. It
// panics on anything else.
func (m *Model) Fix(v Var, value float64) {
	if v < 0 || int(v) >= len(m.vars) {
		panic(fmt.Sprintf("solver: Fix of unknown variable %d", v))
	}
	x := m.vars[v]
	if math.IsNaN(value) || value < x.lo || value > x.hi || x.kind != Continuous && value != math.Round(value) {
		panic(fmt.Sprintf("solver: cannot fix %q to %v", x.name, value))
	}
	if m.fixed == nil {
		m.fixed = make([]float64, len(m.vars))
		for i := range m.fixed {
			m.fixed[i] = math.NaN()
		}
	}
	m.fixed[v] = posZero(value)
}

// ClearFixes unfixes every variable.
func (m *Model) ClearFixes() { m.fixed = nil }

// FixedValue reports the value v is fixed to, if it is.
func (m *Model) FixedValue(v Var) (float64, bool) {
	if int(v) >= len(m.fixed) || math.IsNaN(m.fixed[v]) {
		return 0, false
	}
	return m.fixed[v], true
}

// NumFixed is the number of fixed variables.
func (m *Model) NumFixed() int {
	n := 0
	for v := range m.fixed {
		if _, ok := m.FixedValue(Var(v)); ok {
			n++
		}
	}
	return n
}

// fixedObjective is the objective's part from fixed variables, which
// the LP file leaves out.
func (m *Model) fixedObjective() float64 {
	f := 0.0
	for _, t := range m.obj {
		if x, ok := m.FixedValue(t.Var); ok {
			f += t.Coef * x
		}
	}
	return f
}

// bounds are v's bounds, a fixed value's being both.
func (m *Model) bounds(v Var) (lo, hi float64) {
	if x, ok := m.FixedValue(v); ok {
		return x, x
	}
	return m.vars[v].lo, m.vars[v].hi
}

// activity returns the least and greatest values of Σ terms within the
// variables' bounds and fixes, and the largest magnitude of a term there.
func (m *Model) activity(terms []Term) (lo, hi, largest float64) {
	for _, t := range terms {
		l, h := m.bounds(t.Var)
		a, b := t.Coef*l, t.Coef*h
		if a > b {
			a, b = b, a
		}
		lo += a
		hi += b
		largest = math.Max(largest, math.Max(math.Abs(a), math.Abs(b)))
	}
	return lo, hi, largest
}

// ReducedCosts prices the model's variables with duals (one per
// constraint, as an LP solver reports them for this model and objective;
// missing ones count as 0) and returns a lower bound on the objective of
// every assignment that satisfies the constraints and the variables'
// bounds, and each variable's reduced cost d. For any such assignment x,
//
//	objective(x) ≥ bound + Σ_{d_j > 0} d_j (x_j − lo_j) + Σ_{d_j < 0} |d_j| (hi_j − x_j)
//
// so a variable whose |d_j| exceeds the gap between a target objective and
// bound is at the bound the sign of d_j says in every assignment that
// reaches the target. The bound is valid for any duals: each is first
// given the sign its constraint allows (≤ 0 for ≤ rows, ≥ 0 for ≥ rows),
// so inexact duals only make it weaker; it is -Inf when a variable without
// a finite bound has a reduced cost of the wrong sign.
func (m *Model) ReducedCosts(duals []float64) (bound float64, reduced []float64) {
	reduced = make([]float64, len(m.vars))
	for _, t := range m.obj {
		reduced[t.Var] = t.Coef
	}
	for i, c := range m.cons {
		if i >= len(duals) {
			break
		}
		y := duals[i]
		switch {
		case math.IsNaN(y) || math.IsInf(y, 0):
			y = 0
		case c.sense == LE:
			y = math.Min(y, 0)
		case c.sense == GE:
			y = math.Max(y, 0)
		}
		if y == 0 {
			continue
		}
		bound += y * c.rhs
		for _, t := range c.terms {
			reduced[t.Var] -= y * t.Coef
		}
	}
	for v, d := range reduced {
		lo, hi := m.bounds(Var(v))
		switch {
		case d > 0:
			bound += d * lo
		case d < 0:
			bound += d * hi
		}
	}
	if math.IsNaN(bound) {
		bound = math.Inf(-1)
	}
	return bound, reduced
}

// propTol is Propagate's tolerance, relative to the magnitude of a row:
// only what a row implies by more than that is fixed.
const propTol = 1e-9

// Propagate fixes the binary variables the constraints leave one value,
// given the other variables' bounds and fixes, until nothing changes; it
// returns how many it fixed, and false when a constraint cannot hold (the
// fixes then say nothing).
func (m *Model) Propagate() (int, bool) {
	rows := make([][]int, len(m.vars))
	for i, c := range m.cons {
		for _, t := range c.terms {
			rows[t.Var] = append(rows[t.Var], i)
		}
	}
	queued := make([]bool, len(m.cons))
	queue := make([]int, 0, len(m.cons))
	for i := range m.cons {
		queued[i] = true
		queue = append(queue, i)
	}
	n := 0
	fix := func(v Var, value float64) {
		m.Fix(v, value)
		n++
		for _, i := range rows[v] {
			if !queued[i] {
				queued[i] = true
				queue = append(queue, i)
			}
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		queued[i] = false
		c := m.cons[i]
		lo, hi, largest := m.activity(c.terms)
		tol := propTol * math.Max(largest, math.Max(1, math.Abs(c.rhs)))
		if math.IsNaN(lo) || math.IsNaN(hi) {
			continue
		}
		if c.sense != GE && lo > c.rhs+tol || c.sense != LE && hi < c.rhs-tol {
			return n, false
		}
		for _, t := range c.terms {
			if m.vars[t.Var].kind != Binary {
				continue
			}
			if _, ok := m.FixedValue(t.Var); ok {
				continue
			}
			a := math.Abs(t.Coef)
			// Moving the variable off the value that gives the row its
			// least (greatest) left-hand side adds (removes) a.
			if c.sense != GE && !math.IsInf(lo, -1) && lo+a > c.rhs+tol {
				if t.Coef > 0 {
					fix(t.Var, 0)
				} else {
					fix(t.Var, 1)
				}
				continue
			}
			if c.sense != LE && !math.IsInf(hi, 1) && hi-a < c.rhs-tol {
				if t.Coef > 0 {
					fix(t.Var, 1)
				} else {
					fix(t.Var, 0)
				}
			}
		}
	}
	return n, true
}
