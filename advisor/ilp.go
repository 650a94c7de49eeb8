package advisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// The integer program (seed 000 eq. 7–11, built sparsely over plan DAGs):
//
//	x_i ∈ {0,1}   index i is recommended
//	f_a ∈ {0,1}   arc (lookup step) a of a query's plan DAG is taken
//	r_ρ ∈ {0,1}   shared read ρ runs: one step reading one of the indexes
//	              X_ρ (equal in cost) that answers several support queries
//	              S_ρ of one write (planner.SharedReads; their own such
//	              steps are left out)
//
//	minimize  Σ_q w_q Σ_{a ∈ q} cost_a f_a                       (queries)
//	        + Σ_s w_s Σ_{a ∈ s} cost_a f_a                       (support queries)
//	        + Σ_ρ w_ρ cost_ρ r_ρ                                 (shared reads)
//	        + Σ_u Σ_i w_u write_{u,i} x_i                        (writes, eq. 6)
//	s.t.  Σ_{a leaves start(q)} f_a = 1        every workload query is answered
//	      Σ_{a enters v} f_a = Σ_{a leaves v} f_a   for every inner state v:
//	                                           a plan is a start-to-end path (eq. 10)
//	      Σ_{a ∈ q reads i} f_a ≤ K_{q,i} x_i  plans read recommended indexes (eq. 8)
//	      ans(s) ≥ x_i                          a maintained index's support query s
//	                                           is answered, where ans(s) = Σ_{a leaves
//	                                           start(s')} f_a over s' = s and the
//	                                           queries covering s (planner.Covers),
//	                                           + Σ_{ρ: s ∈ S_ρ} r_ρ
//	      Σ_{a leaves start(s)} f_a ≤ 1
//	      Σ_{a leaves start(s)} f_a ≤ Σ_{i needs s} x_i,  r_ρ ≤ Σ_{X ∈ X_ρ} x_X,
//	      r_ρ ≤ Σ_{i needs some s ∈ S_ρ} x_i    reads run only for the schema's indexes,
//	                                           as the runtime's Planner.Write plans them
//	      Σ_{a ∈ A} f_a ≤ ans(s)                A: steps of one DAG, no two on one
//	                                           path, reading indexes that need s; and
//	                                           ≤ every read of s's group (linkSupports)
//	      x_si ≤ Σ_{b ∈ bases(si)} x_b          an SI has a base CF, chosen here (eq. 11);
//	                                           one that can keep it, if priced so
//	      c_w ≥ x_k − Σ_{i reads e for w} x_i   a write w that connects to an entity e
//	                                           no chosen upkeep reads pays one lookup
//	                                           (c_w, in the objective) where a chosen
//	                                           k can tell (addChecks; kvschema's engine)
//	      Σ_i size_i x_i ≤ budget               (eq. 9)
//
// K_{q,i} is the number of ways index i embeds in q's graph (how often one
// plan can read it); almost always 1. Variables exist only for steps of
// complete plans and for indexes they read, so RUBiS has a few thousand
// variables where NoSE's dense (query × index) program has 435,000.
type ilp struct {
	m       *solver.Model
	x       map[*catalog.Index]solver.Var
	indexes []*catalog.Index
	queries []*workload.Statement
	qdags   []*planner.DAG
	qvars   []map[int]solver.Var // per query: arc → variable
	writes  []*workload.Statement
	upkeeps map[*workload.Statement]map[*catalog.Index]planner.Upkeep
	sups    []*support
	svars   []map[int]solver.Var
	shared  []*sharedRead
	mix     string
	cost    []solver.Term // phase-1 objective
	budget  []solver.Term
	budgetC bool
	scale   float64 // a lower bound on the workload's query cost
	pool    *planner.Pool
	needs   map[*catalog.Index][]*support
	// supPlans caches the chosen plan of each support query.
	supPlans map[int]*plan.Query
	chosen   func(*catalog.Index) bool
	// writeCost is each index's weighted write cost (eq. 6).
	writeCost map[*catalog.Index]float64
	// checks are the writes' existence checks (addChecks).
	checks []checkVar
	// keptLocal holds the SIs whose upkeep is priced as a store's local
	// index that only some of their bases can keep (bases).
	keptLocal map[*catalog.Index]bool
	// objective is that of solve's solution (tie-break terms included),
	// the one its gap is relative to.
	objective float64
	// lpBound and reduced: a lower bound on the tie-broken cost of every
	// schema and the variables' reduced costs, from the duals of the LP
	// relaxation of solve's run (solver.Model.ReducedCosts); reduced is
	// nil without them.
	lpBound float64
	reduced []float64
	// pinned: the program has the row of pinCost, at pinRow.
	pinned bool
	pinRow int
	// deployed, with a deployed schema (Options.Current), holds the
	// identities of its indexes: between schemas of one cost the
	// tie-breaks prefer them to new ones (fresh).
	deployed map[string]string
}

// fresh reports whether building i is part of the schema's change: a
// deployed schema is given and i is not one of its indexes.
func (pr *ilp) fresh(i *catalog.Index) bool {
	if pr.deployed == nil {
		return false
	}
	_, kept := pr.deployed[i.Key]
	return !kept
}

// flow adds the variables and constraints of one plan DAG and returns its
// arc variables and the terms of the flow leaving its start.
func (pr *ilp) flow(name string, d *planner.DAG, weight float64, xv func(*catalog.Index) solver.Var, group bool, skip func(a int) bool) (map[int]solver.Var, []solver.Term) {
	vars := map[int]solver.Var{}
	in := map[int][]solver.Term{}
	out := map[int][]solver.Term{}
	type key struct {
		from, to int
		cost     float64
		arc      int // -1 when arcs are grouped
	}
	byKey := map[key]solver.Var{}
	offers := map[solver.Var][]*catalog.Index{}
	var vorder []solver.Var
	maps := map[*catalog.Index]map[string]bool{}
	for _, a := range d.LiveArcs() {
		if skip != nil && skip(a) {
			continue
		}
		arc := d.Arcs[a]
		k := key{arc.From, arc.To, arc.Step.Cost, a}
		if group {
			k.arc = -1
		}
		v, ok := byKey[k]
		if !ok {
			v = pr.m.AddVar(fmt.Sprintf("f %s %d", name, a), solver.Binary, 0, 1)
			byKey[k] = v
			t := solver.Term{Var: v, Coef: 1}
			out[arc.From] = append(out[arc.From], t)
			in[arc.To] = append(in[arc.To], t)
			pr.cost = append(pr.cost, solver.Term{Var: v, Coef: weight * arc.Step.Cost})
			vorder = append(vorder, v)
		}
		vars[a] = v
		x := arc.Step.Index
		if !slices.Contains(offers[v], x) {
			offers[v] = append(offers[v], x)
		}
		if maps[x] == nil {
			maps[x] = map[string]bool{}
		}
		maps[x][fmt.Sprint(arc.Step.Map)] = true
	}
	for i, st := range d.States {
		if i == 0 || !st.Live || st.End {
			continue
		}
		terms := append([]solver.Term(nil), in[i]...)
		for _, t := range out[i] {
			terms = append(terms, solver.Term{Var: t.Var, Coef: -1})
		}
		pr.m.AddConstraint(fmt.Sprintf("%s state %d", name, i), terms, solver.EQ, 0)
	}
	// A step one index offers counts against that index's x, summed over
	// the query (one plan reads an index at most as often as it embeds);
	// a grouped step, which several indexes offer, needs one of them.
	usage := map[*catalog.Index][]solver.Term{}
	var xorder []*catalog.Index
	for _, v := range vorder {
		if xs := offers[v]; len(xs) == 1 {
			if usage[xs[0]] == nil {
				xorder = append(xorder, xs[0])
			}
			usage[xs[0]] = append(usage[xs[0]], solver.Term{Var: v, Coef: 1})
			continue
		}
		terms := []solver.Term{{Var: v, Coef: 1}}
		for _, x := range offers[v] {
			terms = append(terms, solver.Term{Var: xv(x), Coef: -1})
		}
		pr.m.AddConstraint(fmt.Sprintf("%s step %d", name, v), terms, solver.LE, 0)
	}
	for _, x := range xorder {
		k := float64(len(maps[x]))
		pr.m.AddConstraint(name+" reads "+x.Key, append(usage[x], solver.Term{Var: xv(x), Coef: -k}), solver.LE, 0)
	}
	return vars, out[0]
}

