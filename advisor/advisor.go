// Package advisor owns schema recommendation (seed 000, NoSE extended with
// secondary indexes): given a conceptual model, a weighted workload, a
// storage budget and a cost profile, it enumerates candidate column families
// and secondary indexes (enumerate.go), plans every query and every write's
// support queries over them with package planner (whose plan DAGs the
// integer program chooses arcs of), costs the plans through the cost.Model
// seam (a cost.Profile) and picks the structures and plans of least total cost with
// an exact 0-1 integer program (ilp.go, solved by package solver).
//
// The program is the sum of independent parts (components.go) but for
// the budget row: statements that can read or charge a common candidate
// index (by the plan DAGs before pruning), or an SI and its possible
// bases, fall in one part, and each part
// is solved as its own program and the solutions merged (decompose.go).
// A part's program identical to one already solved is not solved again.
// Without a budget, or when the parts' optima fit in it, the merged
// Result is what one program would give: its cost is the sum of the
// parts' optima, its size the sum of their smallest of that cost (the
// size tie-break, ilp.smallest, runs per part); its plans are in
// statement order; its stats add
// up (Gap is that of the summed objective). Under a budget they do not
// fit in, the decomposition is exact too: the parts' least sizes decide
// feasibility (InfeasibleError's least budget is their sum); a
// Lagrangian relaxation of the budget row, each part's program solved
// with a price per byte, bounds the optimum from below; each part's
// frontier of (size, cost) schemas is enumerated where the bound leaves
// room (its reduced cost within the gap), and a multiple-choice knapsack
// over those picks one schema per part. The result is optimal, or says it
// is not (a time limit, an interrupt, a bound on the work) and gives the
// gap to the lower bound. Costs are compared as the solver minimizes
// them, tie-breaking terms included, so one program and the
// decomposition agree on the cost but for near-ties of about 1e-5. A
// problem of one part is solved exactly as one program; a solver's time
// limit holds for each solver run.
//
// Invariants of a Result:
//   - every plan reads only recommended indexes, and every recommended SI
//     has a recommended base CF;
//   - TotalCost is the weighted sum of the chosen query plans, support-query
//     plans and write costs, recomputed from them (not read from the
//     solver), and TotalSize ≤ the budget;
//   - the solution is optimal for the enumerated candidates (the solver
//     proves it; a time limit makes the Result say so); among optimal
//     solutions, one of least size is chosen (a second solver run, see
//     ilp.smallest; Stats.Smallest says it was proven).
//
// # The candidate space
//
// "Optimal" is over the candidates enumerate.go generates; the space is:
//   - for every query (and every support query of a write) and every
//     connected part of its graph: CFs partitioned by the equality
//     attributes of one entity of the part (all of them, or each alone
//     with the others leading the clustering key), clustered by the
//     other entities' equality attributes, the range attribute, the
//     ORDER BY attributes and every entity's key, in that order — or with
//     any of the range attribute, the other entities' equality attributes
//     (together) and the ORDER BY attributes (together) out of the
//     clustering key: among the values (filtered or sorted on the
//     client), or omitted where the CF leaves their entity's fields to a
//     later lookup; equality attributes moved out may be omitted in any
//     case (an equality applied earlier fixes them);
//   - for the same parts, CFs partitioned by the key of each entity (the
//     later steps of join plans), clustered by the equality, range and
//     ORDER BY attributes and the keys, with the same choices;
//   - each with, as values, the needed fields of every entity of the part,
//     of none (for one entity too: the keys a predicate finds, its fields
//     read by key), or of some: every subset of the entities for parts of
//     up to 3 entities, beyond that each entity alone and all but each;
//   - the union of the values of CFs with the same graph, partition key and
//     clustering key (seed 000 §3.2), of all of them and of every two
//     (after the SIs' bases are added too), and a query's CF clustered
//     for a range or an order holding the attributes of a query's CF of
//     the same graph and partition key clustered by keys alone that holds
//     its values, one of the two a first step — a later step's CF counts,
//     though it leaves out the attributes an earlier step's equality
//     fixed — (one CF serving both queries);
//   - Algorithm 1's SIs (lines 4–13: on each partition-key attribute, whose
//     value is an entity's key) with the CFs that carry them; CF-only mode
//     gets those CFs too, so its optimum is never above a default-mode
//     schema without SIs. Line 14 (an SI whose value is a non-key
//     attribute, used alone) is not generated: kvschema's SIs are read
//     with their base CF's rows (seed 000's plan F needs the store-side
//     index of issue 18);
//   - for a target that keeps local indexes (cost.Profile.LocalIndexes),
//     an index on the elements of each SET (MAP) stored one cell per
//     element that a query tests with CONTAINS (CONTAINS KEY), on each CF
//     candidate keyed by its entity's key that holds it as a value
//     (catalog.Index.OnElements; enumerate.go's elementSIs).
//
// Outside the space: a clustering key holding an attribute the query only
// selects, or in another order than the above, and values holding part of
// the fields a query reads of an entity (a plan reads such a CF as one in
// the space; see wide.go for the upkeep artifact that can still favour
// it).
//
// The tests check the space is complete on small models: wide.go
// enumerates it by brute force, and on random models and workloads the
// optimum over that wider set equals the default one
// (TestWideOptimumProperty; the holes it found are
// TestEnumerationWideHoles's cases and TestWideStaticInstance).
//
// Nothing is pruned but CFs no plan of the workload can use and, in the
// program, structures dominated in every plan they serve (advisor.go's
// dominated) and plan steps on no plan worth choosing (planner.DAG.Prune:
// each plan through them is dominated by one reading a subset of its
// indexes at no more cost, so every schema keeps a least-cost plan).
// Each program's solver run then leaves out the variables the duals of
// its LP relaxation prove take one value in every schema that costs no
// more than a known one (ilp.narrow): what the run sees, not what is
// optimal.
package advisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// Options configure one advisor run.
type Options struct {
	Mix     string
	Budget  float64 // bytes; 0 or +Inf: unlimited
	Profile cost.Profile
	Mode    Mode
	Solver  solver.Solver
	// MaxPartition (bytes) refuses candidate indexes whose average
	// partition — size over partitions, from the model's statistics — is
	// larger; 0: catalog.MaxPartitionBytes; +Inf: no limit.
	MaxPartition float64
	// BucketPartitions spreads a column family whose average partition
	// exceeds MaxPartition over the fewest partition buckets (Cassandra's
	// bucketing: catalog.Index.PartitionBuckets, at most 256) that bring
	// its stored partitions under the limit, instead of refusing it; a
	// read of one of its partitions then reads every bucket, which the
	// planner costs. One without a clustering key, with static columns,
	// or whose rows cannot spread that far is refused still.
	BucketPartitions bool
	// StaticColumns also enumerates column families with static columns
	// (Cassandra's; catalog.Index.Static): for every candidate partitioned
	// by its root entity's key alone, with a clustering key, that holds
	// fields of the root as values, the same candidate keeping those
	// fields once per partition.
	StaticColumns bool
	// Current is the schema deployed now (advise --current; issue 19):
	// its indexes are candidates that cost nothing to build; any other
	// adds its backfill — the profile's cost of writing its rows —
	// amortized over Amortize of the workload running Rate statements a
	// second, to the objective; the result says what to keep, add and
	// drop (Result.Migration). nil: a design from scratch.
	Current  *catalog.Schema
	Rate     float64       // statements per second (with Current)
	Amortize time.Duration // the horizon a backfill is paid over (with Current)
	// MigrationLimited bounds the bytes of the new structures (with
	// Current) by MigrationLimit: 0 builds nothing. The program is then
	// solved whole (the bound couples its parts as the budget does, and
	// the budget's decomposition takes one row).
	MigrationLimited bool
	MigrationLimit   float64
	// Reload (with Current): the new structures will be built from the
	// source data (a reload), not from the store. Without it, a new index
	// is a candidate only if the deployed indexes can give its rows (its
	// rows' query has a plan over them: planner.Rows), as kvschema migrate
	// builds it; an attribute or relationship the deployed schema keeps no
	// copy of is lost to a migration.
	Reload bool
	// KeepData makes the schema keep every attribute and relationship of
	// the model, whatever the workload reads: for each entity, the lookup
	// of all its fields by its key and, for each of its references, the
	// lookup of the referenced key (keepDataQueries) must have plans, at
	// weight 0 (they add no cost; of the schemas of least cost the
	// smallest keeps them). The store then holds all the data loaded into
	// it, and any later schema can be built from it (kvschema migrate),
	// which a mix that reads only part of the data does not allow.
	KeepData bool
	// currentKeys maps the identity of each index of Current to its name;
	// buildWeight converts a backfill's seconds into the objective's
	// units: the mix's total weight over the statements run in Amortize.
	currentKeys map[string]string
	buildWeight float64
	// Progress, when set, receives a line per stage.
	Progress func(stage string)
	// oneProgram solves the problem as one integer program even when it
	// splits into independent parts (tests compare the two).
	oneProgram bool
	// wide enumerates the design space exhaustively (wide.go): an oracle
	// for tests on small models.
	wide bool
	// costOnly skips the size tie-break (ilp.smallest): tests that
	// compare costs only save a solver run per program.
	costOnly bool
	// extra are candidates added to the enumeration's (tests that compare
	// optima of two workloads over one candidate space).
	extra []*catalog.Index
	// noLocalStart skips start.go's local search: the solver runs from
	// the relaxation's start (ilp.relaxStart), or none (tests of narrow).
	noLocalStart bool
}

