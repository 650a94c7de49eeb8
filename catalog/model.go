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
	// Partition and Static (a client relation's only): part of the
	// partition key, a static column (lang.AttrDef).
	Partition, Static bool
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

// collectionElements is the assumed number of elements of a collection
// without a SIZE statistic.
const collectionElements = 3

// defaultSize is the assumed encoded size of a type without a SIZE
// statistic.
func defaultSize(t types.Type) float64 {
	if t.IsCollection() {
		// Three elements, each with a length byte (types.AppendCollection).
		size := defaultSize(t.Elem()) + 1
		if t.Kind() == types.MapKind {
			size += defaultSize(t.Key()) + 1
		}
		return 1 + collectionElements*size
	}
	if w := t.FixedWidth(); w > 0 {
		return float64(w)
	}
	return 10
}

// Build makes a model from the relations of a model script (Definitions:
// DEFINE RELATION, CREATE TABLE and ALTER TABLE … ADD PRIMARY KEY / FOREIGN
// KEY); other statements are ignored (a model file may also hold layouts for
// the client). Every relation needs its statistics (ROWS) and exactly one
// key attribute; the errors name the relation.
func Build(stmts []lang.Statement) (*Model, error) {
	return newModel(stmts, true)
}

// Unmeasured builds the model as Build does, but without requiring
// statistics: a relation without ROWS has Count 0 and its fields
// Cardinality 0. It is for reading a model's data before its statistics
// are known (kvschema stats measures them): its Columns, keys and
// foreign keys are Build's; its counts, fan-outs and index sizes are not
// meaningful, so it never goes to the advisor.
func Unmeasured(stmts []lang.Statement) (*Model, error) {
	return newModel(stmts, false)
}