// Support-query DAGs share one variable between equal-cost steps (see
// flow): they are most of the program, and on RUBiS this halves solve
// times; query DAGs keep a variable per step, whose tighter relaxation
// pays off there.
const groupQueries, groupSupports = false, true

func buildILP(opt Options, queries []*workload.Statement, qdags []*planner.DAG, writes []*workload.Statement,
	upkeeps map[*workload.Statement]map[*catalog.Index]planner.Upkeep, sups []*support, p *planner.Pool) *ilp {
	pr := &ilp{m: solver.NewModel(), x: map[*catalog.Index]solver.Var{}, keptLocal: map[*catalog.Index]bool{}, queries: queries, qdags: qdags,
		writes: writes, upkeeps: upkeeps, mix: opt.Mix, writeCost: map[*catalog.Index]float64{}, deployed: opt.currentKeys}
	xv := func(i *catalog.Index) solver.Var {
		if v, ok := pr.x[i]; ok {
			return v
		}
		v := pr.m.AddVar("x "+i.Key, solver.Binary, 0, 1)
		pr.x[i] = v
		pr.indexes = append(pr.indexes, i)
		return v
	}
	// Queries whose plan DAGs have the same shape (RUBiS repeats several
	// statements in different transactions) share one flow weighted by
	// their summed weights: the same program, smaller.
	shapes := make([]string, len(queries))
	weight := map[string]float64{}
	for qi, s := range queries {
		shapes[qi] = qdags[qi].Shape()
		weight[shapes[qi]] += s.Weight(opt.Mix)
	}
	shared := map[string]map[int]solver.Var{}
	for qi, s := range queries {
		if pl := qdags[qi].Cheapest(); pl != nil {
			pr.scale += s.Weight(opt.Mix) * pl.Cost
		}
		if vars, ok := shared[shapes[qi]]; ok {
			pr.qvars = append(pr.qvars, vars)
			continue
		}
		vars, start := pr.flow("q"+s.Tag, qdags[qi], weight[shapes[qi]], xv, groupQueries, nil)
		shared[shapes[qi]] = vars
		pr.qvars = append(pr.qvars, vars)
		pr.m.AddConstraint("answer "+s.Tag, start, solver.EQ, 1)
	}
	// Close the program over what chosen indexes need: an SI's possible
	// base CFs, and the support queries (and the indexes their plans read)
	// of every index that writes change.
	needMap := map[*catalog.Index][]*support{}
	pr.pool, pr.needs = p, needMap
	for _, sp := range sups {
		seen := map[*catalog.Index]bool{}
		for _, i := range sp.needBy {
			if !seen[i] {
				seen[i] = true
				needMap[i] = append(needMap[i], sp)
			}
		}
	}
	// A one-step read several support queries of a write share is a
	// variable of its own (sharedRead); their own one-step arcs reading
	// that index leave their flows, which would only repeat it.
	reads, viaShared := sharedReadsOf(sups)
	added := map[*support][]solver.Term{}
	addSupport := func(sp *support) []solver.Term {
		if start, ok := added[sp]; ok {
			return start
		}
		si := len(pr.sups)
		cut := viaShared[sp]
		for _, r := range cut {
			for _, x := range r.alts {
				xv(x)
			}
		}
		skip := func(a int) bool {
			arc := sp.dag.Arcs[a]
			if arc.From != 0 || !sp.dag.States[arc.To].End {
				return false
			}
			for _, r := range cut {
				if arc.Step.Cost == r.Cost && slices.Contains(r.alts, arc.Step.Index) {
					return true
				}
			}
			return false
		}
		vars, start := pr.flow(fmt.Sprintf("s%d", si), sp.dag, sp.write.Weight(opt.Mix), xv, groupSupports, skip)
		added[sp] = start
		pr.sups = append(pr.sups, sp)
		pr.svars = append(pr.svars, vars)
		pr.m.AddConstraint(fmt.Sprintf("support %d at most once", si), start, solver.LE, 1)
		return start
	}
	for k := 0; k < len(pr.indexes); k++ {
		i := pr.indexes[k]
		if i.Kind == catalog.SI {
			for _, b := range p.Bases[i] {
				xv(b)
			}
		}
		for _, sp := range needMap[i] {
			addSupport(sp)
		}
	}
	// A maintained index's support query runs, or one covering it does
	// (planner.Covers: the runtime projects the wider answer).
	answered := pr.coverStarts(added)
	pr.addSharedReads(reads, added, answered, opt.Mix)
	for _, i := range pr.indexes {
		for _, sp := range needMap[i] {
			pr.m.AddConstraint("support of "+i.Key, append(append([]solver.Term(nil), answered[sp]...), solver.Term{Var: pr.x[i], Coef: -1}), solver.GE, 0)
		}
	}
	// And a support query runs only for an index of the schema that
	// needs it: the runtime runs no other, so it covers only for those.
	for si, sp := range pr.sups {
		terms := append([]solver.Term(nil), added[sp]...)
		seen := map[*catalog.Index]bool{}
		for _, i := range sp.needBy {
			if v, ok := pr.x[i]; ok && !seen[i] {
				seen[i] = true
				terms = append(terms, solver.Term{Var: v, Coef: -1})
			}
		}
		pr.m.AddConstraint(fmt.Sprintf("support %d for an index", si), terms, solver.LE, 0)
	}
	pr.linkSupports(added, answered)
	// Write costs of every index in the program (indexes only support
	// queries need are in it too).
	for k := 0; k < len(pr.indexes); k++ {
		i := pr.indexes[k]
		c := 0.0
		for _, s := range writes {
			if u, ok := upkeeps[s][i]; ok {
				c += s.Weight(opt.Mix) * u.Cost(opt.Profile)
			}
		}
		c += opt.buildCost(i) // with Options.Current: the backfill
		pr.writeCost[i] = c
		if c > 0 {
			pr.cost = append(pr.cost, solver.Term{Var: pr.x[i], Coef: c})
		}
	}
	// Every SI needs a base CF in the schema; the ILP picks which. Where
	// its upkeep was priced as a store's local index that only some bases
	// can keep (kvschema's engine: catalog.CanKeepLocal), one of those: on
	// another alone the runtime keeps the SI as a table, whose upkeep
	// reads what it writes.
	for k := 0; k < len(pr.indexes); k++ {
		i := pr.indexes[k]
		if i.Kind != catalog.SI {
			continue
		}
		if opt.Profile.LocalIndexes && !opt.Profile.KeepsSI(false) {
			for _, s := range writes {
				if _, ok := upkeeps[s][i]; ok {
					pr.keptLocal[i] = true
					break
				}
			}
		}
		terms := []solver.Term{{Var: pr.x[i], Coef: 1}}
		for _, b := range pr.bases(i) {
			if v, ok := pr.x[b]; ok {
				terms = append(terms, solver.Term{Var: v, Coef: -1})
			}
		}
		pr.m.AddConstraint("base of "+i.Key, terms, solver.LE, 0)
	}
	pr.addChecks(opt)
	for _, i := range pr.indexes {
		pr.budget = append(pr.budget, solver.Term{Var: pr.x[i], Coef: i.Size / sizeUnit})
	}
	if !math.IsInf(opt.Budget, 1) {
		pr.m.AddConstraint("budget", pr.budget, solver.LE, opt.Budget/sizeUnit)
		pr.budgetC = true
	}
	if opt.MigrationLimited {
		// What a migration builds: the new structures' bytes.
		var built []solver.Term
		for _, i := range pr.indexes {
			if _, kept := opt.currentKeys[i.Key]; !kept {
				built = append(built, solver.Term{Var: pr.x[i], Coef: i.Size / sizeUnit})
			}
		}
		pr.m.AddConstraint("migration budget", built, solver.LE, opt.MigrationLimit/sizeUnit)
		pr.budgetC = true
	}
	pr.m.SetTuning(pr.costTuning())
	return pr
}

