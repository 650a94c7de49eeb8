// Package solver owns kvschema's mixed-integer linear programs: the model
// representation (Model), writing it as a CPLEX LP file (WriteLP), solving it
// by running the external COIN-OR CBC binary (CBC) and an exhaustive
// enumerator used as a test oracle for small pure-binary models (Exhaustive).
//
// CBC runs as a separate process on an LP file so that its EPL licence stays
// out of our binary; the Solver interface lets other solver binaries be
// plugged in later.
//
// Invariants:
//   - A Model always minimizes. Variables are dense indices from 0 in the
//     order they were added; constraints likewise.
//   - Terms stored in a Model are canonical: sorted by variable, one term per
//     variable, no zero or non-finite coefficients. Misuse that can only be a
//     programming error (unknown variable, NaN coefficient, lo > hi) panics.
//   - Constraints are never dropped, even when they have no terms: an empty
//     violated constraint (0 >= 1) keeps the model infeasible, so every
//     solver reports it.
//   - Output is deterministic: the same model always gives a byte-identical
//     LP file.
package solver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"
)

// VarKind is the domain of a variable.
type VarKind uint8

// Variable kinds.
const (
	Binary     VarKind = iota // 0 or 1; bounds are forced to [0, 1]
	Integer                   // integer within [lo, hi]
	Continuous                // real within [lo, hi]
)

// Var identifies a variable: its index in the model, dense from 0.
type Var int

// Term is Coef·Var in a linear expression.
type Term struct {
	Var  Var
	Coef float64
}

// Sense is the relation of a constraint's left-hand side to its right-hand side.
type Sense uint8

// Constraint senses.
const (
	LE Sense = iota // Σ terms <= rhs
	GE              // Σ terms >= rhs
	EQ              // Σ terms == rhs
)

type variable struct {
	name   string
	kind   VarKind
	lo, hi float64
}

type constraint struct {
	name  string
	terms []Term
	sense Sense
	rhs   float64
}

// Model is a minimization MILP. The zero value is not usable; call NewModel.
// A Model is not safe for concurrent mutation, but solving and evaluating
// only read it.
type Model struct {
	vars []variable
	cons []constraint
	obj  []Term
	// start is an optional initial assignment (see SetStart).
	start []float64
	// tuning are the search settings of SetTuning.
	tuning Tuning
	// fixed holds each variable's fixed value (Fix), NaN when free; nil
	// when none is fixed.
	fixed []float64
}

// Tuning adjusts the search for one model. A solver without such settings
// (Exhaustive) ignores it. Only NodeLimit can change the answer.
type Tuning struct {
	// NodeLimit stops branch and bound after this many nodes, with the
	// best solution found (status Feasible, with its gap); 0: no limit.
	NodeLimit int
	// NoHeuristics skips the heuristic search for solutions (cbc
	// heuristicsOnOff off): worth it when the start is as good as they
	// would find.
	NoHeuristics bool
	// NoGomory skips Gomory cuts (cbc gomoryCuts off), which cost more
	// than they tighten on some models.
	NoGomory bool
	// NoZeroHalf skips zero-half cuts (cbc zeroHalfCuts off), which cost
	// more than they tighten on some models.
	NoZeroHalf bool
	// Duals asks for the duals of the LP relaxation (Solution.Duals),
	// which ReducedCosts turns into a bound and reduced costs.
	Duals bool
	// Increment is the least amount by which a solution must beat the
	// best one found to count as better (cbc increment); 0 keeps the
	// solver's default (cbc: 1e-5, absolute, so that an optimum is exact
	// only to within 1e-5 of the objective).
	Increment float64
}

// SetTuning sets the search settings the next solves use.
func (m *Model) SetTuning(t Tuning) { m.tuning = t }

// NewModel returns an empty model (no variables, no constraints, zero
// objective).
func NewModel() *Model { return &Model{} }

// AddVar adds a variable and returns it. name is only for humans (messages,
// LP-file comments) and may contain any characters; the LP file uses
// generated column names. Binary variables ignore lo and hi and get [0, 1].
// lo may be -Inf and hi +Inf. AddVar panics on an unknown kind, NaN bounds or
// lo > hi.
func (m *Model) AddVar(name string, kind VarKind, lo, hi float64) Var {
	switch kind {
	case Binary:
		lo, hi = 0, 1
	case Integer, Continuous:
		if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi || math.IsInf(lo, 1) || math.IsInf(hi, -1) {
			panic(fmt.Sprintf("solver: variable %q has invalid bounds [%v, %v]", name, lo, hi))
		}
	default:
		panic(fmt.Sprintf("solver: variable %q has unknown kind %d", name, kind))
	}
	m.vars = append(m.vars, variable{name: name, kind: kind, lo: posZero(lo), hi: posZero(hi)})
	return Var(len(m.vars) - 1)
}

