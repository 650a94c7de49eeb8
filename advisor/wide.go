package advisor

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kvschema/kvschema/catalog"
)

// The wide enumeration is an oracle for tests (TestWideOptimumProperty):
// on small models it enumerates the design space of the package doc by
// brute force, attribute by attribute, rather than by the default
// enumeration's reasoning about which candidates a plan can use, and adds
// the default candidates (so its optimum is never above the default one);
// the same planner, cost model and integer program then find the wide
// optimum, which the default one must equal. For every query (and support
// query) and every connected part of its graph:
//   - partition keys: every non-empty set of the part's equality
//     attributes, of one entity or several (rooted at the entity of the
//     first), and the key of each entity of the part;
//   - every other attribute the query reads on the part that an
//     equality, range or ORDER BY of the query is on may be in the
//     clustering key, independently; of each entity, the attributes the
//     query reads outside the key are all among the values, or all but
//     its equality attributes (an earlier step's equality fixes them), or
//     none (a later lookup fetches them); every entity's key not in the
//     partition key is in the clustering key (a row per tuple of the
//     join, as the size estimate assumes);
//   - the clustering key ordered as a plan can use it: equality
//     attributes, the range attribute, the ORDER BY attributes, the keys;
//   - values of CFs with the same graph, partition key and clustering key
//     closed under union (seed 000 §3.2 for any subset of the CFs, not
//     only all of them), up to wideMaxMerged value sets per group;
//   - with SIs, for every CF partitioned by an entity's key k and every
//     other attribute f it stores, SI(f → k) over its graph (its base is
//     that CF).
//
// Outside it, as outside the design space: SIs whose value is not an
// entity's key (Algorithm 1's line 14, see the package doc); partition
// keys of attributes no equality binds (no plan's first step can read
// them, and later steps and SI bases are partitioned by a key);
// attributes the query does not read; part of the fields the query reads
// of an entity (bar its equality attributes) among a CF's values; and
// clustering keys holding an attribute the query only selects, or in
// another order. A plan reads such a CF as it reads one in the space (a
// lookup fetching part of an entity's fields counts for none), but the
// cost model can still prefer it: a write's support query for a CF
// selects its key attributes (and, when the row moves, its values), and
// two CFs whose support queries are the same share one. A wide mode with
// these found schemas 0.02–1.5% cheaper than the default optimum on four
// instances that way (a delete of p, or an update of a partition key,
// reading p's row once for two CFs instead of twice); the saving is the
// upkeep's to make, by sharing support queries with the same predicates,
// not the enumeration's.
const (
	// wideMaxNodes bounds the entities of a query's graph.
	wideMaxNodes = 3
	// wideMaxAttrs bounds the non-key attributes a query reads of one
	// entity.
	wideMaxAttrs = 4
	// wideMaxMerged bounds the value sets one group's union closure
	// reaches (beyond, the union of all is added, as by merge).
	wideMaxMerged = 64
)

// errWide says a query is beyond the wide enumeration's bounds.
type errWide struct{ q *catalog.Query }

func (e errWide) Error() string {
	return fmt.Sprintf("wide enumeration: %s is beyond its bounds (%d entities, %d attributes of each)", e.q.Describe(), wideMaxNodes, wideMaxAttrs)
}

