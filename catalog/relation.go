// The client's relations (seed 003) and their DEFINE SCHEMA layouts.

package catalog

import (
	"strings"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/types"
)

// Relation is a relation and its layouts.
type Relation struct {
	// Entity is the relation as the catalog's model reads it (the one
	// reading of DEFINE RELATION, shared with the advisor's model): its
	// key may have several fields, and it has no statistics.
	Entity *Entity
	Name   string
	Attrs  []*Field // Entity.Fields: its attributes in declaration order
	KeyIdx []int    // indexes of the key attributes, in declaration order
	// Indexes are the relation's layouts (DEFINE SCHEMA), each a CF over
	// the relation alone: the primary one first, then in definition order.
	// Every write keeps all of them; plans read only those not WriteOnly
	// (ReadIndexes).
	Indexes []*Index
	Def     *lang.DefineRelation
	byName  map[string]int
}

// AttrIndex returns the index of the named attribute (case-insensitive) or -1.
func (r *Relation) AttrIndex(name string) int {
	if i, ok := r.byName[name]; ok { // names are usually written as declared
		return i
	}
	if i, ok := r.byName[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

// Primary is the relation's primary layout (nil before any layout exists).
func (r *Relation) Primary() *layout.Layout {
	if len(r.Indexes) == 0 {
		return nil
	}
	return r.Indexes[0].layout
}

// ReadIndexes are the indexes plans may read: Indexes but the write-only
// ones (Indexes itself when none is; the caller must not modify it).
func (r *Relation) ReadIndexes() []*Index {
	n := 0
	for _, x := range r.Indexes {
		if x.WriteOnly {
			n++
		}
	}
	if n == 0 {
		return r.Indexes
	}
	out := make([]*Index, 0, len(r.Indexes)-n)
	for _, x := range r.Indexes {
		if !x.WriteOnly {
			out = append(out, x)
		}
	}
	return out
}

// Layouts are the layouts of the relation's indexes, in their order (a
// fresh slice).
func (r *Relation) Layouts() []*layout.Layout {
	out := make([]*layout.Layout, len(r.Indexes))
	for i, x := range r.Indexes {
		out[i] = x.layout
	}
	return out
}

// LayoutAttrs are the relation's attributes as its layouts see them: key
// attributes are not nullable.
func (r *Relation) LayoutAttrs() []layout.Attr {
	out := make([]layout.Attr, len(r.Attrs))
	for i, a := range r.Attrs {
		out[i] = layout.Attr{Name: a.Name, Type: a.Type, Key: a.Key, Nullable: !a.Key, Static: a.Static, Partition: a.Partition}
	}
	return out
}

// KeyOf extracts the primary-key values of a tuple.
func (r *Relation) KeyOf(tuple []types.Value) []types.Value {
	k := make([]types.Value, len(r.KeyIdx))
	for i, a := range r.KeyIdx {
		k[i] = tuple[a]
	}
	return k
}

// Define applies one DEFINE statement. On error the catalog is unchanged.
func (c *Catalog) Define(st lang.Statement) error {
	switch d := st.(type) {
	case *lang.DefineRelation:
		return c.defineRelation(d)
	case *lang.DefineSchema:
		return c.defineSchema(d)
	}
	return errAt(st.Pos(), "not a definition")
}

func (c *Catalog) defineRelation(d *lang.DefineRelation) error {
	if c.Relation(d.Name) != nil {
		return errAt(d.At, "relation %s is already defined", d.Name)
	}
	if e := c.advisedEntity(d.Name); e != nil {
		return errAt(d.At, "relation %s is defined by the advised schema deployed in this store (as %s); give this relation another name", d.Name, e.Name)
	}
	e, _, err := readRelation(d, false)
	if err != nil {
		return err
	}
	r := &Relation{Name: d.Name, Def: d, Entity: e, Attrs: e.Fields, byName: map[string]int{}}
	for i, a := range d.Attrs {
		r.byName[strings.ToLower(a.Name)] = i
		if a.Key {
			r.KeyIdx = append(r.KeyIdx, i)
		}
	}
	c.Relations = append(c.Relations, r)
	c.relByName[strings.ToLower(r.Name)] = r
	c.Defs = append(c.Defs, d)
	return nil
}

func (c *Catalog) defineSchema(d *lang.DefineSchema) error {
	r := c.Relation(d.Relation)
	if r == nil {
		return errAt(d.At, "schema %s: unknown relation %s", d.Name, d.Relation)
	}
	if c.Layout(d.Name) != nil {
		return errAt(d.At, "schema %s is already defined", d.Name)
	}
	if c.DroppingLayout(d.Name) != nil {
		return errAt(d.At, "schema %s is still being dropped (its rows are being deleted): run DROP SCHEMA %s to finish that first", d.Name, d.Name)
	}
	l, err := layout.Compile(r.LayoutAttrs(), d)
	if err != nil {
		return err
	}
	for _, other := range r.Indexes {
		if other := other.layout; d.Primary && other.Primary {
			return errAt(d.At, "relation %s already has a primary schema (%s)", r.Name, other.Name)
		}
	}
	for _, other := range c.layByName {
		if other.StaticTable() != "" && other.StaticTable() == l.StaticTable() && other.StaticFamily() == l.StaticFamily() {
			return errAt(d.At, "schema %s: table %q and family %q are already used by schema %s", d.Name, l.StaticTable(), l.StaticFamily(), other.Name)
		}
	}
	for _, other := range c.dropping {
		if other.StaticTable() != "" && other.StaticTable() == l.StaticTable() && other.StaticFamily() == l.StaticFamily() {
			return errAt(d.At, "schema %s: table %q and family %q still hold the rows of schema %s, which is being dropped: run DROP SCHEMA %s to finish that first", d.Name, l.StaticTable(), l.StaticFamily(), other.Name, other.Name)
		}
	}
	if x := c.advisedTable(l); x != nil {
		return errAt(d.At, "schema %s: table %q holds %s %s of the advised schema deployed in this store", d.Name, x.Name, kindName(x.Kind), x.Name)
	}
	x := relationIndex(r, l)
	if d.Primary {
		r.Indexes = append([]*Index{x}, r.Indexes...)
	} else {
		r.Indexes = append(r.Indexes, x)
	}
	c.layByName[strings.ToLower(l.Name)] = l
	c.Defs = append(c.Defs, d)
	return nil
}

// relationIndex is the index a client layout l of r is: a CF over r alone
// whose partition key is what l's row key holds (the row is the unit a
// key-value store reads and writes atomically, as a partition is
// Cassandra's), clustered by the key attributes l writes in the family or
// the qualifier (wide rows: several tuples per row), with the other
// attributes l stores as values.
func relationIndex(r *Relation, l *layout.Layout) *Index {
	x := &Index{Kind: CF, Name: l.Name, Relation: r, layout: l,
		Graph: &Graph{Nodes: []Node{{Entity: r.Entity, Parent: -1, Alias: r.Name}}}}
	placed := map[int]bool{}
	place := func(part *[]Attr, attrs []int, keyOnly bool) {
		for _, a := range attrs {
			if !placed[a] && (!keyOnly || r.Attrs[a].Key) {
				placed[a] = true
				*part = append(*part, Attr{Node: 0, Field: r.Attrs[a]})
			}
		}
	}
	var cols []int
	for _, f := range []*layout.Field{&l.Table, &l.Family, &l.Qualifier} {
		cols = appendElemAttrs(cols, f.Elems)
	}
	place(&x.Hash, appendElemAttrs(nil, l.Row.Elems), false)
	place(&x.Order, cols, true)
	stored := append(cols, appendElemAttrs(nil, l.Value.Elems)...)
	stored = append(stored, l.Branches...)
	place(&x.Extra, stored, false)
	x.Key = "CF[" + r.Name + "]" + "|" + l.Name
	return x
}

// appendElemAttrs appends the attributes elements es (and their bodies)
// encode.
func appendElemAttrs(dst []int, es []layout.Element) []int {
	for _, e := range es {
		switch e.Kind {
		case layout.ElemAttr:
			dst = append(dst, e.Attr)
		case layout.ElemSize, layout.ElemSalt:
			dst = appendElemAttrs(dst, e.Body)
		}
	}
	return dst
}

// IndexRelation views index x, stored in its layout, as a relation of the
// client's kind: one attribute per row attribute of x, in the layout's
// order, named as AttrName names it (items.bids.date), keyed by x's key,
// with x as its one index. The first step of an advised query is planned
// over it by the client's planner (package plan), so both kinds of schema
// derive their key reads — point lookups, prefix and range scans, salted
// fan-out — one way.
func IndexRelation(x *Index) *Relation {
	attrs := x.RowAttrs()
	nkey := len(x.KeyAttrs())
	fields := make([]*Field, len(attrs))
	for i, a := range attrs {
		fields[i] = &Field{Entity: a.Field.Entity, Name: x.AttrName(a), Type: a.Field.Type, Size: a.Field.Size, Cardinality: a.Field.Cardinality, Key: i < nkey}
	}
	r := NewRelation(x.Name, fields)
	r.Indexes = []*Index{x}
	return r
}

// NewRelation is a relation of fields (keyed by those marked Key) with no
// layout: a view the client's planner and expression evaluator (package
// plan) can work over — an index's rows (IndexRelation), the groups of an
// aggregate query. Field names must be unique case-insensitively.
func NewRelation(name string, fields []*Field) *Relation {
	r := &Relation{Name: name, Attrs: fields, byName: map[string]int{}}
	for i, f := range fields {
		r.byName[strings.ToLower(f.Name)] = i
		if f.Key {
			r.KeyIdx = append(r.KeyIdx, i)
		}
	}
	return r
}

// KeyIndex is the first of r's readable indexes whose table and row a
// tuple's key alone determines (no attribute but the key's places its
// cells), or nil: where writes look up the stored tuple by key, and what a
// conditional write's guard checks.
func (r *Relation) KeyIndex() *Index {
	for _, x := range r.Indexes {
		if !x.WriteOnly && !x.Layout().CoordinatesUseNonKey() {
			return x
		}
	}
	return nil
}
