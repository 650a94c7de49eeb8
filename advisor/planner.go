package advisor

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/model"
	"github.com/kvschema/kvschema/physical"
)

// rangeSelectivity is the fraction of rows a range predicate keeps (NoSE's
// assumption; the model has no value distributions).
const rangeSelectivity = 0.1

// selectivity is the fraction of rows predicate p keeps.
func selectivity(p model.Pred) float64 {
	c := p.Ref.Field.Cardinality
	switch {
	case p.Op == model.Eq:
		return 1 / c
	case p.Op == model.Ne:
		return 1 - 1/c
	}
	return rangeSelectivity
}

// pool is the set of candidate indexes, arranged for the planner.
type pool struct {
	all []*physical.Index
	// byRoot lists the indexes by the entity of their root node (the node of
	// their partition key, or of an SI's value).
	byRoot map[*model.Entity][]*physical.Index
	// byKey lists the CFs partitioned by their root entity's key.
	byKey map[*model.Entity][]*physical.Index
	// bases lists, for each SI, the CFs it can be defined on.
	bases map[*physical.Index][]*physical.Index
}

func newPool(idx []*physical.Index) *pool {
	p := &pool{all: idx, byRoot: map[*model.Entity][]*physical.Index{}, byKey: map[*model.Entity][]*physical.Index{},
		bases: map[*physical.Index][]*physical.Index{}}
	byGraph := map[string][]*physical.Index{}
	for _, x := range idx {
		e := x.Graph.Nodes[0].Entity
		p.byRoot[e] = append(p.byRoot[e], x)
		if x.Kind == physical.CF {
			byGraph[physical.GraphKey(x.Graph)] = append(byGraph[physical.GraphKey(x.Graph)], x)
			if len(x.Hash) == 1 && x.Hash[0] == (physical.Attr{Node: 0, Field: e.Key}) {
				p.byKey[e] = append(p.byKey[e], x)
			}
		}
	}
	for _, si := range idx {
		if si.Kind != physical.SI {
			continue
		}
		for _, cf := range byGraph[physical.GraphKey(si.Graph)] {
			if isBase(si, cf) {
				p.bases[si] = append(p.bases[si], cf)
			}
		}
	}
	return p
}

// isBase reports whether cf can carry si: its partition key is the SI's
// value and it stores the indexed attribute outside the partition key.
func isBase(si, cf *physical.Index) bool {
	return len(cf.Hash) == 1 && cf.Hash[0] == si.Extra[0] && cf.Hash[0] != si.Hash[0] && cf.Has(si.Hash[0])
}

// A plan DAG holds every plan of one query over a pool. A state is what a
// partial plan has achieved — entities joined, entities whose fields are all
// fetched, predicates applied, an SI step waiting for its base CF, whether the LIMIT was pushed
// into the first lookup — and an arc is one lookup. The number of rows a
// partial plan holds depends only on its state (the join size of the joined
// entities times the selectivity of the applied predicates), so an arc's
// cost depends only on its source: plans are the DAG's start-to-end paths,
// and the integer program chooses arcs (one variable each) instead of whole
// plans, whose number is the product of the choices per step.
type dag struct {
	q      *model.Query
	prof   cost.Profile
	needed [][]*model.Field // per query node: the fields the query reads
	states []*dstate
	arcs   []*darc
	byKey  map[string]int
	embeds map[*physical.Index][][]int
	// best caches the least-cost path (see cheapestPath).
	best     []int
	bestDone bool
	order    []int // states in topological order, once computed
}

type dstate struct {
	covered, done, applied []bool           // per query node, per node, per predicate
	pending                *physical.Lookup // an SI step waits for its base CF
	limited, ordered       bool
	first                  bool // no step yet
	rows                   float64
	end                    bool
	live                   bool // can reach an end state
	out                    []int
	key                    string
}

type darc struct {
	from, to int
	step     physical.Lookup
}

