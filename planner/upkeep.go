package planner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
)

// Upkeep is what one write costs one index: the rows it puts and deletes
// and the support queries that must run first to know them; parts says
// how, per occurrence of the written entity (what the runtime executes).
type Upkeep struct {
	Puts, Deletes float64
	Support       []*catalog.Query
	Parts         []*plan.Upkeep
}

// Local is the upkeep of a secondary index the engine keeps itself, in
// its base's write path (cost.Profile.LocalIndexes): the same writes, no
// support queries.
func (u Upkeep) Local() Upkeep { return Upkeep{Puts: u.Puts, Deletes: u.Deletes} }

// Cost prices the upkeep's writes (not its support queries) with m.
func (u Upkeep) Cost(m cost.Model) float64 { return m.Write(u.Puts, u.Deletes) }

// Maintain works out how write w changes index x (false when it does not).
// Support queries read what the write does not say: the keys of the rows to
// rewrite or delete, the old values of changed key attributes, and the
// fields of the entities a new tuple joins with.
func Maintain(w *catalog.Write, x *catalog.Index) (Upkeep, bool) {
	var parts []*plan.Upkeep
	if w.Kind == catalog.Connect || w.Kind == catalog.Disconnect {
		parts = connectUpkeep(w, x)
	} else {
		for n, nd := range x.Graph.Nodes {
			if nd.Entity != w.Entity {
				continue
			}
			var part *plan.Upkeep
			switch w.Kind {
			case catalog.Insert:
				part = insertUpkeep(w, x, n)
			case catalog.Update:
				part = updateUpkeep(w, x, n)
			case catalog.Delete:
				part = deleteUpkeep(w, x, n)
			}
			if part != nil {
				parts = append(parts, part)
			}
			if n == 0 && len(x.Static) > 0 {
				if part := staticUpkeep(w, x); part != nil {
					parts = append(parts, part)
				}
			}
		}
	}
	if len(parts) == 0 {
		return Upkeep{}, false
	}
	u := Upkeep{Parts: parts}
	for _, p := range parts {
		u.Puts += p.Puts
		u.Deletes += p.Deletes
		for _, s := range p.Supports {
			u.Support = append(u.Support, s.Query)
		}
		if p.Replace != nil {
			u.Support = append(u.Support, p.Replace.Query)
		}
	}
	return u, true
}

// perTuple is the number of join rows of x per tuple of node n's entity.
func perTuple(x *catalog.Index, n int) float64 {
	return x.Entries / x.Graph.Nodes[n].Entity.Count
}

// component lists the nodes of x's graph reachable from start without
// passing through avoid.
func component(g *catalog.Graph, start, avoid int) []int {
	seen := map[int]bool{start: true, avoid: true}
	out := []int{start}
	for i := 0; i < len(out); i++ {
		for _, e := range g.Neighbors(out[i]) {
			if !seen[e.To] {
				seen[e.To] = true
				out = append(out, e.To)
			}
		}
	}
	sort.Ints(out)
	return out
}

// supportQuery builds a query over the nodes of x's graph, rooted at root,
// selecting the given attributes, with predicates on the root.
func supportQuery(x *catalog.Index, nodes []int, root int, sel []catalog.Attr, preds []catalog.Pred) *plan.Support {
	// Only the entities whose fields are read, and those joining them to
	// the root, matter: reading a field of one tuple does not need the
	// rows it has elsewhere in the join.
	keep := map[int]bool{root: true}
	for _, a := range sel {
		for _, n := range treePath(x.Graph, root, a.Node) {
			keep[n] = true
		}
	}
	var kept []int
	for _, n := range nodes {
		if keep[n] {
			kept = append(kept, n)
		}
	}
	g, from := catalog.Canon(catalog.Sub{Graph: x.Graph, Root: root, Nodes: kept})
	to := map[int]int{}
	for i, v := range from {
		to[v] = i
	}
	q := &catalog.Query{Graph: g}
	for _, a := range sel {
		if n, ok := to[a.Node]; ok {
			q.Select = appendUnique(q.Select, catalog.FieldRef{Node: n, Field: a.Field})
		}
	}
	for _, p := range preds {
		p.Ref.Node = 0
		q.Preds = append(q.Preds, p)
	}
	return &plan.Support{Query: q, From: from}
}

func appendUnique(rs []catalog.FieldRef, r catalog.FieldRef) []catalog.FieldRef {
	for _, x := range rs {
		if x == r {
			return rs
		}
	}
	return append(rs, r)
}