// Result is a recommendation.
type Result struct {
	Mode Mode
	Mix  string
	// Evaluated: the result of Evaluate (a given schema's cost), which has
	// no mode and no budget.
	Evaluated bool
	Budget    float64
	Profile   cost.Profile
	// MaxPartition is the partition limit candidates were held to (0 for
	// a result of Evaluate, which enumerates nothing).
	MaxPartition float64
	Indexes      []*catalog.Index // recommended, by name
	Schema       *catalog.Schema  // the same, with each SI's base CF
	Queries      []*QueryPlan
	Writes       []*WritePlan

	TotalCost float64
	TotalSize float64
	Stats     Stats
	// Migration is what the recommendation changes in Options.Current (nil
	// without one).
	Migration *Migration
	// trace says how the decomposition met a binding budget, if it did.
	trace *budgetTrace
	// enumerated holds the identities (catalog.Index.Key) of every
	// candidate the enumeration offered, for Enumerated.
	enumerated map[string]bool
}

// Enumerated reports whether the enumeration of the run that made r
// offered x as a candidate: an index of the same structure (graph,
// partition key, clustering key in order, values; for an SI, its
// indexed attribute and the key it maps to), whatever its name. It is
// false for every index of a result of Evaluate, which enumerates nothing.
func (r *Result) Enumerated(x *catalog.Index) bool { return r.enumerated[x.Key] }

