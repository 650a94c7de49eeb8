package planner

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/plan"
)

// rangeSelectivity is the fraction of rows a range predicate keeps (NoSE's
// assumption; the model has no value distributions), and a CONTAINS.
const rangeSelectivity = catalog.ContainsSelectivity

// selectivity is the fraction of rows predicate p keeps.
func selectivity(p catalog.Pred) float64 {
	c := p.Ref.Field.Cardinality
	switch {
	case p.Op == catalog.Eq:
		return 1 / c
	case p.Op == catalog.Ne:
		return 1 - 1/c
	case p.Op.Negated():
		return 1 - rangeSelectivity
	}
	// A range, or CONTAINS (the model counts no elements).
	return rangeSelectivity
}

// Pool is the set of candidate indexes, arranged for the planner.
type Pool struct {
	all []*catalog.Index
	// byRoot lists the indexes by the entity of their root node (the node of
	// their partition key, or of an SI's value).
	byRoot map[*catalog.Entity][]*catalog.Index
	// byKey lists the CFs partitioned by their root entity's key.
	byKey map[*catalog.Entity][]*catalog.Index
	// Bases lists, for each SI, the CFs it can be defined on (the SI's
	// entries name their rows; any of these can follow it).
	Bases map[*catalog.Index][]*catalog.Index
	// Local maps the SIs a store keeps as local indexes to their bases
	// (catalog.Schema.Local: the runtime's schema); nil where the schema
	// is still being designed, and any base that can keep an SI may
	// (catalog.CanKeepLocal).
	Local map[*catalog.Index]*catalog.Index
}

// keptLocally reports whether a store's local index can answer si and its
// base cf in one request: cf is si's local base, or, where bases are not
// decided yet (Local nil), can be one.
func (p *Pool) keptLocally(si, cf *catalog.Index) bool {
	if p.Local != nil {
		return p.Local[si] == cf
	}
	return catalog.CanKeepLocal(si, cf)
}

// Indexes lists the pool's indexes.
func (p *Pool) Indexes() []*catalog.Index { return p.all }

// NewPool arranges the indexes idx for planning.
func NewPool(idx []*catalog.Index) *Pool {
	p := &Pool{all: idx, byRoot: map[*catalog.Entity][]*catalog.Index{}, byKey: map[*catalog.Entity][]*catalog.Index{},
		Bases: map[*catalog.Index][]*catalog.Index{}}
	byGraph := map[string][]*catalog.Index{}
	for _, x := range idx {
		e := x.Graph.Nodes[0].Entity
		p.byRoot[e] = append(p.byRoot[e], x)
		if x.Kind == catalog.CF {
			byGraph[catalog.GraphKey(x.Graph)] = append(byGraph[catalog.GraphKey(x.Graph)], x)
			if len(x.Hash) == 1 && x.Hash[0] == (catalog.Attr{Node: 0, Field: e.ID()}) {
				p.byKey[e] = append(p.byKey[e], x)
			}
		}
	}
	for _, si := range idx {
		if si.Kind != catalog.SI {
			continue
		}
		for _, cf := range byGraph[catalog.GraphKey(si.Graph)] {
			if IsBase(si, cf) {
				p.Bases[si] = append(p.Bases[si], cf)
			}
		}
	}
	return p
}

