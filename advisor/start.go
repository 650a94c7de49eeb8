package advisor

import (
	"math"
	"slices"
	"sort"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/solver"
)

// A start solution spares CBC its own search for a first schema (its
// feasibility pump takes a third of the time on RUBiS) and lets it prune
// from the first node. It comes from a local search over schemas: begin
// with every query on its cheapest plan, closed over SI bases and support
// queries; drop indexes until the budget holds, cheapest loss per byte
// first; then drop or add single indexes while that lowers the cost.
//
// A schema S is evaluated as the integer program would price it with S
// fixed: each query and each support query some index of S needs on its
// least-cost plan within S, plus the write costs of S (total: a shared read
// once, and the writes' existence checks, ilp.addChecks). Moves price the
// change in the plans they touch (move), a shared read once per support
// query and the checks not at all: a start need not be the best. Moves are
// evaluated incrementally: only the plans that read a dropped index, or
// could read an added one, are planned again.
type localSearch struct {
	pr     *ilp
	budget float64
	// in says which indexes the schema holds, by their number in
	// pr.indexes (id).
	in   []bool
	id   map[*catalog.Index]int
	size float64
	// qids, sids: per query and support DAG, the number of the index each
	// arc reads (-1 for an index outside the program).
	qids, sids [][]int32
	// Per query and per support query: the current path and its cost, nil
	// when a support query is not needed.
	qpath, spath [][]int
	qcost, scost []float64
	// need counts, per support query, the indexes of S that need it.
	need []int
	// readers lists, per index, the query and support DAGs (support ones
	// as -1-si) with a step that reads it.
	readers   map[*catalog.Index][]int
	supportOf map[*support]int
	byWeight  []int // queries, heaviest first
	// baseOf lists, per CF, the SIs it can be a base of.
	baseOf map[*catalog.Index][]*catalog.Index
	// guide, when set, is each index's value in the program's LP
	// relaxation (by id): construct charges an index's penalty only for
	// the part of it the relaxation leaves out.
	guide []float64
}

// start returns variable values for a feasible schema within the budget,
// or nil when the search finds none.
func (pr *ilp) start(budget float64) []float64 {
	return newLocalSearch(pr, budget).search(budget)
}

// guidedStart is start with the search guided by rel, the program's LP
// relaxation: an index costs a query's plan only the part of its write
// cost and size the relaxation does not pay for already.
func (pr *ilp) guidedStart(budget float64, rel []float64) []float64 {
	ls := newLocalSearch(pr, budget)
	ls.guide = make([]float64, len(pr.indexes))
	for k, x := range pr.indexes {
		ls.guide[k] = rel[pr.x[x]]
	}
	return ls.search(budget)
}

