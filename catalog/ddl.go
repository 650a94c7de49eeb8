package catalog

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Schema is a set of named indexes over one model: what DEFINE COLUMN
// FAMILY and DEFINE SECONDARY INDEX statements describe, and what the
// advisor recommends. Base maps each SI to the CF it is defined on.
type Schema struct {
	Indexes []*Index
	Base    map[*Index]*Index
	// Local maps each secondary index the store keeps as a local index
	// (store.Indexer) to its base column family, whose table declares it
	// (LocalIndex); nil when the store keeps none (Advised.KeepLocal).
	// Such an index has no table: the store maintains it in the base's
	// write path, and one read through it returns base rows.
	Local map[*Index]*Index
	// WriteOnly holds the indexes a migration is building or dropping
	// (WriteOnlyDirective): every write keeps them, no plan reads them.
	WriteOnly map[*Index]bool
}

// KeepLocal sets Local: with on, every secondary index that can be a local
// index is one (a store that keeps local indexes runs s); else none is.
func (s *Schema) KeepLocal(on bool) {
	s.Local = nil
	if on {
		s.Local = s.localBases()
	}
}

// Kept checks that every secondary index of s has somewhere to live: an
// index on a collection's elements (Index.OnElements) only as a local
// index (s.Local), whose entries the store keeps cell by cell; the engine
// keeps no table of elements.
func (s *Schema) Kept() error {
	for _, x := range s.Indexes {
		if !x.OnElements() || s.Local[x] != nil {
			continue
		}
		why := "this store keeps no local indexes (Bigtable): index the elements with a column family instead, or use Pebble"
		if s.Local != nil {
			why = "its base " + s.Base[x].Name + " is salted, has partition buckets or static columns, or holds the collection in its key"
		}
		return fmt.Errorf("secondary index %s indexes the elements of %s, which only a store's local index keeps, and %s", x.Name, x.AttrName(x.Hash[0]), why)
	}
	return nil
}

// localBases maps each secondary index that can be a local index to its
// base: one whose base is unsalted and unbucketed (entries ordered by
// row key follow the base's partition order) and stores the indexed attribute as a value
// cell (a store index is on one cell; a clustering attribute is in the
// row key), or, for an index on a collection's elements, as a value
// family of one cell per element.
func (s *Schema) localBases() map[*Index]*Index {
	out := map[*Index]*Index{}
	for _, x := range s.Indexes {
		if b := s.Base[x]; x.Kind == SI && b != nil && CanKeepLocal(x, b) {
			out[x] = b
		}
	}
	return out
}

// CanKeepLocal reports whether a store's local index can keep secondary
// index si on base, as localBases requires: base unsalted and unbucketed,
// without static columns (a base with static columns reads its partition
// rows beside the rows an index lookup returns: not through a store
// index), and holding si's value as a value cell (a clustering attribute
// is in the row key, which a store index does not index).
func CanKeepLocal(si, base *Index) bool {
	return base.SaltBuckets == 0 && base.PartitionBuckets == 0 && len(base.Static) == 0 && containsAttr(base.Extra, si.Hash[0])
}

// LocalIndex is the store index that keeps secondary index x in its base's
// table (x must be in s.Local): named as x, on the cell of the indexed
// attribute, whose value is the attribute's natural encoding (layout's
// attr_value), so a lookup's values are encoded as the base stores them.
//
// An index on a collection's elements is on every cell of the
// collection's family in the base's rows (store.IndexSpec.Elements): its
// values are their qualifiers, a set's elements or a map's keys in their
// ordered encoding (layout's collections.go), so a lookup's values are
// ordered-encoded.
func (s *Schema) LocalIndex(x *Index) store.IndexSpec {
	b := s.Local[x]
	if x.OnElements() {
		pos := slices.Index(b.RowAttrs(), x.Hash[0])
		return store.IndexSpec{Name: x.Name, Family: layout.CollectionFamily(pos), Elements: true}
	}
	return store.IndexSpec{Name: x.Name, Family: layout.DefaultCFFamily, Qualifier: []byte(b.AttrName(x.Hash[0]))}
}

// Index returns the index called name, or nil.
func (s *Schema) Index(name string) *Index {
	for _, x := range s.Indexes {
		if strings.EqualFold(x.Name, name) {
			return x
		}
	}
	return nil
}

// refOf writes attribute a as a column reference: its node's path from the
// root, then the field.
func refOf(x *Index, a Attr) lang.ColumnRef {
	var qual []string
	for n := a.Node; n > 0; n = x.Graph.Nodes[n].Parent {
		qual = append([]string{x.Graph.Nodes[n].Via.Name}, qual...)
	}
	qual = append([]string{x.Graph.Nodes[0].Entity.Name}, qual...)
	return lang.ColumnRef{Qual: qual, Name: a.Field.Name}
}