// neededByNode lists, per query node, the fields the query reads there.
func neededByNode(q *model.Query) [][]*model.Field {
	out := make([][]*model.Field, len(q.Graph.Nodes))
	for _, r := range neededFields(q) {
		out[r.Node] = append(out[r.Node], r.Field)
	}
	return out
}

func neededFields(q *model.Query) []model.FieldRef {
	var out []model.FieldRef
	for _, r := range q.Select {
		out = appendUnique(out, r)
	}
	for _, p := range q.Preds {
		out = appendUnique(out, p.Ref)
	}
	for _, o := range q.OrderBy {
		out = appendUnique(out, o.Ref)
	}
	return out
}

// planDAG builds the plan DAG of q over pool p, keeping only states from
// which a complete plan exists.
func planDAG(q *model.Query, prof cost.Profile, p *pool) *dag {
	d := &dag{q: q, prof: prof, needed: neededByNode(q), byKey: map[string]int{}, embeds: map[*physical.Index][][]int{}}
	start := &dstate{
		covered: make([]bool, len(q.Graph.Nodes)),
		done:    make([]bool, len(q.Graph.Nodes)),
		applied: make([]bool, len(q.Preds)),
		first:   true,
		rows:    1,
	}
	d.intern(start)
	for i := 0; i < len(d.states); i++ {
		d.expand(i, p)
	}
	d.markLive()
	return d
}

func (d *dag) embeddings(x *physical.Index) [][]int {
	if e, ok := d.embeds[x]; ok {
		return e
	}
	e := x.Embeddings(d.q.Graph)
	d.embeds[x] = e
	return e
}