func newModel(stmts []lang.Statement, measured bool) (*Model, error) {
	defs, err := Definitions(stmts)
	if err != nil {
		return nil, err
	}
	m := &Model{byName: map[string]*Entity{}}
	var fks []fkDef
	for _, d := range defs {
		m.Defs = append(m.Defs, d)
		if d.Rows <= 0 && measured {
			return nil, errAt(d.At, "relation %s needs its row count for the advisor: DEFINE RELATION %s ROWS n {…}, or in SQL a comment -- ROWS n at the end of the line CREATE TABLE %s ( (statistic ROWS missing)", d.Name, d.Name, d.Name)
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
			return nil, errAt(at, "relation %s: the advisor needs exactly one key attribute (found %s and %s: a composite key; give the relation a single-attribute key, e.g. id BIGINT PRIMARY KEY, and keep the others as attributes or foreign keys)", d.Name, e.Key[0].Name, e.Key[1].Name)
		}
		fks = append(fks, efks...)
		m.Entities = append(m.Entities, e)
		m.byName[fold(e.Name)] = e
	}
	for _, k := range fks {
		to := m.Entity(k.def.References) // Definitions checked it exists
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

// Definitions returns the relations a model script defines, as the model
// reads them: its DEFINE RELATION and CREATE TABLE statements (both parse
// into *lang.DefineRelation) in order, with the primary keys and foreign
// keys of its ALTER TABLE statements applied (wherever they stand), each
// foreign key referencing a defined relation's key (RefAttr, if given,
// checked and cleared) and naming its reverse relationship. A reverse not
// given is derived: the referencing relation's name (users.items for
// items.seller), or, when that relation has several foreign keys to the
// same relation, its name and the attribute's (users.comments_from_user
// and users.comments_to_user); a derived name that clashes is an error
// asking for a REVERSE. Other statements are ignored, and the statements
// given are not changed (the definitions are copies). Statistics are not
// required here (Build requires them), so a model without them can be
// printed.
func Definitions(stmts []lang.Statement) ([]*lang.DefineRelation, error) {
	var defs []*lang.DefineRelation
	byName := map[string]*lang.DefineRelation{}
	for _, st := range stmts {
		d, ok := st.(*lang.DefineRelation)
		if !ok {
			continue
		}
		if prev := byName[fold(d.Name)]; prev != nil {
			return nil, errAt(d.At, "relation %s is defined twice (names are case-insensitive: %s)", d.Name, prev.Name)
		}
		c := *d
		c.Attrs = append([]lang.AttrDef(nil), d.Attrs...)
		defs = append(defs, &c)
		byName[fold(d.Name)] = &c
	}
	for _, st := range stmts {
		if a, ok := st.(*lang.AlterTable); ok {
			if err := alterTable(a, byName[fold(a.Relation)]); err != nil {
				return nil, err
			}
		}
	}
	// Reverse names per referenced relation: the given ones first, so a
	// derived one cannot take a given one's name.
	reverses := map[string]map[string]bool{}
	for _, d := range defs {
		for _, a := range d.Attrs {
			if a.References == "" {
				continue
			}
			to := byName[fold(a.References)]
			if to == nil {
				return nil, errAt(a.At, "relation %s: %s REFERENCES unknown relation %s", d.Name, a.Name, a.References)
			}
			if reverses[fold(to.Name)] == nil {
				reverses[fold(to.Name)] = map[string]bool{}
			}
			if a.Reverse != "" {
				reverses[fold(to.Name)][fold(a.Reverse)] = true
			}
		}
	}
	for _, d := range defs {
		for i := range d.Attrs {
			a := &d.Attrs[i]
			if a.References == "" {
				continue
			}
			to := byName[fold(a.References)]
			if key := keyOf(to); a.RefAttr != "" && len(key) == 1 && fold(key[0]) != fold(a.RefAttr) {
				return nil, errAt(a.At, "relation %s: %s REFERENCES %s(%s), but a relationship of the model references its relation's key (%s.%s)", d.Name, a.Name, to.Name, a.RefAttr, to.Name, key[0])
			}
			a.RefAttr = ""
			if a.Reverse != "" {
				continue
			}
			name := d.Name
			if n := countRefs(d, to.Name); n > 1 {
				name = d.Name + "_" + a.Name
			}
			taken := reverses[fold(to.Name)][fold(name)]
			for _, b := range to.Attrs {
				taken = taken || fold(b.Name) == fold(name)
			}
			if taken {
				return nil, errAt(a.At, "relation %s: the reverse relationship of foreign key %s would be named %s, which %s already has; name it with REVERSE name after REFERENCES (in CREATE TABLE, a comment -- REVERSE name at the end of the column's line)", d.Name, a.Name, name, to.Name)
			}
			a.Reverse = name
			reverses[fold(to.Name)][fold(name)] = true
		}
	}
	return defs, nil
}

// alterTable applies an ALTER TABLE … ADD PRIMARY KEY / FOREIGN KEY to the
// definition d of its relation (nil if there is none).
func alterTable(a *lang.AlterTable, d *lang.DefineRelation) error {
	if d == nil {
		return errAt(a.RelationAt.Or(a.At), "ALTER TABLE names relation %s, which the model does not define", a.Relation)
	}
	attr := func(name string) *lang.AttrDef {
		for i := range d.Attrs {
			if fold(d.Attrs[i].Name) == fold(name) {
				return &d.Attrs[i]
			}
		}
		return nil
	}
	if a.ForeignKey != "" {
		f := attr(a.ForeignKey)
		switch {
		case f == nil:
			return errAt(a.AttrAt, "ALTER TABLE %s ADD FOREIGN KEY: relation %s has no attribute %s", a.Relation, d.Name, a.ForeignKey)
		case f.References != "":
			return errAt(a.AttrAt, "ALTER TABLE %s ADD FOREIGN KEY: %s.%s already REFERENCES %s", a.Relation, d.Name, f.Name, f.References)
		}
		f.References, f.RefAttr, f.Reverse = a.References, a.RefAttr, a.Reverse
		return nil
	}
	if key := keyOf(d); len(key) > 0 {
		same := len(key) == len(a.PrimaryKey)
		for i := 0; same && i < len(key); i++ {
			same = fold(key[i]) == fold(a.PrimaryKey[i])
		}
		if !same {
			return errAt(a.AttrAt, "ALTER TABLE %s ADD PRIMARY KEY: relation %s already has a key (%s)", a.Relation, d.Name, strings.Join(key, ", "))
		}
	}
	for _, n := range a.PrimaryKey {
		f := attr(n)
		if f == nil {
			return errAt(a.AttrAt, "ALTER TABLE %s ADD PRIMARY KEY: relation %s has no attribute %s", a.Relation, d.Name, n)
		}
		f.Key = true
	}
	return nil
}

// keyOf lists the key attributes of d.
func keyOf(d *lang.DefineRelation) []string {
	var key []string
	for _, a := range d.Attrs {
		if a.Key {
			key = append(key, a.Name)
		}
	}
	return key
}

// countRefs is the number of d's attributes that reference relation to.
func countRefs(d *lang.DefineRelation, to string) int {
	n := 0
	for _, a := range d.Attrs {
		if fold(a.References) == fold(to) && a.References != "" {
			n++
		}
	}
	return n
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
		if a.Type.IsCollection() && (a.Key || a.References != "") {
			return nil, nil, errAt(a.At, "relation %s: attribute %s is a %s, which cannot be a key or reference one (a relation's key attributes are scalars)", d.Name, a.Name, a.Type)
		}
		if links && (a.Static || a.Partition) {
			what := "STATIC"
			if a.Partition {
				what = "PARTITION KEY"
			}
			return nil, nil, errAt(a.At, "relation %s: attribute %s is %s, which a model's relation is not: its column families choose their partition keys and static columns (DEFINE COLUMN FAMILY … STATIC (…), advise --static-columns)", d.Name, a.Name, what)
		}
		if a.References != "" && links {
			if a.Key {
				return nil, nil, errAt(a.At, "relation %s: foreign key %s cannot be part of the key in the conceptual model", d.Name, a.Name)
			}
			fks = append(fks, fkDef{a, e, len(e.Columns)})
			e.Columns = append(e.Columns, Column{Name: a.Name, Type: a.Type})
			continue
		}
		f := &Field{Entity: e, Name: a.Name, Type: a.Type, Size: float64(a.Size), Cardinality: float64(a.Cardinality), Key: a.Key, Partition: a.Partition, Static: a.Static}
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
		return nil, nil, errAt(d.At, "relation %s has no key attribute (mark at least one attribute with KEY, or in SQL with PRIMARY KEY)", d.Name)
	}
	if err := checkPartition(d, e); err != nil {
		return nil, nil, err
	}
	return e, fks, nil
}

// checkPartition checks a client relation's partition key and static
// columns, as Cassandra's PRIMARY KEY ((p…), c…) and STATIC: the partition
// key attributes come first among the key's, a clustering key follows, and
// a static column is a value attribute of a relation with a partition key.
func checkPartition(d *lang.DefineRelation, e *Entity) error {
	var static *lang.AttrDef
	for i := range d.Attrs {
		if a := &d.Attrs[i]; a.Static && static == nil {
			static = a
		}
	}
	clustering := false
	np := 0
	for i, f := range e.Key {
		if !f.Partition {
			clustering = true
			continue
		}
		np++
		if clustering {
			return errAt(d.Attrs[defIndex(d, f.Name)].At, "relation %s: partition key attribute %s follows the clustering key attribute %s: the partition key comes first (declare it first)", d.Name, f.Name, e.Key[i-1].Name)
		}
	}
	for _, f := range e.Fields {
		if f.Static && f.Key {
			return errAt(d.Attrs[defIndex(d, f.Name)].At, "relation %s: key attribute %s cannot be static", d.Name, f.Name)
		}
	}
	switch {
	case static == nil:
	case np == 0:
		return errAt(static.At, "relation %s: static column %s needs a partition key to be shared by: mark the leading key attributes PARTITION KEY", d.Name, static.Name)
	case !clustering:
		return errAt(static.At, "relation %s: static column %s needs a clustering key (a partition of one tuple has nothing to share): keep a KEY attribute out of the PARTITION KEY", d.Name, static.Name)
	}
	return nil
}

// defIndex is the index in d.Attrs of the attribute named name.
func defIndex(d *lang.DefineRelation, name string) int {
	for i, a := range d.Attrs {
		if a.Name == name {
			return i
		}
	}
	return 0
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
