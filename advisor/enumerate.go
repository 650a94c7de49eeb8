package advisor

import (
	"slices"
	"sort"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/planner"
)

// Mode selects the kinds of structures the advisor may recommend.
type Mode uint8

// Modes.
const (
	// WithSI recommends CFs and secondary indexes (seed 000).
	WithSI Mode = iota
	// NoSI recommends CFs only (NoSE).
	NoSI
	// Normalized is the paper's baseline: one CF per entity keyed by its
	// key, plus CFs mapping each query's equality attributes to entity keys.
	Normalized
)

func (m Mode) String() string {
	return [...]string{"cf+si", "cf", "normalized"}[m]
}

// Bits of enumerator.full.
const (
	fullCF = 1 << iota
	fullFirst
)

// enumerator collects candidate indexes, deduplicated by identity.
type enumerator struct {
	mode  Mode
	byKey map[string]*catalog.Index
	list  []*catalog.Index
	// full marks the CFs that hold every field a workload query reads of
	// their part (a later step's: but those an earlier step's equality
	// fixed), as a first step or a later one (merge pairs those across
	// clusterings); supports says the queries enumerated now are support
	// queries.
	full     map[*catalog.Index]uint8
	supports bool
	// wide: enumerate the design space exhaustively (wide.go, for tests);
	// err says when a query is beyond its bounds.
	wide bool
	err  error
	// static: add each candidate's static-column variant (staticVariant).
	static bool
	// localSIs: the target keeps secondary indexes itself
	// (cost.Profile.LocalIndexes), so an index on a collection's elements
	// (catalog.Index.OnElements) is a candidate; contains lists the
	// collections the workload's queries test by element (CONTAINS on a
	// set, CONTAINS KEY on a map), those it is a candidate for.
	localSIs bool
	contains map[*catalog.Field]bool
}

func newEnumerator(mode Mode) *enumerator {
	return &enumerator{mode: mode, byKey: map[string]*catalog.Index{}, full: map[*catalog.Index]uint8{}}
}

func (e *enumerator) add(x *catalog.Index) *catalog.Index {
	x.Finish()
	if old := e.byKey[x.Key]; old != nil {
		return old
	}
	e.byKey[x.Key] = x
	e.list = append(e.list, x)
	if e.static {
		if v := staticVariant(x); v != nil {
			e.add(v)
		}
	}
	return x
}

// staticVariant is CF x with the fields of its root among its values made
// static columns (catalog.Index.Static), or nil when x has none or cannot
// have static columns (it must be partitioned by its root's key alone and
// have a clustering key). The variant stores those fields once per
// partition: it is smaller, a write of the root changes one partition row
// instead of every row of the partition, and a message (a row) is written
// without reading them; reading them costs no extra request.
func staticVariant(x *catalog.Index) *catalog.Index {
	root := x.Graph.Nodes[0].Entity
	if x.Kind != catalog.CF || len(x.Static) > 0 || len(x.Order) == 0 || len(x.Hash) != 1 ||
		x.Hash[0] != (catalog.Attr{Node: 0, Field: root.ID()}) {
		return nil
	}
	var static, extra []catalog.Attr
	for _, a := range x.Extra {
		if a.Node == 0 && !a.Field.Key && !layout.StoredPerElement(a.Field.Type) {
			static = append(static, a)
		} else {
			extra = append(extra, a)
		}
	}
	if len(static) == 0 {
		return nil
	}
	return &catalog.Index{Kind: catalog.CF, Graph: x.Graph, Hash: slices.Clone(x.Hash), Order: slices.Clone(x.Order), Static: static, Extra: extra}
}

// shape describes a query for enumeration: per node, its equality fields,
// and the fields it needs.
type shape struct {
	q      *catalog.Query
	eq     map[int][]*catalog.Field
	rng    *catalog.FieldRef
	order  []catalog.FieldRef
	needed map[int][]*catalog.Field
}

