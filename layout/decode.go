package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// DecodeError is a key or value that does not match its layout: data
// written by something else, or corruption.
type DecodeError struct {
	Layout string
	Field  string
	Bytes  []byte
	Msg    string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("schema %s: cannot decode %s %q: %s", e.Layout, e.Field, e.Bytes, e.Msg)
}

// decoder fills one tuple from the fields of a key-value.
type decoder struct {
	l      *Layout
	tuple  []types.Datum
	set    attrSet
	skip   []bool // attributes not worth decoding; nil: none
	branch int
	strs   *types.Strings // copies STRING and BYTES values; nil: one allocation each
}

// attrSet records which attributes a decoder has filled: a bitmask for the
// usual relation of at most 64 attributes, a slice beyond.
type attrSet struct {
	bits uint64
	more []bool
}

func newAttrSet(n int) attrSet {
	if n > 64 {
		return attrSet{more: make([]bool, n)}
	}
	return attrSet{}
}

func (s *attrSet) has(a int) bool {
	if s.more != nil {
		return s.more[a]
	}
	return s.bits&(1<<uint(a)) != 0
}

func (s *attrSet) add(a int) {
	if s.more != nil {
		s.more[a] = true
		return
	}
	s.bits |= 1 << uint(a)
}

func (s *attrSet) clear() {
	s.bits = 0
	clear(s.more)
}

func (s attrSet) clone() attrSet {
	if s.more != nil {
		s.more = append([]bool(nil), s.more...)
	}
	return s
}

// fail reports a decoding error; decodeField names the field and its
// bytes (kept out of the decoder's state: writing them for every field
// decoded cost a write barrier each while the GC marks).
func (d *decoder) fail(format string, args ...any) error {
	return &DecodeError{Layout: d.l.Name, Msg: fmt.Sprintf(format, args...)}
}

