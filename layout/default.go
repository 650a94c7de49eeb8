package layout

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// DefaultCFFamily is the one family of a Default layout.
const DefaultCFFamily = "v"

// Default is the layout of a column family as the advisor designs it, in
// seed 003's terms:
//
//	TABLE 'name',
//	ROW [salt(N){ordered{p1…}}:]ordered{p1}:…:ordered{c1}:…,
//	FAMILY 'v',
//	QUALIFIER attr_name[keys], VALUE attr_value[keys]
//
// with every key attribute nullable (a NULL marker byte in the key). attrs
// lists the partition key (nhash attributes), then the clustering key (up
// to nkey), then the values. One cell per non-NULL value, named by its
// attribute; a row whose values are all NULL, or that has none, keeps an
// empty marker cell. splits are the table's SPLIT ON points.
//
// With partition buckets (Cassandra's bucketing, seed 001/002; exclusive
// with salt buckets) the leading salt hashes the whole key instead,
// salt(N){ordered{p1}…ordered{c1}…}: a partition's rows spread over N
// buckets, each a contiguous range of its own, so a read of a partition
// reads N prefixes (OpenSalt, AppendKeyPrefixDatumsIn) and a point lookup
// one.
func Default(name string, attrs []Attr, nhash, nkey, saltBuckets, partitionBuckets int, splits [][]byte) (*Layout, error) {
	switch {
	case nhash < 1 || nhash > nkey || nkey > len(attrs):
		return nil, fmt.Errorf("layout %s: %d partition and %d key attributes of %d", name, nhash, nkey, len(attrs))
	case saltBuckets < 0 || saltBuckets > 256:
		return nil, fmt.Errorf("layout %s: %d salt buckets (1 to 256)", name, saltBuckets)
	case partitionBuckets != 0 && (partitionBuckets < 2 || partitionBuckets > 256):
		return nil, fmt.Errorf("layout %s: %d partition buckets (2 to 256)", name, partitionBuckets)
	case partitionBuckets > 0 && saltBuckets > 0:
		return nil, fmt.Errorf("layout %s: partition buckets and salt buckets exclude each other", name)
	case partitionBuckets > 0 && nkey == nhash:
		return nil, fmt.Errorf("layout %s: partition buckets need a clustering key", name)
	case partitionBuckets > 0 && len(splits) > 0:
		return nil, fmt.Errorf("layout %s: partition buckets and split points exclude each other", name)
	}
	saltKeys := nhash
	if partitionBuckets > 0 {
		saltBuckets, saltKeys = partitionBuckets, nkey
	}
	l := newLayout(name, attrs)
	for i := range attrs {
		if attrs[i].Key != (i < nkey) {
			return nil, fmt.Errorf("layout %s: attribute %s: the first %d attributes, and only they, are key attributes", name, attrs[i].Name, nkey)
		}
	}
	l.Table = Field{Name: "TABLE", Elems: []Element{{Kind: ElemConst, Lit: []byte(name)}}}
	l.Family = Field{Name: "FAMILY", Elems: []Element{{Kind: ElemConst, Lit: []byte(DefaultCFFamily)}}}
	l.Row.Name = "ROW"
	if saltBuckets > 0 {
		body := make([]Element, saltKeys)
		for i := range body {
			body[i] = Element{Kind: ElemAttr, Attr: i, Enc: Ordered}
		}
		l.Row.Elems = append(l.Row.Elems, Element{Kind: ElemSalt, Buckets: saltBuckets, Body: body})
		l.SaltBuckets = saltBuckets
	}
	for i := range nkey {
		l.Row.Elems = append(l.Row.Elems, Element{Kind: ElemAttr, Attr: i, Enc: Ordered})
	}
	l.Qualifier.Name, l.Value.Name = "QUALIFIER", "VALUE"
	for i := nkey; i < len(attrs); i++ {
		switch {
		case StoredPerElement(attrs[i].Type) && attrs[i].Static:
			return nil, fmt.Errorf("layout %s: static column %s is a %s: a static collection is stored frozen (FROZEN<…>)", name, attrs[i].Name, attrs[i].Type)
		case StoredPerElement(attrs[i].Type):
			l.Collections = append(l.Collections, i)
			l.collFams = append(l.collFams, CollectionFamily(i))
		case attrs[i].Static:
			l.Static = append(l.Static, i)
		default:
			l.Branches = append(l.Branches, i)
		}
	}
	for i := range nkey {
		if attrs[i].Static {
			return nil, fmt.Errorf("layout %s: key attribute %s cannot be static", name, attrs[i].Name)
		}
		if StoredPerElement(attrs[i].Type) {
			return nil, fmt.Errorf("layout %s: key attribute %s is a %s, stored one cell per element: a key holds a frozen collection", name, attrs[i].Name, attrs[i].Type)
		}
	}
	if len(l.Static) > 0 && partitionBuckets > 0 {
		return nil, fmt.Errorf("layout %s: partition buckets and static columns exclude each other", name)
	}
	if len(l.Static) > 0 && nkey == nhash {
		// As in Cassandra: a partition of one row has nothing to share.
		return nil, fmt.Errorf("layout %s: static columns need a clustering key", name)
	}
	if len(l.Branches) > 0 {
		l.Qualifier.Elems = []Element{{Kind: ElemAttrName}}
		l.Value.Elems = []Element{{Kind: ElemAttrValue}}
	}
	l.partitionKeys = nhash
	l.staticTable, l.staticFamily = name, DefaultCFFamily
	l.plainCells = l.isPlain()
	l.prepareDecoding()
	l.Splits = splits
	return l, nil
}

