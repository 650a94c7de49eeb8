package advisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/solver"
)

// The decomposition of a problem into independent parts (components.go),
// with and without a budget. Every comparison between schemas is made on
// the objective the solver minimizes, the tie-broken cost f (ilp.tieBroken:
// the cost plus the small per-index terms), never on the cost alone: each
// part's solves are then exact for f, and the merged schema minimizes Σ f
// within the budget. Its TotalCost is recomputed from its plans, as
// always. The one-program path minimizes the cost plus tie-breaking terms
// weighted for the whole program, so the two agree on the cost, and may
// differ only between schemas whose costs agree to about 1e-5 (the tie
// terms' weight).
//
// Sizes break the remaining ties exactly (ilp.smallest): each part's
// optimum is replaced by the smallest schema of its cost, before the
// budget is checked, so that without a binding budget the merged schema
// is the smallest of the least cost (the parts' costs and sizes add up,
// and each is least in both). Under a binding budget, each part's schema
// of the combination chosen becomes the smallest of its cost; another
// combination of the same total cost, trading cost between parts, is not
// sought (its parts' costs would have to add up to exactly the same sum).
//
// Under a budget B, a part's schemas have a size s and a cost f; the
// optimum takes one schema per part, least Σ f with Σ s ≤ B:
//
//  1. Each part without a budget (and the smallest of its cost). If the
//     sizes fit, done.
//  2. The least size of each part; if they do not fit, the budget is
//     infeasible (the least size of the whole is their sum). Then the
//     Lagrangian dual L(λ) = Σ_c min (f_c + λ s_c) − λB, a lower bound on
//     the optimum for every λ ≥ 0, each min a part's own program without a
//     budget row. It is maximized by the hull iteration: of two combinations
//     A (too large) and Z (fits), λ is the slope between them; a solve
//     at λ either finds a combination below the line AZ, which replaces
//     A or Z by its size, or proves A and Z both minimize at λ, so that λ
//     maximizes L.
//  3. The best combination of the schemas found (the knapsack below) is an
//     upper bound U; the dual's maximum is a lower bound L. A schema p of
//     part c can belong to a solution better than U only if its reduced
//     cost f_c(p) + λ s_c(p) − min_c(f_c + λ s_c) is at most U − L (the
//     reduced costs of a combination within the budget add up to at most
//     its cost minus L). Each part's Pareto frontier within that window is
//     enumerated, largest schema first: least f with s ≤ b and the reduced
//     cost in the window, then b just below the size found, until nothing
//     is left (an ε-constraint sweep; each solve's schema is a frontier
//     point), from the part's optimum without a budget or the room the
//     other parts' least sizes leave it, whichever is smaller. The
//     knapsack over these is the optimum.
//
// The knapsack (multiple choice) goes through the parts keeping, of the
// partial combinations, only those no other is both smaller and cheaper
// than, and dropping those that cannot fit, cannot beat U or leave no
// room for the rest of the window.
//
// Identical parts are common (several tenants with one schema, a workload
// copied): a part's program identical to one solved before, by
// solver.Model.Fingerprint (the whole problem, not names), is not solved
// again; the earlier solution is one of it, variable for variable.
//
// Exactness rests on the solver: a solve it calls optimal is taken as
// such (CBC stops within its cutoff increment, 1e-5 on the objective: the
// windows are widened by that much), and on sizes: the sweep steps a
// byte down, so of two schemas of a part less than a byte apart in size
// it may see only the larger. A solve stopped without proof (a time
// limit, an interrupt) or a bound on the work below (points per part,
// knapsack states) leaves the best combination found, not optimal, with
// its proven gap to L; an interrupt, or a time limit reached without a
// schema, stops the decomposition there.
const (
	maxLambdaIterations = 60
	maxWindowPoints     = 100     // per part
	maxKnapsackStates   = 1 << 20 // partial combinations kept at one part
	// solverSlack widens what solver answers are compared to: CBC's
	// default cutoff increment, by which its optimum can miss.
	solverSlack = 1e-5
	// sizeStep separates the sizes of a sweep: the next schema is at least
	// a byte smaller (CBC's row tolerance is 1e-7 MB, a tenth of a byte).
	sizeStep = 1.0
)

// point is one schema of a component: its size in bytes, its tie-broken
// cost, and the values of its program's variables.
type point struct {
	size, f float64
	values  []float64
}