// checkCost is what one write's existence checks cost on p's engine (one
// lookup: they are issued together), or 0 where the schema runs on an
// engine that makes none (Cassandra's).
func checkCost(p cost.Profile) float64 {
	if p.Engine != cost.EnginePebble && p.Engine != cost.EngineBigtable {
		return 0
	}
	return p.Read(cost.Access{Partitions: 1, Rows: 1, Cells: 1})
}

// checkVar is one write's existence checks in the program: v is 1 when
// the schema makes the engine look an entity up (planner.Check).
type checkVar struct {
	write *workload.Statement
	v     solver.Var
	cost  float64         // unweighted
	rows  [][]solver.Term // each ≥ 0 with v: −x_k + Σ x_i (reads)
}

// addChecks prices the writes' existence checks: a write pays one lookup
// when some entity it connects to is read by none of the upkeeps of the
// chosen indexes (planner.ReadsLinked) and a chosen column family can
// tell whether it exists (planner.CanCheck):
//
//	c_w ≥ x_k − Σ_{i: upkeep of i for w reads the entity} x_i   for each such k
func (pr *ilp) addChecks(opt Options) {
	c := checkCost(opt.Profile)
	if c == 0 {
		return
	}
	for wi, s := range pr.writes {
		var rows [][]solver.Term
		for _, ch := range planner.Checks(s.Write) {
			var reads []solver.Term
			for _, i := range pr.indexes {
				if u, ok := pr.upkeeps[s][i]; ok && slices.ContainsFunc(u.Parts, func(p *plan.Upkeep) bool { return planner.ReadsLinked(p, ch.Nav) }) {
					reads = append(reads, solver.Term{Var: pr.x[i], Coef: 1})
				}
			}
			for _, k := range pr.indexes {
				if planner.CanCheck(k, ch.Entity) {
					rows = append(rows, append([]solver.Term{{Var: pr.x[k], Coef: -1}}, reads...))
				}
			}
		}
		if len(rows) == 0 {
			continue
		}
		v := pr.m.AddVar(fmt.Sprintf("check %d", wi), solver.Binary, 0, 1)
		for n, r := range rows {
			pr.m.AddConstraint(fmt.Sprintf("check %d %d", wi, n), append(r[:len(r):len(r)], solver.Term{Var: v, Coef: 1}), solver.GE, 0)
		}
		pr.checks = append(pr.checks, checkVar{write: s, v: v, cost: c, rows: rows})
		pr.cost = append(pr.cost, solver.Term{Var: v, Coef: s.Weight(opt.Mix) * c})
	}
}

// needed reports whether the schema values hold (by its index
// variables) makes the engine check: some row is short of 1 without v.
func (ch checkVar) needed(values []float64) bool {
	for _, r := range ch.rows {
		if termsOf(r, values) < -0.5 {
			return true
		}
	}
	return false
}

// bases lists the CFs si may have as its base in a schema: any of the
// pool's, or where its upkeep was priced as a local index (keptLocal),
// those that can keep it as one.
func (pr *ilp) bases(si *catalog.Index) []*catalog.Index {
	if !pr.keptLocal[si] {
		return pr.pool.Bases[si]
	}
	var out []*catalog.Index
	for _, b := range pr.pool.Bases[si] {
		if catalog.CanKeepLocal(si, b) {
			out = append(out, b)
		}
	}
	return out
}

// baseTuning is every solve's (the solver never runs CBC's preprocessing,
// whose passes over these programs also took longer than the search they
// shortened: RUBiS's 61 statements, 2026-11-26, a loaded 2-core machine,
// the first run 4.1-4.8 s → 2.8-3.9 s within 161MB without it). It skips
// zero-half cuts: on the 61 statements within
// 161MB they took a third of its time and no cut they made stayed active
// (2026-11-27: over four of CLP's random seeds, 10–22 nodes and 3.3–5.6 s
// with them, 10–18 nodes and 1.6–2.4 s without, on a loaded machine).
var baseTuning = solver.Tuning{NoZeroHalf: true}

// costTuning is the tuning of the runs that minimize the cost: baseTuning,
// with the least improvement CBC takes for a better schema at incrementRel
// of the workload's query cost. CBC's default, 1e-5 absolute, let a run
// stop at a schema up to 1e-5 above the optimum — on RUBiS's 61
// statements within 161MB (Pebble profile), 0.5138995 against 0.5138923,
// depending on the start — and is far above the tie-breaking terms it is
// meant to resolve (tieBroken: each index weighs 1e-5/n of the scale).
func (pr *ilp) costTuning() solver.Tuning {
	t := baseTuning
	t.Increment = incrementRel * pr.scale
	return t
}

const incrementRel = 1e-10

// tieBroken is the objective solve minimizes: the cost, with ties broken
// towards fewer, then smaller, indexes (with a deployed schema, towards
// its indexes before new ones). The tie-breaking terms together
// weigh at most 1e-5 of a lower bound on the query cost: large enough for
// CBC to resolve (smaller weights fall under its tolerances; costTuning's
// increment is far below each index's term), small enough that they only
// decide between schemas whose costs agree to about 1e-5.
func (pr *ilp) tieBroken() []solver.Term {
	return append(append([]solver.Term(nil), pr.cost...), pr.ties()...)
}