// QueryPlan is the plan of one workload query.
type QueryPlan struct {
	Statement *workload.Statement
	Weight    float64
	Plan      *plan.Query
}

// WritePlan is how one write keeps every recommended index it touches
// correct.
type WritePlan struct {
	Statement *workload.Statement
	Weight    float64
	Indexes   []*IndexUpkeep
	Cost      float64 // unweighted: writes plus support queries plus Check
	// Check is the cost of the write's existence checks (planner.Check):
	// one lookup where an entity it connects to is read by no upkeep; 0
	// where none is needed, or on an engine that makes none.
	Check float64
}

// IndexUpkeep is one write's work on one index.
type IndexUpkeep struct {
	Index         *catalog.Index
	Puts, Deletes float64
	WriteCost     float64
	Support       []*plan.Query
}

// Stats describe the search.
type Stats struct {
	Candidates, CandidateSIs int
	// LargePartitions counts the candidates refused for partitions over
	// Options.MaxPartition; Bucketed those spread over partition buckets
	// instead (Options.BucketPartitions).
	LargePartitions, Bucketed int
	// Unbuildable counts the candidates refused (Options.Current without
	// Reload) because the deployed indexes cannot give their rows.
	Unbuildable              int
	QuerySteps, SupportSteps int // arcs of the plan DAGs
	Variables, Constraints   int
	// Components is the number of independent parts of the problem
	// solved as programs of their own (several times each under a
	// binding budget); 1 when it is solved as one program.
	Components int
	// Solves counts solver runs; Reused, the programs not run because
	// identical to one solved before (same fingerprint) in this run.
	Solves, Reused          int
	EnumerateTime, PlanTime time.Duration
	SolveTime, TotalTime    time.Duration
	Solver                  string
	Gap                     float64
	Optimal                 bool
	// Smallest: the schema is proven the smallest of those that cost no
	// more (the size tie-break, a second solver run per program, ran to
	// optimality). False when the cost is not proven optimal (the
	// tie-break does not run then) or the tie-break stopped early.
	Smallest bool
}

// InfeasibleError says the budget cannot hold any schema that answers the
// workload, and what budget would.
type InfeasibleError struct {
	Budget    float64
	MinBudget float64
}

