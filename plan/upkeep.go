package plan

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/catalog"
)

// Upkeep is how one write keeps one index correct at one occurrence of the
// written entity (node Node of the index's graph): which rows it puts or
// deletes, and the support queries that must run first to know them. The
// advisor costs it; the runtime executes it.
//
// What the runtime does, per Kind (every support query binds its one
// parameter, an equality on its root's key, or the write's own predicates):
//   - Insert: the new tuple joins, along every neighbour of Node (each a
//     to-one relationship the INSERT connects), the rows of that side of
//     the graph: the support rooted at the neighbour, bound to the linked
//     key (a side with nothing to read beyond that key has no support).
//     The rows put are the product of the sides.
//   - Update: the support (rooted at Node, the write's predicates) finds
//     the rows holding the changed tuples and the key values the
//     predicates do not fix. Without ChangesKey the changed cells are
//     rewritten in place; with it the support reads whole rows, which are
//     deleted and put again under their new key. No support: the
//     predicates fix the one row.
//   - Delete: as Update, and the rows are deleted.
//   - Connect, Disconnect: the rows through the relationship between Node
//     and Edge are the product of the two sides (Sides[0] rooted at Node,
//     Sides[1] at Edge). Connect first deletes the rows holding the to-one
//     side's tuple (Replace), since it had at most one partner before.
type Upkeep struct {
	Index *catalog.Index
	Node  int
	Kind  catalog.WriteKind
	// Edge is the node across the written relationship (Connect and
	// Disconnect); -1 otherwise.
	Edge       int
	ChangesKey bool
	// Static: the part keeps the index's static columns (Node is its root,
	// the written entity), in the partition row of each written tuple:
	// Insert puts it, Update changes the static cells the write sets,
	// Delete deletes it; Supports (at most one, over the root) find the
	// tuples when the write's predicates do not fix the key.
	Static bool
	// Supports: Insert, one per neighbour that needs reading; Update and
	// Delete, at most one; Connect/Disconnect, the sides that need reading.
	Supports []*Support
	// Replace (Connect only) reads the keys of the rows holding the tuple
	// on the to-one side of the relationship, which are deleted first.
	Replace *Support
	// Estimates: rows put and deleted, and the cost of the puts and
	// deletes (the supports' plans carry their own).
	Puts, Deletes, WriteCost float64
}

// Support is one support query of an upkeep: a query over part of the
// index's graph, the index node of each of its nodes, and the plan the
// advisor chose for it.
type Support struct {
	Query *catalog.Query
	From  []int // query node → index node; From[0] is the support's root
	Plan  *Query
}

// Describe writes the upkeep on one line.
func (u *Upkeep) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s at %s", u.Kind, u.Index.Name, u.Index.Graph.Describe(u.Node))
	if u.ChangesKey {
		b.WriteString(" (moves rows)")
	}
	if u.Static {
		b.WriteString(" (static columns)")
	}
	fmt.Fprintf(&b, ": puts %.4g, deletes %.4g, %d support queries", u.Puts, u.Deletes, len(u.Supports))
	return b.String()
}

// AllSupports lists the supports, then Replace.
func (u *Upkeep) AllSupports() []*Support {
	if u.Replace == nil {
		return u.Supports
	}
	return append(append([]*Support(nil), u.Supports...), u.Replace)
}