// ties are tieBroken's tie-breaking terms.
func (pr *ilp) ties() []solver.Term {
	var out []solver.Term
	n := float64(len(pr.indexes) + 1)
	total := 1.0
	for _, i := range pr.indexes {
		total += i.Size
	}
	perIndex := 1e-5 * pr.scale / n
	for _, i := range pr.indexes {
		c := perIndex * (1 + i.Size/total)
		if pr.fresh(i) {
			// One unit more: trading a deployed index for a new one
			// never lowers the ties.
			c += perIndex
		}
		out = append(out, solver.Term{Var: pr.x[i], Coef: c})
	}
	return out
}

// solve minimizes the tie-broken cost. The smallest schema of the cost
// found is smallest's to find.
//
// With a solver that solves LP relaxations (solver.Relaxer, as cbc does),
// the run is prepared from the program's relaxation (narrow): a better
// start, and the variables its duals fix in every optimal schema left
// out. Otherwise the solver run asks for the relaxation's duals itself,
// for the size tie-break.
func (pr *ilp) solve(ctx context.Context, opt Options, st *Stats) (*solver.Solution, error) {
	pr.m.SetObjective(pr.tieBroken())
	pr.reduced = nil
	start, err := pr.narrow(ctx, opt, st)
	if err != nil {
		return nil, err
	}
	defer pr.m.ClearFixes()
	if start != nil {
		pr.m.SetStart(start)
	}
	tune := pr.costTuning()
	tune.Duals = !opt.costOnly && pr.reduced == nil
	pr.m.SetTuning(tune)
	defer pr.m.SetTuning(pr.costTuning())
	sol, err := pr.solveFixed(ctx, opt, st)
	if errors.Is(err, solver.ErrInterrupted) && start != nil && pr.reduced != nil {
		// Interrupted while the run was being prepared: the best schema
		// known, with its gap to the relaxation's bound.
		obj, _ := pr.m.Evaluate(start)
		sol, err = &solver.Solution{Status: solver.Feasible, Values: start, Objective: obj, Solver: opt.Solver.Name(),
			Gap: math.Max(0, obj-pr.lpBound) / math.Max(1e-9, math.Abs(obj))}, nil
	}
	if err != nil {
		return nil, err
	}
	if sol.Duals != nil {
		pr.lpBound, pr.reduced = pr.m.ReducedCosts(sol.Duals)
	}
	st.Solver = sol.Solver
	st.Gap = sol.Gap
	pr.objective = sol.Objective
	opt.progress("solver: %v in %v", sol.Status, sol.Time.Round(time.Millisecond))
	switch sol.Status {
	case solver.Optimal, solver.Feasible:
		st.Optimal = sol.Status == solver.Optimal
		return sol, nil
	case solver.Infeasible:
		if !pr.budgetC {
			return nil, fmt.Errorf("the integer program is infeasible without a budget (a bug: every query has a plan)")
		}
		return nil, errInfeasible
	}
	return nil, fmt.Errorf("solver %s stopped with status %v", sol.Solver, sol.Status)
}

// narrow prepares solve's run from the program's LP relaxation, when the
// solver solves relaxations, and returns the start to run from (start.go's
// local search's, or a better one):
//
//   - the relaxation's duals bound the tie-broken cost of every schema
//     (pr.lpBound, pr.reduced; solver.Model.ReducedCosts), for the size
//     tie-break too (the run no longer computes them);
//   - when the start is more than guidedStartGap above that bound, or
//     there is none, the local search runs again guided by the
//     relaxation (guidedStart), and if the start is still more than
//     subStartGap above it, relaxStart looks for a better one;
//   - every variable whose reduced cost puts every schema that gives it
//     the other value above the start's cost is fixed, then what the
//     rows imply (solver.Model.Propagate). Every schema of least
//     tie-broken cost costs no more than the start, so it satisfies
//     every fix: the run's optimum is the program's. So is its bound
//     when it stops early: the schemas left out cost more than the
//     start, which the run keeps or betters. The fixes stay until solve
//     returns.
//
// On RUBiS's 61 statements within 161MB (Cassandra profile) the start
// goes from 14.81 to 10.287 (the optimum is 10.2565, the bound 10.1865),
// 2,170 of the 3,878 variables are fixed, and the run takes 0.65–0.95 s
// instead of 2.4–2.9 s (a loaded 2-core machine, 2026-11-26).
func (pr *ilp) narrow(ctx context.Context, opt Options, st *Stats) ([]float64, error) {
	// The local search runs on the other core while the solver solves the
	// relaxation: both only read the program.
	var start []float64
	searched := make(chan struct{})
	go func() {
		defer close(searched)
		if !opt.noLocalStart {
			start = pr.start(opt.Budget)
		}
	}()
	rx := relaxerOf(opt.Solver)
	if rx == nil {
		<-searched
		return start, nil
	}
	rel, err := rx.Relax(ctx, pr.m)
	<-searched
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		// Interrupted before it began, or the relaxation failed: the run
		// goes on without it (and says what stops it).
		return start, nil
	case rel.Status != solver.Optimal || rel.Duals == nil:
		return start, nil // the run finds out why
	}
	bound, reduced := pr.m.ReducedCosts(rel.Duals)
	if math.IsInf(bound, -1) {
		return start, nil
	}
	pr.lpBound, pr.reduced = bound, reduced
	startObj := math.Inf(1)
	if start != nil {
		obj, violated := pr.m.Evaluate(start)
		if len(violated) > 0 {
			start = nil
		} else {
			startObj = obj
		}
	}
	opt.progress("LP relaxation: bound %.6g in %v (the start: %.6g)", bound, rel.Time.Round(time.Millisecond), startObj)
	if !opt.noLocalStart && (start == nil || startObj-bound > guidedStartGap*math.Abs(startObj)) {
		if g := pr.guidedStart(opt.Budget, rel.Values); g != nil {
			if obj, violated := pr.m.Evaluate(g); len(violated) == 0 && obj < startObj {
				start, startObj = g, obj
				opt.progress("a start guided by the relaxation: %.6g", obj)
			}
		}
	}
	if start == nil || startObj-bound > subStartGap*math.Abs(startObj) {
		better, obj, err := pr.relaxStart(ctx, opt, st, rel, start)
		if err != nil {
			return nil, err
		}
		if obj < startObj {
			start, startObj = better, obj
		}
	}
	if start == nil {
		return nil, nil
	}
	ub := startObj + 1e-9*math.Max(1, math.Abs(startObj))
	for v, d := range reduced {
		switch {
		case d > 0 && bound+d > ub:
			pr.m.Fix(solver.Var(v), 0)
		case d < 0 && bound-d > ub:
			pr.m.Fix(solver.Var(v), 1)
		}
	}
	if _, ok := pr.m.Propagate(); !ok {
		pr.m.ClearFixes() // numerical trouble only: the start holds
		return start, nil
	}
	for v := range start {
		if x, ok := pr.m.FixedValue(solver.Var(v)); ok && math.Abs(x-start[v]) > 0.5 {
			pr.m.ClearFixes() // likewise
			return start, nil
		}
	}
	opt.progress("%d of %d variables fixed by reduced costs against the start's cost and what the rows then imply", pr.m.NumFixed(), pr.m.NumVars())
	return start, nil
}