// TableSpec is the store table of a layout with a constant TABLE: its
// family if constant (others are added as cells need them) and its
// pre-split points (one per salt bucket, as Phoenix pre-splits, or SPLIT
// ON).
func (l *Layout) TableSpec() store.TableSpec {
	spec := store.TableSpec{Name: l.staticTable}
	if l.staticFamily != "" {
		spec.Families = []string{l.staticFamily}
	}
	if len(l.Static) > 0 {
		spec.Families = append(spec.Families, StaticColumnFamily)
	}
	spec.Families = append(spec.Families, l.collFams...)
	for b := 1; b < l.SaltBuckets; b++ {
		spec.Splits = append(spec.Splits, []byte{byte(b)})
	}
	spec.Splits = append(spec.Splits, l.Splits...)
	return spec
}

// AppendKeyPrefix appends the row key of tuple up to its n-th key
// attribute (in ROW's order, the salt byte included): the prefix a read of
// the tuples sharing those attributes scans. A salted layout needs at least
// the attributes its salt hashes.
func (l *Layout) AppendKeyPrefix(dst []byte, tuple []types.Value, n int) ([]byte, error) {
	es, err := l.keyPrefixElems(n)
	if err != nil {
		return nil, err
	}
	return l.AppendElements(dst, "ROW", es, tuple)
}

// AppendKeyPrefixDatums is AppendKeyPrefix for an unboxed tuple (only its
// first n key attributes are read).
func (l *Layout) AppendKeyPrefixDatums(dst []byte, tuple []types.Datum, n int) ([]byte, error) {
	return l.appendKeyPrefixDatums(dst, tuple, n, 0)
}

// OpenSalt returns the number of buckets of a salt in the row key up to
// its n-th key attribute that hashes attributes beyond them (a partition
// of a layout with partition buckets): the tuples sharing those n
// attributes lie under that many prefixes, one per bucket
// (AppendKeyPrefixDatumsIn). It returns 0 when the n attributes determine
// the row-key prefix.
func (l *Layout) OpenSalt(n int) int {
	if n >= 0 && n < len(l.openSalt) {
		return l.openSalt[n] // computed once (prepareDecoding): joins ask per row
	}
	return l.openSaltOf(n)
}