// same says p and q are one schema.
func (p point) same(q point) bool {
	return len(p.values) > 0 && len(q.values) > 0 && &p.values[0] == &q.values[0]
}

// component is one part with queries and its programs.
type component struct {
	pt  *part
	pr  *ilp // no budget row: unconstrained, least-size and Lagrangian solves
	opt Options
	// f is the tie-broken cost's terms.
	f      []solver.Term
	points []point
	free   point   // the optimum without a budget
	small  point   // the smallest schema of free's cost (ilp.smallest)
	least  point   // a schema of least size
	floor  float64 // a proven lower bound on min f + λ s at the best λ
	// win is the window's program: pr's (built alike, so with the same
	// variables) plus a size row and a row on the Lagrangian objective,
	// at rows sizeRow and winRow.
	win             *ilp
	sizeRow, winRow int
	// tie is the size tie-break's program: pr's, plus its cost row.
	tie *ilp
	// nodes is the most branch-and-bound nodes a solve of the component
	// took, for the tie-break's node limit.
	nodes int
}

// decomposition solves the parts of one problem.
type decomposition struct {
	opt   Options
	comps []*component
	st    *Stats
	// proven: every answer the result relies on is proven (solves
	// optimal without a gap, sweeps and knapsack complete).
	proven bool
	trace  *budgetTrace
}

// budgetTrace records how a binding budget was met, for tests.
type budgetTrace struct {
	lambda     float64 // per byte, of the best lower bound
	iterations int     // of the hull iteration
	window     []int   // frontier points the sweep found, per component
	chosen     []point // per component
	// swept counts the components whose chosen schema only the sweep
	// found: no Lagrangian solve gave it.
	swept int
	// single: one component was open, solved within the others' room
	// (oneOpen).
	single bool
}

// solveParts solves each part as its own integer program (several under
// a binding budget) and merges the solutions. Plans keep the order of the
// statements, the totals are recomputed in it, and the stats add up:
// variables and constraints of the parts' programs, solver runs and solve
// times are sums. When the parts' optima fit in the budget (or there is
// none) the result is optimal when every part is, and Gap is that of the
// summed objective, Σ|obj_c − bound_c| / |Σ obj_c| (the parts' bounds add
// up to a bound of the whole); under a binding budget it is optimal when
// the decomposition proves it, else Gap is (U − L) / U.
func solveParts(ctx context.Context, opt Options, parts []*part, res *Result) error {
	start := time.Now()
	d := &decomposition{opt: opt, st: &res.Stats, proven: true}
	memo := &reuse{seen: map[[32]byte]*solver.Solution{}, relaxed: map[[32]byte]*solver.Relaxation{}}
	n := 0
	for _, pt := range parts {
		if len(pt.queries) > 0 {
			n++
		}
	}
	res.Stats.Components = n
	res.Stats.Optimal, res.Stats.Smallest = true, true
	var objective, gap, size float64
	for _, pt := range parts {
		if len(pt.queries) == 0 {
			continue
		}
		c := &component{pt: pt, opt: opt}
		c.opt.Budget = math.Inf(1) // a part's program has no budget row
		prefix := fmt.Sprintf("component %d/%d: ", len(d.comps)+1, n)
		c.opt.Progress = func(s string) { opt.progress("%s%s", prefix, s) }
		c.opt.Solver = &reusing{reuse: memo, Solver: opt.Solver, progress: c.opt.progress}
		c.pr = c.build()
		res.Stats.Variables += c.pr.m.NumVars()
		res.Stats.Constraints += c.pr.m.NumConstraints()
		c.f = c.pr.tieBroken()
		c.opt.progress("%d queries, %d writes; integer program: %d variables, %d constraints",
			len(pt.queries), len(pt.writes), c.pr.m.NumVars(), c.pr.m.NumConstraints())
		var st Stats
		sol, err := c.pr.solve(ctx, c.opt, &st)
		if err != nil {
			return err
		}
		res.Stats.Solves += st.Solves
		res.Stats.Solver = st.Solver
		res.Stats.Optimal = res.Stats.Optimal && st.Optimal
		d.proven = d.proven && st.Optimal && st.Gap == 0
		objective += c.pr.objective
		gap += st.Gap * math.Max(1e-9, math.Abs(c.pr.objective))
		c.free = c.point(sol.Values)
		c.floor = bound(sol)
		c.nodes = sol.Nodes
		c.points = append(c.points, c.free)
		// Of the schemas of the optimum's cost, the smallest: the merged
		// schema then is the smallest of the least cost when it fits.
		c.small = c.free
		if st.Optimal && st.Gap == 0 && !opt.costOnly {
			small, proven, err := d.smallest(ctx, c, c.free)
			if err != nil && !errors.Is(err, solver.ErrInterrupted) {
				return err
			}
			c.small, res.Stats.Smallest = small, res.Stats.Smallest && proven
			c.add(c.small)
		} else {
			res.Stats.Smallest = false
		}
		size += c.small.size
		d.comps = append(d.comps, c)
	}
	chosen := make([]point, len(d.comps))
	for i, c := range d.comps {
		chosen[i] = c.small
	}
	res.Stats.Gap = gap / math.Max(1e-9, math.Abs(objective))
	if size > opt.Budget {
		opt.progress("budget: the parts' optima take %s, over the budget of %s", units.Format(size), units.Format(opt.Budget))
		var err error
		if chosen, err = d.meetBudget(ctx); err != nil {
			return err
		}
		res.trace = d.trace
		res.Stats.Optimal = d.proven
		res.Stats.Smallest = res.Stats.Smallest && d.proven
	}
	err := d.merge(ctx, parts, chosen, res)
	res.Stats.Solves -= memo.hits
	res.Stats.Reused = memo.hits
	res.Stats.SolveTime = time.Since(start)
	return err
}