func (e *InfeasibleError) Error() string {
	return fmt.Sprintf("no schema answering the workload fits in %s; the smallest budget that works is %s (%.0f bytes)",
		units.Format(e.Budget), units.Format(e.MinBudget), math.Ceil(e.MinBudget))
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// support is a distinct support query of one write.
type support struct {
	write  *workload.Statement
	query  *catalog.Query
	dag    *planner.DAG
	needBy []*catalog.Index
}

// Advise recommends a schema for the statements of mix.
func Advise(ctx context.Context, m *catalog.Model, w *workload.Workload, opt Options) (*Result, error) {
	start := time.Now()
	if opt.Budget <= 0 {
		opt.Budget = math.Inf(1)
	}
	if opt.Current != nil {
		if opt.Rate <= 0 || opt.Amortize <= 0 {
			return nil, fmt.Errorf("a recommendation against the deployed schema needs the workload's rate (statements a second) and the time a backfill is amortized over")
		}
		opt.currentKeys = map[string]string{}
		for _, x := range opt.Current.Indexes {
			opt.currentKeys[x.Key] = x.Name
		}
		total := 0.0
		for _, s := range w.Statements {
			total += s.Weight(opt.Mix)
		}
		opt.buildWeight = total / (opt.Rate * opt.Amortize.Seconds())
		if opt.MigrationLimited {
			opt.oneProgram = true
		}
	} else if opt.MigrationLimited {
		return nil, fmt.Errorf("a migration budget needs the deployed schema (--current)")
	}
	pb, res, err := prepare(m, w, opt)
	if err != nil {
		return nil, err
	}
	// The components' programs share nothing but a budget row, and CBC's
	// time grows much faster than the program: solve each alone, and
	// meet a budget by decomposition (decompose.go).
	var parts []*part
	if !opt.oneProgram {
		parts = pb.parts
	}
	// Parts with queries come first; parts of writes alone add nothing
	// to a program, so one part with queries is one program as before.
	if len(parts) > 1 && len(parts[1].queries) > 0 {
		err = solveParts(ctx, opt, parts, res)
	} else {
		err = solveWhole(ctx, opt, pb, res)
	}
	if err != nil {
		return nil, err
	}
	name(res.Indexes)
	if opt.Current != nil {
		if err := res.migration(m, w, opt); err != nil {
			return nil, err
		}
	}
	res.Schema = schemaOf(res, pb.pool)
	if err := res.Schema.BuildLayouts(); err != nil {
		return nil, err
	}
	res.Stats.TotalTime = time.Since(start)
	opt.progress("solved in %v (%d solver runs): cost %.6g, size %s", res.Stats.SolveTime.Round(time.Millisecond), res.Stats.Solves, res.TotalCost, units.Format(res.TotalSize))
	return res, nil
}

// solveWhole solves the problem as one integer program.
func solveWhole(ctx context.Context, opt Options, pb *problem, res *Result) error {
	queries, qdags, writes, upkeeps, supports, p := pb.queries, pb.qdags, pb.writes, pb.upkeeps, pb.supports, pb.pool
	prob := buildILP(opt, queries, qdags, writes, upkeeps, supports, p)
	res.Stats.Components = 1
	res.Stats.Variables, res.Stats.Constraints = prob.m.NumVars(), prob.m.NumConstraints()
	opt.progress("integer program: %d variables, %d constraints", res.Stats.Variables, res.Stats.Constraints)
	solveStart := time.Now()
	sol, err := prob.solve(ctx, opt, &res.Stats)
	if err == errInfeasible && opt.MigrationLimited {
		return fmt.Errorf("no schema answers the workload building at most %s beside the deployed structures (the migration budget)%s", units.Format(opt.MigrationLimit), map[bool]string{true: " within the budget", false: ""}[!math.IsInf(opt.Budget, 1)])
	}
	if err == errInfeasible {
		relaxed := opt
		relaxed.Budget = math.Inf(1)
		least, err := buildILP(relaxed, queries, qdags, writes, upkeeps, supports, p).minBudget(ctx, relaxed, &res.Stats)
		if err != nil {
			return err
		}
		return &InfeasibleError{Budget: opt.Budget, MinBudget: least}
	}
	if err != nil {
		return err
	}
	if res.Stats.Optimal && res.Stats.Gap == 0 && !opt.costOnly {
		// Of the schemas of that cost, the smallest (ilp.smallest). An
		// interrupt keeps the schema found.
		small, proven, err := prob.smallest(ctx, opt, &res.Stats, sol, sol.Nodes)
		switch {
		case err == nil:
			sol, res.Stats.Smallest = small, proven
		case !errors.Is(err, solver.ErrInterrupted):
			return err
		}
	}
	res.Stats.SolveTime = time.Since(solveStart)
	prob.extract(sol, res)
	return nil
}

// name gives the recommended indexes readable, unique names, in a stable
// order.
func name(xs []*catalog.Index) {
	sort.Slice(xs, func(i, j int) bool { return xs[i].Key < xs[j].Key })
	used := map[string]int{}
	for _, x := range xs {
		var ents []string
		for _, n := range x.Graph.Nodes {
			ents = append(ents, n.Entity.Name)
		}
		var keys []string
		for _, a := range x.Hash {
			if a.Node == 0 {
				keys = append(keys, a.Field.Name)
			} else {
				keys = append(keys, x.Graph.Nodes[a.Node].Entity.Name+"_"+a.Field.Name)
			}
		}
		base := strings.ToLower(x.Kind.String()) + "_" + strings.Join(ents, "_") + "_by_" + strings.Join(keys, "_")
		used[base]++
		if used[base] > 1 {
			base = fmt.Sprintf("%s_%d", base, used[base])
		}
		x.Name = base
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].Name < xs[j].Name })
}