// forQueryWide adds every candidate of the wide space for q (see above).
func (e *enumerator) forQueryWide(q *catalog.Query) {
	s := shapeOf(q)
	g := q.Graph
	if len(g.Nodes) > wideMaxNodes {
		e.err = errWide{q}
		return
	}
	var eqs []catalog.FieldRef // in predicate order
	for _, p := range q.Preds {
		if p.Op == catalog.Eq && !slices.Contains(eqs, p.Ref) {
			eqs = append(eqs, p.Ref)
		}
	}
	for v := range g.Nodes {
		n := 0
		for _, f := range s.needed[v] {
			if f != g.Nodes[v].Entity.ID() {
				n++
			}
		}
		if n > wideMaxAttrs {
			e.err = errWide{q}
			return
		}
	}
	for _, nodes := range subtrees(g) {
		in := map[int]bool{}
		for _, v := range nodes {
			in[v] = true
		}
		var keys, attrs, partEq []catalog.FieldRef
		for _, v := range nodes {
			id := g.Nodes[v].Entity.ID()
			keys = append(keys, catalog.FieldRef{Node: v, Field: id})
			for _, f := range s.needed[v] {
				if f != id {
					attrs = append(attrs, catalog.FieldRef{Node: v, Field: f})
				}
			}
		}
		for _, r := range eqs {
			if in[r.Node] {
				partEq = append(partEq, r)
			}
		}
		type pkey struct {
			root int
			hash []catalog.FieldRef
		}
		var pks []pkey
		for mask := 1; mask < 1<<len(partEq); mask++ {
			var h []catalog.FieldRef
			for i, r := range partEq {
				if mask&(1<<i) != 0 {
					h = append(h, r)
				}
			}
			pks = append(pks, pkey{h[0].Node, h})
		}
		for _, k := range keys {
			pks = append(pks, pkey{k.Node, []catalog.FieldRef{k}})
		}
		for _, pk := range pks {
			var free, fixed []catalog.FieldRef // non-key attributes; keys in the clustering key
			for _, r := range attrs {
				if !slices.Contains(pk.hash, r) {
					free = append(free, r)
				}
			}
			for _, k := range keys {
				if !slices.Contains(pk.hash, k) {
					fixed = append(fixed, k)
				}
			}
			// Each free attribute a predicate or the order can use in the
			// clustering key is there or not; each entity's other free
			// attributes are all among the values, or those but its
			// equality attributes (an earlier step's equality fixes
			// them), or none (fields a later lookup fetches).
			var usable []catalog.FieldRef
			for _, r := range free {
				if keyUse(s, r) {
					usable = append(usable, r)
				}
			}
			for ckMask := 0; ckMask < 1<<len(usable); ckMask++ {
				var ck []catalog.FieldRef
				for i, r := range usable {
					if ckMask&(1<<i) != 0 {
						ck = append(ck, r)
					}
				}
				for code := 0; code < pow3(len(nodes)); code++ {
					var vals []catalog.FieldRef
					c := code
					for _, v := range nodes {
						mode := c % 3
						c /= 3
						for _, r := range free {
							if r.Node != v || slices.Contains(ck, r) || mode == 0 || mode == 2 && slices.Contains(s.eq[v], r.Field) {
								continue
							}
							vals = append(vals, r)
						}
					}
					e.add(build(catalog.CF, g, nodes, pk.root, pk.hash, clusteringOrder(append(append([]catalog.FieldRef(nil), ck...), fixed...), s), vals))
				}
			}
		}
	}
}

// keyUse reports whether q's equality, range or order is on r: the
// attributes a clustering key can serve.
func keyUse(s *shape, r catalog.FieldRef) bool {
	return slices.Contains(s.eq[r.Node], r.Field) || s.rng != nil && *s.rng == r || slices.Contains(s.order, r)
}

func pow3(n int) int {
	p := 1
	for ; n > 0; n-- {
		p *= 3
	}
	return p
}

// clusteringOrder orders clustering attributes ck as a plan can use
// them: equality attributes (by entity, then name), the range attribute,
// the ORDER BY attributes in their order, the entities' keys.
func clusteringOrder(ck []catalog.FieldRef, s *shape) []catalog.FieldRef {
	rank := func(r catalog.FieldRef) int {
		switch {
		case slices.Contains(s.eq[r.Node], r.Field):
			return 0
		case s.rng != nil && *s.rng == r:
			return 1
		case slices.Contains(s.order, r):
			return 2 + slices.Index(s.order, r)
		}
		return 2 + len(s.order) // a key
	}
	out := append([]catalog.FieldRef(nil), ck...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Field.Name < out[j].Field.Name
	})
	return out
}

// mergeWide closes the values of each group of CFs with the same graph,
// partition key and clustering key under union.
func (e *enumerator) mergeWide() {
	order, groups := e.keyGroups()
	for _, k := range order {
		grp := groups[k]
		seen := map[string]bool{}
		for _, x := range grp {
			seen[x.Key] = true
		}
		for i := 0; i < len(grp) && len(grp) < wideMaxMerged; i++ {
			for j := 0; j < i && len(grp) < wideMaxMerged; j++ {
				u := union(grp[i], grp[j])
				u.Finish()
				if !seen[u.Key] {
					seen[u.Key] = true
					grp = append(grp, e.add(u))
				}
			}
		}
		if len(grp) >= wideMaxMerged {
			e.add(union(grp...))
		}
	}
}

// secondaryWide adds, for every CF partitioned by an entity's key k and
// every other attribute f it stores, SI(f → k) over its graph.
func (e *enumerator) secondaryWide() {
	for _, x := range append([]*catalog.Index(nil), e.list...) {
		if x.Kind != catalog.CF || len(x.Hash) != 1 {
			continue
		}
		k := x.Hash[0]
		if k.Field != x.Graph.Nodes[k.Node].Entity.ID() {
			continue
		}
		for _, f := range append(append([]catalog.Attr(nil), x.Order...), x.Extra...) {
			if t := f.Field.Type; t.IsCollection() && !t.IsFrozen() && (!e.localSIs || len(x.Static) > 0) {
				continue // an index on elements is a local index only
			}
			e.add(siCarriedBy(x, f, k))
		}
	}
}