func keyPred(f *catalog.Field) catalog.Pred {
	return catalog.Pred{Ref: catalog.FieldRef{Node: 0, Field: f}, Op: catalog.Eq, Value: &lang.Param{}}
}

// rowAttrs lists the attributes x's rows hold: all it stores but its
// static columns, which its partition rows hold (staticUpkeep keeps them).
func rowAttrs(x *catalog.Index) []catalog.Attr {
	out := x.Stored()
	if len(x.Static) == 0 {
		return out
	}
	kept := out[:0]
	for _, a := range out {
		if !x.IsStatic(a) {
			kept = append(kept, a)
		}
	}
	return kept
}

// staticUpkeep is how a write of x's root entity keeps x's static columns,
// in the partition row of each written tuple (one per partition: the root
// alone forms the partition key): an INSERT puts it, an UPDATE of a
// static column changes its cells, a DELETE deletes it. A support query
// over the root finds the tuples unless the predicates fix the key.
func staticUpkeep(w *catalog.Write, x *catalog.Index) *plan.Upkeep {
	u := &plan.Upkeep{Index: x, Node: 0, Kind: w.Kind, Edge: -1, Static: true}
	count := x.Graph.Nodes[0].Entity.Count
	switch w.Kind {
	case catalog.Insert:
		u.Puts = 1
		return u
	case catalog.Update:
		sets := false
		for _, a := range x.Static {
			sets = sets || w.SetsField(a.Field)
		}
		if !sets {
			return nil
		}
		u.Puts = count * whereSelectivity(w)
	case catalog.Delete:
		u.Deletes = count * whereSelectivity(w)
	default:
		return nil
	}
	fixed := len(w.Preds) > 0
	for _, p := range w.Preds {
		fixed = fixed && p.Op == catalog.Eq && p.Ref.Field == x.Hash[0].Field
	}
	if !fixed {
		u.Supports = append(u.Supports, supportQuery(x, []int{0}, 0, x.Hash, w.Preds))
	}
	return u
}