// dominated finds indexes no optimal schema needs: J is dominated by I when
// every lookup step that reads J can read I instead between the same plan
// states at no higher cost, I is no larger, costs writes no more, needs no
// support query J does not, and can carry every SI J can. Replacing J by I
// in any solution then costs no more, so J can go. Among equivalent
// indexes the one with the smaller key stays.
func dominated(dags []*planner.DAG, writeCost map[*catalog.Index]float64, supportsOf map[*catalog.Index]map[*support]bool, p *planner.Pool) map[*catalog.Index]bool {
	type use struct {
		d        *planner.DAG
		from, to int
	}
	uses := map[*catalog.Index][]use{}
	costAt := map[use]map[*catalog.Index]float64{}
	for _, d := range dags {
		for _, a := range d.LiveArcs() {
			arc := d.Arcs[a]
			u := use{d, arc.From, arc.To}
			x := arc.Step.Index
			if costAt[u] == nil {
				costAt[u] = map[*catalog.Index]float64{}
			}
			if c, ok := costAt[u][x]; !ok || arc.Step.Cost < c {
				if !ok {
					uses[x] = append(uses[x], u)
				}
				costAt[u][x] = arc.Step.Cost
			}
		}
	}
	baseOf := map[*catalog.Index][]*catalog.Index{}
	for si, bs := range p.Bases {
		for _, b := range bs {
			baseOf[b] = append(baseOf[b], si)
		}
	}
	out := map[*catalog.Index]bool{}
	for j, us := range uses {
		if j.Kind == catalog.SI {
			continue
		}
		for i := range costAt[us[0]] {
			if i == j || out[i] || i.Kind == catalog.SI || i.Size > j.Size || writeCost[i] > writeCost[j] {
				continue
			}
			if i.Size == j.Size && writeCost[i] == writeCost[j] && i.Key > j.Key && len(uses[i]) == len(us) {
				continue // equivalent: keep the smaller key
			}
			ok := true
			for _, u := range us {
				ci, has := costAt[u][i]
				if !has || ci > costAt[u][j] {
					ok = false
					break
				}
			}
			for sp := range supportsOf[i] {
				if ok && !supportsOf[j][sp] {
					ok = false
				}
			}
			for _, si := range baseOf[j] {
				if ok && !planner.IsBase(si, i) {
					ok = false
				}
			}
			if ok {
				out[j] = true
				break
			}
		}
	}
	return out
}

// keepable reports whether some CF of list can carry si and keep it as a
// store's local index (catalog.CanKeepLocal): its plans read such a base
// when they can, and schemaOf defines it on one.
func keepable(si *catalog.Index, list []*catalog.Index) bool {
	for _, cf := range list {
		if cf.Kind == catalog.CF && planner.IsBase(si, cf) && catalog.CanKeepLocal(si, cf) {
			return true
		}
	}
	return false
}

// schemaOf pairs each recommended SI with its base CF: the one a plan reads
// after it, else any recommended base; one that can keep it as a store's
// local index (catalog.CanKeepLocal) first.
func schemaOf(res *Result, p *planner.Pool) *catalog.Schema {
	s := &catalog.Schema{Indexes: res.Indexes, Base: map[*catalog.Index]*catalog.Index{}}
	chosen := map[*catalog.Index]bool{}
	for _, x := range res.Indexes {
		chosen[x] = true
	}
	var plans []*plan.Query
	for _, q := range res.Queries {
		plans = append(plans, q.Plan)
	}
	for _, w := range res.Writes {
		for _, u := range w.Indexes {
			plans = append(plans, u.Support...)
		}
	}
	// A base a store can keep the SI with as a local index first (where
	// the target keeps local indexes, the plans were priced so).
	for _, keeps := range []bool{true, false} {
		for _, pl := range plans {
			for i := 1; i < len(pl.Steps); i++ {
				si, b := pl.Steps[i-1].Index, pl.Steps[i].Index
				if si.Kind == catalog.SI && s.Base[si] == nil && (!keeps || catalog.CanKeepLocal(si, b)) {
					s.Base[si] = b
				}
			}
		}
	}
	for _, keeps := range []bool{true, false} {
		for _, x := range res.Indexes {
			if x.Kind == catalog.SI && s.Base[x] == nil {
				for _, b := range p.Bases[x] {
					if chosen[b] && (!keeps || catalog.CanKeepLocal(x, b)) {
						s.Base[x] = b
						break
					}
				}
			}
		}
	}
	return s
}