func shapeOf(q *catalog.Query) *shape {
	s := &shape{q: q, eq: map[int][]*catalog.Field{}, needed: map[int][]*catalog.Field{}}
	addField := func(m map[int][]*catalog.Field, r catalog.FieldRef) {
		for _, f := range m[r.Node] {
			if f == r.Field {
				return
			}
		}
		m[r.Node] = append(m[r.Node], r.Field)
	}
	for _, p := range q.Preds {
		switch {
		case p.Op == catalog.Eq:
			addField(s.eq, p.Ref)
		case p.Op.IsRange() && s.rng == nil:
			r := p.Ref
			s.rng = &r
		}
	}
	for _, o := range q.OrderBy {
		s.order = append(s.order, o.Ref)
	}
	for _, r := range planner.NeededFields(q) {
		addField(s.needed, r)
	}
	for _, fs := range s.eq {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	}
	return s
}

// subtrees lists the connected node sets of a query graph (each sorted).
func subtrees(g *catalog.Graph) [][]int {
	n := len(g.Nodes)
	if n > 12 {
		n = 12 // beyond this the query is split only along its first 12 nodes
	}
	var out [][]int
	for mask := 1; mask < 1<<n; mask++ {
		var nodes []int
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				nodes = append(nodes, i)
			}
		}
		if connected(g, nodes) {
			out = append(out, nodes)
		}
	}
	if len(g.Nodes) > n {
		all := make([]int, len(g.Nodes))
		for i := range all {
			all[i] = i
		}
		out = append(out, all)
	}
	return out
}

func connected(g *catalog.Graph, nodes []int) bool {
	in := map[int]bool{}
	for _, v := range nodes {
		in[v] = true
	}
	seen := map[int]bool{nodes[0]: true}
	stack := []int{nodes[0]}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.Neighbors(v) {
			if in[e.To] && !seen[e.To] {
				seen[e.To] = true
				stack = append(stack, e.To)
			}
		}
	}
	return len(seen) == len(nodes)
}

// build canonicalizes an index over query nodes: hash, order and extra are
// query field references.
func build(kind catalog.Kind, q *catalog.Graph, nodes []int, root int, hash, order, extra []catalog.FieldRef) *catalog.Index {
	g, from := catalog.Canon(catalog.Sub{Graph: q, Root: root, Nodes: nodes})
	to := map[int]int{}
	for i, v := range from {
		to[v] = i
	}
	conv := func(rs []catalog.FieldRef) []catalog.Attr {
		out := make([]catalog.Attr, 0, len(rs))
		for _, r := range rs {
			if n, ok := to[r.Node]; ok {
				out = append(out, catalog.Attr{Node: n, Field: r.Field})
			}
		}
		return out
	}
	return &catalog.Index{Kind: kind, Graph: g, Hash: conv(hash), Order: conv(order), Extra: conv(extra)}
}

func refs(node int, fs []*catalog.Field) []catalog.FieldRef {
	out := make([]catalog.FieldRef, len(fs))
	for i, f := range fs {
		out[i] = catalog.FieldRef{Node: node, Field: f}
	}
	return out
}