// build makes the component's program without a budget row.
func (c *component) build() *ilp {
	pt := c.pt
	return buildILP(c.opt, pt.queries, pt.qdags, pt.writes, pt.upkeeps, pt.supports, pt.pool)
}

// point reads a schema from a solution of the component's program.
func (c *component) point(values []float64) point {
	p := point{values: values}
	for _, t := range c.f {
		p.f += t.Coef * values[t.Var]
	}
	for _, x := range c.pr.indexes {
		if values[c.pr.x[x]] > 0.5 {
			p.size += x.Size
		}
	}
	return p
}

// add records a schema found, once.
func (c *component) add(p point) {
	for _, q := range c.points {
		if q.size == p.size && q.f == p.f {
			return
		}
	}
	c.points = append(c.points, p)
}

// lagrangian is f + λ·size on pr's variables.
func (c *component) lagrangian(pr *ilp, lambda float64) []solver.Term {
	obj := pr.tieBroken()
	for _, x := range pr.indexes {
		obj = append(obj, solver.Term{Var: pr.x[x], Coef: lambda * x.Size})
	}
	return obj
}

// cheapest is the known schema least in f + λ s among those that satisfy
// ok, or nil: a start for the solver.
func (c *component) cheapest(lambda float64, ok func(point) bool) []float64 {
	var best []float64
	bestV := math.Inf(1)
	for _, p := range c.points {
		if v := p.f + lambda*p.size; ok(p) && v < bestV {
			best, bestV = p.values, v
		}
	}
	return best
}

func always(point) bool { return true }

// run solves pr for the objective obj from a start, counting the run, and
// returns the solution, or nil when the program is infeasible. exact says
// the result relies on the answer being optimal.
func (d *decomposition) run(ctx context.Context, c *component, pr *ilp, what string, obj []solver.Term, start []float64, exact bool) (*solver.Solution, error) {
	pr.m.SetObjective(obj)
	pr.m.SetStart(start)
	sol, err := pr.solveFixed(ctx, c.opt, d.st)
	if err != nil {
		return nil, err
	}
	d.st.Solver = sol.Solver
	c.nodes = max(c.nodes, sol.Nodes)
	c.opt.progress("%s: %v in %v", what, sol.Status, sol.Time.Round(time.Millisecond))
	switch sol.Status {
	case solver.Optimal, solver.Feasible:
		if exact && (sol.Status != solver.Optimal || sol.Gap > 0) {
			d.proven = false
		}
		return sol, nil
	case solver.Infeasible:
		return nil, nil
	case solver.NoSolution:
		return nil, fmt.Errorf("%s: %w", what, errNoSchema)
	}
	return nil, fmt.Errorf("solver %s stopped with status %v (%s)", sol.Solver, sol.Status, what)
}