// AddConstraint adds Σ terms (sense) rhs. Duplicate variables in terms are
// merged and zero coefficients dropped. A constraint left without terms is
// kept: if it is violated (0 >= 1) the model is infeasible. AddConstraint
// panics on an unknown variable or sense, or on a non-finite coefficient or
// rhs.
func (m *Model) AddConstraint(name string, terms []Term, sense Sense, rhs float64) {
	if sense > EQ {
		panic(fmt.Sprintf("solver: constraint %q has unknown sense %d", name, sense))
	}
	if math.IsNaN(rhs) || math.IsInf(rhs, 0) {
		panic(fmt.Sprintf("solver: constraint %q has non-finite rhs %v", name, rhs))
	}
	m.cons = append(m.cons, constraint{name: name, terms: m.canonical(name, terms), sense: sense, rhs: posZero(rhs)})
}

// SetStart gives the solver a known assignment (one value per variable,
// normally feasible) to start from; solvers may ignore it. A start shorter
// than the model is padded with zeros; nil clears it.
func (m *Model) SetStart(values []float64) {
	m.start = append([]float64(nil), values...)
}

// SetRHS changes the right-hand side of constraint i (numbered in the order
// constraints were added), so that one model can be solved for a sequence
// of bounds without growing. It panics on an unknown constraint or a
// non-finite rhs.
func (m *Model) SetRHS(i int, rhs float64) {
	if i < 0 || i >= len(m.cons) {
		panic(fmt.Sprintf("solver: SetRHS of unknown constraint %d", i))
	}
	if math.IsNaN(rhs) || math.IsInf(rhs, 0) {
		panic(fmt.Sprintf("solver: constraint %q gets non-finite rhs %v", m.cons[i].name, rhs))
	}
	m.cons[i].rhs = posZero(rhs)
}

