// Package layout owns the physical mapping of tuples onto the cell model of
// package store: a Layout turns a tuple into cells (its table, row key,
// family, qualifier and value: PutCells, AllCells) and cells back into
// tuples, and exposes its compiled row-key elements so that readers derive
// key ranges from the same elements writers encode with. No other package
// builds row keys.
//
// Decoding writes unboxed values (types.Datum): CellDecoder decodes the
// cells a store lends during a read (store.ReadCells) where they lie, the
// typed read path of queries; RowDecoder decodes assembled rows, and boxes
// its tuples for callers that want Values (DecodeRow, Decode, DecodeInto).
//
// A Default layout may have static columns (Attr.Static, static.go): one
// value per partition, in a partition row keyed by the partition key alone;
// a compiled layout too, when its relation declares them (checkStatic). A
// Default layout keeps a collection that is not frozen one cell per
// element, in a family of its own (collections.go).
//
// A layout is compiled from seed 003's DEFINE SCHEMA fields (Compile) — a
// layout of one relation with a hand-written encoding — or built for a
// column family of the advisor (Default): the same elements, so that one
// encoder and one decoder serve both.
//
// Invariants established by compilation (and relied on elsewhere):
//   - Every key attribute appears as an attribute element in the cell
//     coordinates (TABLE, ROW, FAMILY or QUALIFIER), so the cells of
//     different tuples never collide.
//   - Every attribute is recoverable from the cells (stored in some element,
//     or in an attr_value branch).
//   - Every variable-length natural element (STRING/BYTES attribute,
//     attr_name, attr_value) is last in its field or sub-field, or followed by
//     a non-empty constant that its values may not contain; so decoding is
//     unambiguous, and writes whose values would break that are rejected.
//
// Stability: this package is a stage of kvschema's pipeline, not an API;
// it changes as the pipeline does. Programs use package kvschema (the
// root), its database/sql driver, and the store seam (package store).
package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Size limits, Bigtable's where it has one, so a schema that works on the
// embedded store also works on the distributed one.
const (
	MaxRowKeyBytes    = 4096
	MaxQualifierBytes = 16 << 10
	MaxValueBytes     = 10 << 20
	MaxFamilyBytes    = 64
)

// DefaultFamily is the column family of a layout that declares none.
const DefaultFamily = "f"

// Encoding is how an attribute element is turned into bytes.
type Encoding uint8

// Element encodings.
const (
	Natural Encoding = iota // seed 003's: raw bytes / fixed-width big-endian
	Ordered                 // order-preserving and self-delimiting (keyenc)
	Desc                    // Ordered with bytes inverted: descending order
)

// ElemKind is the kind of a compiled element.
type ElemKind uint8

// Element kinds after flattening prefix/suffix/ordered/desc.
const (
	ElemConst     ElemKind = iota // constant bytes
	ElemAttr                      // an attribute's value
	ElemSize                      // length prefix followed by Body
	ElemSalt                      // one byte: hash(Body) mod Buckets
	ElemAttrName                  // the branch attribute's name
	ElemAttrValue                 // the branch attribute's value
)

// Element is one compiled element of a field.
type Element struct {
	Kind    ElemKind
	Pos     lang.Pos
	Lit     []byte    // ElemConst
	Attr    int       // ElemAttr
	Enc     Encoding  // ElemAttr
	Width   int       // ElemSize: bytes of the length prefix
	Buckets int       // ElemSalt
	Body    []Element // ElemSize, ElemSalt
	// int64 marks an ElemAttr of a BIGINT or TIMESTAMP in the ordered or
	// descending encoding (nullable: with a null marker), which the
	// decoder reads without the general decoder (prepareDecoding).
	int64, nullable bool
	typ             types.Type
}

// Field is a compiled field (TABLE, ROW, FAMILY, QUALIFIER or VALUE).
type Field struct {
	Name  string
	Elems []Element
	// shape says which of the decoder's fast paths the field takes
	// (prepareDecoding); the general interpreter decodes every shape and
	// reports every error.
	shape fieldShape
}

// fieldShape classes fields by how they decode.
type fieldShape uint8

const (
	shapeGeneral fieldShape = iota
	shapeEmpty              // no element: the field's bytes are empty
	// shapeText: one natural element of a STRING or BYTES attribute, the
	// field's whole bytes (the usual VALUE).
	shapeText
	// shapeInts: constants and int64 elements only (ordered{id}:ordered{seq}).
	shapeInts
)

// Attr is one attribute of the tuples a layout stores.
type Attr struct {
	Name string
	Type types.Type
	Key  bool // part of the tuple's identity: it must address the cells
	// Nullable: an ordered or desc element of it carries a NULL marker
	// byte (a relation's key attributes are not nullable; the attributes of
	// a column family's key are, as the advisor's engine encodes them).
	Nullable bool
	// Static: a static column (Cassandra's): one value per partition,
	// kept in the partition row (see PartitionRow), not in each row.
	// Partition: a key attribute of the partition key, which a compiled
	// layout's ROW starts with when it has static columns (a Default
	// layout is told its partition key).
	Static, Partition bool
}