// forQuery adds the CFs that plans of q can use: for every connected part of
// its graph, CFs keyed by the part's equality attributes (first steps: the
// whole graph gives the materialized view) and CFs keyed by the key of one
// of its entities (later steps of join plans), each with the part's needed
// fields as values or with keys only.
func (e *enumerator) forQuery(q *catalog.Query) {
	if e.mode == Normalized {
		e.normalized(q)
		return
	}
	if e.wide {
		e.forQueryWide(q)
	}
	for _, p := range q.Preds {
		if f := p.Ref.Field; f.Type.IsCollection() && !f.Type.IsFrozen() && p.Op == catalog.ElementOp(f.Type) {
			if e.contains == nil {
				e.contains = map[*catalog.Field]bool{}
			}
			e.contains[f] = true
		}
	}
	s := shapeOf(q)
	g := q.Graph
	for _, nodes := range subtrees(g) {
		in := map[int]bool{}
		for _, v := range nodes {
			in[v] = true
		}
		var ids, eqAll []catalog.FieldRef
		for _, v := range nodes {
			ids = append(ids, catalog.FieldRef{Node: v, Field: g.Nodes[v].Entity.ID()})
			eqAll = append(eqAll, refs(v, s.eq[v])...)
		}
		var rng, ord []catalog.FieldRef
		if s.rng != nil && in[s.rng.Node] {
			rng = []catalog.FieldRef{*s.rng}
		}
		for _, o := range s.order {
			if in[o.Node] {
				ord = append(ord, o)
			}
		}
		clustering := func(skip int) []catalog.FieldRef {
			var out []catalog.FieldRef
			for _, r := range eqAll {
				if r.Node != skip {
					out = append(out, r)
				}
			}
			out = append(out, rng...)
			out = append(out, ord...)
			return append(out, ids...)
		}
		extras := valueSets(nodes, s.needed)
		eqSet := map[catalog.FieldRef]bool{}
		for _, r := range eqAll {
			eqSet[r] = true
		}
		// First steps: keyed by the equality attributes of one entity.
		for _, h := range nodes {
			if len(s.eq[h]) == 0 {
				continue
			}
			hashes := [][]catalog.FieldRef{refs(h, s.eq[h])}
			if len(s.eq[h]) > 1 {
				for _, f := range s.eq[h] {
					hashes = append(hashes, refs(h, []*catalog.Field{f}))
				}
			}
			for _, hash := range hashes {
				var lead []catalog.FieldRef
				if len(hash) == 1 && len(s.eq[h]) > 1 {
					lead = refs(h, s.eq[h])
				}
				// The range attribute, the other entities' equality
				// attributes and the ORDER BY attributes either in the
				// clustering key (the rows read are the rows wanted, in
				// order) or out of it (filtered or sorted on the client:
				// more rows read, but an update of them rewrites a cell
				// instead of moving the row).
				for _, moved := range valuePlacements(h, eqAll, rng, ord) {
					order := append(append([]catalog.FieldRef(nil), lead...), clusteringWithout(clustering(h), moved)...)
					for i, ex := range extras {
						e.addPlaced(g, nodes, h, hash, order, ex, moved, eqSet, i == 0, true)
					}
				}
			}
		}
		// Later steps: keyed by the key of one entity, clustered by the
		// attributes a prefix of which an equality or range can bind (one
		// order suffices: the others read the same rows), or with those
		// out of the key as above (an update of them then rewrites a
		// cell, with no support query for the row's old key).
		for _, v := range nodes {
			hash := []catalog.FieldRef{{Node: v, Field: g.Nodes[v].Entity.ID()}}
			for _, moved := range valuePlacements(-1, eqAll, rng, ord) {
				for i, ex := range extras {
					e.addPlaced(g, nodes, v, hash, clusteringWithout(clustering(-1), moved), ex, moved, eqSet, i == 0, false)
				}
			}
		}
	}
}

// valueSets lists the values a CF over nodes may hold: the needed fields
// of every node, of none (keys only: a later step fetches the fields —
// also for one entity, whose key the predicates find in a CF that an
// update of its fields leaves alone), and
// of part of the nodes — each entity's fields may be carried or left to a
// lookup by its key independently (a room's messages with only the
// messages' fields, the room read by its key, so that an update of the
// room touches one row). Every subset for up to 3 nodes; beyond, each
// node's fields alone and all but each node's.
func valueSets(nodes []int, needed map[int][]*catalog.Field) [][]catalog.FieldRef {
	of := func(in func(i int) bool) []catalog.FieldRef {
		var out []catalog.FieldRef
		for i, v := range nodes {
			if in(i) {
				out = append(out, refs(v, needed[v])...)
			}
		}
		return out
	}
	out := [][]catalog.FieldRef{of(func(int) bool { return true }), nil}
	n := len(nodes)
	if n == 1 {
		return out
	}
	if n <= 3 {
		for mask := 1; mask < 1<<n-1; mask++ {
			out = append(out, of(func(i int) bool { return mask&(1<<i) != 0 }))
		}
		return out
	}
	for j := range nodes {
		out = append(out, of(func(i int) bool { return i == j }), of(func(i int) bool { return i != j }))
	}
	return out
}