// relaxStart looks for a better start than start (nil: none) in the
// program with every variable the relaxation rel and start both leave at
// 0 fixed there (RUBiS's 61 statements: 195 of 3,878 variables free),
// solved within subStartNodes nodes from start: a heuristic, whose schema
// is a start and nothing more. It returns the schema and its tie-broken
// cost, or nil and +Inf.
func (pr *ilp) relaxStart(ctx context.Context, opt Options, st *Stats, rel *solver.Relaxation, start []float64) ([]float64, float64, error) {
	// Support queries stay free: the relaxation answers many by a
	// fraction of a covering query or a shared read, which the indexes
	// it keeps may not run whole.
	routes := map[solver.Var]bool{}
	for _, vars := range pr.svars {
		for _, v := range vars {
			routes[v] = true
		}
	}
	for _, r := range pr.shared {
		routes[r.v] = true
	}
	for v, x := range rel.Values {
		if math.Abs(x) <= 1e-9 && (start == nil || start[v] == 0) && !routes[solver.Var(v)] {
			pr.m.Fix(solver.Var(v), 0)
		}
	}
	free := pr.m.NumVars() - pr.m.NumFixed()
	pr.m.SetStart(start)
	tune := pr.costTuning()
	tune.NodeLimit = subStartNodes
	pr.m.SetTuning(tune)
	st.Solves++
	sub, err := opt.Solver.Solve(ctx, pr.m)
	pr.m.ClearFixes()
	pr.m.SetTuning(pr.costTuning())
	switch {
	case errors.Is(err, solver.ErrInterrupted):
		return nil, math.Inf(1), nil
	case err != nil:
		// A heuristic's run: without it, the start is the local search's.
		opt.progress("a start from the relaxation failed (%v): the local search's stays", err)
		return nil, math.Inf(1), nil
	case sub.Status != solver.Optimal && sub.Status != solver.Feasible:
		opt.progress("a start from the relaxation (%d of %d variables free): %v", free, pr.m.NumVars(), sub.Status)
		return nil, math.Inf(1), nil
	}
	obj, violated := pr.m.Evaluate(sub.Values)
	if len(violated) > 0 {
		return nil, math.Inf(1), nil
	}
	opt.progress("a start from the relaxation (%d of %d variables free): cost %.6g, %v in %v", free, pr.m.NumVars(), obj, sub.Status, sub.Time.Round(time.Millisecond))
	return sub.Values, obj, nil
}

// A start more than guidedStartGap (relative) above the relaxation's
// bound is improved by the local search guided by the relaxation, and one
// more than subStartGap above it by solving the program restricted to the
// relaxation's support (narrow), within subStartNodes nodes. The guided
// search is cheap and a start nearer the optimum fixes more variables:
// on RUBiS's 61 statements within 161MB (Pebble profile) the local
// search's start is 0.38% above the bound, the guided one 0.09% (7,987 of
// 10,053 variables fixed instead of 6,317), and the run takes 2.6 s
// instead of 7.7 s. The restricted program is not worth its run there
// (its optimum is the guided start's).
const (
	guidedStartGap = 0.001
	subStartGap    = 0.01
	subStartNodes  = 100
)

// sizeUnit is the unit of sizes in the program: megabytes keep the budget
// row's coefficients near the costs' magnitude, which CBC's LP handles
// better than bytes (~10% faster on RUBiS).
const sizeUnit = 1e6

// errInfeasible reports that the budget is too small.
var errInfeasible = fmt.Errorf("infeasible budget")

// minBudget is the size of the smallest schema the program admits.
func (pr *ilp) minBudget(ctx context.Context, opt Options, st *Stats) (float64, error) {
	pr.m.SetObjective(pr.budget)
	st.Solves++
	sol, err := opt.Solver.Solve(ctx, pr.m)
	if err != nil {
		return 0, err
	}
	if sol.Status != solver.Optimal && sol.Status != solver.Feasible {
		return 0, fmt.Errorf("solver %s: no schema answers the workload (status %v)", sol.Solver, sol.Status)
	}
	return sol.Objective * sizeUnit, nil
}

// extract reads the chosen indexes and plans, and recomputes the totals
// from them.
func (pr *ilp) extract(sol *solver.Solution, res *Result) {
	on := func(v solver.Var) bool { return sol.Values[v] > 0.5 }
	chosen := map[*catalog.Index]bool{}
	isChosen := func(x *catalog.Index) bool { return chosen[x] }
	pr.chosen = isChosen
	for _, i := range pr.indexes {
		if on(pr.x[i]) {
			chosen[i] = true
			res.Indexes = append(res.Indexes, i)
			res.TotalSize += i.Size
		}
	}
	for qi, s := range pr.queries {
		pl := pr.qdags[qi].Plan(path(pr.qdags[qi], pr.qvars[qi], on, isChosen))
		w := s.Weight(pr.mix)
		res.Queries = append(res.Queries, &QueryPlan{Statement: s, Weight: w, Plan: pl})
		res.TotalCost += w * pl.Cost
	}
	for _, s := range pr.writes {
		// The statement's one batch, whatever the schema (ApplyCost).
		wp := &WritePlan{Statement: s, Weight: s.Weight(pr.mix), Cost: res.Profile.ApplyCost}
		var idx []*catalog.Index
		for i := range pr.upkeeps[s] {
			if chosen[i] {
				idx = append(idx, i)
			}
		}
		sort.Slice(idx, func(a, b int) bool { return idx[a].Key < idx[b].Key })
		for _, i := range idx {
			u := pr.upkeeps[s][i]
			iu := &IndexUpkeep{Index: i, Puts: u.Puts, Deletes: u.Deletes, WriteCost: u.Cost(res.Profile)}
			for si, sp := range pr.sups {
				if sp.write != s || !needs(sp, i) {
					continue
				}
				pl := pr.supportPlan(si, on)
				for oi, o := range pr.sups {
					if pl != nil {
						break
					}
					if o != sp && o.write == s && planner.Covers(o.query, sp.query) {
						pl = pr.supportPlan(oi, on) // a covering query's run answers sp
					}
				}
				for _, r := range pr.shared {
					if pl != nil {
						break
					}
					if on(r.v) && slices.Contains(r.sups, sp) {
						pl = pr.sharedPlan(r, res.Profile) // a shared read answers sp
					}
				}
				if pl != nil {
					iu.Support = append(iu.Support, pl)
				}
			}
			wp.Indexes = append(wp.Indexes, iu)
			wp.Cost += iu.WriteCost
		}
		// Each chosen support query runs once per write, however many
		// indexes need it.
		for si, sp := range pr.sups {
			if sp.write != s {
				continue
			}
			if pl := pr.supportPlan(si, on); pl != nil {
				wp.Cost += pl.Cost
			}
		}
		for _, r := range pr.shared {
			if r.write == s && on(r.v) {
				wp.Cost += r.Cost
			}
		}
		for _, ch := range pr.checks {
			if ch.write == s && on(ch.v) {
				wp.Check = ch.cost
				wp.Cost += ch.cost
			}
		}
		res.Writes = append(res.Writes, wp)
		res.TotalCost += wp.Weight * wp.Cost
	}
}

func needs(sp *support, i *catalog.Index) bool {
	for _, x := range sp.needBy {
		if x == i {
			return true
		}
	}
	return false
}

