package planner

import (
	"slices"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
)

// Check is one side of a write that connects a tuple to an entity, which
// must exist (as load refuses a dangling foreign key). Where an upkeep of
// the write reads that entity by its key alone (ReadsLinked: its empty
// answer fails the write), nothing more is needed; otherwise the engine
// looks the entity up in a column family that can tell (CanCheck), the
// lookups of one write issued together, and the advisor prices that one
// round trip (NeedsCheck; its integer program states the same rule as
// rows).
type Check struct {
	Entity *catalog.Entity
	Value  lang.Expr    // its key, in terms of the write's arguments
	Nav    *catalog.Nav // the link (INSERT … AND CONNECT TO); nil: checked whatever the upkeeps read
}

// Checks lists the sides of w that may need a check: an INSERT's links;
// a CONNECT's target, and the written entity where its key is given.
func Checks(w *catalog.Write) []Check {
	var out []Check
	switch w.Kind {
	case catalog.Insert:
		for _, l := range w.Links {
			out = append(out, Check{l.Nav.To, l.Value, l.Nav})
		}
	case catalog.Connect:
		out = append(out, Check{w.Nav.To, w.Target, nil})
		for _, p := range w.Preds {
			if p.Op == catalog.Eq && p.Ref.Field == w.Entity.ID() {
				out = append(out, Check{w.Entity, p.Value, nil})
			}
		}
	}
	return out
}

// ReadsLinked reports whether upkeep u reads, by its key alone, the entity
// a new tuple links to along nav: a support query of that entity alone,
// rooted at the neighbour across nav.
func ReadsLinked(u *plan.Upkeep, nav *catalog.Nav) bool {
	if nav == nil {
		return false
	}
	for _, nb := range u.Index.Graph.Neighbors(u.Node) {
		if nb.Nav != nav {
			continue
		}
		for _, sp := range u.Supports {
			if sp.From[0] == nb.To {
				// The first support rooted there is the one the engine runs.
				if len(sp.Query.Graph.Nodes) == 1 {
					return true
				}
				break
			}
		}
	}
	return false
}

// CanCheck reports whether index x can tell whether a tuple of e exists
// with one lookup: a column family of e alone keyed by its key, or one
// with static columns rooted at e (it keeps a partition row for every
// tuple of its root); not one whose partitions are spread over buckets.
// Of several, the engine prefers one with no clustering key.
func CanCheck(x *catalog.Index, e *catalog.Entity) bool {
	return x.PartitionBuckets == 0 && (x.KeyedBy(e) || x.Kind == catalog.CF && len(x.Static) > 0 && x.Graph.Nodes[0].Entity == e)
}

// NeedsCheck reports whether write w, kept by upkeeps ups over a schema's
// indexes, makes the engine look up an entity it connects to: some side
// no upkeep reads (ReadsLinked), which an index of the schema can check
// (CanCheck).
func NeedsCheck(w *catalog.Write, ups []*plan.Upkeep, indexes []*catalog.Index) bool {
	for _, ch := range Checks(w) {
		if slices.ContainsFunc(ups, func(u *plan.Upkeep) bool { return ReadsLinked(u, ch.Nav) }) {
			continue
		}
		if slices.ContainsFunc(indexes, func(x *catalog.Index) bool { return CanCheck(x, ch.Entity) }) {
			return true
		}
	}
	return false
}