// valuePlacements lists the attributes a CF keyed by node h's equality
// attributes (h < 0: by an entity's key) may move out of its clustering
// key: any of the range attribute, the other entities' equality
// attributes (together) and the ORDER BY attributes (together).
func valuePlacements(h int, eqAll, rng, ord []catalog.FieldRef) [][]catalog.FieldRef {
	var groups [][]catalog.FieldRef
	if len(rng) > 0 && !rng[0].Field.Key {
		groups = append(groups, rng)
	}
	var foreign, sorted []catalog.FieldRef
	for _, r := range eqAll {
		if r.Node != h && !r.Field.Key {
			foreign = append(foreign, r)
		}
	}
	for _, r := range ord {
		if !r.Field.Key && !slices.Contains(eqAll, r) {
			sorted = append(sorted, r)
		}
	}
	for _, g := range [][]catalog.FieldRef{foreign, sorted} {
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	out := make([][]catalog.FieldRef, 0, 1<<len(groups))
	for mask := 0; mask < 1<<len(groups); mask++ {
		var m []catalog.FieldRef
		for i, g := range groups {
			if mask&(1<<i) != 0 {
				m = withRefs(m, g)
			}
		}
		out = append(out, m)
	}
	return out
}

// addPlaced adds the CF over nodes keyed by hash, clustered by order, with
// values ex and the attributes moved out of its clustering key among the
// values — and, when ex leaves out the fields of some of their entities,
// the CF without those moved attributes: a lookup fetching part of an
// entity's fields counts for none, so that entity's predicates and order
// are applied by a later step's lookup of it.
func (e *enumerator) addPlaced(g *catalog.Graph, nodes []int, root int, hash, order, ex, moved []catalog.FieldRef, eqs map[catalog.FieldRef]bool, full, first bool) {
	x := e.add(build(catalog.CF, g, nodes, root, hash, order, withRefs(ex, moved)))
	if full && !e.supports {
		e.full[x] |= fullCF
		if first {
			e.full[x] |= fullFirst
		}
	}
	var kept []catalog.FieldRef
	for _, r := range moved {
		if slices.ContainsFunc(ex, func(x catalog.FieldRef) bool { return x.Node == r.Node }) {
			kept = append(kept, r)
		}
	}
	if len(kept) < len(moved) {
		e.add(build(catalog.CF, g, nodes, root, hash, order, withRefs(ex, kept)))
	}
	// An equality applied by an earlier step fixes its attribute's value:
	// a CF need not hold it (nor be rewritten when it changes).
	var fixed, rest []catalog.FieldRef
	for _, r := range withRefs(ex, kept) {
		if slices.Contains(moved, r) && eqs[r] {
			fixed = append(fixed, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(fixed) > 0 {
		y := e.add(build(catalog.CF, g, nodes, root, hash, order, rest))
		if full && !first && !e.supports {
			// A later step's CF holding every field its query reads
			// of the part but those the earlier step fixed: merge
			// offers it with a first step's clustering.
			e.full[y] |= fullCF
		}
	}
}

// clusteringWithout is order without the attributes of moved.
func clusteringWithout(order, moved []catalog.FieldRef) []catalog.FieldRef {
	if len(moved) == 0 {
		return order
	}
	var out []catalog.FieldRef
	for _, r := range order {
		if !slices.Contains(moved, r) {
			out = append(out, r)
		}
	}
	return out
}

// withRefs is ex with the attributes of add it lacks.
func withRefs(ex, add []catalog.FieldRef) []catalog.FieldRef {
	out := append([]catalog.FieldRef(nil), ex...)
	for _, r := range add {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// normalized adds the baseline's CFs for q: one per entity of the query
// keyed by its key with all its fields, and one per entity with equality
// predicates mapping them to the keys of every entity of the query.
func (e *enumerator) normalized(q *catalog.Query) {
	s := shapeOf(q)
	g := q.Graph
	var all []int
	var ids []catalog.FieldRef
	for v := range g.Nodes {
		all = append(all, v)
		ids = append(ids, catalog.FieldRef{Node: v, Field: g.Nodes[v].Entity.ID()})
	}
	for v, nd := range g.Nodes {
		e.add(entityCF(nd.Entity))
		if len(s.eq[v]) > 0 && !(len(s.eq[v]) == 1 && s.eq[v][0].Key && len(g.Nodes) == 1) {
			e.add(build(catalog.CF, g, all, v, refs(v, s.eq[v]), ids, nil))
		}
	}
}

// entityCF is CF([e.key] [] → [every other field of e]).
func entityCF(ent *catalog.Entity) *catalog.Index {
	g := &catalog.Graph{Nodes: []catalog.Node{{Entity: ent, Parent: -1, Alias: ent.Name}}}
	x := &catalog.Index{Kind: catalog.CF, Graph: g, Hash: []catalog.Attr{{Node: 0, Field: ent.ID()}}}
	for _, f := range ent.Fields {
		if f != ent.ID() {
			x.Extra = append(x.Extra, catalog.Attr{Node: 0, Field: f})
		}
	}
	return x
}

// merge adds, for CFs with the same graph, partition key and clustering
// key, the CF holding the union of their values (seed 000 §3.2) and of
// every two of them, and for CFs with the same graph and partition key,
// one clustered by entity keys alone, the other not, the latter holding
// the former's attributes too (see below).
func (e *enumerator) merge() {
	if e.wide {
		e.mergeWide()
	}
	order, groups := e.keyGroups()
	for _, k := range order {
		grp := groups[k]
		if len(grp) < 2 {
			continue
		}
		e.add(union(grp...))
		// And of every two: two queries' CFs (or an SI's base and a
		// query's CF) holding the fields of both and no other's, one CF
		// where there were two.
		for i, a := range grp {
			for _, b := range grp[:i] {
				if !holds(a, b.Extra) && !holds(b, a.Extra) {
					e.add(union(a, b))
				}
			}
		}
	}
	// A CF clustered by entity keys alone (b) is read a whole partition
	// at a time: a CF of the same graph and partition key clustered for a
	// range or an order (a) reads the same rows, and holding b's
	// attributes too serves both queries, one CF stored and maintained
	// instead of two. Only for a and b workload queries' CFs, each with
	// every field its query reads of the part (but, for a later step's,
	// those an earlier step's equality fixed), b holding a's values and
	// at least one of them a first step: every pair tripled the solver's
	// time on RUBiS's 61 statements, and two later steps' CFs made it
	// 1.7× slower for no better schema. A later step's a with a first
	// step's b is a join's lookup clustered for its range that also
	// answers another query by the key (TestLaterStepMergeInstance).
	byHash := map[string][]*catalog.Index{}
	order = order[:0]
	for _, x := range e.list {
		if x.Kind != catalog.CF {
			continue
		}
		k := catalog.GraphKey(x.Graph) + "|" + keyText(x, x.Hash)
		if byHash[k] == nil {
			order = append(order, k)
		}
		byHash[k] = append(byHash[k], x)
	}
	for _, k := range order {
		grp := byHash[k]
		var whole []*catalog.Index
		for _, b := range grp {
			if keysOnly(b.Graph, b.Order) {
				whole = append(whole, b)
			}
		}
		for _, a := range grp {
			for _, b := range whole {
				if keysOnly(a.Graph, a.Order) || e.full[a] == 0 || e.full[b] == 0 || e.full[a]&fullFirst == 0 && e.full[b]&fullFirst == 0 || !holds(b, a.Extra) {
					continue
				}
				u := &catalog.Index{Kind: catalog.CF, Graph: a.Graph, Hash: a.Hash, Order: a.Order, Extra: append([]catalog.Attr(nil), a.Extra...)}
				for _, at := range b.Attrs() {
					if !a.Has(at) {
						u.Extra = append(u.Extra, at)
					}
				}
				if len(u.Extra) > len(a.Extra) {
					e.add(u)
				}
			}
			// And a holding every whole-partition CF's attributes of the
			// same key, support queries' included: the fields a write's
			// support query reads by the key then come from the CF a
			// query reads in order, one CF instead of two (a query by id
			// and a range on a2, and a delete's read of a1 by id, served
			// by CF([id] [a2] → [a0, a1])).
			if keysOnly(a.Graph, a.Order) || e.full[a]&fullFirst == 0 || len(whole) == 0 {
				continue
			}
			u := &catalog.Index{Kind: catalog.CF, Graph: a.Graph, Hash: a.Hash, Order: a.Order, Extra: append([]catalog.Attr(nil), a.Extra...)}
			for _, b := range whole {
				for _, at := range b.Attrs() {
					if !u.Has(at) {
						u.Extra = append(u.Extra, at)
					}
				}
			}
			if len(u.Extra) > len(a.Extra) {
				e.add(u)
			}
		}
	}
}

// holds reports whether x stores every attribute of as.
func holds(x *catalog.Index, as []catalog.Attr) bool {
	for _, a := range as {
		if !x.Has(a) {
			return false
		}
	}
	return true
}

// keysOnly reports whether as are entity keys only.
func keysOnly(g *catalog.Graph, as []catalog.Attr) bool {
	for _, a := range as {
		if a.Field != g.Nodes[a.Node].Entity.ID() {
			return false
		}
	}
	return true
}

func keyText(x *catalog.Index, as []catalog.Attr) string {
	s := ""
	for _, a := range as {
		s += x.AttrName(a) + ","
	}
	return s
}

func union(xs ...*catalog.Index) *catalog.Index {
	u := &catalog.Index{Kind: catalog.CF, Graph: xs[0].Graph, Hash: xs[0].Hash, Order: xs[0].Order}
	for _, x := range xs {
		u.Extra = append(u.Extra, x.Extra...)
	}
	return u
}

// secondary adds SIs per Algorithm 1 of seed 000: for each CF X, each of its
// partition-key attributes h and each other attribute f, an SI on h whose
// value is the key of f's entity (and one whose value is the key of h's
// entity), each with the CF keyed by that key that can carry it (the
// "additional CF"). The SI's base CF is left to the ILP. Without SIs
// (withSIs false: CF-only mode) the additional CFs are added alone: they
// are CFs, and a CF-only schema that uses them must be one the CF-only
// search sees, or the default mode could find a cheaper schema without SIs
// than CF-only mode.
func (e *enumerator) secondary(withSIs bool) {
	if e.wide && withSIs {
		e.secondaryWide()
	}
	for _, x := range append([]*catalog.Index(nil), e.list...) {
		if x.Kind != catalog.CF {
			continue
		}
		if withSIs {
			e.elementSIs(x)
		}
		for _, f := range append(append([]catalog.Attr(nil), x.Order...), x.Extra...) {
			for _, h := range x.Hash {
				for _, k := range []catalog.Attr{
					{Node: f.Node, Field: x.Graph.Nodes[f.Node].Entity.ID()},
					{Node: h.Node, Field: x.Graph.Nodes[h.Node].Entity.ID()},
				} {
					if h == k {
						continue
					}
					e.addSI(x, h, k, withSIs)
				}
			}
		}
	}
}

// elementSIs adds, where the target keeps local indexes, an index on the
// elements of each collection CF x holds as a value that a query tests by
// element, with x as its base: x keyed by the key of the collection's
// entity, the index's value.
func (e *enumerator) elementSIs(x *catalog.Index) {
	if !e.localSIs || len(x.Hash) != 1 || len(x.Static) > 0 {
		return
	}
	k := x.Hash[0]
	if k.Field != x.Graph.Nodes[k.Node].Entity.ID() {
		return
	}
	for _, f := range x.Extra {
		if f.Node == k.Node && e.contains[f.Field] {
			e.add(siCarriedBy(x, f, k))
		}
	}
}

// siCarriedBy builds the SI on f whose value is k, the key x is
// partitioned by, over x's graph, with x's clustering key where their
// graphs are one (x can carry it).
func siCarriedBy(x *catalog.Index, f, k catalog.Attr) *catalog.Index {
	si := build(catalog.SI, x.Graph, graphNodes(x), k.Node, []catalog.FieldRef{{Node: f.Node, Field: f.Field}}, nil, []catalog.FieldRef{{Node: k.Node, Field: k.Field}})
	if catalog.GraphKey(si.Graph) == catalog.GraphKey(x.Graph) {
		si.SetBaseOrder(x)
	}
	return si
}

// graphNodes lists the nodes of x's graph, 0 to n-1.
func graphNodes(x *catalog.Index) []int {
	nodes := make([]int, len(x.Graph.Nodes))
	for i := range nodes {
		nodes[i] = i
	}
	return nodes
}

// rebase adds, for every SI candidate and every CF candidate that could
// carry it but for its clustering key, the SI whose rows hold that CF's
// key (catalog.Index.BaseOrder): an SI follows only bases whose whole key
// it holds, so each clustering of its possible bases needs its own.
func (e *enumerator) rebase() {
	byGraph := map[string][]*catalog.Index{}
	for _, x := range e.list {
		if x.Kind == catalog.CF && len(x.Hash) == 1 {
			k := catalog.GraphKey(x.Graph)
			byGraph[k] = append(byGraph[k], x)
		}
	}
	for _, si := range append([]*catalog.Index(nil), e.list...) {
		if si.Kind != catalog.SI {
			continue
		}
		for _, cf := range byGraph[catalog.GraphKey(si.Graph)] {
			if cf.Hash[0] != si.Extra[0] || cf.Hash[0] == si.Hash[0] || !cf.Has(si.Hash[0]) {
				continue
			}
			v := &catalog.Index{Kind: catalog.SI, Graph: si.Graph, Hash: slices.Clone(si.Hash), Extra: slices.Clone(si.Extra)}
			v.SetBaseOrder(cf)
			e.add(v)
		}
	}
}

// addSI adds SI(h → k) over x's graph (when withSI) and the CF keyed by k
// that carries it.
func (e *enumerator) addSI(x *catalog.Index, h, k catalog.Attr, withSI bool) {
	nodes := graphNodes(x)
	toRef := func(as []catalog.Attr) []catalog.FieldRef {
		out := make([]catalog.FieldRef, len(as))
		for i, a := range as {
			out[i] = catalog.FieldRef{Node: a.Node, Field: a.Field}
		}
		return out
	}
	hr, kr := toRef([]catalog.Attr{h})[0], toRef([]catalog.Attr{k})[0]
	var order []catalog.FieldRef
	for _, a := range toRef(x.Order) {
		if a != kr {
			order = append(order, a)
		}
	}
	extra := toRef(x.Extra)
	for _, a := range toRef(x.Hash) {
		switch {
		case a == kr:
		case a.Field.Key:
			order = append(order, a) // every entity's key stays in the key
		default:
			extra = append(extra, a)
		}
	}
	base := e.add(build(catalog.CF, x.Graph, nodes, k.Node, []catalog.FieldRef{kr}, order, extra))
	if withSI {
		// Built over the same subgraph from the same root as its base, so
		// their attributes are numbered alike.
		si := build(catalog.SI, x.Graph, nodes, k.Node, []catalog.FieldRef{hr}, nil, []catalog.FieldRef{kr})
		si.SetBaseOrder(base)
		e.add(si)
	}
}

// keyGroups groups the CFs enumerated so far by graph, partition key and
// clustering key (the CFs whose values may be merged), in order of first
// appearance.
func (e *enumerator) keyGroups() (order []string, groups map[string][]*catalog.Index) {
	groups = map[string][]*catalog.Index{}
	for _, x := range e.list {
		if x.Kind != catalog.CF {
			continue
		}
		k := catalog.GraphKey(x.Graph) + "|" + keyText(x, x.Hash) + "|" + keyText(x, x.Order)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], x)
	}
	return order, groups
}
