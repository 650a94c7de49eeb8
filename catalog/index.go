// Column families and secondary indexes of an advised schema.

package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/types"
)

// Kind distinguishes column families from secondary indexes.
type Kind uint8

// Index kinds.
const (
	CF Kind = iota + 1
	SI
)

func (k Kind) String() string {
	if k == SI {
		return "SI"
	}
	return "CF"
}

// Attr is a field of one node of an index's graph.
type Attr struct {
	Node  int
	Field *Field
}

// Index is a column family or a secondary index.
type Index struct {
	Kind  Kind
	Graph *Graph
	Hash  []Attr // partition key, sorted by name
	Order []Attr // clustering key, in key order
	// Static (CFs; nil: none) are static columns, sorted by name:
	// attributes of the root entity, which alone forms the partition key,
	// stored once per partition in its partition row (layout.Static), so
	// that its rows do not repeat them and a write of the root changes one
	// row per partition. The partition row exists for every tuple of the
	// root, with or without rows joining it.
	Static []Attr
	Extra  []Attr // value attributes, sorted by name
	// BaseOrder (SIs; nil: none) are the clustering attributes of the
	// SI's base CF that no entity key of the graph gives, in the base's
	// clustering order. An SI row holds them, as Cassandra's index
	// entries hold the base row's whole primary key, so that the base
	// lookup after the SI reads exactly the rows it points at (a point
	// lookup), not a whole partition filtered by the client.
	BaseOrder []Attr
	Key       string // canonical identity
	Name      string // readable, unique within one advisor run
	// SaltBuckets (CFs, 0: none) prefixes every row key with a bucket byte
	// hashed from the partition key (Phoenix SALT_BUCKETS, seed 001): rows
	// spread over N key ranges, a partition stays one range. Physical only:
	// it changes neither the identity nor the cost.
	SaltBuckets int
	// PartitionBuckets (CFs with a clustering key, 0: none) spreads each
	// partition over N buckets (Cassandra's bucketing, seed 001/002): the
	// leading bucket byte is hashed from the whole key, so it joins the
	// partition key of the stored table. A stored partition holds about
	// 1/N of a partition's rows (PartitionBytes); a read of one partition
	// reads N (the planner costs N partitions). Never with SaltBuckets,
	// SplitOn or Static. Physical only: it does not change the identity.
	PartitionBuckets int
	// SplitOn (CFs, nil: none) lists the points the table is pre-split at
	// (Phoenix SPLIT ON), sorted by Key; never with SaltBuckets. Physical
	// only, like SaltBuckets.
	SplitOn []SplitPoint

	Entries    float64 // rows
	EntrySize  float64 // bytes per row
	Size       float64 // bytes
	Partitions float64 // distinct partition keys

	// Relation is the client relation whose DEFINE SCHEMA defined x, nil
	// for an index of an advised schema. A client index is a CF over its
	// relation alone, stored in the layout its definition writes by hand.
	Relation *Relation
	// WriteOnly (client layouts only: an advised schema keeps its state in
	// Schema.WriteOnly) marks a layout being added or dropped online
	// (WriteOnlyLayoutsDirective): every write of its relation keeps it,
	// no plan reads it.
	WriteOnly bool
	layout    *layout.Layout // built once, by ParseSchema or DEFINE SCHEMA
}

// SplitPoint is one SPLIT ON point of a CF: values for the leading
// attributes of its partition key, in Hash order and of their attributes'
// types, and Key, their encoding. Key is the row-key prefix of every
// partition starting with those values (exec/doc.go): each value in
// keyenc's ordered, nullable encoding, as the engine writes the partition
// key of an unsalted CF.
type SplitPoint struct {
	Values []types.Value
	Key    []byte
}