// path follows the chosen arcs of a DAG from its start to an end state.
func path(d *planner.DAG, vars map[int]solver.Var, on func(solver.Var) bool, chosen func(*catalog.Index) bool) []int {
	var p []int
	for i := 0; !d.States[i].End; {
		next := -1
		for _, a := range d.States[i].Out {
			if v, ok := vars[a]; ok && on(v) && chosen(d.Arcs[a].Step.Index) {
				next = a
				break
			}
		}
		if next < 0 {
			return nil
		}
		p = append(p, next)
		i = d.Arcs[next].To
	}
	return p
}

// supportPlan is the chosen plan of support query si, or nil if it does not
// run.
func (pr *ilp) supportPlan(si int, on func(solver.Var) bool) *plan.Query {
	if pl, ok := pr.supPlans[si]; ok {
		return pl
	}
	d := pr.sups[si].dag
	var pl *plan.Query
	if p := path(d, pr.svars[si], on, pr.chosen); p != nil {
		pl = d.Plan(p)
	}
	if pr.supPlans == nil {
		pr.supPlans = map[int]*plan.Query{}
	}
	pr.supPlans[si] = pl // one plan per support query, shared by the indexes that need it
	return pl
}

// The size tie-break. The tie-breaking terms of the objective (tieBroken)
// weigh too little for CBC to resolve between schemas of equal cost that
// differ in size (they favour fewer indexes, and CBC's cutoff increment,
// 1e-5 on the objective, swallows most size differences), so a second run
// settles it exactly: the cost pinned at that of the schema found (within
// tieTolerance, relative), the objective the size, from that schema. Any
// schema of optimal cost is feasible for it, so the answer is no larger
// than the smallest of them, and costs no more than the first schema.
//
// Proving a schema smallest can take the solver longer than proving its
// cost least (the cost row weakens the size's relaxation): the run
// skips heuristics (it starts from the first schema, as good as they
// find) and Gomory cuts (slow on that row; together 1.1–3.2× faster on
// RUBiS and the executor's random workloads) and zero-half cuts (a third
// of the run's time on RUBiS's 61 statements, for nothing the run then
// needs); it leaves out the variables the first run's LP duals fix
// (fixByReducedCosts: half of that program, and the run takes 0.4 s
// instead of 1.4 s of CPU, 2026-11-26); and it stops after
// max(tieMinNodes, tieNodeFactor × the first run's nodes) nodes of
// branch and bound, with the smallest schema it found and the size not
// proven least (Stats.Smallest false). A node limit, not a time limit:
// the same inputs give the same schema.
const (
	tieTolerance  = 1e-9
	tieMinNodes   = 1000
	tieNodeFactor = 10
)

// costOf is the cost of a solution: the objective without its
// tie-breaking terms.
func (pr *ilp) costOf(values []float64) float64 { return termsOf(pr.cost, values) }

// termsOf is the value of the linear expression terms at values.
func termsOf(terms []solver.Term, values []float64) float64 {
	v := 0.0
	for _, t := range terms {
		v += t.Coef * values[t.Var]
	}
	return v
}

// sizeOf is the size in bytes of a solution's schema.
func (pr *ilp) sizeOf(values []float64) float64 {
	s := 0.0
	for _, i := range pr.indexes {
		if values[pr.x[i]] > 0.5 {
			s += i.Size
		}
	}
	return s
}

// pinCost bounds the cost by limit(1 + tieTolerance): a row added once,
// whose bound later calls move. The row is scaled by the workload's query
// cost (pr.scale), so that CBC's absolute row tolerance (1e-7) is
// relative to the cost.
func (pr *ilp) pinCost(limit float64) {
	unit := pr.scale
	if !(unit > 0) {
		unit = 1
	}
	rhs := limit * (1 + tieTolerance) / unit
	if pr.pinned {
		pr.m.SetRHS(pr.pinRow, rhs)
		return
	}
	terms := make([]solver.Term, len(pr.cost))
	for k, t := range pr.cost {
		terms[k] = solver.Term{Var: t.Var, Coef: t.Coef / unit}
	}
	pr.pinned, pr.pinRow = true, pr.m.NumConstraints()
	pr.m.AddConstraint("cost pinned", terms, solver.LE, rhs)
}

// sizeObjective is the schema's size, in units that keep the objective
// below about 1e6 (CBC then resolves sizes to a hundred-thousandth of
// that unit: a fraction of a byte while the program's indexes total less
// than 100 GB). With a deployed schema, each new index adds the size of
// every index of the program: the fewest new indexes, then the smallest.
func (pr *ilp) sizeObjective() []solver.Term {
	total := 0.0
	for _, i := range pr.indexes {
		total += i.Size
	}
	unit := math.Max(1, total/1e6)
	obj := make([]solver.Term, 0, len(pr.indexes))
	for _, i := range pr.indexes {
		c := i.Size / unit
		if pr.fresh(i) {
			// Fewest new indexes first: each weighs more than all the
			// others' bytes together, so a schema of the same cost
			// never trades a deployed index for a smaller new one.
			c += total / unit
		}
		obj = append(obj, solver.Term{Var: pr.x[i], Coef: c})
	}
	return obj
}

// smallest returns, of the schemas the program admits that cost no more
// than sol's, one of least size, starting from sol (the program's rows,
// a budget's included, all hold); nodes is the number of nodes the
// solver took to find sol, which sets the run's node limit. proven says
// the solver proved it least; when it stopped without proof (its node or
// time limit), the smallest it found comes back. sol comes back when
// nothing smaller exists or the solver gave nothing usable.
func (pr *ilp) smallest(ctx context.Context, opt Options, st *Stats, sol *solver.Solution, nodes int) (*solver.Solution, bool, error) {
	obj := pr.sizeObjective()
	c1, s1 := pr.costOf(sol.Values), termsOf(obj, sol.Values)
	pr.pinCost(c1)
	pr.m.SetObjective(obj)
	pr.m.SetStart(sol.Values)
	// cbc's default increment is a fraction of a byte in sizeObjective's
	// unit: it stays.
	tie := baseTuning
	tie.NodeLimit, tie.NoHeuristics, tie.NoGomory = max(tieMinNodes, tieNodeFactor*nodes), true, true
	pr.m.SetTuning(tie)
	defer pr.m.SetTuning(pr.costTuning())
	if n := pr.fixByReducedCosts(c1, sol.Values); n > 0 {
		opt.progress("size tie-break: %d of %d variables fixed by reduced costs and what the rows then imply", n, pr.m.NumVars())
	}
	defer pr.m.ClearFixes()
	s2, err := pr.solveFixed(ctx, opt, st)
	if err != nil {
		return nil, false, err
	}
	opt.progress("solver (least size of that cost): %v in %v, %d nodes", s2.Status, s2.Time.Round(time.Millisecond), s2.Nodes)
	if s2.Status != solver.Optimal && s2.Status != solver.Feasible {
		return sol, false, nil
	}
	proven := s2.Status == solver.Optimal && s2.Gap == 0
	// Tolerances cannot make it costlier than the pin by more than CBC's
	// row tolerance; a schema no smaller (with a deployed schema: no
	// fewer new indexes, or no smaller) is no better.
	if termsOf(obj, s2.Values) >= s1 || pr.costOf(s2.Values) > c1*(1+1e-6)+1e-12 {
		return sol, proven, nil
	}
	return s2, proven, nil
}