// Fingerprint is a digest of the problem the model poses: its variables'
// kinds and bounds, its objective and its constraints, in order, and its
// tuning; not the human names and not the start. Two models with equal fingerprints pose
// the same problem (up to a SHA-256 collision), so a solution of one, as
// values per variable, is a solution of the other: a caller may solve
// one of them and reuse the answer.
func (m *Model) Fingerprint() [32]byte {
	h := sha256.New()
	var buf []byte
	num := func(x float64) { buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x)) }
	terms := func(ts []Term) {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(ts)))
		for _, t := range ts {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(t.Var))
			num(t.Coef)
		}
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(m.vars)))
	for i, v := range m.vars {
		buf = append(buf, byte(v.kind))
		lo, hi := m.bounds(Var(i))
		num(lo)
		num(hi)
	}
	terms(m.obj)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(m.cons)))
	for _, c := range m.cons {
		buf = append(buf, byte(c.sense))
		num(c.rhs)
		terms(c.terms)
		h.Write(buf)
		buf = buf[:0]
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(m.tuning.NodeLimit))
	num(m.tuning.Increment)
	for _, b := range []bool{m.tuning.NoHeuristics, m.tuning.NoGomory, m.tuning.NoZeroHalf, m.tuning.Duals} {
		if b {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	h.Write(buf)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// SetObjective sets the expression to minimize, replacing any previous one.
// Duplicate variables are merged; it panics like AddConstraint.
func (m *Model) SetObjective(terms []Term) {
	m.obj = m.canonical("objective", terms)
}

// canonical copies terms, sorted by variable with duplicates merged and
// zeros dropped, so that equal expressions always print identically.
func (m *Model) canonical(what string, terms []Term) []Term {
	out := make([]Term, 0, len(terms))
	for _, t := range terms {
		if t.Var < 0 || int(t.Var) >= len(m.vars) {
			panic(fmt.Sprintf("solver: %s uses unknown variable %d", what, t.Var))
		}
		if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
			panic(fmt.Sprintf("solver: %s has non-finite coefficient %v for %q", what, t.Coef, m.vars[t.Var].name))
		}
		out = append(out, t)
	}
	// Stable, so duplicates are summed in the caller's order: deterministic.
	slices.SortStableFunc(out, func(a, b Term) int { return cmp.Compare(a.Var, b.Var) })
	merged := out[:0]
	for _, t := range out {
		if n := len(merged); n > 0 && merged[n-1].Var == t.Var {
			merged[n-1].Coef += t.Coef
		} else {
			merged = append(merged, t)
		}
	}
	return slices.DeleteFunc(merged, func(t Term) bool { return t.Coef == 0 })
}

// ConstraintName returns the name constraint i (as Evaluate numbers them)
// was added with.
func (m *Model) ConstraintName(i int) string { return m.cons[i].name }

// NumVars returns the number of variables.
func (m *Model) NumVars() int { return len(m.vars) }

// NumConstraints returns the number of constraints.
func (m *Model) NumConstraints() int { return len(m.cons) }

// VarName returns the human name given to AddVar.
func (m *Model) VarName(v Var) string { return m.vars[v].name }

// evalTol is the feasibility tolerance of Evaluate, relative to the
// magnitude of a row (at least 1). Relative because CBC prints continuous
// values with only 8 significant digits.
const evalTol = 1e-6

// Evaluate returns the objective at values (one per variable) and the
// indices of the constraints that values violate by more than the tolerance
// (1e-6 relative to max(1, |rhs|, max |coef·value|)). It checks constraints
// only, not bounds or integrality. It panics if len(values) != NumVars().
func (m *Model) Evaluate(values []float64) (objective float64, violated []int) {
	if len(values) != len(m.vars) {
		panic(fmt.Sprintf("solver: Evaluate got %d values for %d variables", len(values), len(m.vars)))
	}
	for _, t := range m.obj {
		objective += t.Coef * values[t.Var]
	}
	for i, c := range m.cons {
		if !satisfied(c, values) {
			violated = append(violated, i)
		}
	}
	return objective, violated
}

func satisfied(c constraint, values []float64) bool {
	lhs, scale := 0.0, math.Max(1, math.Abs(c.rhs))
	for _, t := range c.terms {
		p := t.Coef * values[t.Var]
		lhs += p
		scale = math.Max(scale, math.Abs(p))
	}
	tol := evalTol * scale
	switch c.sense {
	case LE:
		return lhs <= c.rhs+tol
	case GE:
		return lhs >= c.rhs-tol
	default:
		return math.Abs(lhs-c.rhs) <= tol
	}
}

// Status is the outcome of a solve.
type Status uint8

// Solve outcomes.
const (
	Optimal    Status = iota // proven optimal (within the requested relative gap, if any)
	Infeasible               // no assignment satisfies the constraints
	Unbounded                // the objective can decrease without limit
	Feasible                 // stopped (e.g. by the time limit) with an incumbent
	NoSolution               // stopped without any feasible assignment
)

// String returns the lower-case name of the status.
func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	case Feasible:
		return "feasible"
	case NoSolution:
		return "no solution"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Solution is the result of a solve.
type Solution struct {
	// Status says whether Values is a (proven optimal) solution.
	Status Status
	// Objective is the objective at Values (recomputed by Evaluate so the
	// two agree exactly); 0 when there are no Values.
	Objective float64
	// Values has one value per variable (len == NumVars) when Status is
	// Optimal or Feasible, and is nil otherwise. Binary and Integer values
	// are exact integers.
	Values []float64
	// Gap is the relative optimality gap |objective - bound| / max(1e-9, |objective|)
	// when known; 0 when proven optimal without a gap tolerance.
	Gap float64
	// Time is the wall time of the solve.
	Time time.Duration
	// Nodes is the number of branch-and-bound nodes the solver explored,
	// when it says (cbc does; 0 otherwise).
	Nodes int
	// Solver names the solver and its version, e.g. "cbc 2.10.8".
	Solver string
	// Duals are the duals of the model's LP relaxation, one per
	// constraint, when Tuning.Duals asked for them and the solver gave
	// them (cbc does, when the relaxation has an optimum); nil otherwise.
	Duals []float64
}

// Solver solves a Model. Implementations must respect ctx cancellation and
// must report an infeasible model as Status Infeasible with a nil error.
type Solver interface {
	// Name is a short identifier such as "cbc".
	Name() string
	// Solve solves m to optimality (or to the solver's configured limits).
	Solve(ctx context.Context, m *Model) (*Solution, error)
}

// finish rounds integer values, recomputes the objective and returns the
// solution; shared by the solvers so they agree on what Values contain.
func (m *Model) finish(s *Solution) *Solution {
	if s.Values == nil {
		s.Objective = 0
		return s
	}
	for i, v := range m.vars {
		if v.kind != Continuous {
			s.Values[i] = math.Round(s.Values[i])
		}
		s.Values[i] = posZero(s.Values[i])
	}
	s.Objective, _ = m.Evaluate(s.Values)
	return s
}

// posZero turns -0 into 0 so that numbers print as "0", never "-0".
func posZero(x float64) float64 {
	if x == 0 {
		return 0
	}
	return x
}

// searchDefaults is t without the settings that switch parts of the
// solver's search off: its limits, exactness and duals kept.
func (t Tuning) searchDefaults() Tuning {
	return Tuning{NodeLimit: t.NodeLimit, Duals: t.Duals, Increment: t.Increment}
}