// Layout is one physical layout of a relation.
type Layout struct {
	Name      string
	Primary   bool
	Attrs     []Attr // the tuple's attributes, in tuple order
	KeyIdx    []int  // indexes of the key attributes, in order
	Def       *lang.DefineSchema
	Table     Field
	Row       Field
	Family    Field
	Qualifier Field
	Value     Field

	// Branches are the attributes attr_name/attr_value range over (nil when
	// the layout has no attr_name): each tuple yields one cell per non-NULL
	// branch attribute.
	Branches []int
	// SaltBuckets is N of a leading salt(N){…} in ROW, else 0.
	SaltBuckets int
	// Splits are the SPLIT ON row keys, sorted: the layout's table is
	// pre-split at each. Only for a layout with a constant TABLE and no salt.
	Splits [][]byte
	// Static lists the static columns (Attr.Static), increasing; nil for
	// none. partitionKeys is the number of key attributes forming the
	// partition key (Default layouts).
	Static        []int
	partitionKeys int
	// Collections lists the value attributes of a Default layout that are
	// collections stored one cell per element (collections.go),
	// increasing; collFams are their families.
	Collections []int
	collFams    []string
	// openSalt[n] is OpenSalt(n), for every n ROW has attributes for.
	openSalt []int

	// wideRows: key attributes in FAMILY/QUALIFIER, so one row may hold
	// several tuples.
	wideRows bool
	// plainCells: FAMILY constant, QUALIFIER attr_name, VALUE attr_value
	// (one lookup and one value per cell, as every Default layout).
	plainCells bool

	staticTable  string // the table name if TABLE has no attributes
	staticFamily string // the family if FAMILY is constant
	byName       map[string]int
	names        [][]byte // per attribute, its name (attr_name's bytes)
}