// RowAttrs lists the attributes of a row of x in the order its layout
// stores them: the key attributes (KeyAttrs), then the other stored ones.
func (x *Index) RowAttrs() []Attr {
	out := x.KeyAttrs()
	for _, a := range x.Stored() {
		if !containsAttr(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Layout is x's physical layout: the one its DEFINE SCHEMA writes for a
// client index; for an advised index, layout.Default (defaultLayout). It is
// nil only for an index the catalog did not build (the advisor's
// candidates, which are costed, never stored).
func (x *Index) Layout() *layout.Layout { return x.layout }

// defaultLayout is an advised index's layout (layout.Default): its table
// x.Name, row key [salt][partition key][clustering key], one cell per value
// named by AttrName, tuples aligned with RowAttrs. The table is pre-split
// at each salt bucket (Phoenix's pre-split) or at the SPLIT ON keys.
func (x *Index) defaultLayout() (*layout.Layout, error) {
	attrs := x.RowAttrs()
	nkey := len(x.KeyAttrs())
	las := make([]layout.Attr, len(attrs))
	for i, a := range attrs {
		las[i] = layout.Attr{Name: x.AttrName(a), Type: a.Field.Type, Key: i < nkey, Nullable: true, Static: containsAttr(x.Static, a)}
		if i == 0 && x.OnElements() {
			// Its entries are by element (a set's) or key (a map's).
			las[i].Type = elementType(a.Field.Type)
		}
	}
	var splits [][]byte
	for _, sp := range x.SplitOn {
		splits = append(splits, sp.Key)
	}
	return layout.Default(x.Name, las, len(x.Hash), nkey, x.SaltBuckets, x.PartitionBuckets, splits)
}

// OnElements reports whether x is a secondary index on the elements of a
// collection stored one cell per element — a SET's elements or a MAP's
// keys, as Cassandra's index on a collection: a lookup of a value finds
// the rows whose collection holds it (CONTAINS, CONTAINS KEY), one entry
// per element. The store keeps it (Schema.Kept).
func (x *Index) OnElements() bool {
	return x.Kind == SI && perElement(x.Hash[0].Field.Type)
}

// elementType is the type of what an index on the elements of collection
// type t looks up: a set's element, a map's key.
func elementType(t types.Type) types.Type {
	if t.Kind() == types.MapKind {
		return t.Key()
	}
	return t.Elem()
}

// ElementOp is the predicate an index on the elements of a collection of
// type t answers: CONTAINS for a set, CONTAINS KEY for a map.
func ElementOp(t types.Type) Op {
	if t.Kind() == types.MapKind {
		return ContainsKey
	}
	return Contains
}

// ContainsSelectivity is the fraction of rows a CONTAINS (KEY) predicate
// keeps, as a range's (NoSE's assumption: the model counts no elements).
// The planner filters with it, and an index on elements returns that
// fraction of its base's rows per lookup.
const ContainsSelectivity = 0.1

// OwnedBy reports whether x's rows are the tuples of node n's entity: each
// row joins one tuple of n with one tuple of every other node, reached
// along to-one navigations (so the row lives and dies with that tuple).
func (x *Index) OwnedBy(n int) bool {
	seen := map[int]bool{n: true}
	stack := []int{n}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, ed := range x.Graph.Neighbors(k) {
			if !seen[ed.To] && !ed.Nav.Many {
				seen[ed.To] = true
				stack = append(stack, ed.To)
			}
		}
	}
	return len(seen) == len(x.Graph.Nodes)
}

// AttrName writes an attribute as path.field (items.bids.date).
func (x *Index) AttrName(a Attr) string {
	return x.Graph.Describe(a.Node) + "." + a.Field.Name
}

// Attrs lists every attribute: partition key, clustering key, static
// columns, values, and an SI's copy of its base's clustering key.
func (x *Index) Attrs() []Attr {
	out := make([]Attr, 0, len(x.Hash)+len(x.Order)+len(x.Static)+len(x.Extra)+len(x.BaseOrder))
	out = append(out, x.Hash...)
	out = append(out, x.Order...)
	out = append(out, x.Static...)
	out = append(out, x.Extra...)
	return append(out, x.BaseOrder...)
}

// Has reports whether the index stores attribute a.
func (x *Index) Has(a Attr) bool {
	return slices.Contains(x.Hash, a) || slices.Contains(x.Order, a) || slices.Contains(x.Static, a) || slices.Contains(x.Extra, a) ||
		slices.Contains(x.BaseOrder, a)
}

// IsStatic reports whether a is one of x's static columns.
func (x *Index) IsStatic(a Attr) bool { return slices.Contains(x.Static, a) }

// InKey reports whether a is in the partition or clustering key.
func (x *Index) InKey(a Attr) bool {
	for _, b := range x.Hash {
		if b == a {
			return true
		}
	}
	for _, b := range x.Order {
		if b == a {
			return true
		}
	}
	return false
}

// KeyedBy reports whether x is a column family of entity e alone
// partitioned by e's key alone: a tuple of e exists exactly when x has a
// partition under its key.
func (x *Index) KeyedBy(e *Entity) bool {
	return x.Kind == CF && len(x.Graph.Nodes) == 1 && x.Graph.Nodes[0].Entity == e &&
		len(x.Hash) == 1 && x.Hash[0].Field == e.ID()
}

// RowsPerPartition is the average number of rows of one partition.
func (x *Index) RowsPerPartition() float64 { return x.Entries / x.Partitions }

// PartitionBytes is the average size of one stored partition, in bytes
// (0 for an index with no rows): with partition buckets, of one bucket of
// a partition.
func (x *Index) PartitionBytes() float64 {
	if x.Partitions <= 0 {
		return 0
	}
	return x.Size / (x.Partitions * x.BucketsPerPartition())
}

// BucketsPerPartition is the average number of stored partitions one
// partition of x spreads over: 1, or with partition buckets N, fewer when
// a partition has fewer rows than buckets.
func (x *Index) BucketsPerPartition() float64 {
	if x.PartitionBuckets == 0 {
		return 1
	}
	return max(1, min(float64(x.PartitionBuckets), x.RowsPerPartition()))
}

// PartitionWarning says why x's partitions deserve a look, or "": its
// average partition (from the model's statistics) is over a tenth of
// MaxPartitionBytes — Cassandra advises under 100 MB and ideally under
// 10 MB — so a skewed key could pass the limit. advise and EXPLAIN print
// it.
func (x *Index) PartitionWarning() string {
	if p := x.PartitionBytes(); p > MaxPartitionBytes/10 {
		return fmt.Sprintf("partitions average %s (%.4g rows): a skewed key can pass %s (verify reports the largest stored)", units.Format(p), x.RowsPerPartition()/x.BucketsPerPartition(), units.Format(MaxPartitionBytes))
	}
	return ""
}

// MaxPartitionBytes is Cassandra's guidance for the largest partition
// (100 MB): beyond it, compaction, repair and reads of the partition
// suffer, and Bigtable rows of that size are refused. The advisor refuses
// candidates whose average partition exceeds it, unless told otherwise;
// verify flags stored partitions over it.
const MaxPartitionBytes = 100e6

// Sub is a connected set of nodes of a query graph with a chosen root: the
// shape of an index before canonicalization.
type Sub struct {
	Graph *Graph
	Root  int
	Nodes []int // includes Root
}

// Canon builds the canonical graph of sub: the nodes reachable from Root
// inside Nodes, children sorted by navigation name. It returns the graph
// and, for each of its nodes, the query-graph node it came from.
func Canon(sub Sub) (*Graph, []int) {
	in := map[int]bool{}
	for _, n := range sub.Nodes {
		in[n] = true
	}
	g := &Graph{Nodes: []Node{{Entity: sub.Graph.Nodes[sub.Root].Entity, Parent: -1}}}
	from := []int{sub.Root}
	seen := map[int]bool{sub.Root: true}
	for i := 0; i < len(from); i++ {
		es := sub.Graph.Neighbors(from[i])
		sort.Slice(es, func(a, b int) bool { return es[a].Nav.Name < es[b].Nav.Name })
		for _, e := range es {
			if !in[e.To] || seen[e.To] {
				continue
			}
			seen[e.To] = true
			g.Nodes = append(g.Nodes, Node{Entity: e.Nav.To, Parent: i, Via: e.Nav})
			from = append(from, e.To)
		}
	}
	for i := range g.Nodes {
		g.Nodes[i].Alias = g.Describe(i)
	}
	return g, from
}

// GraphKey is the canonical text of a graph: its node paths.
func GraphKey(g *Graph) string {
	return strings.Join(nodePaths(g), ",")
}

// nodePaths is g.Describe of every node.
func nodePaths(g *Graph) []string {
	paths := make([]string, len(g.Nodes))
	for i := range g.Nodes {
		paths[i] = g.Describe(i)
	}
	return paths
}

// Finish sorts the unordered parts, drops duplicates between the parts,
// computes the identity and the size estimates. Call it once the Graph and
// attributes are set.
func (x *Index) Finish() {
	// An attribute in an earlier part, or earlier in its part, goes
	// (parts are short: a scan beats a map).
	var seen []Attr
	dedupe := func(as []Attr) []Attr {
		out := as[:0:0]
		for _, a := range as {
			if !slices.Contains(seen, a) {
				seen = append(seen, a)
				out = append(out, a)
			}
		}
		return out
	}
	// Each node's path once: AttrName is paths[a.Node] + "." + the field.
	paths := nodePaths(x.Graph)
	name := func(a Attr) string { return paths[a.Node] + "." + a.Field.Name }
	sortAttrs(x.Hash, name)
	x.Hash = dedupe(x.Hash)
	x.Order = dedupe(x.Order)
	sortAttrs(x.Static, name)
	x.Static = dedupe(x.Static)
	if len(x.Static) == 0 {
		x.Static = nil
	}
	sortAttrs(x.Extra, name)
	x.Extra = dedupe(x.Extra)
	x.BaseOrder = dedupe(x.BaseOrder) // in the base's order
	if len(x.BaseOrder) == 0 {
		x.BaseOrder = nil
	}
	var b strings.Builder
	b.WriteString(x.Kind.String() + "[" + strings.Join(paths, ",") + "]")
	for _, part := range [][]Attr{x.Hash, x.Order, x.Extra} {
		b.WriteByte('|')
		for i, a := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(paths[a.Node])
			b.WriteByte('.')
			b.WriteString(a.Field.Name)
		}
	}
	if len(x.Static) > 0 {
		// Only then: every other index keeps the identity it had.
		b.WriteString("|static:")
		for i, a := range x.Static {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name(a))
		}
	}
	if len(x.BaseOrder) > 0 {
		// Only then, as for static columns.
		b.WriteString("|base:")
		for i, a := range x.BaseOrder {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name(a))
		}
	}
	x.Key = b.String()
	x.EntrySize = 0
	for _, part := range [][]Attr{x.Hash, x.Order, x.Extra, x.BaseOrder} {
		for _, a := range part {
			x.EntrySize += a.Field.Size
		}
	}
	x.Entries, x.Size = x.SizeWith(func(e *Entity) float64 { return e.Count })
	p := 1.0
	for _, a := range x.Hash {
		p *= a.Field.Cardinality
	}
	if x.OnElements() {
		// A lookup returns the rows CONTAINS keeps.
		p = 1 / ContainsSelectivity
	}
	x.Partitions = min(max(p, 1), x.Entries)
}