// Statements returns the definitions of the schema's indexes: every CF, then
// every SI on its base CF.
func (s *Schema) Statements() []lang.Statement {
	var out []lang.Statement
	refs := func(x *Index, as []Attr) []lang.ColumnRef {
		out := []lang.ColumnRef{}
		for _, a := range as {
			out = append(out, refOf(x, a))
		}
		return out
	}
	for _, x := range s.Indexes {
		if x.Kind != CF {
			continue
		}
		d := &lang.DefineColumnFamily{Name: x.Name, Relation: x.Graph.Nodes[0].Entity.Name,
			Partition: refs(x, x.Hash), Clustering: refs(x, x.Order), Values: refs(x, x.Extra), SaltBuckets: x.SaltBuckets, PartitionBuckets: x.PartitionBuckets}
		if len(x.Static) > 0 {
			d.Static = refs(x, x.Static)
		}
		for _, sp := range x.SplitOn {
			d.SplitOn = append(d.SplitOn, lang.SplitPoint{Values: sp.Values})
		}
		out = append(out, d)
	}
	for _, x := range s.Indexes {
		if x.Kind != SI {
			continue
		}
		b := s.Base[x]
		// The indexed attribute, written in the base CF's terms (same
		// canonical graph, so the same node).
		out = append(out, &lang.DefineIndex{Name: x.Name, Family: b.Name, Column: refOf(b, x.Hash[0])})
	}
	return out
}

// BuildLayouts gives each index of s that has no layout its default one
// (the indexes of an advisor's recommendation, built as candidates rather
// than read from DDL), so that s can be deployed and run as it is.
func (s *Schema) BuildLayouts() error {
	for _, x := range s.Indexes {
		if x.layout != nil {
			continue
		}
		l, err := x.defaultLayout()
		if err != nil {
			return fmt.Errorf("%s %s: %v", kindName(x.Kind), x.Name, err)
		}
		x.layout = l
	}
	return nil
}

// ParseSchema reads the DEFINE COLUMN FAMILY and DEFINE SECONDARY INDEX
// statements of a script against a model (other statements are ignored).
// Errors name the statement's position.
func ParseSchema(m *Model, stmts []lang.Statement) (*Schema, error) {
	s := &Schema{Base: map[*Index]*Index{}}
	names := map[string]bool{}
	for _, st := range stmts {
		d, ok := st.(*lang.DefineColumnFamily)
		if !ok {
			continue
		}
		if names[strings.ToLower(d.Name)] {
			return nil, errAt(d.At, "%s is defined twice (names are case-insensitive)", d.Name)
		}
		names[strings.ToLower(d.Name)] = true
		x, err := columnFamily(m, d)
		if err != nil {
			return nil, err
		}
		x.SaltBuckets, x.PartitionBuckets = d.SaltBuckets, d.PartitionBuckets
		if x.layout, err = x.defaultLayout(); err != nil {
			return nil, errAt(d.At, "column family %s: %v", d.Name, err)
		}
		s.Indexes = append(s.Indexes, x)
	}
	for _, st := range stmts {
		d, ok := st.(*lang.DefineIndex)
		if !ok {
			continue
		}
		if names[strings.ToLower(d.Name)] {
			return nil, errAt(d.At, "%s is defined twice (names are case-insensitive)", d.Name)
		}
		names[strings.ToLower(d.Name)] = true
		base := s.Index(d.Family)
		if base == nil {
			return nil, errAt(d.At, "secondary index %s: no column family %s", d.Name, d.Family)
		}
		if len(base.Hash) != 1 {
			return nil, errAt(d.At, "secondary index %s: %s must have a one-attribute partition key (the index maps to it)", d.Name, d.Family)
		}
		if base.PartitionBuckets > 0 {
			return nil, errAt(d.At, "secondary index %s: %s has PARTITION_BUCKETS, and a column family with partition buckets carries no secondary index", d.Name, d.Family)
		}
		a, err := resolveAttr(base.Graph, d.Column)
		if err != nil {
			return nil, err
		}
		if !base.Has(a) || base.Hash[0] == a {
			return nil, errAt(d.Column.At, "secondary index %s: %s is not a clustering or value attribute of %s", d.Name, lang.PrintExpr(&d.Column), d.Family)
		}
		if t := a.Field.Type; t.Kind() == types.ListKind && perElement(t) {
			return nil, errAt(d.Column.At, "secondary index %s: %s is a %s, whose cells are addressed by position, not by element: index a SET's elements, a MAP's keys, or a FROZEN list's value", d.Name, lang.PrintExpr(&d.Column), t)
		}
		x := &Index{Kind: SI, Graph: base.Graph, Hash: []Attr{a}, Extra: []Attr{base.Hash[0]}, Name: d.Name}
		x.SetBaseOrder(base)
		x.Finish()
		if x.layout, err = x.defaultLayout(); err != nil {
			return nil, errAt(d.At, "secondary index %s: %v", d.Name, err)
		}
		s.Indexes = append(s.Indexes, x)
		s.Base[x] = base
	}
	return s, nil
}