// insertUpkeep: a new tuple at node n of x joins only along relationships
// the INSERT connects, and only to-one ones (it has no children yet).
func insertUpkeep(w *catalog.Write, x *catalog.Index, n int) *plan.Upkeep {
	u := &plan.Upkeep{Index: x, Node: n, Kind: catalog.Insert, Edge: -1}
	stored := rowAttrs(x)
	for _, e := range x.Graph.Neighbors(n) {
		if e.Nav.Many || !w.LinksNav(e.Nav) {
			return nil
		}
		comp := component(x.Graph, e.To, n)
		var sel []catalog.Attr
		for _, a := range stored {
			if contains(comp, a.Node) && !(a.Node == e.To && a.Field.Key) {
				sel = append(sel, a)
			}
		}
		if len(sel) > 0 {
			u.Supports = append(u.Supports, supportQuery(x, comp, e.To, sel, []catalog.Pred{keyPred(e.Nav.To.ID())}))
		}
	}
	// The new tuple joins the rows its links lead to (1 when x holds only
	// its entity).
	u.Puts = perTuple(x, n)
	return u
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// fixedBy reports whether the write's predicates alone identify the rows of
// x holding the written tuples at node n: every predicate is an equality on
// a key attribute of that node, and they fix every key attribute.
func fixedBy(w *catalog.Write, x *catalog.Index, n int) bool {
	keys := x.KeyAttrs()
	fixed := map[*catalog.Field]bool{}
	for _, p := range w.Preds {
		if p.Op != catalog.Eq || !containsAttr(keys, catalog.Attr{Node: n, Field: p.Ref.Field}) {
			return false
		}
		fixed[p.Ref.Field] = true
	}
	for _, a := range keys {
		if a.Node != n || !fixed[a.Field] {
			return false
		}
	}
	return true
}

func containsAttr(as []catalog.Attr, a catalog.Attr) bool {
	for _, b := range as {
		if b == a {
			return true
		}
	}
	return false
}

// knownByPreds lists the fields of node n fixed by the write's equalities.
func knownByPreds(w *catalog.Write) map[*catalog.Field]bool {
	known := map[*catalog.Field]bool{}
	for _, p := range w.Preds {
		if p.Op == catalog.Eq {
			known[p.Ref.Field] = true
		}
	}
	return known
}

func whereSelectivity(w *catalog.Write) float64 {
	s := 1.0
	for _, p := range w.Preds {
		s *= selectivity(p)
	}
	return s
}

// rowsSupport is the support query of an UPDATE or DELETE: the rows of x
// holding the tuples the write's predicates select, with the attributes
// in need (it also checks predicates the key does not answer). Nil when
// the predicates fix the one row.
func rowsSupport(w *catalog.Write, x *catalog.Index, n int, need []catalog.Attr) *plan.Support {
	if fixedBy(w, x, n) && len(need) == 0 {
		return nil
	}
	if len(need) == 0 {
		// Only the written tuple's own key attributes: read them, which
		// checks the predicates and that the tuple exists.
		for _, a := range x.KeyAttrs() {
			if a.Node == n {
				need = append(need, a)
			}
		}
	}
	return supportQuery(x, allNodes(x), n, need, w.Preds)
}

// updateUpkeep: rows holding a changed field are rewritten; when the field
// is part of x's key the old row is deleted too, and its old values read.
func updateUpkeep(w *catalog.Write, x *catalog.Index, n int) *plan.Upkeep {
	u := &plan.Upkeep{Index: x, Node: n, Kind: catalog.Update, Edge: -1}
	changes := false
	keys := x.KeyAttrs()
	for _, a := range rowAttrs(x) {
		if a.Node == n && w.SetsField(a.Field) {
			changes = true
			if containsAttr(keys, a) {
				u.ChangesKey = true
			}
		}
	}
	if !changes {
		return nil
	}
	rows := x.Entries * whereSelectivity(w)
	u.Puts = rows
	known := knownByPreds(w)
	var need []catalog.Attr
	candidates := keys
	if u.ChangesKey {
		u.Deletes = rows
		candidates = rowAttrs(x)
	}
	for _, a := range candidates {
		if a.Node == n && known[a.Field] {
			continue
		}
		if !u.ChangesKey && a.Node == n && w.SetsField(a.Field) {
			continue
		}
		need = append(need, a)
	}
	if s := rowsSupport(w, x, n, need); s != nil {
		u.Supports = append(u.Supports, s)
	}
	return u
}

func allNodes(x *catalog.Index) []int {
	out := make([]int, len(x.Graph.Nodes))
	for i := range out {
		out[i] = i
	}
	return out
}

// deleteUpkeep: every row holding a deleted tuple goes; its key is read
// unless the predicates fix it.
func deleteUpkeep(w *catalog.Write, x *catalog.Index, n int) *plan.Upkeep {
	u := &plan.Upkeep{Index: x, Node: n, Kind: catalog.Delete, Edge: -1}
	u.Deletes = x.Entries * whereSelectivity(w)
	known := knownByPreds(w)
	var need []catalog.Attr
	for _, a := range x.KeyAttrs() {
		if !(a.Node == n && known[a.Field]) {
			need = append(need, a)
		}
	}
	if s := rowsSupport(w, x, n, need); s != nil {
		u.Supports = append(u.Supports, s)
	}
	return u
}

// connectUpkeep: CONNECT adds the join rows through the new edge, reading
// both sides (after deleting the rows through the to-one side's old
// partner); DISCONNECT deletes them, reading their keys.
func connectUpkeep(w *catalog.Write, x *catalog.Index) []*plan.Upkeep {
	var parts []*plan.Upkeep
	for n, nd := range x.Graph.Nodes {
		if nd.Entity != w.Entity {
			continue
		}
		for _, e := range x.Graph.Neighbors(n) {
			if e.Nav != w.Nav {
				continue
			}
			u := &plan.Upkeep{Index: x, Node: n, Kind: w.Kind, Edge: e.To}
			a, b := component(x.Graph, n, e.To), component(x.Graph, e.To, n)
			rows := joinPer(x, a, n) * joinPer(x, b, e.To)
			attrs := rowAttrs(x)
			if w.Kind == catalog.Disconnect {
				u.Deletes = rows
				attrs = x.KeyAttrs()
			} else {
				u.Puts = rows
				// The to-one side had at most one partner: its rows go.
				one := n
				if e.Nav.Many {
					one = e.To
				}
				u.Replace = supportQuery(x, allNodes(x), one, x.KeyAttrs(), []catalog.Pred{keyPred(x.Graph.Nodes[one].Entity.ID())})
				u.Deletes = perTuple(x, one)
			}
			for _, side := range []struct {
				nodes []int
				root  int
			}{{a, n}, {b, e.To}} {
				var sel []catalog.Attr
				for _, at := range attrs {
					if contains(side.nodes, at.Node) && !(at.Node == side.root && at.Field.Key) {
						sel = append(sel, at)
					}
				}
				if len(sel) > 0 {
					u.Supports = append(u.Supports, supportQuery(x, side.nodes, side.root, sel, []catalog.Pred{keyPred(x.Graph.Nodes[side.root].Entity.ID())}))
				}
			}
			parts = append(parts, u)
		}
	}
	return parts
}

// joinPer is the number of join rows over nodes per tuple of root.
func joinPer(x *catalog.Index, nodes []int, root int) float64 {
	g, _ := catalog.Canon(catalog.Sub{Graph: x.Graph, Root: root, Nodes: nodes})
	return catalog.JoinSize(g) / g.Nodes[0].Entity.Count
}

// QueryKey identifies a support query for sharing between indexes.
func QueryKey(q *catalog.Query) string {
	var sel []string
	for _, r := range q.Select {
		sel = append(sel, q.Graph.DescribeRef(r))
	}
	sort.Strings(sel)
	return catalog.GraphKey(q.Graph) + "|" + strings.Join(sel, ",") + predKey(q)
}

// predKey is the predicates part of QueryKey.
func predKey(q *catalog.Query) string {
	var b strings.Builder
	for _, p := range q.Preds {
		fmt.Fprintf(&b, "|%s%s", q.Graph.DescribeRef(p.Ref), p.Op)
	}
	return b.String()
}

// Covers reports whether support query a answers support query b of the
// same write: the same graph (canonical, so the same node numbers) and
// predicates, and every field b selects among a's. b's answer is then the
// projection of a's, and a write that runs a needs no run of b — the
// advisor's program and the runtime's Write both share a's run so.
// Queries with an order or a limit (not supports) cover nothing.
func Covers(a, b *catalog.Query) bool {
	if a == b {
		return true
	}
	if len(a.OrderBy)+len(b.OrderBy) > 0 || a.Limit != 0 || b.Limit != 0 || a.CondOf != nil || b.CondOf != nil ||
		len(b.Select) > len(a.Select) || catalog.GraphKey(a.Graph) != catalog.GraphKey(b.Graph) || predKey(a) != predKey(b) {
		return false
	}
	for _, r := range b.Select {
		if !slices.Contains(a.Select, r) {
			return false
		}
	}
	return true
}

// treePath lists the nodes on the path between a and b in a tree graph.
func treePath(g *catalog.Graph, a, b int) []int {
	up := func(n int) []int {
		var out []int
		for ; n >= 0; n = g.Nodes[n].Parent {
			out = append(out, n)
		}
		return out
	}
	pa, pb := up(a), up(b)
	onA := map[int]bool{}
	for _, n := range pa {
		onA[n] = true
	}
	var out []int
	lca := -1
	for _, n := range pb {
		out = append(out, n)
		if onA[n] {
			lca = n
			break
		}
	}
	for _, n := range pa {
		if n == lca {
			break
		}
		out = append(out, n)
	}
	return out
}

// rowsQuery returns the query whose answer is x's rows, over x's whole
// graph rooted at node root (the same join; another root may let the
// indexes answer it), selecting every attribute a row holds (not its
// static columns: see partitionQuery), with one equality predicate per
// attribute of eq, on parameter i for eq[i].
func rowsQuery(x *catalog.Index, eq []catalog.Attr, root int) *plan.Support {
	all := allNodes(x)
	g, from := catalog.Canon(catalog.Sub{Graph: x.Graph, Root: root, Nodes: all})
	to := map[int]int{}
	for i, v := range from {
		to[v] = i
	}
	q := &catalog.Query{Graph: g}
	for _, a := range rowAttrs(x) {
		q.Select = appendUnique(q.Select, catalog.FieldRef{Node: to[a.Node], Field: a.Field})
	}
	for i, a := range eq {
		q.Preds = append(q.Preds, catalog.Pred{Ref: catalog.FieldRef{Node: to[a.Node], Field: a.Field}, Op: catalog.Eq, Value: &lang.Param{Index: i}})
	}
	return &plan.Support{Query: q, From: from}
}

// partitionQuery returns the query whose answer is the partition rows of
// x (which has static columns): its root's key and static columns; with
// keyed, for the root whose key is parameter 0.
func partitionQuery(x *catalog.Index, keyed bool) *plan.Support {
	sel := append([]catalog.Attr{{Node: 0, Field: x.Graph.Nodes[0].Entity.ID()}}, x.Static...)
	var preds []catalog.Pred
	if keyed {
		preds = append(preds, keyPred(x.Graph.Nodes[0].Entity.ID()))
	}
	return supportQuery(x, []int{0}, 0, sel, preds)
}