// AttrIndex returns the index of the named attribute (case-insensitive) or -1.
func (l *Layout) AttrIndex(name string) int {
	if i, ok := l.byName[name]; ok { // names are usually written as declared
		return i
	}
	if i, ok := l.byName[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

// newLayout returns a layout of the tuples attrs describe, before its
// fields are set.
func newLayout(name string, attrs []Attr) *Layout {
	l := &Layout{Name: name, Attrs: attrs, byName: map[string]int{}, names: make([][]byte, len(attrs))}
	for i, a := range attrs {
		l.names[i] = []byte(a.Name)
		if a.Key {
			l.KeyIdx = append(l.KeyIdx, i)
		}
		l.byName[a.Name] = i
		if _, dup := l.byName[strings.ToLower(a.Name)]; !dup {
			l.byName[strings.ToLower(a.Name)] = i
		}
	}
	return l
}

// markerBranch selects the existence-marker cell of a tuple whose branch
// attributes are all NULL: attr_name yields "" and attr_value nothing.
const markerBranch = -2

// noBranch is used for layouts without attr_name.
const noBranch = -1

// Compile compiles the layout d defines for tuples of attrs (a relation's
// attributes, in declaration order). Errors carry d's file:line:col.
func Compile(attrs []Attr, d *lang.DefineSchema) (*Layout, error) {
	for _, a := range attrs {
		if StoredPerElement(a.Type) {
			return nil, errAt(d.At, "schema %s: attribute %s is a %s, stored one cell per element, which only the advisor's column families hold: declare it FROZEN<%s> (one value) to lay it out by hand", d.Name, a.Name, a.Type, a.Type)
		}
	}
	l := newLayout(d.Name, attrs)
	l.Primary, l.Def = d.Primary, d
	c := compiler{l: l}
	var err error
	table := d.Table
	if table == nil {
		table = lang.Concat{&lang.Const{At: d.At, Value: []byte(d.Name)}}
	}
	family := d.Family
	if family == nil {
		family = lang.Concat{&lang.Const{At: d.At, Value: []byte(DefaultFamily)}}
	}
	fields := []struct {
		dst  *Field
		name string
		src  lang.Concat
	}{
		{&l.Table, "TABLE", table},
		{&l.Row, "ROW", d.Row},
		{&l.Family, "FAMILY", family},
		{&l.Qualifier, "QUALIFIER", d.Qualifier},
		{&l.Value, "VALUE", d.Value},
	}
	for _, f := range fields {
		f.dst.Name = f.name
		c.field = f.name
		if f.dst.Elems, err = c.flatten(f.src, 0); err != nil {
			return nil, err
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	for _, f := range []*Field{&l.Family, &l.Qualifier} {
		walkAttrs(f.Elems, func(a int) {
			if l.Attrs[a].Key {
				l.wideRows = true
			}
		})
	}
	if len(l.Row.Elems) > 0 && l.Row.Elems[0].Kind == ElemSalt {
		l.SaltBuckets = l.Row.Elems[0].Buckets
	}
	if lit, ok := constOnly(l.Table.Elems); ok {
		l.staticTable = string(lit)
		if l.staticTable == "" {
			return nil, errAt(d.At, "schema %s: TABLE is empty", d.Name)
		}
	}
	if lit, ok := constOnly(l.Family.Elems); ok {
		l.staticFamily = string(lit)
		if err := checkFamily(l.staticFamily); err != nil {
			return nil, errAt(d.At, "schema %s: %v", d.Name, err)
		}
	}
	if err := c.checkStatic(); err != nil {
		return nil, err
	}
	l.plainCells = l.isPlain()
	l.prepareDecoding()
	if l.Splits, err = splitKeys(l, d.SplitOn); err != nil {
		return nil, err
	}
	return l, nil
}

// prepareDecoding marks the elements the decoder has a fast path for
// (Element.int64), in every field.
func (l *Layout) prepareDecoding() {
	var mark func(es []Element)
	mark = func(es []Element) {
		for i := range es {
			e := &es[i]
			if e.Kind == ElemAttr && (e.Enc == Ordered || e.Enc == Desc) {
				if t := l.Attrs[e.Attr].Type; t == types.BigInt || t == types.Timestamp {
					e.int64, e.nullable, e.typ = true, l.Attrs[e.Attr].Nullable, t
				}
			}
			mark(e.Body)
		}
	}
	for _, f := range []*Field{&l.Table, &l.Row, &l.Family, &l.Qualifier, &l.Value} {
		mark(f.Elems)
		f.shape = l.shapeOf(f.Elems)
	}
	l.openSalt = l.openSalt[:0]
	for n := 0; ; n++ {
		if _, err := l.keyPrefixElems(n); err != nil {
			break
		}
		l.openSalt = append(l.openSalt, l.openSaltOf(n))
	}
}

// shapeOf classes a field's elements (after mark).
func (l *Layout) shapeOf(es []Element) fieldShape {
	if len(es) == 0 {
		return shapeEmpty
	}
	if len(es) == 1 && es[0].Kind == ElemAttr && es[0].Enc == Natural {
		if t := l.Attrs[es[0].Attr].Type; t == types.String || t == types.Bytes {
			return shapeText
		}
	}
	for i := range es {
		if !es[i].int64 && es[i].Kind != ElemConst {
			return shapeGeneral
		}
	}
	return shapeInts
}

// splitKeys checks the SPLIT ON keys of layout l and returns them sorted.
func splitKeys(l *Layout, keys []*lang.Const) ([][]byte, error) {
	if keys == nil {
		return nil, nil
	}
	switch {
	case l.SaltBuckets > 0:
		// PHOENIX-6587: the bucket byte already splits the table.
		return nil, errAt(keys[0].At, "schema %s: SPLIT ON cannot be used with salt(N){…} in ROW (a salted table is already split at every bucket)", l.Name)
	case l.staticTable == "":
		return nil, errAt(keys[0].At, "schema %s: SPLIT ON needs a constant TABLE (this one depends on attributes, so its tables are created on first write)", l.Name)
	}
	out := make([][]byte, 0, len(keys))
	seen := map[string]lang.Pos{}
	for _, k := range keys {
		if len(k.Value) == 0 {
			return nil, errAt(k.At, "schema %s: a split key cannot be empty (every row key is at or after it)", l.Name)
		}
		if len(k.Value) > MaxRowKeyBytes {
			return nil, errAt(k.At, "schema %s: split key of %d bytes is longer than a row key may be (%d)", l.Name, len(k.Value), MaxRowKeyBytes)
		}
		if first, dup := seen[string(k.Value)]; dup {
			return nil, errAt(k.At, "schema %s: split key %s is listed twice (first at %d:%d)", l.Name, lang.PrintConcat(lang.Concat{k}), first.Line, first.Col)
		}
		seen[string(k.Value)] = k.At
		out = append(out, k.Value)
	}
	slices.SortFunc(out, bytes.Compare)
	return out, nil
}

func checkFamily(f string) error {
	switch {
	case f == "":
		return fmt.Errorf("column family is empty")
	case len(f) > MaxFamilyBytes:
		return fmt.Errorf("column family is %d bytes; the limit is %d", len(f), MaxFamilyBytes)
	case strings.IndexByte(f, 0) >= 0:
		return fmt.Errorf("column family %q contains a 0x00 byte", f)
	}
	return nil
}

func constOnly(es []Element) ([]byte, bool) {
	var out []byte
	for _, e := range es {
		if e.Kind != ElemConst {
			return nil, false
		}
		out = append(out, e.Lit...)
	}
	return out, true
}

type compiler struct {
	l        *Layout
	field    string
	names    *lang.AttrNames
	values   *lang.AttrValues
	namesPos lang.Pos
}

// flatten turns a Concat into elements: prefix/suffix become constants around
// their body, ordered/desc set the encoding of the attributes they wrap, and
// adjacent constants merge (empty ones vanish) so that "followed by a
// constant" is a property of the next element.
func (c *compiler) flatten(src lang.Concat, depth int) ([]Element, error) {
	var out []Element
	add := func(e Element) {
		if e.Kind == ElemConst {
			if len(e.Lit) == 0 {
				return
			}
			if n := len(out); n > 0 && out[n-1].Kind == ElemConst {
				out[n-1].Lit = append(append([]byte(nil), out[n-1].Lit...), e.Lit...)
				return
			}
		}
		out = append(out, e)
	}
	for _, el := range src {
		switch e := el.(type) {
		case *lang.Const:
			add(Element{Kind: ElemConst, Pos: e.At, Lit: e.Value})
		case *lang.AttrRef:
			a, err := c.attr(e.At, e.Name)
			if err != nil {
				return nil, err
			}
			add(Element{Kind: ElemAttr, Pos: e.At, Attr: a, Enc: Natural})
		case *lang.AttrNames:
			if c.field != "FAMILY" && c.field != "QUALIFIER" || depth > 0 {
				return nil, errAt(e.At, "schema %s: attr_name[…] may only appear in FAMILY or QUALIFIER, outside size/salt/ordered/desc", c.l.Name)
			}
			if c.names != nil {
				return nil, errAt(e.At, "schema %s: only one attr_name[…] per schema", c.l.Name)
			}
			c.names = e
			add(Element{Kind: ElemAttrName, Pos: e.At})
		case *lang.AttrValues:
			if c.field != "VALUE" || depth > 0 {
				return nil, errAt(e.At, "schema %s: attr_value[…] may only appear in VALUE, outside size/salt/ordered/desc", c.l.Name)
			}
			if c.values != nil {
				return nil, errAt(e.At, "schema %s: only one attr_value[…] per schema", c.l.Name)
			}
			c.values = e
			add(Element{Kind: ElemAttrValue, Pos: e.At})
		case *lang.Modifier:
			// prefix/suffix only add constants around their body, so
			// depth counts the other modifiers only.
			inner := depth + 1
			if e.Name == "prefix" || e.Name == "suffix" {
				inner = depth
			}
			body, err := c.flatten(e.Body, inner)
			if err != nil {
				return nil, err
			}
			switch e.Name {
			case "prefix", "suffix":
				lit, _ := e.Args[0].([]byte)
				if len(lit) == 0 {
					return nil, errAt(e.At, "schema %s: %s('') needs a non-empty separator", c.l.Name, e.Name)
				}
				if e.Name == "prefix" {
					add(Element{Kind: ElemConst, Pos: e.At, Lit: lit})
				}
				for _, b := range body {
					add(b)
				}
				if e.Name == "suffix" {
					add(Element{Kind: ElemConst, Pos: e.At, Lit: lit})
				}
			case "ordered", "desc":
				enc := Ordered
				if e.Name == "desc" {
					enc = Desc
				}
				for _, b := range body {
					if b.Kind != ElemAttr || b.Enc != Natural {
						return nil, errAt(b.Pos, "schema %s: %s{…} may contain only attribute names", c.l.Name, e.Name)
					}
					b.Enc = enc
					add(b)
				}
			case "size":
				w := int64(1)
				if len(e.Args) == 1 {
					w, _ = e.Args[0].(int64)
				}
				if len(body) == 0 {
					return nil, errAt(e.At, "schema %s: size{…} needs a body", c.l.Name)
				}
				add(Element{Kind: ElemSize, Pos: e.At, Width: int(w), Body: body})
			case "salt":
				n, _ := e.Args[0].(int64)
				if c.field != "ROW" || depth > 0 || len(out) > 0 {
					return nil, errAt(e.At, "schema %s: salt(N){…} must be the first element of ROW", c.l.Name)
				}
				if len(body) == 0 {
					return nil, errAt(e.At, "schema %s: salt(N){…} needs the attributes to hash", c.l.Name)
				}
				for _, b := range body {
					if b.Kind == ElemSalt || b.Kind == ElemSize {
						return nil, errAt(b.Pos, "schema %s: salt body may contain only attributes and constants", c.l.Name)
					}
				}
				add(Element{Kind: ElemSalt, Pos: e.At, Buckets: int(n), Body: body})
			default:
				return nil, errAt(e.At, "schema %s: unknown modifier %s", c.l.Name, e.Name)
			}
		default:
			return nil, errAt(el.Pos(), "schema %s: unexpected element", c.l.Name)
		}
	}
	return out, nil
}

func (c *compiler) attr(p lang.Pos, name string) (int, error) {
	a := c.l.AttrIndex(name)
	if a < 0 {
		return 0, errAt(p, "schema %s: relation %s has no attribute %s", c.l.Name, c.l.Def.Relation, name)
	}
	return a, nil
}

// check enforces the package invariants on the flattened fields.
func (c *compiler) check() error {
	l := c.l
	if len(l.Row.Elems) == 0 {
		return errAt(l.Def.At, "schema %s: ROW is empty", l.Name)
	}
	switch {
	case c.names == nil && c.values != nil:
		return errAt(c.values.At, "schema %s: attr_value[…] needs an attr_name[…] in FAMILY or QUALIFIER", l.Name)
	case c.names != nil && c.values == nil:
		return errAt(c.names.At, "schema %s: attr_name[…] needs an attr_value[…] in VALUE, or the values are lost", l.Name)
	case c.names != nil:
		if !sameNames(c.names.Exclude, c.values.Exclude) {
			return errAt(c.values.At, "schema %s: attr_value[…] must list the same attributes as attr_name[…]", l.Name)
		}
		excl := map[int]bool{}
		for _, n := range c.names.Exclude {
			a, err := c.attr(c.names.At, n)
			if err != nil {
				return err
			}
			excl[a] = true
		}
		statics := false
		l.Branches = []int{} // attr_name, even if it ranges over static columns only
		for i := range l.Attrs {
			switch {
			case !excl[i] && l.Attrs[i].Static:
				statics = true // in the partition row (checkStatic)
			case !excl[i]:
				l.Branches = append(l.Branches, i)
			}
		}
		if len(l.Branches) == 0 && !statics {
			return errAt(c.names.At, "schema %s: attr_name[…] excludes every attribute", l.Name)
		}
	}
	for _, f := range []*Field{&l.Table, &l.Row, &l.Family, &l.Qualifier, &l.Value} {
		if err := c.checkDelimited(f.Name, f.Elems); err != nil {
			return err
		}
	}
	// Key attributes must address the cells; every attribute must be stored.
	coord := map[int]bool{}
	stored := map[int]bool{}
	for _, f := range []*Field{&l.Table, &l.Row, &l.Family, &l.Qualifier} {
		walkAttrs(f.Elems, func(a int) { coord[a] = true; stored[a] = true })
	}
	walkAttrs(l.Value.Elems, func(a int) { stored[a] = true })
	for _, a := range l.Branches {
		stored[a] = true
	}
	for i, a := range l.Attrs {
		if a.Static {
			stored[i] = true // in the partition row (checkStatic)
		}
	}
	for _, k := range l.KeyIdx {
		if !coord[k] {
			return errAt(l.Def.At, "schema %s: key attribute %s must appear in TABLE, ROW, FAMILY or QUALIFIER", l.Name, l.Attrs[k].Name)
		}
	}
	for i, a := range l.Attrs {
		if !stored[i] {
			return errAt(l.Def.At, "schema %s: attribute %s is stored nowhere (add it to VALUE or use attr_name/attr_value)", l.Name, a.Name)
		}
	}
	return nil
}

// checkStatic checks the static columns of a compiled layout (Attr.Static,
// of a relation with a partition key: Attr.Partition) and records them:
// they live in partition rows as a Default layout's do (static.go), so the
// layout must have a constant TABLE and FAMILY (not the partition rows'
// family), one tuple per row, no static column in its fields, and a ROW
// that starts with the partition key attributes, encoded so that a
// partition's key prefixes exactly its rows and is no row's key.
func (c *compiler) checkStatic() error {
	l := c.l
	var part []int
	for i, a := range l.Attrs {
		if a.Static {
			l.Static = append(l.Static, i)
		}
		if a.Partition {
			part = append(part, i)
		}
	}
	if len(l.Static) == 0 {
		return nil
	}
	name := l.Attrs[l.Static[0]].Name
	fail := func(format string, args ...any) error {
		return errAt(l.Def.At, "schema %s: static column %s: "+format, append([]any{l.Name, name}, args...)...)
	}
	switch {
	case len(part) == 0:
		return fail("the relation has no PARTITION KEY")
	case l.staticTable == "":
		return fail("a layout with static columns needs a constant TABLE (a partition's row lives beside its tuples' rows)")
	case l.staticFamily == "" || l.staticFamily == StaticColumnFamily:
		return fail("a layout with static columns needs a constant FAMILY other than %q (the partition rows')", StaticColumnFamily)
	case l.wideRows:
		return fail("a layout with static columns keeps one tuple per row (no key attribute in FAMILY or QUALIFIER)")
	}
	var inField error
	var walk func(f string, es []Element)
	walk = func(f string, es []Element) {
		for _, e := range es {
			if e.Kind == ElemAttr && l.Attrs[e.Attr].Static && inField == nil {
				name = l.Attrs[e.Attr].Name
				inField = fail("it is in %s: a static column lives in its partition's row, not in the fields", f)
			}
			walk(f, e.Body)
		}
	}
	for _, f := range []*Field{&l.Table, &l.Row, &l.Family, &l.Qualifier, &l.Value} {
		walk(f.Name, f.Elems)
	}
	if inField != nil {
		return inField
	}
	es, err := l.keyPrefixElems(len(part))
	if err != nil {
		return fail("ROW must start with the partition key")
	}
	delimited := func(e Element) bool {
		return e.Enc == Ordered || e.Enc == Desc || l.Attrs[e.Attr].Type.FixedWidth() > 0
	}
	for _, e := range es {
		switch e.Kind {
		case ElemAttr:
			if !l.Attrs[e.Attr].Partition {
				return fail("ROW must start with the partition key (%s is not in it)", l.Attrs[e.Attr].Name)
			}
			if !delimited(e) {
				return fail("ROW's partition key attribute %s must be ordered{…}, desc{…} or of fixed width, so that a partition's key is no other's prefix", l.Attrs[e.Attr].Name)
			}
		case ElemSalt:
			for _, b := range e.Body {
				if b.Kind == ElemAttr && !l.Attrs[b.Attr].Partition {
					return fail("ROW's salt hashes %s, which is not in the partition key: a partition's tuples would not share its bucket", l.Attrs[b.Attr].Name)
				}
			}
		case ElemSize:
			return fail("ROW's partition key must be attributes, constants and a salt")
		}
	}
	if len(es) == len(l.Row.Elems) {
		return fail("ROW must hold the clustering key after the partition key")
	}
	switch next := l.Row.Elems[len(es)]; next.Kind {
	case ElemConst:
		if len(next.Lit) == 0 {
			return fail("ROW's element after the partition key is empty")
		}
	case ElemAttr:
		if !delimited(next) {
			return fail("ROW's element after the partition key, %s, must be ordered{…}, desc{…}, of fixed width, or follow a constant, so that no tuple's row key is its partition's", l.Attrs[next.Attr].Name)
		}
	}
	l.partitionKeys = len(part)
	return nil
}

// walkAttrs visits the attributes stored (recoverable) in es: salt bodies are
// hashed, not stored, so they are skipped.
func walkAttrs(es []Element, fn func(int)) {
	for _, e := range es {
		switch e.Kind {
		case ElemAttr:
			fn(e.Attr)
		case ElemSize:
			walkAttrs(e.Body, fn)
		}
	}
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// checkDelimited enforces that variable-length natural elements can be found
// again when decoding.
func (c *compiler) checkDelimited(field string, es []Element) error {
	for i, e := range es {
		if e.Kind == ElemSize || e.Kind == ElemSalt {
			if err := c.checkDelimited(field, e.Body); err != nil {
				return err
			}
		}
		if !c.varLength(e) || i == len(es)-1 || es[i+1].Kind == ElemConst {
			continue
		}
		what := "attr_name[…]"
		switch e.Kind {
		case ElemAttr:
			what = "attribute " + c.l.Attrs[e.Attr].Name
		case ElemAttrValue:
			what = "attr_value[…]"
		}
		return errAt(e.Pos, "schema %s: %s in %s has variable length: put it last, follow it with a constant or suffix('…'), or wrap it in size{…} or ordered{…}", c.l.Name, what, field)
	}
	return nil
}

func (c *compiler) varLength(e Element) bool {
	switch e.Kind {
	case ElemAttr:
		return e.Enc == Natural && c.l.Attrs[e.Attr].Type.FixedWidth() == 0
	case ElemAttrName:
		return true
	case ElemAttrValue:
		for _, a := range c.l.Branches {
			if c.l.Attrs[a].Type.FixedWidth() == 0 {
				return true
			}
		}
	}
	return false
}

// WideRows reports whether one row may hold several tuples (key attributes in
// FAMILY or QUALIFIER): then a row limit is not a tuple limit.
func (l *Layout) WideRows() bool { return l.wideRows }

// StaticTable is the layout's table name when TABLE is constant, else "".
func (l *Layout) StaticTable() string { return l.staticTable }

// StaticFamily is the layout's family when FAMILY is constant, else "".
func (l *Layout) StaticFamily() string { return l.staticFamily }

// EncodeError is a value that a layout cannot store.
type EncodeError struct {
	Layout string
	Field  string
	Attr   string // "" when not about one attribute
	Msg    string
}

func (e *EncodeError) Error() string {
	if e.Attr != "" {
		return fmt.Sprintf("schema %s, %s: attribute %s: %s", e.Layout, e.Field, e.Attr, e.Msg)
	}
	return fmt.Sprintf("schema %s, %s: %s", e.Layout, e.Field, e.Msg)
}

// encoder carries the state of encoding one tuple.
type encoder struct {
	l      *Layout
	tuple  []types.Value
	datums []types.Datum // the tuple unboxed, in place of tuple when set
	branch int
	field  string
	// bucket, when not 0, is 1 + the bucket to write for a salt (an open
	// one: AppendKeyPrefixDatumsIn) instead of hashing its body.
	bucket int
}

// value is attribute a's value, boxed (for messages).
func (en *encoder) value(a int) types.Value {
	if en.datums != nil {
		return en.datums[a].Value()
	}
	return en.tuple[a]
}

// isNull reports whether attribute a is NULL.
func (en *encoder) isNull(a int) bool {
	if en.datums != nil {
		return en.datums[a].IsNull()
	}
	return en.tuple[a] == nil
}

// appendAttr appends attribute a's value in encoding enc.
func (en *encoder) appendAttr(dst []byte, a int, enc Encoding) ([]byte, error) {
	at := en.l.Attrs[a]
	if en.datums != nil {
		d := en.datums[a]
		switch enc {
		case Ordered:
			return keyenc.AppendOrderedDatum(dst, at.Type, d, at.Nullable)
		case Desc:
			return keyenc.AppendDescDatum(dst, at.Type, d, at.Nullable)
		}
		return keyenc.AppendNaturalDatum(dst, at.Type, d)
	}
	v := en.tuple[a]
	switch enc {
	case Ordered:
		return keyenc.AppendOrdered(dst, at.Type, v, at.Nullable)
	case Desc:
		return keyenc.AppendDesc(dst, at.Type, v, at.Nullable)
	}
	return keyenc.AppendNatural(dst, at.Type, v)
}

func (en *encoder) fail(attr int, format string, args ...any) error {
	e := &EncodeError{Layout: en.l.Name, Field: en.field, Msg: fmt.Sprintf(format, args...)}
	if attr >= 0 {
		e.Attr = en.l.Attrs[attr].Name
	}
	return e
}

// appendElems encodes es; next is the constant following es in an enclosing
// sequence (nil if none), used to check separator-free values.
func (en *encoder) appendElems(dst []byte, es []Element) ([]byte, error) {
	r := en.l
	for i, e := range es {
		var sep []byte
		if i+1 < len(es) && es[i+1].Kind == ElemConst {
			sep = es[i+1].Lit
		}
		start := len(dst)
		var err error
		switch e.Kind {
		case ElemConst:
			dst = append(dst, e.Lit...)
		case ElemAttr:
			if e.Enc == Natural && en.isNull(e.Attr) {
				return nil, en.fail(e.Attr, "is NULL, which the natural encoding cannot store (use ordered{…} or attr_name/attr_value)")
			}
			if dst, err = en.appendAttr(dst, e.Attr, e.Enc); err != nil {
				return nil, en.fail(e.Attr, "%v", err)
			}
			if e.Enc == Natural && sep != nil && !separatorFree(dst[start:], sep) {
				return nil, en.fail(e.Attr, "value %s contains the separator %q", types.Format(en.value(e.Attr)), sep)
			}
		case ElemAttrName:
			if en.branch >= 0 {
				dst = append(dst, r.Attrs[en.branch].Name...)
			}
		case ElemAttrValue:
			if en.branch >= 0 {
				if dst, err = en.appendAttr(dst, en.branch, Natural); err != nil {
					return nil, en.fail(en.branch, "%v", err)
				}
				if sep != nil && !separatorFree(dst[start:], sep) {
					return nil, en.fail(en.branch, "value %s contains the separator %q", types.Format(en.value(en.branch)), sep)
				}
			}
		case ElemSize:
			body, err := en.appendElems(nil, e.Body)
			if err != nil {
				return nil, err
			}
			if max := 1<<(8*e.Width) - 1; len(body) > max {
				return nil, en.fail(-1, "size{…} body is %d bytes; a %d-byte length holds at most %d", len(body), e.Width, max)
			}
			var lenBuf [4]byte
			binary.BigEndian.PutUint32(lenBuf[:], uint32(len(body)))
			dst = append(dst, lenBuf[4-e.Width:]...)
			dst = append(dst, body...)
		case ElemSalt:
			if en.bucket > 0 {
				dst = append(dst, byte(en.bucket-1))
				continue
			}
			body, err := en.appendElems(nil, e.Body)
			if err != nil {
				return nil, err
			}
			dst = append(dst, keyenc.SaltBucket(body, e.Buckets))
		}
	}
	return dst, nil
}

// separatorFree reports whether value followed by sep is found again as
// value: the first occurrence of sep in value+sep is right after value.
func separatorFree(value, sep []byte) bool {
	joined := make([]byte, 0, len(value)+len(sep))
	joined = append(append(joined, value...), sep...)
	return bytes.Index(joined, sep) == len(value)
}

func (en *encoder) field1(f *Field, dst []byte) ([]byte, error) {
	en.field = f.Name
	return en.appendElems(dst, f.Elems)
}

// Arena is scratch space for encoding many cells with few allocations:
// encodings are appended to a large chunk, and the slices handed out are
// capped so they are never overwritten. The zero Arena is ready; a nil
// *Arena allocates per encoding.
type Arena struct {
	buf   []byte
	cells []Cell // reused by PutCellsArena
	// chunks are the full chunks before buf, and spare those Reset freed:
	// a writer that resets its arena after each batch stops allocating.
	chunks, spare [][]byte
}

const (
	arenaChunk = 64 << 10
	// arenaKeep bounds the chunks Reset keeps (4 MiB): one huge statement
	// does not pin its memory for the life of the arena.
	arenaKeep = 64
)

// Reset makes the arena's memory reusable: every slice it handed out
// becomes invalid.
func (a *Arena) Reset() {
	if a.buf != nil {
		a.chunks = append(a.chunks, a.buf)
	}
	for _, c := range a.chunks {
		if len(a.spare) < arenaKeep {
			a.spare = append(a.spare, c[:0])
		}
	}
	clear(a.chunks)
	a.buf, a.chunks = nil, a.chunks[:0]
}

// encode runs an append-style encoding into the arena.
func (a *Arena) encode(f func(dst []byte) ([]byte, error)) ([]byte, error) {
	if a == nil {
		return f(nil)
	}
	if cap(a.buf)-len(a.buf) < 256 {
		if a.buf != nil {
			a.chunks = append(a.chunks, a.buf)
		}
		if n := len(a.spare); n > 0 {
			a.buf, a.spare = a.spare[n-1], a.spare[:n-1]
		} else {
			a.buf = make([]byte, 0, arenaChunk)
		}
	}
	start := len(a.buf)
	out, err := f(a.buf)
	if err != nil {
		return nil, err // bytes past len(a.buf) are simply unused
	}
	if len(out) <= cap(a.buf) {
		a.buf = out // append stayed within the chunk
	} else {
		// The encoding outgrew the chunk and append moved it: keep the
		// moved copy for this value, start a new chunk for the next.
		a.buf = nil
	}
	return out[start:len(out):len(out)], nil
}

// TableOf computes the table a tuple is stored in.
func (l *Layout) TableOf(tuple []types.Value) (string, error) {
	if l.staticTable != "" {
		return l.staticTable, nil
	}
	en := encoder{l: l, tuple: tuple, branch: noBranch}
	b, err := en.field1(&l.Table, nil)
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", en.fail(-1, "table name is empty")
	}
	return string(b), nil
}

// RowKey computes the row key of a tuple.
func (l *Layout) RowKey(tuple []types.Value) ([]byte, error) {
	return l.rowKey(tuple, nil)
}

// AppendRowKey appends the row key of a tuple to dst.
func (l *Layout) AppendRowKey(dst []byte, tuple []types.Value) ([]byte, error) {
	en := encoder{l: l, tuple: tuple, branch: noBranch, field: "ROW"}
	start := len(dst)
	k, err := en.appendElems(dst, l.Row.Elems)
	if err == nil && len(k)-start > MaxRowKeyBytes {
		err = en.fail(-1, "row key is %d bytes; the limit is %d", len(k)-start, MaxRowKeyBytes)
	}
	return k, err
}

func (l *Layout) rowKey(tuple []types.Value, a *Arena) ([]byte, error) {
	en := encoder{l: l, tuple: tuple, branch: noBranch, field: "ROW"}
	k, err := a.encode(func(dst []byte) ([]byte, error) { return en.appendElems(dst, l.Row.Elems) })
	if err == nil && len(k) > MaxRowKeyBytes {
		err = en.fail(-1, "row key is %d bytes; the limit is %d", len(k), MaxRowKeyBytes)
	}
	return k, err
}

// Cell is a cell of a tuple with its table and row.
type Cell struct {
	Table string
	Row   []byte
	store.Cell
	// WholeFamily, in a list of deletes, deletes every cell of Family in
	// Row (store.DeleteFamily): a collection replaced whole.
	WholeFamily bool
}

// AppendMutations appends the mutations writing the cells puts and deleting
// the cells deletes, the deletes first (a collection replaced whole loses
// its family's cells before it gets its new ones).
func AppendMutations(muts []store.Mutation, puts, deletes []Cell) []store.Mutation {
	for _, c := range deletes {
		kind := store.DeleteCell
		if c.WholeFamily {
			kind = store.DeleteFamily
		}
		muts = append(muts, store.Mutation{Kind: kind, Table: c.Table, Row: c.Row, Family: c.Family, Qualifier: c.Qualifier})
	}
	for _, c := range puts {
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: c.Table, Row: c.Row, Family: c.Family, Qualifier: c.Qualifier, Value: c.Value})
	}
	return muts
}

// PutCells returns the cells to write for a tuple (puts) and the cells of
// its NULL branch attributes (deletes), which an upsert must remove so a NULL
// overwrites an old value. The cells' bytes may be shared with the layout
// and other cells: callers do not modify them.
func (l *Layout) PutCells(tuple []types.Value) (puts, deletes []Cell, err error) {
	return l.cells(tuple, false, nil)
}

// PutCellsArena is PutCells encoding into an arena (for batches). The
// returned slices are valid until the next call with the same arena; the
// bytes they point to stay valid.
func (l *Layout) PutCellsArena(tuple []types.Value, a *Arena) (puts, deletes []Cell, err error) {
	return l.cells(tuple, false, a)
}

// AllCells returns every cell a tuple may occupy in this layout, present or
// not (all branch attributes and the existence marker): what a delete removes.
func (l *Layout) AllCells(tuple []types.Value) ([]Cell, error) {
	puts, deletes, err := l.cells(tuple, true, nil)
	return append(puts, deletes...), err
}

func (l *Layout) cells(tuple []types.Value, forDelete bool, a *Arena) (puts, deletes []Cell, err error) {
	table, err := l.TableOf(tuple)
	if err != nil {
		return nil, nil, err
	}
	row, err := l.rowKey(tuple, a)
	if err != nil {
		return nil, nil, err
	}
	// one encodes the cell of a branch; coordsOnly skips the value (the
	// branch attribute may be NULL).
	one := func(branch int, coordsOnly bool) (Cell, error) {
		en := encoder{l: l, tuple: tuple, branch: branch}
		fam := l.staticFamily // checked when the layout was defined
		if fam == "" {
			b, err := en.field1(&l.Family, nil)
			if err != nil {
				return Cell{}, err
			}
			if err := checkFamily(string(b)); err != nil {
				return Cell{}, en.fail(-1, "%v", err)
			}
			fam = string(b)
		}
		en.field = l.Qualifier.Name
		var qual []byte
		var err error
		if len(l.Qualifier.Elems) == 1 && l.Qualifier.Elems[0].Kind == ElemAttrName {
			// The qualifier is the branch's name: shared, not encoded.
			if branch >= 0 {
				qual = l.names[branch]
			}
		} else if qual, err = a.encode(func(dst []byte) ([]byte, error) { return en.appendElems(dst, l.Qualifier.Elems) }); err != nil {
			return Cell{}, err
		}
		if len(qual) > MaxQualifierBytes {
			return Cell{}, en.fail(-1, "qualifier is %d bytes; the limit is %d", len(qual), MaxQualifierBytes)
		}
		if coordsOnly {
			return Cell{Table: table, Row: row, Cell: store.Cell{Family: fam, Qualifier: qual}}, nil
		}
		en.field = l.Value.Name
		val, err := a.encode(func(dst []byte) ([]byte, error) { return en.appendElems(dst, l.Value.Elems) })
		if err != nil {
			return Cell{}, err
		}
		if len(val) > MaxValueBytes {
			return Cell{}, en.fail(-1, "value is %d bytes; the limit is %d", len(val), MaxValueBytes)
		}
		if val == nil {
			val = []byte{}
		}
		return Cell{Table: table, Row: row, Cell: store.Cell{Family: fam, Qualifier: qual, Value: val}}, nil
	}
	if l.Branches == nil {
		c, err := one(noBranch, forDelete)
		if err != nil {
			return nil, nil, err
		}
		if len(l.Collections) > 0 {
			return l.appendCollections([]Cell{c}, nil, table, row, tuple, forDelete)
		}
		if a != nil {
			a.cells = append(a.cells[:0], c)
			return a.cells, nil, nil
		}
		return []Cell{c}, nil, nil
	}
	puts = make([]Cell, 0, len(l.Branches)+1)
	for _, a := range l.Branches {
		if tuple[a] == nil || forDelete {
			c, err := one(a, true)
			if err != nil {
				return nil, nil, err
			}
			deletes = append(deletes, c)
			continue
		}
		c, err := one(a, false)
		if err != nil {
			return nil, nil, err
		}
		puts = append(puts, c)
	}
	// A tuple whose branch attributes are all NULL still needs one cell, or
	// it would vanish from this layout. A stale marker next to real cells is
	// harmless (decoding skips it), so upserts do not delete it.
	if len(puts) == 0 || forDelete {
		marker, err := one(markerBranch, forDelete)
		if err != nil {
			return nil, nil, err
		}
		if forDelete {
			deletes = append(deletes, marker)
		} else {
			puts = append(puts, marker)
		}
	}
	if len(l.Collections) > 0 {
		return l.appendCollections(puts, deletes, table, row, tuple, forDelete)
	}
	return puts, deletes, nil
}

// appendCollections appends the cells of tuple's collections stored one
// cell per element: each replaced whole (for a delete, only removed).
func (l *Layout) appendCollections(puts, deletes []Cell, table string, row []byte, tuple []types.Value, forDelete bool) ([]Cell, []Cell, error) {
	for _, a := range l.Collections {
		v := tuple[a]
		if forDelete {
			v = nil
		}
		var err error
		if puts, deletes, err = l.collectionCells(puts, deletes, table, row, a, v); err != nil {
			return nil, nil, err
		}
	}
	return puts, deletes, nil
}

// MarkerCell returns the existence marker of tuple's row (only its key
// attributes are read), in a layout of attr_name/attr_value cells: the
// empty cell that keeps the row existing whatever its values. An update
// whose cells expire (USING TTL) writes it, without expiry, so that the
// row outlives them, as the tuple does in every layout.
func (l *Layout) MarkerCell(tuple []types.Value) (Cell, error) {
	if l.Branches == nil {
		return Cell{}, fmt.Errorf("schema %s: no attr_name cells, no marker", l.Name)
	}
	tu := slices.Clone(tuple) // the row's coordinates, every cell's value NULL
	for _, a := range l.Branches {
		tu[a] = nil
	}
	for _, a := range l.Collections {
		tu[a] = nil
	}
	puts, _, err := l.cells(tu, false, nil)
	if err != nil {
		return Cell{}, err
	}
	for _, c := range puts {
		if c.Family == l.staticFamily || l.staticFamily == "" {
			return c, nil // the marker: every branch is NULL
		}
	}
	return Cell{}, fmt.Errorf("schema %s: no marker cell", l.Name)
}

// AppendElements encodes the elements es of this layout for a (partial)
// tuple: the planner uses it to build key prefixes element by element. An
// attribute followed by a constant should be encoded together with it, so
// that separator checks apply.
func (l *Layout) AppendElements(dst []byte, field string, es []Element, tuple []types.Value) ([]byte, error) {
	en := encoder{l: l, tuple: tuple, branch: noBranch, field: field}
	return en.appendElems(dst, es)
}

// CoordinatesUseNonKey reports whether a non-key attribute helps address
// this layout's cells (TABLE, ROW including its salt, FAMILY, QUALIFIER):
// such an index-like layout moves a tuple's cells when that attribute
// changes, so writers must know the old value.
func (l *Layout) CoordinatesUseNonKey() bool {
	found := false
	var walk func([]Element)
	walk = func(es []Element) {
		for _, e := range es {
			if e.Kind == ElemAttr && !l.Attrs[e.Attr].Key {
				found = true
			}
			walk(e.Body)
		}
	}
	for _, f := range []*Field{&l.Table, &l.Row, &l.Family, &l.Qualifier} {
		walk(f.Elems)
	}
	return found
}

// TableMatches reports whether a store table name is one of this layout's
// tables (its TABLE field decodes from it).
func (l *Layout) TableMatches(name string) bool {
	if l.staticTable != "" {
		return name == l.staticTable
	}
	n := len(l.Attrs)
	d := decoder{l: l, tuple: make([]types.Datum, n), set: newAttrSet(n)}
	return d.decodeField(&l.Table, []byte(name)) == nil
}

func errAt(p lang.Pos, format string, args ...any) error {
	return &lang.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}
