// The conceptual model: entities with typed fields and statistics, and the
// relationships between them, built from DEFINE RELATION statements.

package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// Model is a set of entities and the relationships between them.
type Model struct {
	Entities []*Entity
	// Defs are the DEFINE RELATION statements the model was built from.
	Defs   []lang.Statement
	byName map[string]*Entity
}

// Entity is one relation of the conceptual model.
type Entity struct {
	Name   string
	Count  float64 // estimated number of tuples
	Fields []*Field
	// Key are the key fields, in declaration order. The entities of an
	// advised model have exactly one (Build checks it): see ID.
	Key  []*Field
	Navs []*Nav // navigations leaving this entity, in declaration order
	// Columns are the attributes of DEFINE RELATION in declaration order:
	// fields and foreign keys. Data files and rows use this order.
	Columns []Column
	At      lang.Pos
	fields  map[string]*Field
	navs    map[string]*Nav
}

// Field is a non-foreign-key attribute of an entity.
type Field struct {
	Entity      *Entity
	Name        string
	Type        types.Type
	Size        float64 // bytes
	Cardinality float64 // distinct values
	Key         bool
}

// Column is one declared attribute of a relation: a Field, or the
// foreign-key attribute of a to-one Nav (Type is then the target key's).
type Column struct {
	Name  string
	Type  types.Type
	Field *Field // nil for a foreign key
	Nav   *Nav   // the to-one navigation of a foreign key; nil for a field
}

// Nav is one direction of a relationship: from an entity to another by a
// name (items.seller is to-one; its reverse users.items_sold is to-many).
type Nav struct {
	Name    string
	From    *Entity
	To      *Entity
	Many    bool // to-many: the reverse of a foreign-key attribute
	Reverse *Nav
	Attr    string // the foreign-key attribute on the to-one side's From
}

func (f *Field) String() string { return f.Entity.Name + "." + f.Name }

func (n *Nav) String() string { return n.From.Name + "." + n.Name }

// Names of relations, attributes and relationships are case-insensitive,
// as SQL's and the client's (Relation) are: lookups fold case, and
// names differing only in case clash. Each keeps its declared spelling.
func fold(name string) string { return strings.ToLower(name) }

// Entity returns the entity named name, or nil.
func (m *Model) Entity(name string) *Entity { return m.byName[fold(name)] }

// ID is the key field of an entity whose key is one field, as every entity
// of an advised model has (Build checks it; the advisor, its planner and
// the engine rely on it); nil for a composite key.
func (e *Entity) ID() *Field {
	if len(e.Key) != 1 {
		return nil
	}
	return e.Key[0]
}

// Field returns the field named name, or nil.
func (e *Entity) Field(name string) *Field { return e.fields[fold(name)] }

// Nav returns the navigation named name leaving e, or nil.
func (e *Entity) Nav(name string) *Nav { return e.navs[fold(name)] }

// Column returns the index in Columns (the order of rows and data files)
// of field f, or -1 if f is not one of e's columns.
func (e *Entity) Column(f *Field) int {
	for i, c := range e.Columns {
		if f != nil && c.Field == f {
			return i
		}
	}
	return -1
}

// Fanout is the average number of To tuples per From tuple.
func (n *Nav) Fanout() float64 {
	if !n.Many {
		return 1
	}
	return n.To.Count / n.From.Count
}

// defaultSize is the assumed encoded size of a type without a SIZE
// statistic.
func defaultSize(t types.Type) float64 {
	if w := t.FixedWidth(); w > 0 {
		return float64(w)
	}
	return 10
}

// Build makes a model from the DEFINE RELATION statements of a script; other
// statements are ignored (a model file may also hold layouts for the client).
func Build(stmts []lang.Statement) (*Model, error) {
	m := &Model{byName: map[string]*Entity{}}
	var fks []fkDef
	for _, st := range stmts {
		d, ok := st.(*lang.DefineRelation)
		if !ok {
			continue
		}
		if prev := m.Entity(d.Name); prev != nil {
			return nil, errAt(d.At, "relation %s is defined twice (names are case-insensitive: %s)", d.Name, prev.Name)
		}
		m.Defs = append(m.Defs, d)
		if d.Rows <= 0 {
			return nil, errAt(d.At, "relation %s needs a row count for the advisor (DEFINE RELATION %s ROWS n {…})", d.Name, d.Name)
		}
		e, efks, err := readRelation(d, true)
		if err != nil {
			return nil, err
		}
		if len(e.Key) > 1 {
			at := d.At
			for _, a := range d.Attrs {
				if fold(a.Name) == fold(e.Key[1].Name) {
					at = a.At
				}
			}
			return nil, errAt(at, "relation %s: the advisor needs exactly one key attribute (found %s and %s)", d.Name, e.Key[0].Name, e.Key[1].Name)
		}
		fks = append(fks, efks...)
		m.Entities = append(m.Entities, e)
		m.byName[fold(e.Name)] = e
	}
	for _, k := range fks {
		to := m.Entity(k.def.References)
		if to == nil {
			return nil, errAt(k.def.At, "relation %s: %s REFERENCES unknown relation %s", k.from.Name, k.def.Name, k.def.References)
		}
		if k.def.Type != to.ID().Type {
			return nil, errAt(k.def.At, "relation %s: foreign key %s is %s but %s.%s is %s", k.from.Name, k.def.Name, k.def.Type, to.Name, to.ID().Name, to.ID().Type)
		}
		one := &Nav{Name: k.def.Name, From: k.from, To: to, Attr: k.def.Name}
		many := &Nav{Name: k.def.Reverse, From: to, To: k.from, Many: true, Attr: k.def.Name, Reverse: one}
		one.Reverse = many
		k.from.Columns[k.col].Nav = one
		if err := k.from.addNav(one); err != nil {
			return nil, errAt(k.def.At, "%v", err)
		}
		if err := to.addNav(many); err != nil {
			return nil, errAt(k.def.At, "%v", err)
		}
	}
	if len(m.Entities) == 0 {
		return nil, fmt.Errorf("the model defines no relation")
	}
	return m, nil
}