// solveFixed runs the solver on the program as it is, fixes included;
// when the solver fails on a program with fixes (CBC 2.10.8's Clp has
// aborted on an assertion, lowerValue <= upperValue, on such a program:
// TestBudgetMonotoneProperty, seed 11383223345108262407), it runs it
// again without them: they only save time.
func (pr *ilp) solveFixed(ctx context.Context, opt Options, st *Stats) (*solver.Solution, error) {
	st.Solves++
	sol, err := opt.Solver.Solve(ctx, pr.m)
	if err == nil || errors.Is(err, solver.ErrInterrupted) || pr.m.NumFixed() == 0 {
		return sol, err
	}
	opt.progress("solver failed with %d variables fixed (%v): again without them", pr.m.NumFixed(), err)
	pr.m.ClearFixes()
	st.Solves++
	return opt.Solver.Solve(ctx, pr.m)
}

// fixByReducedCosts fixes the variables that take one value in every
// schema the size tie-break admits (the program's rows with the cost
// pinned at limit), and returns how many. The duals of the first run's LP
// relaxation (pr.reduced, pr.lpBound) bound the tie-broken cost f of
// every schema: f ≥ lpBound + d_j for one with x_j = 1 when its reduced
// cost d_j > 0 (x_j = 0 when d_j < 0: lpBound + |d_j|). A schema the
// tie-break admits has f ≤ limit(1 + tieTolerance) + the tie terms'
// total + CBC's row tolerance, so a variable whose bound passes that is
// fixed; then what the rows imply (solver.Model.Propagate). The start
// (the first run's schema) satisfies every fix: if it did not (only
// numerical trouble could do that), nothing is fixed.
func (pr *ilp) fixByReducedCosts(limit float64, start []float64) int {
	if pr.reduced == nil || math.IsInf(pr.lpBound, -1) {
		return 0
	}
	unit := pr.scale
	if !(unit > 0) {
		unit = 1
	}
	ub := limit*(1+tieTolerance) + 1e-6*unit
	for _, t := range pr.ties() {
		ub += t.Coef
	}
	ub += 1e-9 * math.Max(1, math.Abs(ub))
	for v, d := range pr.reduced {
		switch {
		case d > 0 && pr.lpBound+d > ub:
			pr.m.Fix(solver.Var(v), 0)
		case d < 0 && pr.lpBound-d > ub:
			pr.m.Fix(solver.Var(v), 1)
		}
	}
	if _, ok := pr.m.Propagate(); !ok {
		pr.m.ClearFixes()
		return 0
	}
	for v := range start {
		if x, ok := pr.m.FixedValue(solver.Var(v)); ok && math.Abs(x-start[v]) > 0.5 {
			pr.m.ClearFixes()
			return 0
		}
	}
	return pr.m.NumFixed()
}

// linkSupports adds, for every plan DAG (a query's, or a support query's)
// and every support query s in the program, rows
//
//	Σ_{a ∈ A} f_a ≤ ans(s)
//
// where A is a set of the DAG's steps, each reading an index that needs s
// (for a step several indexes offer, all of them), no two of which lie on
// one path. A plan takes at most one step of A, and a step of A reads an
// index the schema then holds, whose upkeep runs s: the rows hold for
// every schema. They are implied by the rows "a step reads a recommended
// index" and "a maintained index's support query runs" for one step, but
// not in the relaxation when a plan's flow is spread over several indexes
// that need s (a fraction each, each asking s for that fraction only).
// The same for each group of a write's support queries one read may
// answer (planner.GroupKey), A's steps each reading an index that needs
// one of them, bounded by every read of the group (each query's own plans
// and the shared reads): without those rows the relaxation pays one
// shared read's fraction for several indexes' fractions (on RUBiS's 61
// statements within 161MB the bound fell from 10.195 to 10.011; with them
// it is 10.167, and the run takes 6 s instead of 28 s).
func (pr *ilp) linkSupports(added, answered map[*support][]solver.Term) {
	if len(answered) == 0 {
		return
	}
	// A demand is a support query (answered by its own plan, a covering
	// query's or a shared read), or a group of a write's support queries
	// one read may answer (planner.GroupKey), answered by any read of
	// one of them: a step reading an index that needs one of the group's
	// queries makes the write read at least once.
	type demand struct {
		name string
		rhs  []solver.Term
	}
	var demands []demand
	need := map[*catalog.Index]map[int]bool{}
	needs := func(d int, x *catalog.Index) {
		if _, ok := pr.x[x]; !ok {
			return
		}
		if need[x] == nil {
			need[x] = map[int]bool{}
		}
		need[x][d] = true
	}
	for si, sp := range pr.sups {
		for _, x := range sp.needBy {
			needs(len(demands), x)
		}
		demands = append(demands, demand{fmt.Sprintf("support %d", si), answered[sp]})
	}
	for gi, g := range supportGroups(pr.sups) {
		if len(g) < 2 {
			continue // its support's demand
		}
		var rhs []solver.Term
		for _, sp := range g {
			rhs = append(rhs, added[sp]...)
			for _, x := range sp.needBy {
				needs(len(demands), x)
			}
		}
		for _, r := range pr.shared {
			if slices.Contains(g, r.sups[0]) {
				rhs = append(rhs, solver.Term{Var: r.v, Coef: 1})
			}
		}
		demands = append(demands, demand{fmt.Sprintf("support group %d", gi), rhs})
	}
	link := func(name string, d *planner.DAG, vars map[int]solver.Var) {
		// offers: the indexes each variable's steps read.
		offers := map[solver.Var][]*catalog.Index{}
		from := map[solver.Var][2]int{}
		var vorder []solver.Var
		for _, a := range d.LiveArcs() {
			v, ok := vars[a]
			if !ok {
				continue
			}
			if _, seen := from[v]; !seen {
				vorder = append(vorder, v)
				from[v] = [2]int{d.Arcs[a].From, d.Arcs[a].To}
			}
			if x := d.Arcs[a].Step.Index; !slices.Contains(offers[v], x) {
				offers[v] = append(offers[v], x)
			}
		}
		// The demands each variable's steps all make.
		byDemand := map[int][]solver.Var{}
		var dorder []int
		for _, v := range vorder {
			var common map[int]bool
			for k, x := range offers[v] {
				if k == 0 {
					common = need[x]
					continue
				}
				var both map[int]bool
				for di := range common {
					if need[x][di] {
						if both == nil {
							both = map[int]bool{}
						}
						both[di] = true
					}
				}
				common = both
			}
			for di := range common {
				if byDemand[di] == nil {
					dorder = append(dorder, di)
				}
				byDemand[di] = append(byDemand[di], v)
			}
		}
		if len(dorder) == 0 {
			return
		}
		reach := reachable(d)
		slices.Sort(dorder)
		for _, di := range dorder {
			vs := byDemand[di]
			if len(vs) < 2 {
				continue // one step: implied
			}
			// Greedy groups of steps no path joins.
			var groups [][]solver.Var
			for _, v := range vs {
				placed := false
				for g, grp := range groups {
					ok := true
					for _, u := range grp {
						a, b := from[u], from[v]
						if reach[a[1]][b[0]] || reach[b[1]][a[0]] {
							ok = false
							break
						}
					}
					if ok {
						groups[g] = append(grp, v)
						placed = true
						break
					}
				}
				if !placed {
					groups = append(groups, []solver.Var{v})
				}
			}
			for _, grp := range groups {
				if len(grp) < 2 {
					continue
				}
				dm := demands[di]
				terms := make([]solver.Term, 0, len(grp)+len(dm.rhs))
				for _, v := range grp {
					terms = append(terms, solver.Term{Var: v, Coef: 1})
				}
				for _, t := range dm.rhs {
					terms = append(terms, solver.Term{Var: t.Var, Coef: -1})
				}
				pr.m.AddConstraint(fmt.Sprintf("%s needs %s", name, dm.name), terms, solver.LE, 0)
			}
		}
	}
	seen := map[solver.Var]bool{}
	for qi, d := range pr.qdags {
		// Queries of one shape share their variables: linked once.
		vars, shared := pr.qvars[qi], false
		for _, v := range vars {
			shared = seen[v]
			seen[v] = true
		}
		if !shared {
			link("q"+pr.queries[qi].Tag, d, vars)
		}
	}
	for si, sp := range pr.sups {
		link(fmt.Sprintf("s%d", si), sp.dag, pr.svars[si])
	}
}