// errNoSchema: a solver run stopped (at its time limit) without a schema.
var errNoSchema = errors.New("the solver stopped without a schema")

var errNoPlan = fmt.Errorf("the integer program is infeasible without a budget (a bug: every query has a plan)")

// bound is a proven lower bound on the objective of a program, from a
// solution and its gap.
func bound(sol *solver.Solution) float64 {
	return sol.Objective - sol.Gap*math.Max(1e-9, math.Abs(sol.Objective))
}

// meetBudget finds the best combination of the components' schemas within
// the budget (phases 2 and 3 above).
func (d *decomposition) meetBudget(ctx context.Context) ([]point, error) {
	budget := d.opt.Budget
	tr := &budgetTrace{window: make([]int, len(d.comps))}
	d.trace = tr
	// Least sizes: whether the budget is feasible, and a first
	// combination Z that fits.
	least := 0.0
	for _, c := range d.comps {
		sol, err := d.run(ctx, c, c.pr, "least size", c.pr.budget, nil, true)
		if err != nil {
			return nil, err
		}
		if sol == nil {
			return nil, errNoPlan
		}
		c.least = c.point(sol.Values)
		c.add(c.least)
		least += c.least.size
	}
	if least > budget*(1+1e-12) {
		return nil, &InfeasibleError{Budget: budget, MinBudget: least}
	}
	if chosen, ok, err := d.oneOpen(ctx, budget); ok || err != nil {
		return chosen, err
	}

	// The hull iteration over combinations, one schema per component: A
	// over the budget, Z within it.
	n := len(d.comps)
	a, z := make([]point, n), make([]point, n)
	floors := make([]float64, n)
	lower, lambda := 0.0, 0.0
	for i, c := range d.comps {
		a[i], z[i], floors[i] = c.free, c.least, c.floor
		lower += c.floor
	}
	sum := func(ps []point) (s, f float64) {
		for _, p := range ps {
			s += p.size
			f += p.f
		}
		return s, f
	}
	stopped := false // by an interrupt or a time limit: the rest is left undone
	for it := 1; it <= maxLambdaIterations && !stopped; it++ {
		sa, fa := sum(a)
		sz, fz := sum(z)
		if fz <= fa {
			break // Z fits and costs no more than the optimum without a budget
		}
		l := (fz - fa) / (sa - sz)
		m := make([]point, n)
		fl := make([]float64, n)
		g := 0.0
		for i, c := range d.comps {
			what := fmt.Sprintf("Lagrangian at λ = %.6g per MB", l*sizeUnit)
			sol, err := d.run(ctx, c, c.pr, what, c.lagrangian(c.pr, l), c.cheapest(l, always), false)
			if stopped = halted(err); stopped {
				break
			}
			if err != nil {
				return nil, err
			}
			if sol == nil {
				return nil, errNoPlan
			}
			m[i] = c.point(sol.Values)
			c.add(m[i])
			fl[i] = bound(sol)
			g += m[i].f + l*m[i].size
		}
		if stopped {
			break
		}
		tr.iterations = it
		if dual := sumOf(fl) - l*budget; dual > lower {
			lower, lambda = dual, l
			copy(floors, fl)
		}
		d.opt.progress("budget: λ iteration %d: λ = %.6g per MB, lower bound %.9g", it, l*sizeUnit, lower)
		if line := fa + l*sa; g >= line-solverSlack-1e-9*math.Abs(line) {
			break // A and Z both minimize f + λ s: λ maximizes the dual
		}
		if sm, _ := sum(m); sm > budget {
			a = m
		} else {
			z = m
		}
	}
	for i, c := range d.comps {
		c.floor = floors[i]
	}
	tr.lambda = lambda

	// The best combination of the schemas found; then the windows, if
	// it is not within the solver's slack of the lower bound.
	best, upper, ok := d.knapsack(lambda, math.Inf(1), math.Inf(1))
	if !ok {
		best = z // it fits: only the bound on states stops the knapsack
		_, upper = sum(z)
		d.proven = false
	}
	window := upper - lower
	d.opt.progress("budget: best combination so far %.9g, lower bound %.9g (gap %.3g%%)", upper, lower, 100*gapOf(upper, lower))
	known := make([]int, n)
	if !stopped && window > solverSlack+1e-9*math.Abs(upper) {
		for i, c := range d.comps {
			known[i] = len(c.points)
			k, err := d.sweep(ctx, c, lambda, window, budget-(least-c.least.size))
			tr.window[i] = k
			if stopped = halted(err); stopped {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		if b, u, ok := d.knapsack(lambda, window, upper); ok {
			best, upper = b, u
		} else {
			d.proven = false
		}
	}
	d.proven = d.proven && !stopped
	d.st.Gap = 0
	if !d.proven {
		d.st.Gap = gapOf(upper, lower)
	}
	d.opt.progress("budget: chose schemas of cost %.9g (lower bound %.9g, proven optimal %v)", upper, lower, d.proven)
	tr.chosen = best
	for i, p := range best {
		if k := slices.IndexFunc(d.comps[i].points, func(q point) bool { return q.size == p.size && q.f == p.f }); known[i] > 0 && k >= known[i] {
			tr.swept++
		}
	}
	return best, nil
}

// oneOpen meets the budget directly when a single component can trade
// size for cost: every other one's optimum (the smallest of its cost) is
// also its least size (so it is both cheapest and smallest, and is
// kept), and the open one takes the cheapest schema within the room they
// leave — one solve, exact, as one program would do it, with no bound to
// find (merge then takes the smallest of its cost). (A problem of one
// real component beside trivial ones, such as the 61-statement workload
// without SIs, would otherwise sweep a long frontier.) ok is false when
// several components are open.
func (d *decomposition) oneOpen(ctx context.Context, budget float64) (chosen []point, ok bool, err error) {
	open, room := -1, budget
	for i, c := range d.comps {
		if c.small.size <= c.least.size+sizeStep/2 {
			room -= c.small.size
			continue
		}
		if open >= 0 {
			return nil, false, nil
		}
		open = i
	}
	chosen = make([]point, len(d.comps))
	for i, c := range d.comps {
		chosen[i] = c.small
	}
	if open < 0 {
		return chosen, true, nil
	}
	c := d.comps[open]
	pr := c.build()
	pr.m.AddConstraint("component size", pr.budget, solver.LE, room/sizeUnit)
	fits := func(p point) bool { return p.size <= room }
	sol, err := d.run(ctx, c, pr, "least cost within "+units.Format(room), c.f, c.cheapest(0, fits), true)
	d.st.Gap = 0
	switch {
	case halted(err):
		// Stopped: the least-size schema fits; the optima without a
		// budget bound the cost from below.
		chosen[open], d.proven = c.least, false
		upper, lower := 0.0, 0.0
		for i, p := range chosen {
			upper += p.f
			lower += d.comps[i].floor
		}
		d.st.Gap = gapOf(upper, lower)
	case err != nil:
		return nil, true, err
	case sol == nil:
		return nil, true, errNoPlan // the least size fits: not reached
	default:
		chosen[open] = c.point(sol.Values)
	}
	d.trace.chosen, d.trace.single = chosen, true
	return chosen, true, nil
}

// halted says a solver run was asked to stop (solver.CBC.Interrupt) or
// stopped at its time limit without a schema: the decomposition stops
// there with the best combination found.
func halted(err error) bool {
	return errors.Is(err, solver.ErrInterrupted) || errors.Is(err, errNoSchema)
}

func sumOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func gapOf(upper, lower float64) float64 {
	return math.Max(0, upper-lower) / math.Max(1e-9, math.Abs(upper))
}

// sweep enumerates the component's Pareto frontier within the window of
// reduced cost and the room the others' least sizes leave it in the
// budget, largest schema first, and returns how many schemas it found.
func (d *decomposition) sweep(ctx context.Context, c *component, lambda, window, room float64) (int, error) {
	limit := c.floor + window
	limit += solverSlack + 1e-9*math.Abs(limit)
	if c.win == nil {
		c.win = c.build()
		c.sizeRow = c.win.m.NumConstraints()
		c.win.m.AddConstraint("component size", c.win.budget, solver.LE, 0)
		c.winRow = c.win.m.NumConstraints()
		c.win.m.AddConstraint("reduced cost window", c.lagrangian(c.win, lambda), solver.LE, 0)
	}
	c.win.m.SetRHS(c.winRow, limit)
	// Schemas larger than the optimum without a budget cost no less: the
	// frontier ends there; none is smaller than the least.
	b := math.Min(c.free.size-sizeStep, room)
	found := 0
	for ; b >= c.least.size-sizeStep/2; found++ {
		if found == maxWindowPoints {
			d.proven = false
			break
		}
		c.win.m.SetRHS(c.sizeRow, b/sizeUnit)
		within := func(p point) bool { return p.size <= b && p.f+lambda*p.size <= limit }
		what := fmt.Sprintf("window: least cost within %s", units.Format(b))
		sol, err := d.run(ctx, c, c.win, what, c.f, c.cheapest(0, within), true)
		if err != nil {
			return found, err
		}
		if sol == nil {
			break // nothing smaller in the window
		}
		p := c.point(sol.Values)
		c.add(p)
		b = math.Min(b, p.size) - sizeStep
	}
	c.opt.progress("window of reduced cost %.6g: %d schemas", window, found)
	return found, nil
}

// knapsack picks one known schema per component, least Σ f within the
// budget, among schemas whose reduced costs at lambda add up to at most
// window and combinations that cost at most upper. ok is false when it
// stopped at maxKnapsackStates (or found nothing).
func (d *decomposition) knapsack(lambda, window, upper float64) (best []point, cost float64, ok bool) {
	budget := d.opt.Budget * (1 + 1e-12)
	slack := solverSlack + 1e-9*math.Abs(upper)
	if math.IsInf(upper, 1) {
		slack = 0
	}
	n := len(d.comps)
	// Per component, its schemas in the window, Pareto-optimal, by size.
	cands := make([][]point, n)
	reduced := func(i int, p point) float64 { return p.f + lambda*p.size - d.comps[i].floor }
	restS, restF, restR := make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		ps := slices.Clone(d.comps[i].points)
		sort.Slice(ps, func(a, b int) bool {
			if ps[a].size != ps[b].size {
				return ps[a].size < ps[b].size
			}
			return ps[a].f < ps[b].f
		})
		var keep []point
		for _, p := range ps {
			if (len(keep) == 0 || p.f < keep[len(keep)-1].f) && reduced(i, p) <= window+slack {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			return nil, 0, false
		}
		cands[i] = keep
		minR := math.Inf(1)
		for _, p := range keep {
			minR = math.Min(minR, reduced(i, p))
		}
		restS[i] = restS[i+1] + keep[0].size
		restF[i] = restF[i+1] + keep[len(keep)-1].f
		restR[i] = restR[i+1] + minR
	}
	type state struct {
		s, f, r      float64
		parent, pick int32
	}
	layers := [][]state{{{parent: -1, pick: -1}}}
	for i := range n {
		var next []state
		for si, st := range layers[i] {
			for pi, p := range cands[i] {
				ns := state{s: st.s + p.size, f: st.f + p.f, r: st.r + reduced(i, p), parent: int32(si), pick: int32(pi)}
				if ns.s+restS[i+1] > budget || ns.f+restF[i+1] > upper+slack || ns.r+restR[i+1] > window+slack {
					continue
				}
				next = append(next, ns)
			}
		}
		// Keep only the combinations no other is both smaller and cheaper
		// than.
		sort.Slice(next, func(a, b int) bool {
			if next[a].s != next[b].s {
				return next[a].s < next[b].s
			}
			return next[a].f < next[b].f
		})
		kept := next[:0]
		for _, st := range next {
			if len(kept) == 0 || st.f < kept[len(kept)-1].f {
				kept = append(kept, st)
			}
		}
		if len(kept) == 0 || len(kept) > maxKnapsackStates {
			return nil, 0, false
		}
		layers = append(layers, kept)
	}
	// The last kept state is the cheapest (and, among the cheapest, the
	// smallest).
	last := layers[n]
	at := int32(len(last) - 1)
	best = make([]point, n)
	cost = last[at].f
	for i := n; i > 0; i-- {
		st := layers[i][at]
		best[i-1] = cands[i-1][st.pick]
		at = st.parent
	}
	return best, cost, true
}

// merge extracts each component's chosen schema, replaced by the
// smallest of its cost (ilp.smallest), and merges the parts into res.
func (d *decomposition) merge(ctx context.Context, parts []*part, chosen []point, res *Result) error {
	nq, nw := 0, 0
	for _, pt := range parts {
		nq += len(pt.queries)
		nw += len(pt.writes)
	}
	res.Queries, res.Writes = make([]*QueryPlan, nq), make([]*WritePlan, nw)
	ci := 0
	for _, pt := range parts {
		sub := &Result{Profile: res.Profile}
		if len(pt.queries) == 0 {
			// A part without queries has no index to choose (the program
			// reaches indexes from queries) and writes that maintain
			// nothing.
			buildILP(d.opt, pt.queries, pt.qdags, pt.writes, pt.upkeeps, pt.supports, pt.pool).extract(&solver.Solution{}, sub)
		} else {
			c, p := d.comps[ci], chosen[ci]
			ci++
			switch {
			case p.same(c.small):
			case p.same(c.free):
				p = c.small
			case res.Stats.Optimal && !d.opt.costOnly:
				// A schema the budget made the parts choose: the smallest
				// of its cost. Interrupted, the schema chosen stands.
				small, proven, err := d.smallest(ctx, c, p)
				switch {
				case err == nil:
					p, res.Stats.Smallest = small, res.Stats.Smallest && proven
				case errors.Is(err, solver.ErrInterrupted):
					res.Stats.Smallest = false
				default:
					return err
				}
			}
			c.pr.extract(&solver.Solution{Status: solver.Optimal, Values: p.values, Objective: p.f}, sub)
		}
		res.Indexes = append(res.Indexes, sub.Indexes...)
		res.TotalSize += sub.TotalSize
		for i, q := range sub.Queries {
			res.Queries[pt.qpos[i]] = q
		}
		for i, w := range sub.Writes {
			res.Writes[pt.wpos[i]] = w
		}
	}
	// In statement order, as one program's extract sums.
	for _, q := range res.Queries {
		res.TotalCost += q.Weight * q.Plan.Cost
	}
	for _, w := range res.Writes {
		res.TotalCost += w.Weight * w.Cost
	}
	return nil
}

// smallest is the smallest schema of the component that costs no more
// than p (ilp.smallest, on a program of its own, so that pr keeps no cost
// row), and whether the solver proved it smallest.
func (d *decomposition) smallest(ctx context.Context, c *component, p point) (point, bool, error) {
	if c.tie == nil {
		c.tie = c.build()
	}
	// c.tie is built as c.pr: the duals of c.pr's first run hold for it.
	c.tie.lpBound, c.tie.reduced = c.pr.lpBound, c.pr.reduced
	var st Stats
	sol, proven, err := c.tie.smallest(ctx, c.opt, &st, &solver.Solution{Status: solver.Optimal, Values: p.values, Objective: p.f}, c.nodes)
	d.st.Solves += st.Solves
	if err != nil {
		return p, false, err
	}
	if sol.Values == nil || &sol.Values[0] == &p.values[0] {
		return p, proven, nil
	}
	return c.point(sol.Values), proven, nil
}

// reuse remembers the solutions of the programs solved in one run, by
// fingerprint.
type reuse struct {
	seen    map[[32]byte]*solver.Solution
	relaxed map[[32]byte]*solver.Relaxation
	hits    int
}

// reusing is a component's solver: a program identical to one solved
// before gets that solution again, without a solver run.
type reusing struct {
	*reuse
	solver.Solver
	progress func(format string, args ...any)
}

func (r *reusing) Solve(ctx context.Context, m *solver.Model) (*solver.Solution, error) {
	key := m.Fingerprint()
	if s, ok := r.seen[key]; ok {
		r.hits++
		r.progress("the same program as one solved before: its solution again")
		again := *s
		again.Time = 0
		return &again, nil
	}
	s, err := r.Solver.Solve(ctx, m)
	if err == nil {
		r.seen[key] = s
	}
	return s, err
}

// Relax solves m's LP relaxation with the underlying solver (which
// relaxerOf checks can), once per program.
func (r *reusing) Relax(ctx context.Context, m *solver.Model) (*solver.Relaxation, error) {
	key := m.Fingerprint()
	if x, ok := r.relaxed[key]; ok {
		return x, nil
	}
	x, err := r.Solver.(solver.Relaxer).Relax(ctx, m)
	if err == nil {
		r.relaxed[key] = x
	}
	return x, err
}

// relaxerOf is s as a solver of LP relaxations, or nil.
func relaxerOf(s solver.Solver) solver.Relaxer {
	if r, ok := s.(*reusing); ok {
		if _, ok := r.Solver.(solver.Relaxer); !ok {
			return nil
		}
		return r
	}
	rx, _ := s.(solver.Relaxer)
	return rx
}