func (d *dag) intern(s *dstate) int {
	var b strings.Builder
	for _, bs := range [][]bool{s.covered, s.done, s.applied} {
		for _, v := range bs {
			if v {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		b.WriteByte('|')
	}
	if s.pending != nil {
		b.WriteString(s.pending.Index.Key)
		for _, n := range s.pending.Map {
			b.WriteString("," + strconv.Itoa(n))
		}
	}
	if s.limited {
		b.WriteString("|L")
	}
	if s.ordered {
		b.WriteString("|O")
	}
	if s.first {
		b.WriteString("|F")
	}
	s.key = b.String()
	if i, ok := d.byKey[s.key]; ok {
		return i
	}
	d.byKey[s.key] = len(d.states)
	d.states = append(d.states, s)
	return len(d.states) - 1
}

// expand adds the arcs leaving state i.
func (d *dag) expand(i int, p *pool) {
	s := d.states[i]
	if s.end || len(s.out) > 0 {
		return
	}
	switch {
	case s.first:
		seen := map[*model.Entity]bool{}
		for _, nd := range d.q.Graph.Nodes {
			if seen[nd.Entity] {
				continue
			}
			seen[nd.Entity] = true
			for _, x := range p.byRoot[nd.Entity] {
				for _, m := range d.embeddings(x) {
					d.tryFirst(i, x, m)
				}
			}
		}
	case s.pending != nil:
		for _, cf := range p.bases[s.pending.Index] {
			for _, m := range d.embeddings(cf) {
				if sameMap(m, s.pending.Map) {
					d.arc(i, physical.Lookup{Index: cf, Map: m, Link: m[0], Kind: cost.AfterSI})
				}
			}
		}
	default:
		for v, c := range s.covered {
			if !c {
				continue
			}
			for _, x := range p.byKey[d.q.Graph.Nodes[v].Entity] {
				for _, m := range d.embeddings(x) {
					if m[0] == v && extendsAt(s, m) {
						d.arc(i, physical.Lookup{Index: x, Map: m, Link: v, KeyPreds: d.keyPreds(s, x, m)})
					}
				}
			}
		}
	}
}

func (d *dag) ref(m []int, a physical.Attr) model.FieldRef {
	return model.FieldRef{Node: m[a.Node], Field: a.Field}
}

// predOn returns the unapplied predicates on query field r with an
// operator accepted by ok.
func (d *dag) predOn(s *dstate, r model.FieldRef, ok func(model.Op) bool) []int {
	var out []int
	for i, p := range d.q.Preds {
		if !s.applied[i] && p.Ref == r && ok(p.Op) {
			out = append(out, i)
		}
	}
	return out
}

func isEq(o model.Op) bool { return o == model.Eq }

// keyPreds finds the predicates a lookup's clustering key answers after its
// partition key: equalities on a prefix, then ranges on the next attribute.
func (d *dag) keyPreds(s *dstate, x *physical.Index, m []int) []int {
	var out []int
	for _, a := range x.Order {
		r := d.ref(m, a)
		if eq := d.predOn(s, r, isEq); len(eq) > 0 {
			out = append(out, eq[0])
			continue
		}
		out = append(out, d.predOn(s, r, model.Op.IsRange)...)
		break
	}
	return out
}

func (d *dag) tryFirst(i int, x *physical.Index, m []int) {
	s := d.states[i]
	var key []int
	for _, a := range x.Hash {
		eq := d.predOn(s, d.ref(m, a), isEq)
		if len(eq) == 0 {
			return
		}
		key = append(key, eq[0])
	}
	if x.Kind == physical.CF {
		key = append(key, d.keyPreds(s, x, m)...)
	}
	d.arc(i, physical.Lookup{Index: x, Map: m, Link: -1, KeyPreds: key})
}

// arc applies lookup l to state i; it adds the arc when the lookup makes
// progress: it joins a new entity or fetches every field the query still
// needs of an entity. (A lookup fetching only some of an entity's fields
// counts for none of them, as in NoSE: a later lookup fetches them all.)
func (d *dag) arc(i int, l physical.Lookup) {
	s := d.states[i]
	ns := &dstate{
		covered: append([]bool(nil), s.covered...),
		done:    append([]bool(nil), s.done...),
		applied: append([]bool(nil), s.applied...),
		limited: s.limited,
		ordered: s.ordered,
	}
	progress := false
	for _, n := range l.Map {
		if !ns.covered[n] {
			ns.covered[n] = true
			progress = true
		}
	}
	for _, k := range l.KeyPreds {
		ns.applied[k] = true
	}
	for _, n := range l.Map {
		if !ns.done[n] && d.provides(ns, l, n) {
			ns.done[n] = true
			progress = true
		}
	}
	if !progress {
		return
	}
	for k, p := range d.q.Preds {
		if !ns.applied[k] && ns.done[p.Ref.Node] {
			ns.applied[k] = true
			l.Filters = append(l.Filters, k)
		}
	}
	x := l.Index
	// Estimates: rows depend on the source state only.
	switch {
	case s.first:
		l.Partitions = 1
		l.Rows = x.RowsPerPartition()
	case l.Kind == cost.AfterSI:
		l.Partitions, l.Rows = s.rows, s.rows
	default:
		l.Partitions = s.rows
		l.Rows = s.rows * x.RowsPerPartition()
	}
	if l.Kind != cost.AfterSI {
		for _, k := range l.KeyPreds {
			if !(s.first && containsHash(x, l.Map, d.q.Preds[k].Ref)) {
				l.Rows *= selectivity(d.q.Preds[k])
			}
		}
	}
	if s.first {
		ns.ordered = d.ordered(l)
		// The scan stops after LIMIT rows when it answers the whole query
		// in order: a later step could drop rows (a join finds no partner)
		// or multiply them.
		if d.q.Limit > 0 && len(l.Filters) == 0 && (len(d.q.OrderBy) == 0 || ns.ordered) && x.Kind == physical.CF &&
			allTrue(ns.applied) && allTrue(ns.covered) && allTrue(ns.done) {
			ns.limited = true
			l.Rows = min(l.Rows, float64(d.q.Limit))
		}
	}
	l.Kept = l.Rows
	for _, f := range l.Filters {
		l.Kept *= selectivity(d.q.Preds[f])
	}
	ns.rows = l.Kept
	ns.end = allTrue(ns.covered) && allTrue(ns.done) && allTrue(ns.applied)
	if x.Kind == physical.SI {
		if ns.end {
			l.Kind = cost.SIAlone
		} else {
			l.Kind = cost.SIFirst
			ns.pending = &l
		}
	}
	l.Cost = d.prof.Lookup(l.Kind, l.Partitions, l.Rows)
	to := d.intern(ns)
	d.arcs = append(d.arcs, &darc{from: i, to: to, step: l})
	s.out = append(s.out, len(d.arcs)-1)
}

// provides reports whether lookup l fetches every field the query needs of
// node n, apart from those an applied equality fixes.
func (d *dag) provides(s *dstate, l physical.Lookup, n int) bool {
	attrs := l.Index.Attrs()
	for _, f := range d.needed[n] {
		if d.fixed(s, n, f) {
			continue
		}
		found := false
		for _, a := range attrs {
			if a.Field == f && l.Map[a.Node] == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// fixed reports whether an applied equality gives the value of field f of
// node n.
func (d *dag) fixed(s *dstate, n int, f *model.Field) bool {
	for k, p := range d.q.Preds {
		if s.applied[k] && p.Op == model.Eq && p.Ref.Node == n && p.Ref.Field == f {
			return true
		}
	}
	return false
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// extendsAt reports whether an embedding meets the covered nodes only at
// its root: a later step must not re-join entities already joined (its rows
// would not be restricted to theirs).
func extendsAt(s *dstate, m []int) bool {
	for _, n := range m[1:] {
		if s.covered[n] {
			return false
		}
	}
	return true
}

func sameMap(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsHash(x *physical.Index, m []int, r model.FieldRef) bool {
	for _, a := range x.Hash {
		if (model.FieldRef{Node: m[a.Node], Field: a.Field}) == r {
			return true
		}
	}
	return false
}

// ordered reports whether a first lookup delivers the ORDER BY: its
// clustering key, after the attributes its equalities bind, starts with the
// ORDER BY attributes, all ascending or all descending (a reverse scan).
// Later steps keep the order of the rows that feed them.
func (d *dag) ordered(l physical.Lookup) bool {
	if len(d.q.OrderBy) == 0 || l.Index.Kind != physical.CF {
		return false
	}
	eqs := 0
	for _, k := range l.KeyPreds {
		if d.q.Preds[k].Op == model.Eq && !containsHash(l.Index, l.Map, d.q.Preds[k].Ref) {
			eqs++
		}
	}
	rest := l.Index.Order[eqs:]
	if len(rest) < len(d.q.OrderBy) {
		return false
	}
	for i, o := range d.q.OrderBy {
		if d.ref(l.Map, rest[i]) != o.Ref || o.Desc != d.q.OrderBy[0].Desc {
			return false
		}
	}
	return true
}

// markLive marks the states from which an end state is reachable. States
// are created in order of progress, so a reverse sweep suffices.
func (d *dag) markLive() {
	order := d.topo()
	for k := len(order) - 1; k >= 0; k-- {
		s := d.states[order[k]]
		s.live = s.end
		for _, a := range s.out {
			if d.states[d.arcs[a].to].live {
				s.live = true
			}
		}
	}
}

// topo orders the states so that every arc goes forward: each arc sets at
// least one more bit.
func (d *dag) topo() []int {
	order := make([]int, len(d.states))
	bits := make([]int, len(d.states))
	for i, s := range d.states {
		order[i] = i
		for _, bs := range [][]bool{s.covered, s.done, s.applied} {
			for _, b := range bs {
				if b {
					bits[i]++
				}
			}
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return bits[order[a]] < bits[order[b]] })
	return order
}

// liveArcs lists the arcs that lie on some complete plan.
func (d *dag) liveArcs() []int {
	var out []int
	for k, a := range d.arcs {
		if d.states[a.from].live && d.states[a.to].live {
			out = append(out, k)
		}
	}
	return out
}

// shape describes what the integer program sees of d: its live states and
// arcs (by number) with their steps' indexes, embeddings and costs. DAGs of the same
// shape give the same flow variables and constraints.
func (d *dag) shape() string {
	var b strings.Builder
	for _, st := range d.states {
		fmt.Fprintf(&b, "%t%t,", st.live, st.end)
	}
	for _, a := range d.liveArcs() {
		arc := d.arcs[a]
		fmt.Fprintf(&b, "|%d:%d>%d %p %v %v", a, arc.from, arc.to, arc.step.Index, arc.step.Map, arc.step.Cost)
	}
	return b.String()
}

// plan builds the plan of a path of arcs.
func (d *dag) plan(path []int) *physical.Plan {
	p := &physical.Plan{Query: d.q, Limit: d.q.Limit}
	for _, a := range path {
		p.Steps = append(p.Steps, d.arcs[a].step)
		p.Cost += d.arcs[a].step.Cost
	}
	last := d.states[d.arcs[path[len(path)-1]].to]
	p.Ordered = last.ordered
	p.Limited = last.limited
	p.Sort = len(d.q.OrderBy) > 0 && !last.ordered
	p.Rows = last.rows
	if p.Limit > 0 {
		p.Rows = min(p.Rows, float64(p.Limit))
	}
	return p
}

// cheapest is the least-cost plan (shortest path), or nil when the pool
// cannot answer the query.
func (d *dag) cheapest() *physical.Plan {
	path := d.cheapestPath()
	if path == nil {
		return nil
	}
	return d.plan(path)
}

// cheapestPath is the arcs of the least-cost plan, or nil. It is computed
// once (the integer program's scale and its start solution both ask).
func (d *dag) cheapestPath() []int {
	if !d.bestDone {
		d.best, _ = d.shortestPath(nil)
		d.bestDone = true
	}
	return d.best
}

// shortestPath returns the arcs and cost of the least-cost plan whose steps
// read only indexes allow accepts (any index if allow is nil), or nil if no
// plan does. Ties go to the earlier arc, so equal DAGs give equal paths.
func (d *dag) shortestPath(allow func(*physical.Index) bool) ([]int, float64) {
	if allow == nil {
		return d.pricedPath(func(l *physical.Lookup) (float64, bool) { return l.Cost, true })
	}
	return d.pricedPath(func(l *physical.Lookup) (float64, bool) { return l.Cost, allow(l.Index) })
}

// pricedPath is shortestPath with each step priced by price, which may
// also exclude it.
func (d *dag) pricedPath(price func(*physical.Lookup) (float64, bool)) ([]int, float64) {
	if len(d.states) == 0 || !d.states[0].live {
		return nil, 0
	}
	if d.order == nil {
		d.order = d.topo()
	}
	best := make([]float64, len(d.states))
	via := make([]int, len(d.states))
	for i := range best {
		best[i] = -1
		via[i] = -1
	}
	best[0] = 0
	end := -1
	for _, i := range d.order {
		if best[i] < 0 {
			continue
		}
		s := d.states[i]
		if s.end && (end < 0 || best[i] < best[end]) {
			end = i
		}
		for _, a := range s.out {
			arc := d.arcs[a]
			p, ok := price(&arc.step)
			if !ok {
				continue
			}
			if c := best[i] + p; best[arc.to] < 0 || c < best[arc.to] {
				best[arc.to], via[arc.to] = c, a
			}
		}
	}
	if end < 0 {
		return nil, 0
	}
	var path []int
	for i := end; i != 0; i = d.arcs[via[i]].from {
		path = append(path, via[i])
	}
	slices.Reverse(path)
	return path, best[end]
}
