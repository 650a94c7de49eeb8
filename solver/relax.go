package solver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Relaxation is the solution of a model's LP relaxation: every variable
// may take any value within its bounds (a fixed variable keeps its value).
type Relaxation struct {
	// Status is Optimal when the relaxation has an optimum (Values and
	// Duals are then set), Infeasible when it has no solution (nor has
	// the model), Unbounded or NoSolution otherwise.
	Status Status
	// Objective is the relaxation's optimum as the solver reports it; a
	// bound that does not rely on the solver's arithmetic comes from
	// ReducedCosts(Duals).
	Objective float64
	// Values has one value per variable.
	Values []float64
	// Duals has one dual per constraint.
	Duals []float64
	Time  time.Duration
}

// Relaxer is a solver that can also solve a model's LP relaxation alone.
type Relaxer interface {
	Relax(ctx context.Context, m *Model) (*Relaxation, error)
}

// Relax solves the LP relaxation of m (cbc model.lp initialSolve) and
// reads back its primal values and its rows' duals. It takes no start,
// reports no progress and heeds Interrupt only before it begins (an LP
// solve is short); cancelling ctx kills cbc.
func (c *CBC) Relax(ctx context.Context, m *Model) (*Relaxation, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("solver: cbc: %w", err)
	}
	select {
	case <-c.Interrupt:
		return nil, ErrInterrupted
	default:
	}
	path, err := c.binary()
	if err != nil {
		return nil, err
	}
	values := make([]float64, m.NumVars())
	free := 0
	for v := range values {
		if x, ok := m.FixedValue(Var(v)); ok {
			values[v] = x
		} else {
			free++
		}
	}
	if free == 0 {
		// cbc cannot read a model without columns; no freedom, no
		// relaxation to speak of.
		return nil, errors.New("solver: cbc: no free variable to relax")
	}
	dir, err := os.MkdirTemp("", "kvschema-cbc-")
	if err != nil {
		return nil, fmt.Errorf("solver: cbc: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := writeLPFile(filepath.Join(dir, cbcModelFile), m, false); err != nil {
		return nil, fmt.Errorf("solver: cbc: writing model: %w", err)
	}
	cmd := exec.CommandContext(ctx, path, cbcModelFile, "initialSolve", "printingOptions", "all", "solu", cbcLPFile)
	out := &headTail{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("solver: cbc: %w", ctx.Err())
	}
	if runErr != nil {
		return nil, fmt.Errorf("solver: cbc failed: %w\n%s", runErr, tail(out.bytes()))
	}
	data, err := os.ReadFile(filepath.Join(dir, cbcLPFile))
	if err != nil {
		return nil, fmt.Errorf("solver: cbc wrote no relaxation: %w\n%s", err, tail(out.bytes()))
	}
	f, err := parseSolution(data)
	if err != nil {
		return nil, fmt.Errorf("solver: cbc: relaxation: %w\n%s", err, tail(out.bytes()))
	}
	r := &Relaxation{Status: f.status, Objective: f.objective}
	if f.status == Feasible {
		// "Stopped": an LP solve cbc did not finish.
		r.Status = NoSolution
	}
	if r.Status != Optimal {
		r.Time = time.Since(start)
		return r, nil
	}
	r.Duals = parseDuals(data, m.NumConstraints())
	for _, col := range f.cols {
		v, ok := parseColName(col.name, m.NumVars())
		if !ok {
			continue // a row (c0, c1, …)
		}
		if _, fixed := m.FixedValue(Var(v)); fixed {
			return nil, fmt.Errorf("solver: cbc: relaxation names fixed column %q", col.name)
		}
		values[v] = col.value
	}
	r.Values = values
	r.Time = time.Since(start)
	return r, nil
}