// search is start's search on ls.
func (ls *localSearch) search(budget float64) []float64 {
	pr := ls.pr
	// The least lambda whose schema fits (doubling, then bisection), and a
	// few below it, whose schemas are cut down to the budget by dropping
	// indexes: the best of these after local improvement.
	fits := func(lambda float64) bool { return ls.construct(lambda) && ls.size <= budget }
	lo, hi := 0.0, 0.0
	if !fits(0) {
		hi = pr.scale / math.Max(budget, 1)
		for n := 0; !fits(hi); n++ {
			if n == 60 {
				return nil
			}
			lo, hi = hi, 2*hi
		}
		for range 12 {
			if mid := (lo + hi) / 2; fits(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
	}
	var best []float64
	bestCost := math.Inf(1)
	for _, lambda := range []float64{hi, hi / 2, hi / 4, hi / 16, 0} {
		if !ls.construct(lambda) {
			continue
		}
		for ls.size > budget && ls.step(true) {
		}
		if ls.size > budget {
			continue
		}
		for n := 0; n < 10*len(pr.indexes) && ls.step(false); n++ {
		}
		if c := ls.total(); c < bestCost {
			best, bestCost = ls.values(), c
		}
		if hi == 0 {
			break
		}
	}
	return best
}

// newLocalSearch prepares a search over pr's schemas within budget.
func newLocalSearch(pr *ilp, budget float64) *localSearch {
	ls := &localSearch{pr: pr, budget: budget, in: make([]bool, len(pr.indexes)), id: map[*catalog.Index]int{},
		qpath: make([][]int, len(pr.queries)), qcost: make([]float64, len(pr.queries)),
		spath: make([][]int, len(pr.sups)), scost: make([]float64, len(pr.sups)), need: make([]int, len(pr.sups)),
		readers: map[*catalog.Index][]int{}, supportOf: map[*support]int{}, baseOf: map[*catalog.Index][]*catalog.Index{}}
	for k, x := range pr.indexes {
		ls.id[x] = k
		for _, b := range pr.bases(x) {
			ls.baseOf[b] = append(ls.baseOf[b], x)
		}
	}
	ids := func(d *planner.DAG) []int32 {
		out := make([]int32, len(d.Arcs))
		for a, arc := range d.Arcs {
			out[a] = -1
			if k, ok := ls.id[arc.Step.Index]; ok {
				out[a] = int32(k)
			}
		}
		return out
	}
	for _, d := range pr.qdags {
		ls.qids = append(ls.qids, ids(d))
	}
	for si, sp := range pr.sups {
		ls.supportOf[sp] = si
		ls.sids = append(ls.sids, ids(sp.dag))
	}
	type reader struct {
		id int
		x  *catalog.Index
	}
	seen := map[reader]bool{}
	addReaders := func(d *planner.DAG, id int) {
		for _, a := range d.LiveArcs() {
			x := d.Arcs[a].Step.Index
			k := reader{id, x}
			if !seen[k] {
				seen[k] = true
				ls.readers[x] = append(ls.readers[x], id)
			}
		}
	}
	for qi, d := range pr.qdags {
		addReaders(d, qi)
	}
	for si, sp := range pr.sups {
		addReaders(sp.dag, -1-si)
	}
	ls.byWeight = make([]int, len(pr.queries))
	for qi := range ls.byWeight {
		ls.byWeight[qi] = qi
	}
	sort.SliceStable(ls.byWeight, func(a, b int) bool {
		return pr.queries[ls.byWeight[a]].Weight(pr.mix) > pr.queries[ls.byWeight[b]].Weight(pr.mix)
	})
	return ls
}

// total is the schema's cost as the program prices it.
func (ls *localSearch) total() float64 {
	pr := ls.pr
	c := 0.0
	for qi, q := range pr.queries {
		c += q.Weight(pr.mix) * ls.qcost[qi]
	}
	shared := map[*sharedRead]bool{}
	for si, sp := range pr.sups {
		if ls.need[si] == 0 {
			continue
		}
		if r := ls.sharedOf(si); r != nil {
			// One read for every support query it answers (values).
			if !shared[r] {
				shared[r] = true
				c += r.write.Weight(pr.mix) * r.Cost
			}
			continue
		}
		c += sp.write.Weight(pr.mix) * ls.scost[si]
	}
	for k, on := range ls.in {
		if on {
			c += pr.writeCost[pr.indexes[k]]
		}
	}
	val := ls.values()
	for _, ch := range pr.checks {
		if ch.needed(val) {
			c += ch.write.Weight(pr.mix) * ch.cost
		}
	}
	return c
}

// sharedOf returns the shared read of the program that answers support
// query si on its current path, a one-step read the program has only as a
// shared read, or nil.
func (ls *localSearch) sharedOf(si int) *sharedRead {
	pr := ls.pr
	p := ls.spath[si]
	if len(p) != 1 {
		return nil
	}
	if _, ok := pr.svars[si][p[0]]; ok {
		return nil
	}
	x := pr.sups[si].dag.Arcs[p[0]].Step.Index
	for _, r := range pr.shared {
		if slices.Contains(r.alts, x) && slices.Contains(r.sups, pr.sups[si]) {
			return r
		}
	}
	return nil
}

// has says whether the schema holds x.
func (ls *localSearch) has(x *catalog.Index) bool {
	k, ok := ls.id[x]
	return ok && ls.in[k]
}

// shortest is the least-cost path of a DAG (its arcs' index numbers ids)
// within the schema.
func (ls *localSearch) shortest(d *planner.DAG, ids []int32) ([]int, float64) {
	return d.ArcPath(func(a int) (float64, bool) {
		k := ids[a]
		return d.Arcs[a].Step.Cost, k >= 0 && ls.in[k]
	})
}

// dag is a query's DAG (id ≥ 0) or a support query's (id = -1-si), with
// its arcs' index numbers.
func (ls *localSearch) dag(id int) (*planner.DAG, []int32) {
	if id >= 0 {
		return ls.pr.qdags[id], ls.qids[id]
	}
	return ls.pr.sups[-1-id].dag, ls.sids[-1-id]
}

// construct builds a schema plan by plan, heaviest query first: each
// query, then each support query the schema comes to need, takes the plan
// that minimizes its weighted cost plus, for every index not yet in the
// schema, that index's write cost and lambda per byte. lambda = 0 is every
// query on its cheapest plan; larger values trade cost for size.
func (ls *localSearch) construct(lambda float64) bool {
	pr := ls.pr
	clear(ls.in)
	ls.size = 0
	clear(ls.need)
	clear(ls.spath)
	penalty := func(x *catalog.Index) float64 {
		if ls.has(x) {
			return 0
		}
		p := pr.writeCost[x] + lambda*x.Size
		if ls.guide != nil {
			p *= 1 - min(1, ls.guide[ls.id[x]])
		}
		return p
	}
	add := func(d *planner.DAG, w float64) bool {
		p, _ := d.PricedPath(func(l *plan.Step) (float64, bool) {
			if _, ok := pr.x[l.Index]; !ok {
				return 0, false
			}
			return w*l.Cost + penalty(l.Index), true
		})
		if p == nil {
			return false
		}
		for _, a := range p {
			ls.in[ls.id[d.Arcs[a].Step.Index]] = true
		}
		return true
	}
	for _, qi := range ls.byWeight {
		if !add(pr.qdags[qi], pr.queries[qi].Weight(pr.mix)) {
			return false
		}
	}
	// Close over SI bases and support queries.
	routed := make([]bool, len(pr.sups))
	for changed := true; changed; {
		changed = false
		for k, x := range pr.indexes {
			if !ls.in[k] {
				continue
			}
			if x.Kind == catalog.SI && !ls.hasBase(x) {
				var base *catalog.Index
				for _, b := range pr.bases(x) {
					if _, ok := pr.x[b]; ok && (base == nil || penalty(b) < penalty(base)) {
						base = b
					}
				}
				if base == nil {
					return false
				}
				ls.in[ls.id[base]], changed = true, true
			}
			for _, sp := range pr.needs[x] {
				if si := ls.supportOf[sp]; !routed[si] {
					routed[si], changed = true, true
					if !add(sp.dag, sp.write.Weight(pr.mix)) {
						return false
					}
				}
			}
		}
	}
	// Price the schema exactly: every plan the least-cost one within it.
	for k, on := range ls.in {
		if !on {
			continue
		}
		x := pr.indexes[k]
		ls.size += x.Size
		for _, sp := range pr.needs[x] {
			ls.need[ls.supportOf[sp]]++
		}
	}
	for qi, d := range pr.qdags {
		ls.qpath[qi], ls.qcost[qi] = ls.shortest(d, ls.qids[qi])
	}
	for si, sp := range pr.sups {
		if ls.need[si] > 0 {
			if ls.spath[si], ls.scost[si] = ls.shortest(sp.dag, ls.sids[si]); ls.spath[si] == nil {
				return false
			}
		}
	}
	return true
}

// hasBase reports whether SI x has a base CF in the schema.
func (ls *localSearch) hasBase(x *catalog.Index) bool {
	for _, b := range ls.pr.bases(x) {
		if ls.has(b) {
			return true
		}
	}
	return false
}

// replan is one DAG's new path and cost after a move.
type replan struct {
	id   int
	path []int
	cost float64
}

// move prices toggling x: the change in cost and the plans that change,
// or ok == false when the schema would answer some query no more.
func (ls *localSearch) move(x *catalog.Index) (delta float64, plans []replan, ok bool) {
	pr := ls.pr
	kx := ls.id[x]
	drop := ls.in[kx]
	ls.in[kx] = !drop
	defer func() { ls.in[kx] = drop }()
	if drop {
		delta -= pr.writeCost[x]
		for _, y := range ls.baseOf[x] {
			if ls.has(y) && !ls.hasBase(y) {
				return 0, nil, false
			}
		}
	} else {
		delta += pr.writeCost[x]
		if x.Kind == catalog.SI && !ls.hasBase(x) {
			return 0, nil, false
		}
	}
	needed := func(si int) int {
		n := ls.need[si]
		for _, sp := range pr.needs[x] {
			if ls.supportOf[sp] == si {
				if drop {
					n--
				} else {
					n++
				}
			}
		}
		return n
	}
	// Support queries x alone needed, or now needs.
	changed := map[int]bool{}
	for _, sp := range pr.needs[x] {
		si := ls.supportOf[sp]
		if changed[-1-si] {
			continue
		}
		switch n := needed(si); {
		case n == 0:
			changed[-1-si] = true
			delta -= sp.write.Weight(pr.mix) * ls.scost[si]
			plans = append(plans, replan{id: -1 - si})
		case ls.need[si] == 0:
			changed[-1-si] = true
			p, c := ls.shortest(sp.dag, ls.sids[si])
			if p == nil {
				return 0, nil, false
			}
			delta += sp.write.Weight(pr.mix) * c
			plans = append(plans, replan{-1 - si, p, c})
		}
	}
	// Plans that read x, or could.
	for _, id := range ls.readers[x] {
		if changed[id] {
			continue
		}
		d, ids := ls.dag(id)
		var cur []int
		var old, w float64
		if id >= 0 {
			cur, old, w = ls.qpath[id], ls.qcost[id], pr.queries[id].Weight(pr.mix)
		} else {
			si := -1 - id
			if needed(si) == 0 {
				continue
			}
			cur, old, w = ls.spath[si], ls.scost[si], pr.sups[si].write.Weight(pr.mix)
		}
		if drop && !reads(d, cur, x) {
			continue
		}
		p, c := ls.shortest(d, ids)
		if p == nil {
			return 0, nil, false
		}
		if !drop && c >= old {
			continue
		}
		delta += w * (c - old)
		plans = append(plans, replan{id, p, c})
	}
	return delta, plans, true
}

func reads(d *planner.DAG, path []int, x *catalog.Index) bool {
	for _, a := range path {
		if d.Arcs[a].Step.Index == x {
			return true
		}
	}
	return false
}

// step makes the best single move and reports whether it made one. With
// shrink it drops the index whose loss per byte saved is least; otherwise
// it makes the move (dropping or adding one index) that lowers the cost
// most while the budget holds.
func (ls *localSearch) step(shrink bool) bool {
	pr := ls.pr
	var best *catalog.Index
	var bestPlans []replan
	bestScore := -1e-9 * math.Max(1, pr.scale) // a real improvement
	if shrink {
		bestScore = math.Inf(1)
	}
	for k, x := range pr.indexes {
		switch {
		case shrink && !ls.in[k]:
			continue
		case !shrink && !ls.in[k] && ls.size+x.Size > ls.budget:
			continue
		}
		delta, plans, ok := ls.move(x)
		if !ok {
			continue
		}
		if shrink {
			delta /= x.Size
		}
		if delta < bestScore {
			best, bestPlans, bestScore = x, plans, delta
		}
	}
	if best == nil {
		return false
	}
	drop := ls.has(best)
	ls.in[ls.id[best]] = !drop
	sign := 1
	if drop {
		sign = -1
		ls.size -= best.Size
	} else {
		ls.size += best.Size
	}
	for _, sp := range pr.needs[best] {
		ls.need[ls.supportOf[sp]] += sign
	}
	for _, r := range bestPlans {
		if r.id >= 0 {
			ls.qpath[r.id], ls.qcost[r.id] = r.path, r.cost
		} else {
			ls.spath[-1-r.id], ls.scost[-1-r.id] = r.path, r.cost
		}
	}
	return true
}

// values encodes the schema and its plans as variable values.
func (ls *localSearch) values() []float64 {
	pr := ls.pr
	val := make([]float64, pr.m.NumVars())
	for k, on := range ls.in {
		if on {
			val[pr.x[pr.indexes[k]]] = 1
		}
	}
	set := func(vars map[int]solver.Var, path []int) {
		for _, a := range path {
			val[vars[a]] = 1
		}
	}
	for qi, p := range ls.qpath {
		set(pr.qvars[qi], p)
	}
	for si, p := range ls.spath {
		if ls.need[si] == 0 {
			continue
		}
		if r := ls.sharedOf(si); r != nil {
			val[r.v] = 1 // a one-step read the program has as a shared read
			continue
		}
		if len(p) == 1 {
			if _, ok := pr.svars[si][p[0]]; !ok {
				continue // no shared read answers it either
			}
		}
		set(pr.svars[si], p)
	}
	for _, ch := range pr.checks {
		if ch.needed(val) {
			val[ch.v] = 1
		}
	}
	return val
}