// sortAttrs sorts as by name, each name made once.
func sortAttrs(as []Attr, name func(Attr) string) {
	if len(as) < 2 {
		return
	}
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = name(a)
	}
	sort.Sort(attrsByName{as, names})
}

type attrsByName struct {
	as    []Attr
	names []string
}

func (s attrsByName) Len() int           { return len(s.as) }
func (s attrsByName) Less(i, j int) bool { return s.names[i] < s.names[j] }
func (s attrsByName) Swap(i, j int) {
	s.as[i], s.as[j] = s.as[j], s.as[i]
	s.names[i], s.names[j] = s.names[j], s.names[i]
}

// SizeWith returns x's entries and bytes (Entries and Size) were each
// entity to hold count(entity) tuples instead of its Count, its fields'
// sizes as they are: the model's estimate for data of another size (the
// tuples a store holds, for a migration).
func (x *Index) SizeWith(count func(*Entity) float64) (entries, bytes float64) {
	entries = count(x.Graph.Nodes[0].Entity)
	for _, nd := range x.Graph.Nodes[1:] {
		if nd.Via.Many {
			entries *= count(nd.Via.To) / count(nd.Via.From)
		}
	}
	bytes = entries * x.EntrySize
	if len(x.Static) > 0 {
		// One partition row per root tuple: its key and static columns.
		st := x.Hash[0].Field.Size
		for _, a := range x.Static {
			st += a.Field.Size
		}
		bytes += count(x.Graph.Nodes[0].Entity) * st
	}
	return entries, bytes
}