// IsBase reports whether cf can carry si: its partition key is the SI's
// value, it stores the indexed attribute outside the partition key, and
// si's rows hold its whole clustering key (catalog.Index.BaseOrder), so
// that each points at one row of cf. A CF with partition buckets carries
// none: the store keeps no local index on it (catalog), so an SI's cost
// would be that of another engine. An index on a collection's elements,
// a local index only, has no base with salt buckets or static columns
// (catalog.Schema.Kept).
func IsBase(si, cf *catalog.Index) bool {
	if cf.PartitionBuckets > 0 || len(cf.Hash) != 1 || cf.Hash[0] != si.Extra[0] || cf.Hash[0] == si.Hash[0] || !cf.Has(si.Hash[0]) {
		return false
	}
	if si.OnElements() && (cf.SaltBuckets > 0 || len(cf.Static) > 0) {
		return false
	}
	keys := si.KeyAttrs()
	for _, a := range cf.Order {
		if !slices.Contains(keys, a) {
			return false
		}
	}
	for _, a := range si.BaseOrder {
		if !slices.Contains(cf.Order, a) {
			return false
		}
	}
	return true
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
type DAG struct {
	// States[0] is the start; Arcs leave each state in State.Out.
	States []*State
	Arcs   []*Arc
	q      *catalog.Query
	coster cost.Model
	pool   *Pool
	needed [][]*catalog.Field // per query node: the fields the query reads
	byKey  map[string]int
	embeds map[*catalog.Index][][]int
	// scans: a first step may read a whole CF when nothing binds its
	// partition key (cost.Scan; the runtime's fallback, see Planner.Query).
	scans bool
	// best caches the least-cost path (see CheapestPath).
	best     []int
	bestDone bool
	order    []int // states in topological order, once computed
}

// State is what a partial plan has achieved (see DAG).
type State struct {
	covered, done, applied []bool     // per query node, per node, per predicate
	pending                *plan.Step // an SI step waits for its base CF
	limited, ordered       bool
	// single: the steps so far produce at most one row (each read a
	// CF row by its whole key), so a later step's rows come in the order
	// of its one partition.
	single bool
	first  bool // no step yet
	rows   float64
	End    bool  // the query is answered
	Live   bool  // can reach an end state
	Out    []int // arcs leaving the state
	key    string
}

// Arc is one lookup step from state From to state To.
type Arc struct {
	From, To int
	Step     plan.Step
	cut      bool        // not part of any plan the query allows (keepOneRead)
	access   cost.Access // what Step.Cost prices, but the sort
}

// neededByNode lists, per query node, the fields the query reads there.
func neededByNode(q *catalog.Query) [][]*catalog.Field {
	out := make([][]*catalog.Field, len(q.Graph.Nodes))
	for _, r := range NeededFields(q) {
		out[r.Node] = append(out[r.Node], r.Field)
	}
	return out
}

// NeededFields lists the fields q reads: selected, compared or ordered by.
func NeededFields(q *catalog.Query) []catalog.FieldRef {
	var out []catalog.FieldRef
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

// Build builds the plan DAG of q over pool p, keeping only states from
// which a complete plan exists.
func Build(q *catalog.Query, m cost.Model, p *Pool) *DAG {
	return build(q, m, p, false)
}

func build(q *catalog.Query, m cost.Model, p *Pool, scans bool) *DAG {
	d := &DAG{q: q, coster: m, pool: p, needed: neededByNode(q), byKey: map[string]int{}, embeds: map[*catalog.Index][][]int{}, scans: scans}
	start := &State{
		covered: make([]bool, len(q.Graph.Nodes)),
		done:    make([]bool, len(q.Graph.Nodes)),
		applied: make([]bool, len(q.Preds)),
		first:   true,
		rows:    1,
	}
	d.intern(start)
	for i := 0; i < len(d.States); i++ {
		d.expand(i, p)
	}
	d.pipeline()
	if w := q.CondOf; w != nil {
		d.keepOneRead(w.CondSource)
	}
	d.markLive()
	return d
}

// keepOneRead cuts every arc but those of one-step plans reading an index
// ok accepts: a conditional write's read of its tuple, which the runtime
// makes from one column family (catalog.Write.CondSource).
func (d *DAG) keepOneRead(ok func(*catalog.Index) bool) {
	for i, s := range d.States {
		var keep []int
		for _, a := range s.Out {
			arc := d.Arcs[a]
			if i == 0 && d.States[arc.To].End && ok(arc.Step.Index) {
				keep = append(keep, a)
			} else {
				arc.cut = true
			}
		}
		s.Out = keep
	}
}

// maxPruneLabels and maxPlanIndexes bound Prune's work on one DAG: the
// partial plans it keeps, over all states, and the distinct indexes one
// plan reads.
const (
	maxPruneLabels = 1 << 14
	maxPlanIndexes = 8
)

// indexSet is the set of indexes a partial plan reads, by their numbers
// in Prune plus one, ascending, then zeros.
type indexSet [8]uint16

// with is s and index b; false when that is more than maxPlanIndexes.
func (s indexSet) with(b int16) (indexSet, bool) {
	v := uint16(b) + 1
	i := 0
	for i < len(s) && s[i] != 0 && s[i] < v {
		i++
	}
	if i < len(s) && s[i] == v {
		return s, true
	}
	if s[len(s)-1] != 0 || s.len() == maxPlanIndexes {
		return s, false
	}
	copy(s[i+1:], s[i:len(s)-1])
	s[i] = v
	return s, true
}

func (s indexSet) len() int {
	n := 0
	for n < len(s) && s[n] != 0 {
		n++
	}
	return n
}

// pruneLabel is a partial plan of Prune's: its cost, the indexes it
// reads, and its last step.
type pruneLabel struct {
	cost float64
	set  indexSet
	prev int32 // label it extends, -1 for the start
	arc  int32
}

// pruneScratch keeps Prune's labels between calls.
var pruneScratch = sync.Pool{New: func() any { return new([]pruneLabel) }}

// Prune removes the steps that lie on no plan worth choosing, and returns
// how many. A plan P is dominated by a plan Q that reads only indexes P
// reads and costs no more: any schema that answers the query with P
// answers it with Q, at no more cost. Prune keeps the steps of the plans
// no other dominates (of plans equal in cost and indexes, one), so for
// every set A of indexes, the least cost of a plan reading only A is what
// it was: the least-cost plan within A is kept, or one that dominates it.
// It finds them as a multi-criteria shortest path: at each state (in
// topological order) the partial plans that reach it, but those another
// one reaching it dominates (each completion of those is dominated by the
// same completion of that one, the cost of a step depending on its state
// only). A DAG with too many partial plans worth keeping, or a plan
// reading too many indexes, is left whole.
func (d *DAG) Prune() int {
	live := d.LiveArcs()
	if len(live) == 0 {
		return 0
	}
	ids := map[*catalog.Index]int16{}
	bit := make([]int16, len(d.Arcs))
	for _, a := range live {
		x := d.Arcs[a].Step.Index
		if _, ok := ids[x]; !ok {
			ids[x] = int16(len(ids))
		}
		bit[a] = ids[x]
	}
	scratch := pruneScratch.Get().(*[]pruneLabel)
	defer pruneScratch.Put(scratch)
	labels := append((*scratch)[:0], pruneLabel{prev: -1, arc: -1})
	defer func() { *scratch = labels[:0] }()
	at := make([][]int32, len(d.States)) // per state, its labels
	at[0] = []int32{0}
	// undominated lists the labels of list no other dominates: one with a
	// subset of its indexes and no more cost (of equal ones, the first).
	least := map[indexSet]int32{}
	undominated := func(list []int32) []int32 {
		if len(list) < 2 {
			return list
		}
		clear(least)
		for _, k := range list {
			if o, ok := least[labels[k].set]; !ok || labels[k].cost < labels[o].cost {
				least[labels[k].set] = k
			}
		}
		out := list[:0:0]
		for _, k := range list {
			l := &labels[k]
			if least[l.set] != k {
				continue
			}
			// A label with a proper subset of l's indexes and no more cost?
			n := l.set.len()
			dominated := false
			for mask := 0; mask < 1<<n-1 && !dominated; mask++ {
				var t indexSet
				m := 0
				for j := 0; j < n; j++ {
					if mask&(1<<j) != 0 {
						t[m] = l.set[j]
						m++
					}
				}
				if o, ok := least[t]; ok && labels[o].cost <= l.cost {
					dominated = true
				}
			}
			if !dominated {
				out = append(out, k)
			}
		}
		return out
	}
	if d.order == nil {
		d.order = d.topo()
	}
	// A partial plan is dominated too when a whole plan reading one of
	// its indexes alone costs less than it and the least cost of any way
	// to finish it: alone[x] is that plan's cost, togo[s] the least cost
	// from state s to an end.
	alone := make([]float64, len(ids))
	for x, b := range ids {
		p, c := d.ArcPath(func(a int) (float64, bool) { return d.Arcs[a].Step.Cost, d.Arcs[a].Step.Index == x })
		if alone[b] = c; p == nil {
			alone[b] = math.Inf(1)
		}
	}
	togo := make([]float64, len(d.States))
	for k := len(d.order) - 1; k >= 0; k-- {
		i := d.order[k]
		if st := d.States[i]; !st.End {
			togo[i] = math.Inf(1)
			for _, a := range st.Out {
				togo[i] = math.Min(togo[i], d.Arcs[a].Step.Cost+togo[d.Arcs[a].To])
			}
		}
	}
	var ends []int32
	for _, i := range d.order {
		st := d.States[i]
		if !st.Live || len(at[i]) == 0 {
			continue
		}
		if st.End {
			ends = append(ends, at[i]...)
			continue
		}
		for _, k := range undominated(at[i]) {
			from := labels[k]
			for _, a := range st.Out {
				arc := d.Arcs[a]
				if !d.States[arc.To].Live {
					continue
				}
				set, ok := from.set.with(bit[a])
				if !ok {
					return 0
				}
				c := from.cost + arc.Step.Cost
				beaten := false
				for _, v := range set {
					if v != 0 && alone[v-1] < c+togo[arc.To] {
						beaten = true
					}
				}
				if beaten {
					continue
				}
				if len(labels) == maxPruneLabels {
					return 0
				}
				labels = append(labels, pruneLabel{cost: c, set: set, prev: k, arc: int32(a)})
				at[arc.To] = append(at[arc.To], int32(len(labels)-1))
			}
		}
		at[i] = nil
	}
	keep := make([]bool, len(d.Arcs))
	for _, k := range undominated(ends) {
		for ; labels[k].arc >= 0; k = labels[k].prev {
			keep[labels[k].arc] = true
		}
	}
	return d.Cut(func(a int) bool { return !keep[a] })
}

// Cut removes the arcs drop reports, and the states the start then no
// longer reaches, and returns how many live arcs it removed. When drop
// removes every arc of some indexes, the DAG is the one Build gives over
// the others, state for state and arc for arc, in the same order.
func (d *DAG) Cut(drop func(arc int) bool) int {
	before := len(d.LiveArcs())
	for _, s := range d.States {
		keep := s.Out[:0]
		for _, a := range s.Out {
			if arc := d.Arcs[a]; !arc.cut && drop(a) {
				arc.cut = true
				continue
			}
			keep = append(keep, a)
		}
		s.Out = keep
	}
	// Number the states as Build discovers them: in order, each state's
	// arcs in order, a state at the first arc that reaches it.
	num := make([]int, len(d.States))
	for i := range num {
		num[i] = -1
	}
	num[0] = 0
	order := []int{0}
	var arcs []*Arc
	for k := 0; k < len(order); k++ {
		s := d.States[order[k]]
		out := make([]int, 0, len(s.Out))
		for _, a := range s.Out {
			arc := d.Arcs[a]
			if num[arc.To] < 0 {
				num[arc.To] = len(order)
				order = append(order, arc.To)
			}
			out = append(out, len(arcs))
			arcs = append(arcs, arc)
		}
		s.Out = out
	}
	states := make([]*State, len(order))
	for k, i := range order {
		states[k] = d.States[i]
	}
	for _, arc := range arcs {
		arc.From, arc.To = num[arc.From], num[arc.To]
	}
	for key, i := range d.byKey {
		if num[i] < 0 {
			delete(d.byKey, key)
		} else {
			d.byKey[key] = num[i]
		}
	}
	d.States, d.Arcs = states, arcs
	d.order, d.best, d.bestDone = nil, nil, false
	d.markLive()
	return before - len(d.LiveArcs())
}

func (d *DAG) embeddings(x *catalog.Index) [][]int {
	if e, ok := d.embeds[x]; ok {
		return e
	}
	e := x.Embeddings(d.q.Graph)
	d.embeds[x] = e
	return e
}

func (d *DAG) intern(s *State) int {
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
	if s.single {
		b.WriteString("|1")
	}
	if s.first {
		b.WriteString("|F")
	}
	s.key = b.String()
	if i, ok := d.byKey[s.key]; ok {
		return i
	}
	d.byKey[s.key] = len(d.States)
	d.States = append(d.States, s)
	return len(d.States) - 1
}

// expand adds the arcs leaving state i.
func (d *DAG) expand(i int, p *Pool) {
	s := d.States[i]
	if s.End || len(s.Out) > 0 {
		return
	}
	switch {
	case s.first:
		seen := map[*catalog.Entity]bool{}
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
		for _, cf := range p.Bases[s.pending.Index] {
			for _, m := range d.embeddings(cf) {
				if sameMap(m, s.pending.Map) {
					d.arc(i, plan.Step{Index: cf, Map: m, Link: m[0], Role: cost.AfterSI})
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
						d.arc(i, plan.Step{Index: x, Map: m, Link: v, KeyPreds: d.keyPreds(s, x, m)})
					}
				}
			}
		}
	}
}

func (d *DAG) ref(m []int, a catalog.Attr) catalog.FieldRef {
	return catalog.FieldRef{Node: m[a.Node], Field: a.Field}
}

// predOn returns the unapplied predicates on query field r with an
// operator accepted by ok.
func (d *DAG) predOn(s *State, r catalog.FieldRef, ok func(catalog.Op) bool) []int {
	var out []int
	for i, p := range d.q.Preds {
		if !s.applied[i] && p.Ref == r && ok(p.Op) {
			out = append(out, i)
		}
	}
	return out
}

func isEq(o catalog.Op) bool { return o == catalog.Eq }

// keyPreds finds the predicates a lookup's clustering key answers after its
// partition key: equalities on a prefix, then ranges on the next attribute.
func (d *DAG) keyPreds(s *State, x *catalog.Index, m []int) []int {
	var out []int
	for _, a := range x.Order {
		r := d.ref(m, a)
		if eq := d.predOn(s, r, isEq); len(eq) > 0 {
			out = append(out, eq[0])
			continue
		}
		out = append(out, d.predOn(s, r, catalog.Op.IsRange)...)
		break
	}
	return out
}

func (d *DAG) tryFirst(i int, x *catalog.Index, m []int) {
	s := d.States[i]
	var key []int
	isKey := isEq
	if x.OnElements() {
		// An index on a collection's elements is looked up by one.
		op := catalog.ElementOp(x.Hash[0].Field.Type)
		isKey = func(o catalog.Op) bool { return o == op }
	}
	for _, a := range x.Hash {
		eq := d.predOn(s, d.ref(m, a), isKey)
		if len(eq) == 0 {
			if d.scans && x.Kind == catalog.CF {
				// Partition keys are ordered-encoded: a range on the first
				// is a range of rows (in each salt bucket of a salted CF).
				var rng []int
				if a == x.Hash[0] {
					rng = d.predOn(s, d.ref(m, a), catalog.Op.IsRange)
				}
				d.arc(i, plan.Step{Index: x, Map: m, Link: -1, Role: cost.Scan, KeyPreds: rng})
			}
			return
		}
		key = append(key, eq[0])
	}
	if x.Kind == catalog.CF {
		key = append(key, d.keyPreds(s, x, m)...)
	}
	d.arc(i, plan.Step{Index: x, Map: m, Link: -1, KeyPreds: key})
}

// arc applies lookup l to state i; it adds the arc when the lookup makes
// progress: it joins a new entity or fetches every field the query still
// needs of an entity. (A lookup fetching only some of an entity's fields
// counts for none of them, as in NoSE: a later lookup fetches them all.)
func (d *DAG) arc(i int, l plan.Step) {
	s := d.States[i]
	ns := &State{
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
	case l.Role == cost.Scan:
		l.Partitions, l.Rows = x.Partitions, x.Entries
		for _, k := range l.KeyPreds { // ranges of partitions
			l.Partitions *= selectivity(d.q.Preds[k])
			l.Rows *= selectivity(d.q.Preds[k])
		}
	case s.first:
		l.Partitions = 1
		l.Rows = x.RowsPerPartition()
	case l.Role == cost.AfterSI:
		l.Partitions, l.Rows = s.rows, s.rows
	default:
		l.Partitions = s.rows
		l.Rows = s.rows * x.RowsPerPartition()
	}
	if x.PartitionBuckets > 0 && l.Role != cost.AfterSI && !d.wholeKey(l) {
		// A partition with buckets is read bucket by bucket.
		l.Partitions *= x.BucketsPerPartition()
	}
	if l.Role != cost.AfterSI && l.Role != cost.Scan {
		for _, k := range l.KeyPreds {
			if !(s.first && containsHash(x, l.Map, d.q.Preds[k].Ref)) {
				l.Rows *= selectivity(d.q.Preds[k])
			}
		}
	}
	// (Tracked for ordered queries only: other queries' states stay as
	// they were, and their ties between plans break as before.)
	switch {
	case len(d.q.OrderBy) == 0:
	case s.first:
		ns.single = l.Role != cost.Scan && x.Kind == catalog.CF && d.wholeKey(l)
	case s.single && l.Role == cost.Plain && x.Kind == catalog.CF:
		// One partition read for the one row before: its rows come in
		// clustering order (forward: the runtime reads later steps
		// forward only).
		ns.ordered = ns.ordered || !d.q.OrderBy[0].Desc && d.ordered(l)
		ns.single = d.wholeKey(l)
	}
	if s.first {
		// A scan reads partition after partition: no order to rely on.
		ns.ordered = l.Role != cost.Scan && d.ordered(l)
		// The scan stops after LIMIT rows when it answers the whole query
		// in order: a later step could drop rows (a join finds no partner)
		// or multiply them.
		if d.q.Limit > 0 && len(l.Filters) == 0 && (len(d.q.OrderBy) == 0 || ns.ordered) && x.Kind == catalog.CF &&
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
	ns.End = allTrue(ns.covered) && allTrue(ns.done) && allTrue(ns.applied)
	if x.Kind == catalog.SI {
		if ns.End {
			l.Role = cost.SIAlone
		} else {
			l.Role = cost.SIFirst
			ns.pending = &l
		}
	}
	a := cost.Access{Role: l.Role, Partitions: l.Partitions, Rows: l.Rows, Cells: Cells(x)}
	if l.Role == cost.AfterSI {
		a.ClientIndex = !d.pool.keptLocally(s.pending.Index, x)
	}
	l.Cost = d.coster.Read(a)
	if ns.End && len(d.q.OrderBy) > 0 && !ns.ordered {
		// The client sorts the result after the last step: the step
		// carries the sort's cost, so that every path's cost is its plan's.
		l.SortCost = d.coster.Sort(ns.rows)
		l.Cost += l.SortCost
	}
	to := d.intern(ns)
	d.Arcs = append(d.Arcs, &Arc{From: i, To: to, Step: l, access: a})
	s.Out = append(s.Out, len(d.Arcs)-1)
}

// pipeline prices the steps of plans the runtime pipelines (exec's
// firstBatch): with a LIMIT, a plan that needs no client sort and whose
// first lookup does not stop at the LIMIT itself joins its first step's
// rows in batches and stops reading once LIMIT rows come out, so each
// step reads about 2·LIMIT/R of the rows it would read whole, R the
// query's estimated result rows (the least of its end states': the
// smallest share). The runtime's first batch is twice what the estimates
// say yields the LIMIT, hence the 2; a one-step plan whose filters drop
// rows reads half that, priced the same. With an ORDER BY only the arcs
// into states that keep the order are priced so: every plan through
// them ends in order, without a sort (a plan that gains the order later,
// from one row's partition, keeps its full price).
func (d *DAG) pipeline() {
	q := d.q
	if q.Limit <= 0 {
		return
	}
	r := math.Inf(1)
	for _, s := range d.States {
		if s.End && !s.limited { // a limited state's rows are the LIMIT
			r = min(r, s.rows)
		}
	}
	share := 2 * float64(q.Limit) / r
	if !(share < 1) {
		return
	}
	for _, a := range d.Arcs {
		from, to := d.States[a.From], d.States[a.To]
		if from.limited || to.limited || a.Step.SortCost > 0 || len(q.OrderBy) > 0 && !to.ordered {
			continue
		}
		acc := a.access
		acc.Rows *= share
		acc.Partitions = max(acc.Partitions*share, min(acc.Partitions, 1))
		a.Step.Read = share
		a.Step.Cost = d.coster.Read(acc)
	}
}

// provides reports whether lookup l fetches every field the query needs of
// node n, apart from those an applied equality fixes.
func (d *DAG) provides(s *State, l plan.Step, n int) bool {
	x := l.Index
	stores := func(as []catalog.Attr, f *catalog.Field) bool {
		for _, a := range as {
			if a.Field == f && l.Map[a.Node] == n {
				return true
			}
		}
		return false
	}
	for _, f := range d.needed[n] {
		if d.fixed(s, n, f) {
			continue
		}
		// (An SI's BaseOrder is there for the runtime's base lookup:
		// plans take those attributes from the base, as they did before
		// SI rows held them, so that an SI plan is the same shape.)
		if !stores(x.Hash, f) && !stores(x.Order, f) && !stores(x.Static, f) && !stores(x.Extra, f) {
			return false
		}
	}
	return true
}

// fixed reports whether an applied equality gives the value of field f of
// node n.
func (d *DAG) fixed(s *State, n int, f *catalog.Field) bool {
	for k, p := range d.q.Preds {
		if s.applied[k] && p.Op == catalog.Eq && p.Ref.Node == n && p.Ref.Field == f {
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
func extendsAt(s *State, m []int) bool {
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

func containsHash(x *catalog.Index, m []int, r catalog.FieldRef) bool {
	for _, a := range x.Hash {
		if (catalog.FieldRef{Node: m[a.Node], Field: a.Field}) == r {
			return true
		}
	}
	return false
}

// wholeKey reports whether lookup l binds every clustering attribute of
// its CF by equality (its partition key is bound: by equalities on a first
// step, by the row before on a later one), so it reads at most one row.
func (d *DAG) wholeKey(l plan.Step) bool {
	n := 0
	for _, k := range l.KeyPreds {
		p := d.q.Preds[k]
		if p.Op != catalog.Eq {
			return false
		}
		if !containsHash(l.Index, l.Map, p.Ref) {
			n++
		}
	}
	return n == len(l.Index.Order)
}

// ordered reports whether a first lookup delivers the ORDER BY: its
// clustering key, after the attributes its equalities bind, starts with the
// ORDER BY attributes, all ascending or all descending (a reverse scan).
// Later steps keep the order of the rows that feed them; a later step fed
// by one row delivers the order the same way (see State.single).
func (d *DAG) ordered(l plan.Step) bool {
	if len(d.q.OrderBy) == 0 || l.Index.Kind != catalog.CF {
		return false
	}
	eqs := 0
	for _, k := range l.KeyPreds {
		if d.q.Preds[k].Op == catalog.Eq && !containsHash(l.Index, l.Map, d.q.Preds[k].Ref) {
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
func (d *DAG) markLive() {
	order := d.topo()
	for k := len(order) - 1; k >= 0; k-- {
		s := d.States[order[k]]
		s.Live = s.End
		for _, a := range s.Out {
			if d.States[d.Arcs[a].To].Live {
				s.Live = true
			}
		}
	}
}

// topo orders the states so that every arc goes forward: each arc sets at
// least one more bit.
func (d *DAG) topo() []int {
	order := make([]int, len(d.States))
	bits := make([]int, len(d.States))
	for i, s := range d.States {
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

// LiveArcs lists the arcs that lie on some complete plan.
func (d *DAG) LiveArcs() []int {
	var out []int
	for k, a := range d.Arcs {
		if !a.cut && d.States[a.From].Live && d.States[a.To].Live {
			out = append(out, k)
		}
	}
	return out
}

// Shape describes what the integer program sees of d: its live states and
// arcs (by number) with their steps' indexes, embeddings and costs. DAGs of the same
// shape give the same flow variables and constraints.
func (d *DAG) Shape() string {
	var b strings.Builder
	for _, st := range d.States {
		fmt.Fprintf(&b, "%t%t,", st.Live, st.End)
	}
	for _, a := range d.LiveArcs() {
		arc := d.Arcs[a]
		fmt.Fprintf(&b, "|%d:%d>%d %p %v %v", a, arc.From, arc.To, arc.Step.Index, arc.Step.Map, arc.Step.Cost)
	}
	return b.String()
}

// Plan builds the plan of a path of arcs.
func (d *DAG) Plan(path []int) *plan.Query {
	p := &plan.Query{Query: d.q, Limit: d.q.Limit}
	for _, a := range path {
		p.Steps = append(p.Steps, d.Arcs[a].Step)
		p.Cost += d.Arcs[a].Step.Cost
	}
	last := d.States[d.Arcs[path[len(path)-1]].To]
	p.Ordered = last.ordered
	p.Limited = last.limited
	p.Sort = len(d.q.OrderBy) > 0 && !last.ordered
	p.Rows = last.rows
	if p.Limit > 0 {
		p.Rows = min(p.Rows, float64(p.Limit))
	}
	return p
}

// Cheapest is the least-cost plan (shortest path), or nil when the pool
// cannot answer the query.
func (d *DAG) Cheapest() *plan.Query {
	path := d.CheapestPath()
	if path == nil {
		return nil
	}
	return d.Plan(path)
}

// CheapestPath is the arcs of the least-cost plan, or nil. It is computed
// once (the integer program's scale and its start solution both ask).
func (d *DAG) CheapestPath() []int {
	if !d.bestDone {
		d.best, _ = d.ShortestPath(nil)
		d.bestDone = true
	}
	return d.best
}

// ShortestPath returns the arcs and cost of the least-cost plan whose steps
// read only indexes allow accepts (any index if allow is nil), or nil if no
// plan does. Ties go to the earlier arc, so equal DAGs give equal paths.
func (d *DAG) ShortestPath(allow func(*catalog.Index) bool) ([]int, float64) {
	if allow == nil {
		return d.PricedPath(func(l *plan.Step) (float64, bool) { return l.Cost, true })
	}
	return d.PricedPath(func(l *plan.Step) (float64, bool) { return l.Cost, allow(l.Index) })
}

// PricedPath is ShortestPath with each step priced by price, which may
// also exclude it.
func (d *DAG) PricedPath(price func(*plan.Step) (float64, bool)) ([]int, float64) {
	return d.ArcPath(func(a int) (float64, bool) { return price(&d.Arcs[a].Step) })
}

// ArcPath is PricedPath with each step priced by its arc's number.
func (d *DAG) ArcPath(price func(arc int) (float64, bool)) ([]int, float64) {
	if len(d.States) == 0 || !d.States[0].Live {
		return nil, 0
	}
	if d.order == nil {
		d.order = d.topo()
	}
	best := make([]float64, len(d.States))
	via := make([]int32, len(d.States))
	for i := range best {
		best[i] = -1
	}
	best[0] = 0
	end := -1
	for _, i := range d.order {
		if best[i] < 0 {
			continue
		}
		s := d.States[i]
		if s.End && (end < 0 || best[i] < best[end]) {
			end = i
		}
		for _, a := range s.Out {
			p, ok := price(a)
			if !ok {
				continue
			}
			to := d.Arcs[a].To
			if c := best[i] + p; best[to] < 0 || c < best[to] {
				best[to], via[to] = c, int32(a)
			}
		}
	}
	if end < 0 {
		return nil, 0
	}
	var path []int
	for i := end; i != 0; i = d.Arcs[via[i]].From {
		path = append(path, int(via[i]))
	}
	slices.Reverse(path)
	return path, best[end]
}

// Cells is the number of cells a row of x holds, as layout.Default stores
// it: one per value (a collection's elements counted as one), or the
// empty marker cell of a row without values; an SI's entry is one.
func Cells(x *catalog.Index) float64 {
	if x.Kind != catalog.CF {
		return 1
	}
	return float64(max(len(x.Extra), 1))
}