// problem is an advisor run up to the integer program: the statements of
// the mix, the plan DAGs of queries and support queries over the candidate
// pool, and every candidate's upkeep.
type problem struct {
	queries, writes []*workload.Statement
	qdags           []*planner.DAG
	upkeeps         map[*workload.Statement]map[*catalog.Index]planner.Upkeep
	supports        []*support
	pool            *planner.Pool
	// checks: the profile prices existence checks (checkCost), which tie
	// a write to the indexes that can check (split).
	checks bool
	// parts are the problem's independent parts (split), taken before
	// its DAGs were pruned.
	parts []*part
}

// parallel calls f(0), …, f(n-1), as many at a time as there are
// processors (plan DAGs are built and pruned so: each call has its own).
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// pruneAll prunes the DAGs (planner.DAG.Prune), in parallel, and returns
// how many steps it dropped.
func pruneAll(dags []*planner.DAG) int {
	var total atomic.Int64
	parallel(len(dags), func(i int) { total.Add(int64(dags[i].Prune())) })
	return int(total.Load())
}

// buildCost is what building x adds to the objective (Options.Current):
// nothing for an index deployed now, else its backfill's writes weighted
// by BuildWeight.
func (opt Options) buildCost(x *catalog.Index) float64 {
	if opt.currentKeys == nil {
		return 0
	}
	if _, kept := opt.currentKeys[x.Key]; kept {
		return 0
	}
	return opt.buildWeight * opt.Profile.Write(x.Entries, 0)
}

// bucket gives x, a candidate whose average partition exceeds maxPart,
// the fewest partition buckets that bring its stored partitions under
// it, and reports whether it could: only a column family with a
// clustering key and without static columns or salt can have them, and
// only as many as its partitions have rows (at most 256).
func bucket(x *catalog.Index, maxPart float64) bool {
	if x.Kind != catalog.CF || len(x.Order) == 0 || len(x.Static) > 0 || x.SaltBuckets > 0 || len(x.SplitOn) > 0 {
		return false
	}
	n := math.Ceil(x.PartitionBytes() / maxPart)
	if n > 256 || n > x.RowsPerPartition() {
		return false
	}
	x.PartitionBuckets = max(2, int(n))
	return x.PartitionBytes() <= maxPart
}

// maxPartition is the partition limit the options set.
func (opt Options) maxPartition() float64 {
	if opt.MaxPartition == 0 {
		return catalog.MaxPartitionBytes
	}
	return opt.MaxPartition
}