// JoinSize is the number of tuples of the join a graph describes: the
// root's count times the fan-out of every navigation.
func JoinSize(g *Graph) float64 {
	n := g.Nodes[0].Entity.Count
	for _, nd := range g.Nodes[1:] {
		n *= nd.Via.Fanout()
	}
	return n
}

// Embeddings lists the ways x's graph maps onto query graph q: for each,
// the q node of every x node.
func (x *Index) Embeddings(q *Graph) [][]int {
	var out [][]int
	for v := range q.Nodes {
		if q.Nodes[v].Entity != x.Graph.Nodes[0].Entity {
			continue
		}
		m := make([]int, len(x.Graph.Nodes))
		m[0] = v
		ok := true
		used := map[int]bool{v: true}
		for i := 1; i < len(x.Graph.Nodes) && ok; i++ {
			nd := x.Graph.Nodes[i]
			t := q.Step(m[nd.Parent], nd.Via)
			if t < 0 || used[t] {
				ok = false
				break
			}
			used[t] = true
			m[i] = t
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func (x *Index) String() string {
	if x.Name != "" {
		return x.Name
	}
	return x.Key
}

// Describe writes the index in the seed's notation:
// CF([users.id] [users.firstname] → [users.lastname]) or SI([…] → […]).
func (x *Index) Describe() string {
	names := func(as []Attr) string {
		s := make([]string, len(as))
		for i, a := range as {
			s[i] = x.AttrName(a)
		}
		return strings.Join(s, ", ")
	}
	if x.Kind == SI {
		if len(x.BaseOrder) > 0 {
			return fmt.Sprintf("SI([%s] → [%s] [%s])", names(x.Hash), names(x.Extra), names(x.BaseOrder))
		}
		return fmt.Sprintf("SI([%s] → [%s])", names(x.Hash), names(x.Extra))
	}
	if len(x.Static) > 0 {
		return fmt.Sprintf("CF([%s] [%s] static [%s] → [%s])", names(x.Hash), names(x.Order), names(x.Static), names(x.Extra))
	}
	return fmt.Sprintf("CF([%s] [%s] → [%s])", names(x.Hash), names(x.Order), names(x.Extra))
}

// KeyAttrs lists the attributes that identify one row of x. For a CF they
// are its partition and clustering keys. An SI row points at one row of its
// base CF, as Cassandra's index tables do: the indexed attribute, the base
// partition key, the key of every entity of the graph (which identifies
// the base row), then the rest of the base's clustering key (BaseOrder:
// with them the row holds the base row's whole key), each attribute once.
func (x *Index) KeyAttrs() []Attr {
	out := append(append([]Attr(nil), x.Hash...), x.Order...)
	if x.Kind == CF {
		return out
	}
	out = append(out, x.Extra...)
	for n, nd := range x.Graph.Nodes {
		a := Attr{Node: n, Field: nd.Entity.ID()}
		if !containsAttr(out, a) {
			out = append(out, a)
		}
	}
	for _, a := range x.BaseOrder {
		if !containsAttr(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// SetBaseOrder makes SI x hold the key of its base CF: BaseOrder is the
// base's clustering attributes that x's other key attributes do not hold.
// Call Finish after it.
func (x *Index) SetBaseOrder(base *Index) {
	x.BaseOrder = nil
	x.BaseOrder = slices.DeleteFunc(slices.Clone(base.Order), func(a Attr) bool { return containsAttr(x.KeyAttrs(), a) })
}

// Stored lists every attribute a row of x holds: a CF's Attrs, an SI's
// KeyAttrs.
func (x *Index) Stored() []Attr {
	if x.Kind == SI {
		return x.KeyAttrs()
	}
	return x.Attrs()
}

func containsAttr(as []Attr, a Attr) bool {
	for _, b := range as {
		if b == a {
			return true
		}
	}
	return false
}
