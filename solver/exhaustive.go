package solver

import (
	"context"
	"fmt"
	"time"
)

// exhaustiveMax bounds Exhaustive to 2^24 (about 16 million) assignments.
const exhaustiveMax = 24

// Exhaustive solves a pure-binary model by trying every assignment. It is a
// test oracle for other solvers: slow, but obviously correct. Ties are broken
// towards the first optimum in enumeration order (variable 0 is the lowest
// bit), so it is deterministic. Fixed variables (Fix) keep their values.
type Exhaustive struct{}

// Name returns "exhaustive".
func (Exhaustive) Name() string { return "exhaustive" }

// Solve enumerates all assignments of m. It returns an error if a variable is
// not Binary or m has more than 24 variables.
func (Exhaustive) Solve(ctx context.Context, m *Model) (*Solution, error) {
	start := time.Now()
	n := m.NumVars()
	if n > exhaustiveMax {
		return nil, fmt.Errorf("solver: exhaustive: %d variables, at most %d supported", n, exhaustiveMax)
	}
	for i, v := range m.vars {
		if v.kind != Binary {
			return nil, fmt.Errorf("solver: exhaustive: variable %q (x%d) is not binary", v.name, i)
		}
	}
	best := &Solution{Status: Infeasible, Solver: "exhaustive"}
	values := make([]float64, n)
	for mask := uint32(0); mask < 1<<n; mask++ {
		if mask%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("solver: exhaustive: %w", err)
			}
		}
		fits := true
		for i := range values {
			values[i] = float64(mask >> i & 1)
			if x, ok := m.FixedValue(Var(i)); ok && x != values[i] {
				fits = false
			}
		}
		if !fits {
			continue
		}
		obj, violated := m.Evaluate(values)
		if len(violated) == 0 && (best.Status != Optimal || obj < best.Objective) {
			best.Status, best.Objective = Optimal, obj
			best.Values = append(make([]float64, 0, n), values...)
		}
	}
	best = m.finish(best)
	best.Time = time.Since(start)
	return best, nil
}