// columnFamily builds a CF from its definition: the graph is the tree its
// attribute paths span, canonicalized.
func columnFamily(m *Model, d *lang.DefineColumnFamily) (*Index, error) {
	root := m.Entity(d.Relation)
	if root == nil {
		return nil, errAt(d.At, "column family %s: unknown relation %s", d.Name, d.Relation)
	}
	g := &Graph{Nodes: []Node{{Entity: root, Parent: -1, Alias: root.Name}}}
	resolve := func(cs []lang.ColumnRef) ([]FieldRef, error) {
		var out []FieldRef
		for _, c := range cs {
			if len(c.Qual) == 0 || !strings.EqualFold(c.Qual[0], root.Name) {
				return nil, errAt(c.At, "column family %s: write attributes as paths from %s (%s.field, %s.fk.field)", d.Name, root.Name, root.Name, root.Name)
			}
			n := 0
			for _, step := range c.Qual[1:] {
				nav := g.Nodes[n].Entity.Nav(step)
				if nav == nil {
					return nil, errAt(c.At, "column family %s: %s has no relationship %s", d.Name, g.Nodes[n].Entity.Name, step)
				}
				next := g.Step(n, nav)
				if next < 0 {
					g.Nodes = append(g.Nodes, Node{Entity: nav.To, Parent: n, Via: nav})
					next = len(g.Nodes) - 1
				}
				n = next
			}
			f := g.Nodes[n].Entity.Field(c.Name)
			if f == nil {
				return nil, errAt(c.At, "column family %s: %s has no attribute %s", d.Name, g.Nodes[n].Entity.Name, c.Name)
			}
			out = append(out, FieldRef{Node: n, Field: f})
		}
		return out, nil
	}
	hash, err := resolve(d.Partition)
	if err != nil {
		return nil, err
	}
	order, err := resolve(d.Clustering)
	if err != nil {
		return nil, err
	}
	for i, r := range append(slices.Clip(hash), order...) {
		if t := r.Field.Type; t.IsCollection() && !t.IsFrozen() {
			c := append(slices.Clip(d.Partition), d.Clustering...)[i]
			return nil, errAt(c.At, "column family %s: %s is a %s, which cannot be in a key (a key holds a frozen collection, one value): put it among the VALUES", d.Name, lang.PrintExpr(&c), t)
		}
	}
	extra, err := resolve(d.Values)
	if err != nil {
		return nil, err
	}
	static, err := resolve(d.Static)
	if err != nil {
		return nil, err
	}
	for i, r := range static {
		if t := r.Field.Type; perElement(t) {
			return nil, errAt(d.Static[i].At, "column family %s: %s is a %s, stored one cell per element, which a static column is not: make it FROZEN<%s> or one of the VALUES", d.Name, lang.PrintExpr(&d.Static[i]), t, t)
		}
	}
	for i, r := range static {
		c := d.Static[i]
		switch {
		case r.Node != 0:
			return nil, errAt(c.At, "column family %s: static column %s must be an attribute of %s, the relation after FOR", d.Name, lang.PrintExpr(&c), root.Name)
		case r.Field.Key:
			return nil, errAt(c.At, "column family %s: static column %s is a key attribute", d.Name, lang.PrintExpr(&c))
		case len(hash) != 1 || hash[0].Node != 0 || hash[0].Field != root.ID():
			return nil, errAt(c.At, "column family %s: static columns need the partition key to be %s.%s alone (one partition per %s tuple)", d.Name, root.Name, root.ID().Name, root.Name)
		case len(order) == 0:
			return nil, errAt(c.At, "column family %s: static columns need a clustering key (a partition of one row has nothing to share)", d.Name)
		}
		for _, o := range append(append([]FieldRef(nil), order...), extra...) {
			if o == r {
				return nil, errAt(c.At, "column family %s: %s is both static and in the rows", d.Name, lang.PrintExpr(&c))
			}
		}
	}
	for _, h := range hash[1:] {
		if h.Node != hash[0].Node {
			return nil, errAt(d.At, "column family %s: the partition key must belong to one relation of the path", d.Name)
		}
	}
	if hash[0].Node != 0 {
		return nil, errAt(d.At, "column family %s: the partition key must belong to %s, the relation after FOR", d.Name, root.Name)
	}
	inKey := map[int]bool{}
	for _, r := range append(append([]FieldRef(nil), hash...), order...) {
		if r.Field.Key {
			inKey[r.Node] = true
		}
	}
	for n := range g.Nodes {
		if !inKey[n] {
			return nil, errAt(d.At, "column family %s: the key of %s (%s) must be in the partition or clustering key, so that each row is one tuple of the join", d.Name, g.Describe(n), g.Nodes[n].Entity.ID().Name)
		}
	}
	nodes := make([]int, len(g.Nodes))
	for i := range nodes {
		nodes[i] = i
	}
	cg, from := Canon(Sub{Graph: g, Root: 0, Nodes: nodes})
	to := map[int]int{}
	for i, v := range from {
		to[v] = i
	}
	conv := func(rs []FieldRef) []Attr {
		out := make([]Attr, len(rs))
		for i, r := range rs {
			out[i] = Attr{Node: to[r.Node], Field: r.Field}
		}
		return out
	}
	x := &Index{Kind: CF, Graph: cg, Hash: conv(hash), Order: conv(order), Static: conv(static), Extra: conv(extra), Name: d.Name}
	x.Finish()
	if d.SplitOn != nil {
		if x.SplitOn, err = splitPoints(x, d, conv(hash)); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// splitPoints checks the SPLIT ON points of d against the partition key of
// x (written is the partition key in the order d lists it) and returns them
// with their values converted to the attributes' types, sorted by key.
func splitPoints(x *Index, d *lang.DefineColumnFamily, written []Attr) ([]SplitPoint, error) {
	// Values follow the row key's order (Hash, sorted by name). Demanding
	// that PARTITION KEY be written in that order keeps a value from
	// silently landing on another attribute than the one it is written
	// under.
	var order []Attr
	for _, a := range written {
		if !containsAttr(order, a) {
			order = append(order, a)
		}
	}
	for i, a := range order {
		if a != x.Hash[i] {
			names := make([]string, len(x.Hash))
			for j, h := range x.Hash {
				names[j] = x.AttrName(h)
			}
			return nil, errAt(d.SplitOn[0].At, "column family %s: SPLIT ON values follow the partition key in row-key order (%s): write PARTITION KEY in that order", d.Name, strings.Join(names, ", "))
		}
	}
	// The keys are the row-key prefixes x's layout writes (split points
	// and salt exclude each other: the parser sees to it).
	l, err := x.defaultLayout()
	if err != nil {
		return nil, errAt(d.At, "column family %s: %v", d.Name, err)
	}
	tuple := make([]types.Value, len(l.Attrs))
	out := make([]SplitPoint, 0, len(d.SplitOn))
	seen := map[string]lang.SplitPoint{}
	for _, sp := range d.SplitOn {
		vs := make([]string, len(sp.Values))
		for i, v := range sp.Values {
			vs[i] = types.Format(v)
		}
		text := "(" + strings.Join(vs, ", ") + ")"
		if len(sp.Values) > len(x.Hash) {
			return nil, errAt(sp.At, "column family %s: split point %s has %d values but the partition key only %d attribute(s)", d.Name, text, len(sp.Values), len(x.Hash))
		}
		p := SplitPoint{Values: make([]types.Value, len(sp.Values))}
		for i, v := range sp.Values {
			a := x.Hash[i]
			c, err := types.Coerce(v, a.Field.Type)
			if err == nil {
				// Statements prints the value back as a literal, which
				// has a four-digit year; a zone offset can leave it.
				if t, ok := c.(time.Time); ok && (t.Year() < 0 || t.Year() > 9999) {
					err = fmt.Errorf("timestamp %s out of range (years 0000 to 9999 in UTC)", types.Format(v))
				}
			}
			if err != nil {
				return nil, errAt(sp.At, "column family %s: split point %s: %s: %v", d.Name, text, x.AttrName(a), err)
			}
			p.Values[i] = c
		}
		clear(tuple)
		copy(tuple, p.Values)
		var err error
		if p.Key, err = l.AppendKeyPrefix(nil, tuple, len(p.Values)); err != nil {
			return nil, errAt(sp.At, "column family %s: split point %s: %v", d.Name, text, err)
		}
		if first, dup := seen[string(p.Key)]; dup {
			return nil, errAt(sp.At, "column family %s: split point %s is the same row key as the one at %d:%d", d.Name, text, first.At.Line, first.At.Col)
		}
		seen[string(p.Key)] = sp
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out, nil
}

// resolveAttr finds the attribute a column reference names in a canonical
// index graph.
func resolveAttr(g *Graph, c lang.ColumnRef) (Attr, error) {
	path := strings.Join(c.Qual, ".")
	for n := range g.Nodes {
		if g.Describe(n) == path {
			if f := g.Nodes[n].Entity.Field(c.Name); f != nil {
				return Attr{Node: n, Field: f}, nil
			}
		}
	}
	return Attr{}, errAt(c.At, "no attribute %s in the column family", lang.PrintExpr(&c))
}