// prepare enumerates candidates and plans every query and support query.
func prepare(m *catalog.Model, w *workload.Workload, opt Options) (*problem, *Result, error) {
	start := time.Now()
	if !w.HasMix(opt.Mix) {
		return nil, nil, fmt.Errorf("workload %s has no mix %q (its mixes: %s)", w.Name, opt.Mix, strings.Join(w.Mixes, ", "))
	}
	if err := opt.Profile.Validate(); err != nil {
		return nil, nil, err
	}
	var queries, writes []*workload.Statement
	for _, s := range w.Statements {
		if s.Weight(opt.Mix) <= 0 {
			continue
		}
		if s.Query != nil {
			queries = append(queries, s)
		} else {
			writes = append(writes, s)
		}
	}
	if len(queries) == 0 {
		return nil, nil, fmt.Errorf("mix %s has no query: nothing to design for", opt.Mix)
	}
	if opt.KeepData {
		keep, err := keepDataQueries(m)
		if err != nil {
			return nil, nil, err
		}
		queries = append(queries, keep...)
	}
	res := &Result{Mode: opt.Mode, Mix: opt.Mix, Budget: opt.Budget, Profile: opt.Profile, MaxPartition: opt.maxPartition()}

	// Enumerate.
	en := newEnumerator(opt.Mode)
	en.wide = opt.wide
	en.static = opt.StaticColumns
	en.localSIs = opt.Profile.LocalIndexes
	for _, s := range queries {
		en.forQuery(s.Query)
	}
	if opt.Mode != Normalized {
		en.merge()
	}
	upkeeps := map[*workload.Statement]map[*catalog.Index]planner.Upkeep{}
	computeUpkeep := func() {
		for _, s := range writes {
			if upkeeps[s] == nil {
				upkeeps[s] = map[*catalog.Index]planner.Upkeep{}
			}
			for _, x := range en.list {
				if _, done := upkeeps[s][x]; done {
					continue
				}
				if u, ok := planner.Maintain(s.Write, x); ok {
					if x.Kind == catalog.SI && opt.Profile.KeepsSI(keepable(x, en.list)) {
						u = u.Local()
					}
					upkeeps[s][x] = u
				}
			}
		}
	}
	// Candidates for the support queries, and for the support queries of
	// those candidates, until no new support query appears (a candidate
	// whose upkeep nothing can answer would be dropped, and with it maybe
	// the only plan of a query).
	seenSupport := map[string]bool{}
	en.supports = true
	for round := 0; round < 4; round++ {
		computeUpkeep()
		added := false
		for _, s := range writes {
			for _, x := range en.list { // in order: upkeeps[s] is a map
				u, ok := upkeeps[s][x]
				if !ok {
					continue
				}
				for _, q := range u.Support {
					if k := planner.QueryKey(q); !seenSupport[k] {
						seenSupport[k] = true
						en.forQuery(q)
						added = true
					}
				}
			}
		}
		if !added {
			break
		}
	}
	if opt.Mode != Normalized {
		en.merge()
	}
	// SIs come last, from every CF candidate; CF-only mode gets the CFs
	// that carry them too, so that both modes see the same CFs and the SIs
	// can only lower the cost.
	if opt.Mode != Normalized {
		en.secondary(opt.Mode == WithSI)
		// The CFs that carry SIs merge too: an SI's base by key then holds
		// another query's fields (one CF where there were two).
		en.merge()
		en.rebase()
	}
	if en.err != nil {
		return nil, nil, en.err
	}
	if opt.Current != nil && opt.Mode != Normalized {
		// What is deployed can stay, whether the enumeration offers it or
		// not.
		for _, x := range opt.Current.Indexes {
			if x.Kind == catalog.SI && opt.Mode == NoSI {
				continue
			}
			c := *x
			en.add(&c)
		}
	}
	for _, x := range opt.extra {
		c := *x
		en.add(&c)
	}
	computeUpkeep()
	res.enumerated = map[string]bool{}
	for _, x := range en.list {
		res.enumerated[x.Key] = true
		if x.Kind == catalog.SI {
			res.Stats.CandidateSIs++
		}
	}
	res.Stats.Candidates = len(en.list)
	res.Stats.EnumerateTime = time.Since(start)
	opt.progress("enumerated %d candidates (%d SIs) in %v", len(en.list), res.Stats.CandidateSIs, res.Stats.EnumerateTime.Round(time.Millisecond))

	// Refuse partitions over the limit; plan support queries; drop
	// indexes that cannot be maintained, until nothing changes.
	planStart := time.Now()
	usable := map[*catalog.Index]bool{}
	maxPart := opt.maxPartition()
	for _, x := range en.list {
		if opt.BucketPartitions && x.PartitionBytes() > maxPart && bucket(x, maxPart) {
			res.Stats.Bucketed++
		}
		if usable[x] = x.PartitionBytes() <= maxPart; !usable[x] {
			res.Stats.LargePartitions++
		}
	}
	if n := res.Stats.LargePartitions; n > 0 {
		opt.progress("refused %d candidates whose average partition exceeds %s", n, units.Format(maxPart))
	}
	if n := res.Stats.Bucketed; n > 0 {
		opt.progress("spread %d candidates whose average partition exceeds %s over partition buckets", n, units.Format(maxPart))
	}
	if opt.Current != nil && !opt.Reload {
		n := 0
		bp := newBuildable(opt.Current, opt.Profile)
		for _, x := range en.list {
			if usable[x] && !bp.buildable(x) {
				usable[x] = false
				n++
			}
		}
		res.Stats.Unbuildable = n
		if n > 0 {
			opt.progress("refused %d candidates the deployed schema cannot build (it keeps no copy of some of their rows' data; --reload lifts this)", n)
		}
	}
	var supports []*support
	for {
		var list []*catalog.Index
		for _, x := range en.list {
			if usable[x] {
				list = append(list, x)
			}
		}
		p := planner.NewPool(list)
		supports = supports[:0]
		byKey := map[string]*support{}
		type need struct {
			sp *support
			x  *catalog.Index
		}
		var needs []need
		for _, s := range writes {
			for _, x := range list {
				u, ok := upkeeps[s][x]
				if !ok {
					continue
				}
				for _, q := range u.Support {
					k := s.Tag + "\x00" + planner.QueryKey(q)
					sp := byKey[k]
					if sp == nil {
						sp = &support{write: s, query: q}
						byKey[k] = sp
						supports = append(supports, sp)
					}
					needs = append(needs, need{sp, x})
				}
			}
		}
		parallel(len(supports), func(i int) { supports[i].dag = planner.Build(supports[i].query, opt.Profile, p) })
		dropped := false
		for _, n := range needs {
			if !n.sp.dag.States[0].Live {
				usable[n.x] = false
				dropped = true
			}
			n.sp.needBy = append(n.sp.needBy, n.x)
		}
		if !dropped {
			break
		}
	}
	var list []*catalog.Index
	for _, x := range en.list {
		if usable[x] {
			list = append(list, x)
		}
	}
	p := planner.NewPool(list)
	qdags := make([]*planner.DAG, len(queries))
	parallel(len(queries), func(i int) { qdags[i] = planner.Build(queries[i].Query, opt.Profile, p) })
	for i, s := range queries {
		if !qdags[i].States[0].Live {
			if n := res.Stats.LargePartitions; n > 0 {
				return nil, nil, fmt.Errorf("%s: no plan answers this query with the candidate structures whose average partition is at most %s (--max-partition; %d candidates were refused for larger ones)", s.Text(), units.Format(maxPart), n)
			}
			if res.Stats.Unbuildable > 0 {
				return nil, nil, fmt.Errorf("%s: no plan answers this query with the structures the deployed schema can build (it keeps no copy of some of the data the query reads): --reload designs for the data loaded again from its source, into a new store", s.Text())
			}
			if !opt.Profile.LocalIndexes && !hasEq(s.Query) {
				return nil, nil, fmt.Errorf("%s: only a CONTAINS selects, which needs an index on the collection's elements: a local index of the store, and target %s keeps none (add an equality, or advise for a target that keeps local indexes: pebble, cassandra)", s.Text(), opt.Profile.Name)
			}
			return nil, nil, fmt.Errorf("%s: no plan answers this query with the candidate structures", s.Text())
		}
	}
	// Drop dominated indexes, then re-plan over what remains.
	writeCost := map[*catalog.Index]float64{}
	for _, s := range writes {
		for x, u := range upkeeps[s] {
			writeCost[x] += s.Weight(opt.Mix) * u.Cost(opt.Profile)
		}
	}
	for _, x := range list {
		writeCost[x] += opt.buildCost(x) // dominance weighs the backfill too
	}
	supportsOf := map[*catalog.Index]map[*support]bool{}
	all := append([]*planner.DAG(nil), qdags...)
	for _, sp := range supports {
		all = append(all, sp.dag)
		for _, x := range sp.needBy {
			if supportsOf[x] == nil {
				supportsOf[x] = map[*support]bool{}
			}
			supportsOf[x][sp] = true
		}
	}
	if drop := dominated(all, writeCost, supportsOf, p); len(drop) > 0 {
		var kept []*catalog.Index
		for _, x := range list {
			if !drop[x] {
				kept = append(kept, x)
			}
		}
		p = planner.NewPool(kept)
		// The DAGs over what remains are those built, without the
		// dropped indexes' steps (planner.DAG.Cut).
		cut := func(d *planner.DAG) {
			d.Cut(func(a int) bool { return drop[d.Arcs[a].Step.Index] })
		}
		for _, d := range qdags {
			cut(d)
		}
		var live []*support
		for _, sp := range supports {
			cut(sp.dag)
			var need []*catalog.Index
			for _, x := range sp.needBy {
				if !drop[x] {
					need = append(need, x)
				}
			}
			if sp.needBy = need; len(need) > 0 {
				live = append(live, sp)
			}
		}
		supports = live
		opt.progress("dropped %d dominated candidates", len(drop))
	}
	// Steps on no plan worth choosing (planner.DAG.Prune: each plan
	// another, reading a subset of its indexes, costs no more than) go:
	// any schema then has a least-cost plan for every query and support
	// query with the steps kept, so the optimum is the same, in a smaller
	// program.
	pb := &problem{queries: queries, writes: writes, qdags: qdags, upkeeps: upkeeps, supports: supports, pool: p, checks: checkCost(opt.Profile) > 0}
	// The independent parts are those of the DAGs before they are pruned:
	// a part pruning alone would cut off is typically one query's, and as
	// a program of its own costs solver runs (several under a binding
	// budget) and saves next to nothing.
	pb.parts = pb.split()
	dags := append([]*planner.DAG(nil), qdags...)
	for _, sp := range supports {
		dags = append(dags, sp.dag)
	}
	pruned := pruneAll(dags)
	for _, d := range qdags {
		res.Stats.QuerySteps += len(d.LiveArcs())
	}
	for _, sp := range supports {
		res.Stats.SupportSteps += len(sp.dag.LiveArcs())
	}
	res.Stats.PlanTime = time.Since(planStart)
	opt.progress("planned %d queries (%d possible steps) and %d support queries (%d possible steps) in %v; %d steps on no plan worth choosing dropped",
		len(queries), res.Stats.QuerySteps, len(supports), res.Stats.SupportSteps, res.Stats.PlanTime.Round(time.Millisecond), pruned)

	return pb, res, nil
}

// hasEq reports whether a predicate of q is an equality (not a CONTAINS,
// which catalog.Query.HasEquality accepts too).
func hasEq(q *catalog.Query) bool {
	return slices.ContainsFunc(q.Preds, func(p catalog.Pred) bool { return p.Op == catalog.Eq })
}