func (l *Layout) openSaltOf(n int) int {
	es, err := l.keyPrefixElems(n)
	if err != nil {
		return 0
	}
	for _, e := range es {
		if e.Kind == ElemSalt && !coveredBy(e.Body, es) {
			return e.Buckets
		}
	}
	return 0
}

// coveredBy reports whether every attribute of body is encoded among es.
func coveredBy(body, es []Element) bool {
	for _, b := range body {
		if b.Kind != ElemAttr {
			continue
		}
		if !slices.ContainsFunc(es, func(e Element) bool { return e.Kind == ElemAttr && e.Attr == b.Attr }) {
			return false
		}
	}
	return true
}

// AppendKeyPrefixDatumsIn is AppendKeyPrefixDatums in salt bucket bucket
// when the first n key attributes leave the salt open (OpenSalt), writing
// the bucket for the salt; otherwise it is AppendKeyPrefixDatums.
func (l *Layout) AppendKeyPrefixDatumsIn(dst []byte, tuple []types.Datum, n, bucket int) ([]byte, error) {
	if l.OpenSalt(n) == 0 {
		return l.appendKeyPrefixDatums(dst, tuple, n, 0)
	}
	return l.appendKeyPrefixDatums(dst, tuple, n, bucket+1)
}

// appendKeyPrefixDatums encodes the row key up to its n-th key attribute;
// bucket, when not 0, is 1 + the bucket written for the salt (encoder.bucket).
func (l *Layout) appendKeyPrefixDatums(dst []byte, tuple []types.Datum, n, bucket int) ([]byte, error) {
	es, err := l.keyPrefixElems(n)
	if err != nil {
		return nil, err
	}
	en := encoder{l: l, datums: tuple, branch: noBranch, field: "ROW", bucket: bucket}
	return en.appendElems(dst, es)
}

// keyPrefixElems returns the ROW elements up to its n-th attribute.
func (l *Layout) keyPrefixElems(n int) ([]Element, error) {
	m, attrs := 0, 0
	for ; m < len(l.Row.Elems) && attrs < n; m++ {
		if l.Row.Elems[m].Kind == ElemAttr {
			attrs++
		}
	}
	if attrs < n {
		return nil, fmt.Errorf("schema %s: ROW has %d attributes, not %d", l.Name, attrs, n)
	}
	return l.Row.Elems[:m], nil
}

// AppendValue appends v encoded as attribute element e encodes it (its
// encoding and the attribute's nullability): the bounds of a key range over
// that element.
func (l *Layout) AppendValue(dst []byte, e Element, v types.Value) ([]byte, error) {
	a := l.Attrs[e.Attr]
	switch e.Enc {
	case Ordered:
		return keyenc.AppendOrdered(dst, a.Type, v, a.Nullable)
	case Desc:
		return keyenc.AppendDesc(dst, a.Type, v, a.Nullable)
	}
	return keyenc.AppendNatural(dst, a.Type, v)
}

// RowElem returns the element of ROW that stores attribute a.
func (l *Layout) RowElem(a int) (Element, bool) {
	for _, e := range l.Row.Elems {
		if e.Kind == ElemAttr && e.Attr == a {
			return e, true
		}
	}
	return Element{}, false
}

// InPlace reports whether UpdateCells changes the attributes marked in
// changed in an existing row by their own cells: each is a static column
// or an attr_name/attr_value branch that no cell coordinate (TABLE, ROW,
// FAMILY, QUALIFIER, a salt) depends on, in a layout of one tuple per row.
func (l *Layout) InPlace(changed []bool) bool {
	if l.wideRows {
		return false
	}
	for a, c := range changed {
		if !c || l.Attrs[a].Static {
			continue
		}
		if l.Attrs[a].Key || l.Branches == nil || !l.isBranch(a) || l.inCoordinates(a) {
			return false
		}
	}
	return true
}