// supportGroups divides support queries into the groups one read may
// answer together: one write's, with the same graph and predicates
// (planner.GroupKey), in the order of their first query.
func supportGroups(sups []*support) [][]*support {
	type key struct {
		w *workload.Statement
		k string
	}
	at := map[key]int{}
	var out [][]*support
	for _, sp := range sups {
		k := key{sp.write, planner.GroupKey(sp.query)}
		g, ok := at[k]
		if !ok {
			g = len(out)
			at[k] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], sp)
	}
	return out
}

// coverStarts returns, per support query in the program, the start terms
// of its own plans and of those of the write's other support queries that
// cover it (planner.Covers): any of them running answers it.
func (pr *ilp) coverStarts(start map[*support][]solver.Term) map[*support][]solver.Term {
	out := make(map[*support][]solver.Term, len(start))
	for _, g := range supportGroups(pr.sups) {
		for _, sp := range g {
			terms := append([]solver.Term(nil), start[sp]...)
			for _, o := range g {
				if o != sp && planner.Covers(o.query, sp.query) {
					terms = append(terms, start[o]...)
				}
			}
			out[sp] = terms
		}
	}
	return out
}

// sharedRead is a one-step read of an index that answers several support
// queries of one write (planner.SharedReads), in the program as a variable
// of its own: it costs the read once, and each of those queries is
// answered when it runs.
type sharedRead struct {
	planner.SharedRead                  // Index: the first of alts
	alts               []*catalog.Index // the indexes that read answers them, any one
	write              *workload.Statement
	sups               []*support // the support queries it answers
	v                  solver.Var
	plan               *plan.Query // once chosen (sharedPlan)
}

// sharedPlan is the plan of shared read r, one per read.
func (pr *ilp) sharedPlan(r *sharedRead, m cost.Model) *plan.Query {
	if r.plan == nil {
		qs := make([]*catalog.Query, len(r.sups))
		for i, sp := range r.sups {
			qs[i] = sp.query
		}
		read := r.SharedRead
		for _, x := range r.alts {
			if pr.chosen(x) {
				read.Index = x
				break
			}
		}
		r.plan = planner.SharedPlan(qs, read, m, pr.pool)
	}
	return r.plan
}

// sharedReadsOf lists the shared reads of every group of support queries
// (planner.GroupKey) of one write, and per support query those that
// answer it.
func sharedReadsOf(sups []*support) ([]*sharedRead, map[*support][]*sharedRead) {
	var out []*sharedRead
	via := map[*support][]*sharedRead{}
	for _, g := range supportGroups(sups) {
		if len(g) < 2 {
			continue
		}
		dags := make([]*planner.DAG, len(g))
		for i, sp := range g {
			dags[i] = sp.dag
		}
		// Reads of several indexes answering the same queries at the same
		// cost are one variable (any of those indexes), as support flows
		// group equal steps: fewer symmetric choices to branch on.
		same := map[string]*sharedRead{}
		for _, r := range planner.SharedReads(dags) {
			key := fmt.Sprint(r.Answers, r.Cost)
			if sr := same[key]; sr != nil {
				sr.alts = append(sr.alts, r.Index)
				continue
			}
			sr := &sharedRead{SharedRead: r, write: g[0].write, alts: []*catalog.Index{r.Index}}
			same[key] = sr
			for _, j := range r.Answers {
				sr.sups = append(sr.sups, g[j])
				via[g[j]] = append(via[g[j]], sr)
			}
			out = append(out, sr)
		}
	}
	return out, via
}

// addSharedReads adds the shared reads of the support queries in the
// program (added), each to the terms that answer the queries it answers.
// A shared read reads its index, and runs only for an index of the schema
// that needs one of its queries, as the runtime's Write plans it.
func (pr *ilp) addSharedReads(shared []*sharedRead, added, answered map[*support][]solver.Term, mix string) {
	for _, sr := range shared {
		var in []*support
		for _, sp := range sr.sups {
			if _, ok := added[sp]; ok {
				in = append(in, sp)
			}
		}
		if len(in) == 0 {
			continue
		}
		sr.sups = in
		k := len(pr.shared)
		sr.v = pr.m.AddVar(fmt.Sprintf("r %d", k), solver.Binary, 0, 1)
		pr.cost = append(pr.cost, solver.Term{Var: sr.v, Coef: sr.write.Weight(mix) * sr.Cost})
		reads := []solver.Term{{Var: sr.v, Coef: 1}}
		for _, x := range sr.alts {
			reads = append(reads, solver.Term{Var: pr.x[x], Coef: -1})
		}
		pr.m.AddConstraint(fmt.Sprintf("shared read %d reads an index", k), reads, solver.LE, 0)
		terms := []solver.Term{{Var: sr.v, Coef: 1}}
		seen := map[*catalog.Index]bool{}
		for _, sp := range in {
			answered[sp] = append(answered[sp], solver.Term{Var: sr.v, Coef: 1})
			for _, i := range sp.needBy {
				if v, ok := pr.x[i]; ok && !seen[i] {
					seen[i] = true
					terms = append(terms, solver.Term{Var: v, Coef: -1})
				}
			}
		}
		pr.m.AddConstraint(fmt.Sprintf("shared read %d for an index", k), terms, solver.LE, 0)
		pr.shared = append(pr.shared, sr)
	}
}

// reachable reports, per state of d, the states reachable from it by live
// arcs (itself included).
func reachable(d *planner.DAG) [][]bool {
	n := len(d.States)
	out := make([][]bool, n)
	next := make([][]int, n)
	for _, a := range d.LiveArcs() {
		next[d.Arcs[a].From] = append(next[d.Arcs[a].From], d.Arcs[a].To)
	}
	var visit func(i int) []bool
	visit = func(i int) []bool {
		if out[i] != nil {
			return out[i]
		}
		r := make([]bool, n)
		r[i] = true
		for _, j := range next[i] {
			for k, ok := range visit(j) {
				if ok {
					r[k] = true
				}
			}
		}
		out[i] = r
		return r
	}
	for i := range out {
		visit(i)
	}
	return out
}