// failIn is fail for an error in field f, whose bytes are b (lent: copied).
func (d *decoder) failIn(f *Field, b []byte, format string, args ...any) error {
	return &DecodeError{Layout: d.l.Name, Field: f.Name, Bytes: bytes.Clone(b), Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) put(a int, v types.Datum) {
	if !d.set.has(a) {
		d.tuple[a] = v
		d.set.add(a)
	}
}

// decodeField decodes a whole field: by its shape's fast path when that
// succeeds, else (and for every error) by the general interpreter.
func (d *decoder) decodeField(f *Field, b []byte) error {
	switch f.shape {
	case shapeEmpty:
		if len(b) == 0 {
			return nil
		}
	case shapeText:
		a := f.Elems[0].Attr
		if !d.set.has(a) && (d.skip == nil || !d.skip[a]) {
			d.tuple[a] = d.strs.Datum(d.l.Attrs[a].Type, b)
			d.set.add(a)
		}
		return nil
	case shapeInts:
		if d.decodeInts(f.Elems, b) {
			return nil
		}
	}
	err := d.decodeElems(f.Elems, b)
	if err != nil {
		if de, ok := err.(*DecodeError); ok && de.Field == "" {
			de.Field, de.Bytes = f.Name, bytes.Clone(b)
		}
	}
	return err
}

// decodeInts decodes es, of shapeInts, from exactly b; false: b does not
// match (decodeElems says why).
func (d *decoder) decodeInts(es []Element, b []byte) bool {
	for i := range es {
		e := &es[i]
		if e.Kind == ElemConst {
			if !bytes.HasPrefix(b, e.Lit) {
				return false
			}
			b = b[len(e.Lit):]
			continue
		}
		v, n, ok := keyenc.DecodeOrderedInt64(e.typ, b, e.nullable, e.Enc == Desc)
		if !ok {
			return false
		}
		if d.skip == nil || !d.skip[e.Attr] {
			d.put(e.Attr, v)
		}
		b = b[n:]
	}
	return len(b) == 0
}

// decodeElems decodes es from exactly b.
func (d *decoder) decodeElems(es []Element, b []byte) error {
	r := d.l
	for i := range es {
		e := &es[i]
		switch e.Kind {
		case ElemConst:
			if !bytes.HasPrefix(b, e.Lit) {
				return d.fail("expected %q", e.Lit)
			}
			b = b[len(e.Lit):]
		case ElemAttr:
			if e.int64 {
				if v, n, ok := keyenc.DecodeOrderedInt64(e.typ, b, e.nullable, e.Enc == Desc); ok {
					if d.skip == nil || !d.skip[e.Attr] {
						d.put(e.Attr, v)
					}
					b = b[n:]
					continue
				}
			}
			a := &r.Attrs[e.Attr]
			if n, ok := d.skipWidth(e, a); ok {
				if len(b) < n {
					return d.fail("%s needs %d bytes, %d left", a.Name, n, len(b))
				}
				b = b[n:]
				continue
			}
			var v types.Datum
			var n int
			var err error
			switch e.Enc {
			case Natural:
				if n = a.Type.FixedWidth(); n == 0 {
					if n, err = d.varEnd(es, i, b); err != nil {
						return err
					}
				} else if len(b) < n {
					return d.fail("%s needs %d bytes, %d left", a.Name, n, len(b))
				}
				v, err = keyenc.DecodeNaturalDatum(a.Type, b[:n], d.strs)
			case Ordered:
				v, n, err = keyenc.DecodeOrderedDatum(a.Type, b, a.Nullable, d.strs)
			case Desc:
				v, n, err = keyenc.DecodeDescDatum(a.Type, b, a.Nullable, d.strs)
			}
			if err != nil {
				return d.fail("%s: %v", a.Name, err)
			}
			d.put(e.Attr, v)
			b = b[n:]
		case ElemSize:
			if len(b) < e.Width {
				return d.fail("truncated size prefix")
			}
			var lenBuf [4]byte
			copy(lenBuf[4-e.Width:], b[:e.Width])
			n := int(binary.BigEndian.Uint32(lenBuf[:]))
			b = b[e.Width:]
			if len(b) < n {
				return d.fail("size prefix says %d bytes, %d left", n, len(b))
			}
			if err := d.decodeElems(e.Body, b[:n]); err != nil {
				return err
			}
			b = b[n:]
		case ElemSalt:
			if len(b) < 1 || int(b[0]) >= e.Buckets {
				return d.fail("bad salt byte")
			}
			b = b[1:]
		case ElemAttrName:
			n, err := d.varEnd(es, i, b)
			if err != nil {
				return err
			}
			name := b[:n]
			d.branch = -1
			if len(name) == 0 {
				d.branch = markerBranch
			} else if a := d.l.branchNamed(name); a >= 0 {
				d.branch = a
			}
			if d.branch == -1 {
				return d.fail("%q is not an attribute of attr_name[…]", name)
			}
			b = b[n:]
		case ElemAttrValue:
			if d.branch == markerBranch {
				continue
			}
			a := &r.Attrs[d.branch]
			n := a.Type.FixedWidth()
			if n == 0 {
				var err error
				if n, err = d.varEnd(es, i, b); err != nil {
					return err
				}
			} else if len(b) < n {
				return d.fail("%s needs %d bytes, %d left", a.Name, n, len(b))
			}
			v, err := keyenc.DecodeNaturalDatum(a.Type, b[:n], d.strs)
			if err != nil {
				return d.fail("%s: %v", a.Name, err)
			}
			d.put(d.branch, v)
			b = b[n:]
		}
	}
	if len(b) != 0 {
		return d.fail("%d unexpected trailing bytes", len(b))
	}
	return nil
}

// varEnd finds where the variable-length natural element es[i], which
// starts b, ends: at the end of b when last, else at its separator constant.
func (d *decoder) varEnd(es []Element, i int, b []byte) (int, error) {
	if i == len(es)-1 {
		return len(b), nil
	}
	n := bytes.Index(b, es[i+1].Lit)
	if n < 0 {
		return 0, d.fail("separator %q not found", es[i+1].Lit)
	}
	return n, nil
}

// skipWidth says whether element e can be stepped over without decoding:
// its attribute is not wanted and its width is known without looking
// (fixed-width types; variable-length ones are decoded anyway).
func (d *decoder) skipWidth(e *Element, a *Attr) (int, bool) {
	if d.skip == nil || !d.skip[e.Attr] || d.set.has(e.Attr) {
		return 0, false
	}
	w := a.Type.FixedWidth()
	if w == 0 {
		return 0, false
	}
	if e.Enc != Natural && a.Nullable {
		return 0, false // a marker byte decides the width
	}
	return w, true
}

// decodeFamily decodes a cell's family; a constant family (checked by
// OwnsFamily) holds nothing to decode.
func (d *decoder) decodeFamily(fam string) error {
	if d.l.staticFamily != "" {
		return nil
	}
	return d.decodeField(&d.l.Family, []byte(fam))
}

// branchNamed returns the branch attribute named name (as attr_name
// writes it, else case-insensitively), or -1.
func (l *Layout) branchNamed(name []byte) int {
	if a, ok := l.byName[string(name)]; ok && l.isBranch(a) {
		return a
	}
	if a := l.AttrIndex(string(name)); a >= 0 && l.isBranch(a) {
		return a
	}
	return -1
}

// isBranch reports whether attribute a is one of attr_name's.
func (l *Layout) isBranch(a int) bool {
	// Branches are increasing: they are the attributes attr_name does not
	// exclude, in order.
	_, ok := slices.BinarySearch(l.Branches, a)
	return ok
}

// isPlain reports whether cells are plain: see Layout.plainCells.
func (l *Layout) isPlain() bool {
	return l.staticFamily != "" && !l.wideRows &&
		len(l.Qualifier.Elems) == 1 && l.Qualifier.Elems[0].Kind == ElemAttrName &&
		len(l.Value.Elems) == 1 && l.Value.Elems[0].Kind == ElemAttrValue
}

// OwnsFamily reports whether cells of family fam can belong to this layout
// (false only when FAMILY is constant and differs).
func (l *Layout) OwnsFamily(fam string) bool {
	return l.staticFamily == "" || l.staticFamily == fam
}

// DecodeRow decodes the tuples stored in one row of table and calls emit for
// each, in the order of their first cell, until emit returns false. Cells of
// other layouts' families are skipped. Tuples are fresh slices the caller
// may keep. A reader decoding many rows uses a RowDecoder instead.
func (l *Layout) DecodeRow(table string, row store.Row, emit func([]types.Value) bool) error {
	var d RowDecoder
	d.Init(l, nil)
	return d.Decode(table, row, func(t []types.Value) bool {
		return emit(append([]types.Value(nil), t...))
	})
}

// RowDecoder decodes the rows of one layout, one after the other, reusing
// its memory from row to row; it is for one reader at a time. Init readies
// it (the zero RowDecoder is not ready).
//
// Ownership: the tuple slice Decode passes to emit is the decoder's, valid
// only until emit returns (emit copies the slice to keep it, and does not
// modify it). The values in it are the caller's to keep: they never alias
// the row's bytes.
type RowDecoder struct {
	l     *Layout
	skip  []bool // attributes not worth decoding; nil: none
	tuple []types.Datum
	small [8]types.Datum // tuple's memory for the usual relation
	dirty uint64         // attributes tuple may hold a value of (≤ 64 attributes)
	open  bool           // a row is begun and not ended (begin, end)
	boxed []types.Value  // Decode's boxed copy of tuple
	d     decoder        // of the row begun (begin, cell, end)
	// strs holds the bytes of the STRING and BYTES values decoded, packed
	// (see types.Strings: a value keeps its chunk alive, never changes).
	strs  types.Strings
	found bool // whether that row had a cell of the layout
	// parts are the partition rows met (static columns); preload: pass
	// over other rows; keepParts: keep every partition row met, not the
	// last only (CellDecoder.PreloadPartitions).
	parts              []partitionStatics
	preload, keepParts bool
	// elems holds the row's element cells of each collection stored one
	// cell per element (Layout.Collections), decoded as the row ends;
	// collBuf is the encoding they are assembled in.
	elems            [][]elemCell
	elemBuf, collBuf []byte
	// quals holds, by a plain cell's position in its row (ncell counts
	// them), the last row's qualifier there and its attribute: the rows
	// of a layout mostly have the same cells, in the same order, so a
	// cell's attribute is found by comparing bytes rather than by hashing
	// them (branchNamed).
	quals []qualAttr
	ncell int
}

type qualAttr struct {
	q []byte
	a int
}

// maxQuals is the most cell positions RowDecoder.quals remembers.
const maxQuals = 64

// attrOf returns the branch attribute a plain cell's qualifier q names,
// or -1: the one remembered for the cell's position when q is the same.
func (rd *RowDecoder) attrOf(q []byte) int {
	i := rd.ncell
	rd.ncell++
	if i < len(rd.quals) && bytes.Equal(rd.quals[i].q, q) {
		return rd.quals[i].a
	}
	a := rd.l.branchNamed(q)
	if a >= 0 && i <= len(rd.quals) && i < maxQuals {
		if i == len(rd.quals) {
			rd.quals = append(rd.quals, qualAttr{})
		}
		rd.quals[i] = qualAttr{q: append(rd.quals[i].q[:0], q...), a: a}
	}
	return a
}

// Init readies the decoder for rows of l, leaving the attributes marked in
// skip NULL instead of decoding them where that saves work (a query that
// does not use them). Key attributes of layouts with wide rows are always
// decoded: they tell the row's tuples apart.
func (rd *RowDecoder) Init(l *Layout, skip []bool) {
	n := len(l.Attrs)
	if l.wideRows {
		skip = nil
	}
	if rd.l != l {
		rd.quals = rd.quals[:0]
		// One slot of element cells per collection of l (collectionCell
		// indexes them by l's collections), none left from another row.
		rd.elems = rd.elems[:0]
		for range l.Collections {
			rd.elems = append(rd.elems, nil)
		}
		rd.elemBuf = rd.elemBuf[:0]
	}
	rd.l, rd.skip, rd.dirty, rd.open = l, skip, 0, false
	switch {
	case n <= len(rd.small):
		rd.tuple = rd.small[:n:n]
	case cap(rd.tuple) >= n:
		rd.tuple = rd.tuple[:n:n] // a pooled decoder's memory
	default:
		rd.tuple = make([]types.Datum, n)
	}
	clear(rd.tuple)
	rd.boxed = rd.boxed[:0]
	rd.parts, rd.preload, rd.keepParts = rd.parts[:0], false, false
	rd.d = decoder{l: l, tuple: rd.tuple, set: newAttrSet(n), skip: skip, strs: &rd.strs}
}

// DecodeInto decodes the one tuple a row holds into out (len(Attrs)), for
// layouts with one tuple per row (not WideRows); found is false if no cell
// of the row is the layout's. out's values are the caller's to keep.
func (rd *RowDecoder) DecodeInto(table string, row store.Row, out []types.Value) (found bool, err error) {
	if rd.l.wideRows {
		return false, fmt.Errorf("schema %s: DecodeInto needs one tuple per row", rd.l.Name)
	}
	clear(out)
	found, err = rd.decodeOne(table, row)
	if err != nil || !found {
		return false, err
	}
	for i, d := range rd.tuple {
		out[i] = d.Value()
	}
	return true, nil
}

// reset clears every attribute tuple may hold a value of.
func (rd *RowDecoder) reset() {
	n := len(rd.tuple)
	if n > 64 {
		clear(rd.tuple)
		return
	}
	for m := rd.dirty; m != 0; m &= m - 1 {
		rd.tuple[bits.TrailingZeros64(m)] = types.Null
	}
	rd.dirty = 0
}

// decodeOne decodes the one tuple of a row of a layout without wide rows
// into rd.tuple; found is false if no cell of the row is the layout's.
func (rd *RowDecoder) decodeOne(table string, row store.Row) (found bool, err error) {
	if rd.l.IsPartitionRow(row) {
		return false, nil // no tuple: DecodePartitionRow reads it
	}
	if err := rd.begin(table, row.Key); err != nil {
		return false, err
	}
	for _, c := range row.Cells {
		if err := rd.cell(c); err != nil {
			return false, err
		}
	}
	return rd.end()
}

// begin starts decoding a row of a layout without wide rows (begin, cell
// for each cell, end): it decodes the table name and the row key.
func (rd *RowDecoder) begin(table string, key []byte) error {
	l := rd.l
	if rd.open {
		rd.reset() // the last row failed: tuple may hold any of its values
		for i := range rd.elems {
			rd.elems[i] = rd.elems[i][:0]
		}
		rd.elemBuf = rd.elemBuf[:0]
	}
	rd.open = true
	rd.ncell = 0
	rd.d.set.clear()
	rd.d.branch = noBranch
	rd.found = false
	if l.staticTable == "" {
		if err := rd.d.decodeField(&l.Table, []byte(table)); err != nil {
			return err
		}
	}
	if err := rd.d.decodeField(&l.Row, key); err != nil {
		return err
	}
	if len(l.Static) > 0 {
		rd.fillStatic(key)
	}
	return nil
}

// cell decodes one cell of the row begun.
func (rd *RowDecoder) cell(c store.Cell) error {
	l, d := rd.l, &rd.d
	if len(l.Collections) > 0 && c.Family != l.staticFamily {
		if a := l.collectionOf(c.Family); a >= 0 {
			rd.collectionCell(a, c)
			return nil
		}
	}
	if !l.OwnsFamily(c.Family) {
		return nil
	}
	rd.found = true
	if l.plainCells {
		// The usual shape, QUALIFIER attr_name, VALUE attr_value, FAMILY
		// constant: one lookup and one value per cell.
		if len(c.Qualifier) == 0 && len(c.Value) == 0 {
			return nil // the existence marker
		}
		a := rd.attrOf(c.Qualifier)
		if a < 0 {
			return d.failIn(&l.Qualifier, c.Qualifier, "%q is not an attribute of attr_name[…]", c.Qualifier)
		}
		if d.set.has(a) || d.skip != nil && d.skip[a] {
			return nil
		}
		v, err := keyenc.DecodeNaturalDatum(l.Attrs[a].Type, c.Value, d.strs)
		if err != nil {
			return d.failIn(&l.Value, c.Value, "%s: %v", l.Attrs[a].Name, err)
		}
		d.put(a, v)
		return nil
	}
	if err := d.decodeFamily(c.Family); err != nil {
		return err
	}
	if err := d.decodeField(&l.Qualifier, c.Qualifier); err != nil {
		return err
	}
	return d.decodeField(&l.Value, c.Value)
}

// end ends the row begun and reports whether it had a cell of the layout
// (and so a tuple, in rd.tuple).
//
// The tuple still holds the last row's values of the attributes this row
// did not set: they are cleared here, not in begin, as rows of a layout
// mostly set the same attributes, and a Datum written costs a write
// barrier while the GC marks.
func (rd *RowDecoder) end() (bool, error) {
	rd.open = false
	if len(rd.elems) > 0 {
		if err := rd.endCollections(); err != nil {
			return false, err
		}
	}
	if len(rd.tuple) > 64 {
		for a := range rd.tuple {
			if !rd.d.set.has(a) {
				rd.tuple[a] = types.Null
			}
		}
		return rd.found, nil
	}
	for m := rd.dirty &^ rd.d.set.bits; m != 0; m &= m - 1 {
		rd.tuple[bits.TrailingZeros64(m)] = types.Null
	}
	rd.dirty = rd.d.set.bits
	return rd.found, nil
}

// Decode decodes the tuples stored in one row of table and calls emit for
// each, in the order of their first cell, until emit returns false. Cells of
// other layouts' families are skipped. See RowDecoder for who owns what.
func (rd *RowDecoder) Decode(table string, row store.Row, emit func([]types.Value) bool) error {
	return rd.DecodeDatums(table, row, func(t []types.Datum) bool {
		rd.boxed = rd.boxed[:0]
		for _, d := range t {
			rd.boxed = append(rd.boxed, d.Value())
		}
		return emit(rd.boxed)
	})
}

// DecodeDatums is Decode without boxing: emit gets the tuple as Datums
// (the slice is the decoder's, valid until emit returns; the Datums in it
// are the caller's to keep).
func (rd *RowDecoder) DecodeDatums(table string, row store.Row, emit func([]types.Datum) bool) error {
	l := rd.l
	if !l.wideRows {
		found, err := rd.decodeOne(table, row)
		if err == nil && found {
			emit(rd.tuple)
		}
		return err
	}
	rd.reset()
	base := decoder{l: l, tuple: rd.tuple, set: newAttrSet(len(l.Attrs)), skip: rd.skip, strs: &rd.strs}
	if l.staticTable == "" {
		if err := base.decodeField(&l.Table, []byte(table)); err != nil {
			return err
		}
	}
	if err := base.decodeField(&l.Row, row.Key); err != nil {
		return err
	}
	if len(rd.tuple) <= 64 {
		rd.dirty = base.set.bits // the tuples emitted below are copies
	}
	var (
		order []string // tuple identities in first-seen order
		byID  = map[string]*decoder{}
		idBuf []byte
	)
	for _, c := range row.Cells {
		if !l.OwnsFamily(c.Family) {
			continue
		}
		d := decoder{l: l, tuple: append([]types.Datum(nil), base.tuple...), set: base.set.clone(), branch: noBranch, strs: base.strs}
		if err := d.decodeFamily(c.Family); err != nil {
			return err
		}
		if err := d.decodeField(&l.Qualifier, c.Qualifier); err != nil {
			return err
		}
		if err := d.decodeField(&l.Value, c.Value); err != nil {
			return err
		}
		// The tuple's identity is its key: cells of one tuple merge.
		idBuf = idBuf[:0]
		for _, k := range l.KeyIdx {
			if !d.set.has(k) {
				return d.fail("key attribute %s missing", l.Attrs[k].Name)
			}
			var err error
			if idBuf, err = keyenc.AppendOrdered(idBuf, l.Attrs[k].Type, d.tuple[k].Value(), false); err != nil {
				return d.fail("%v", err)
			}
		}
		id := string(idBuf)
		prev, ok := byID[id]
		if !ok {
			dc := d
			byID[id] = &dc
			order = append(order, id)
			continue
		}
		for a := range d.tuple {
			if d.set.has(a) {
				prev.put(a, d.tuple[a])
			}
		}
	}
	for _, id := range order {
		if !emit(byID[id].tuple) {
			return nil
		}
	}
	return nil
}