// readRelation reads a DEFINE RELATION: the one reading of a relation's
// attributes, key and statistics, for the advisor's model and the client's
// relations alike. A relation without ROWS has Count 0 (unknown), and its
// fields no statistics. With links, an attribute that REFERENCES another
// relation is a foreign key (a Column without a Field, resolved to a
// navigation by the caller, never part of the key); without, the client's
// reading, it is an attribute like any other.
func readRelation(d *lang.DefineRelation, links bool) (*Entity, []fkDef, error) {
	if err := checkNames(d); err != nil {
		return nil, nil, err
	}
	e := &Entity{Name: d.Name, Count: float64(d.Rows), At: d.At, fields: map[string]*Field{}, navs: map[string]*Nav{}}
	var fks []fkDef
	names := map[string]bool{}
	for _, a := range d.Attrs {
		if names[fold(a.Name)] {
			return nil, nil, errAt(a.At, "relation %s: attribute %s is declared twice (names are case-insensitive)", d.Name, a.Name)
		}
		names[fold(a.Name)] = true
		if a.Type == types.Invalid {
			return nil, nil, errAt(a.At, "relation %s: attribute %s has no type", d.Name, a.Name)
		}
		if a.References != "" && links {
			if a.Key {
				return nil, nil, errAt(a.At, "relation %s: foreign key %s cannot be part of the key in the conceptual model", d.Name, a.Name)
			}
			fks = append(fks, fkDef{a, e, len(e.Columns)})
			e.Columns = append(e.Columns, Column{Name: a.Name, Type: a.Type})
			continue
		}
		f := &Field{Entity: e, Name: a.Name, Type: a.Type, Size: float64(a.Size), Cardinality: float64(a.Cardinality), Key: a.Key}
		if f.Size == 0 {
			f.Size = defaultSize(a.Type)
		}
		if f.Cardinality == 0 || f.Key || f.Cardinality > e.Count {
			f.Cardinality = e.Count
		}
		if f.Key {
			e.Key = append(e.Key, f)
		}
		e.Fields = append(e.Fields, f)
		e.fields[fold(f.Name)] = f
		e.Columns = append(e.Columns, Column{Name: a.Name, Type: a.Type, Field: f})
	}
	if len(e.Key) == 0 {
		return nil, nil, errAt(d.At, "relation %s has no key attribute (mark at least one attribute with KEY)", d.Name)
	}
	return e, fks, nil
}

// checkNames applies lang.CheckDefName to the names of d, for definitions
// that did not come from the parser (which checks them as it reads them).
func checkNames(d *lang.DefineRelation) error {
	if err := lang.CheckDefName(d.At, "relation name", d.Name); err != nil {
		return err
	}
	for _, a := range d.Attrs {
		for _, n := range [...]struct{ what, name string }{
			{"attribute name", a.Name},
			{"referenced relation", a.References},
			{"name of the reverse relationship", a.Reverse},
		} {
			if err := lang.CheckDefName(a.At, n.what, n.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// fkDef is a foreign-key attribute waiting for its target to be defined.
type fkDef struct {
	def  lang.AttrDef
	from *Entity
	col  int // index in from.Columns
}

func (e *Entity) addNav(n *Nav) error {
	if e.Field(n.Name) != nil || e.Nav(n.Name) != nil {
		return fmt.Errorf("relation %s already has an attribute or relationship named %s (from %s)", e.Name, n.Name, n.Reverse)
	}
	e.Navs = append(e.Navs, n)
	e.navs[fold(n.Name)] = n
	return nil
}

// FieldNames lists e's field names in declaration order.
func (e *Entity) FieldNames() []string {
	names := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		names[i] = f.Name
	}
	return names
}

// SortedEntities returns the entities by name (stable output orders).
func (m *Model) SortedEntities() []*Entity {
	es := append([]*Entity(nil), m.Entities...)
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	return es
}

func errAt(pos lang.Pos, format string, args ...any) error {
	return &lang.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