// inCoordinates reports whether attribute a helps address cells (salt
// bodies included).
func (l *Layout) inCoordinates(a int) bool {
	found := false
	var walk func([]Element)
	walk = func(es []Element) {
		for _, e := range es {
			found = found || e.Kind == ElemAttr && e.Attr == a
			walk(e.Body)
		}
	}
	for _, f := range []*Field{&l.Table, &l.Row, &l.Family, &l.Qualifier} {
		walk(f.Elems)
	}
	return found
}

// errInPlace: the layout cannot change some cells of a tuple alone.
var errInPlace = errors.New("cannot update cells in place (values are not attr_name/attr_value cells of one tuple per row): rewrite the tuple")

// UpdateCells returns the cells that change when the attributes marked in
// changed take tuple's values in an existing row (tuple holds the whole
// row): a put for each changed attribute with a value, a delete for each
// set to NULL, and the existence marker if only deletes remain, so the row
// keeps existing. Only layouts whose values are attr_name/attr_value
// branches and whose coordinates the change leaves alone can update cells
// in place; others rewrite the tuple (PutCells).
func (l *Layout) UpdateCells(tuple []types.Value, changed []bool) (puts, deletes []Cell, err error) {
	for _, a := range l.Collections {
		if changed[a] {
			return l.updateWithCollections(tuple, changed)
		}
	}
	if l.Branches == nil || l.wideRows {
		for i, c := range changed {
			if c && !l.Attrs[i].Key {
				return nil, nil, fmt.Errorf("schema %s: %w", l.Name, errInPlace)
			}
		}
		return nil, nil, nil // nothing stored changes
	}
	table, row, err := l.tableAndRow(tuple)
	if err != nil {
		return nil, nil, err
	}
	cell := func(branch int, withValue bool) (Cell, error) {
		en := encoder{l: l, tuple: tuple, branch: branch}
		fam, err := en.field1(&l.Family, nil)
		if err != nil {
			return Cell{}, err
		}
		qual, err := en.field1(&l.Qualifier, []byte{})
		if err != nil || !withValue {
			return Cell{Table: table, Row: row, Cell: store.Cell{Family: string(fam), Qualifier: qual}}, err
		}
		val, err := en.field1(&l.Value, []byte{})
		return Cell{Table: table, Row: row, Cell: store.Cell{Family: string(fam), Qualifier: qual, Value: val}}, err
	}
	for _, a := range l.Branches {
		if !changed[a] {
			continue
		}
		c, err := cell(a, tuple[a] != nil)
		if err != nil {
			return nil, nil, err
		}
		if tuple[a] == nil {
			deletes = append(deletes, c)
		} else {
			puts = append(puts, c)
		}
	}
	if len(puts) == 0 && len(deletes) > 0 {
		marker, err := cell(markerBranch, true)
		if err != nil {
			return nil, nil, err
		}
		puts = append(puts, marker)
	}
	return puts, deletes, nil
}

// updateWithCollections is UpdateCells of a change that replaces
// collections stored one cell per element (collections.go).
func (l *Layout) updateWithCollections(tuple []types.Value, changed []bool) (puts, deletes []Cell, err error) {
	rest := slices.Clone(changed)
	for _, a := range l.Collections {
		rest[a] = false
	}
	if slices.Contains(rest, true) {
		if puts, deletes, err = l.UpdateCells(tuple, rest); err != nil {
			return nil, nil, err
		}
	}
	table, row, err := l.tableAndRow(tuple)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range l.Collections {
		if changed[a] {
			if puts, deletes, err = l.collectionCells(puts, deletes, table, row, a, tuple[a]); err != nil {
				return nil, nil, err
			}
		}
	}
	return puts, deletes, nil
}

// tableAndRow returns the table and the row key of tuple's cells.
func (l *Layout) tableAndRow(tuple []types.Value) (string, []byte, error) {
	table, err := l.TableOf(tuple)
	if err != nil {
		return "", nil, err
	}
	row, err := l.rowKey(tuple, nil)
	return table, row, err
}
