package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Collections stored one cell per element (Cassandra's non-frozen SET,
// LIST and MAP; seed 002): in a Default layout, a value attribute of such
// a type has a family of its own, CollectionFamily(attribute), and each
// element is one cell of it in the tuple's row, as Cassandra stores them,
// so that an element is added or removed by writing one cell, without
// reading the collection:
//
//	SET<T>     qualifier ordered(element)   value elem(element)
//	MAP<K, V>  qualifier ordered(key)       value elem(key) elem(value)
//	LIST<T>    qualifier position (8 bytes) value elem(element)
//
// where ordered is keyenc's ordered encoding, so qualifier order is the
// elements' (keys') order, and elem is the element's bytes in a frozen
// collection's encoding (types.AppendElement), so that a read concatenates
// the values of a row's cells into the collection's encoding. A list's
// positions come from a clock (listClock): appended elements take
// positions above 2^62, prepended ones below, so that a list's order is
// the order of its writes, as Cassandra's time-based list cells are (and,
// like them, across processes only as good as the clocks).
//
// A collection replaced whole is a DeleteFamily of its family, then its
// cells. An empty collection has no cell and reads as NULL, as in
// Cassandra. A row keeps a cell of family DefaultCFFamily (a value or the
// existence marker), so removing elements never removes it.

// CollectionFamily is the family of the cells of attribute a of a Default
// layout, a collection stored one cell per element.
func CollectionFamily(a int) string { return "c" + strconv.Itoa(a) }

// StoredPerElement reports whether a value of type t is stored one cell
// per element: a collection that is not frozen.
func StoredPerElement(t types.Type) bool { return t.IsCollection() && !t.IsFrozen() }

// collectionOf returns the attribute whose elements family fam holds, or
// -1.
func (l *Layout) collectionOf(fam string) int {
	for i, a := range l.Collections {
		if l.collFams[i] == fam {
			return a
		}
	}
	return -1
}

// collectionCells appends to puts and deletes the cells replacing the
// collection attribute a of a tuple in row by v (nil: no element).
func (l *Layout) collectionCells(puts, deletes []Cell, table string, row []byte, a int, v types.Value) ([]Cell, []Cell, error) {
	fam := CollectionFamily(a)
	deletes = append(deletes, Cell{Table: table, Row: row, Cell: store.Cell{Family: fam}, WholeFamily: true})
	if v == nil {
		return puts, deletes, nil
	}
	puts, err := l.elementCells(puts, table, row, a, v, false)
	return puts, deletes, err
}

// elementCells appends the cells of the elements of collection v (of
// attribute a's type) to puts; prepend places a list's elements before
// the list's.
func (l *Layout) elementCells(puts []Cell, table string, row []byte, a int, v types.Value, prepend bool) ([]Cell, error) {
	t := l.Attrs[a].Type
	c, err := types.Coerce(v, t)
	if err != nil {
		return nil, l.valueError(a, err.Error())
	}
	fam := CollectionFamily(a)
	cell := func(qual []byte, elems ...types.Value) error {
		var val []byte
		for i, e := range elems {
			et := t.Elem()
			if t.Kind() == types.MapKind && i == 0 {
				et = t.Key()
			}
			if val, err = types.AppendElement(val, et, e); err != nil {
				return l.valueError(a, err.Error())
			}
		}
		if len(qual) > MaxQualifierBytes {
			return l.valueError(a, fmt.Sprintf("an element's qualifier is %d bytes; the limit is %d", len(qual), MaxQualifierBytes))
		}
		puts = append(puts, Cell{Table: table, Row: row, Cell: store.Cell{Family: fam, Qualifier: qual, Value: val}})
		return nil
	}
	switch x := c.(type) {
	case types.Set:
		for _, e := range x {
			q, err := keyenc.AppendOrdered(nil, t.Elem(), e, false)
			if err != nil {
				return nil, l.valueError(a, err.Error())
			}
			if err := cell(q, e); err != nil {
				return nil, err
			}
		}
	case types.Map:
		for _, e := range x {
			q, err := keyenc.AppendOrdered(nil, t.Key(), e.Key, false)
			if err != nil {
				return nil, l.valueError(a, err.Error())
			}
			if err := cell(q, e.Key, e.Val); err != nil {
				return nil, err
			}
		}
	case types.List:
		pos := listPositions(len(x), prepend)
		for i, e := range x {
			if err := cell(binary.BigEndian.AppendUint64(nil, pos[i]), e); err != nil {
				return nil, err
			}
		}
	}
	return puts, nil
}

func (l *Layout) valueError(a int, msg string) error {
	return &EncodeError{Layout: l.Name, Field: "VALUE", Attr: l.Attrs[a].Name, Msg: msg}
}

// ElementCells returns the cells that change when op, one of CQL's
// operations on a collection's elements, applies operand to the collection
// attribute a of the tuple in an existing row (only the tuple's key
// attributes are read): AssignAdd puts the elements of operand (a set's
// elements, a map's entries, a list's elements appended), AssignPrepend
// puts a list's before the list's, AssignRemove deletes a set's elements
// or a map's keys (operand a SET of them), and AssignValue replaces the
// collection whole (a delete with WholeFamily, then the new elements). A
// NULL operand adds or removes nothing.
func (l *Layout) ElementCells(tuple []types.Value, a int, op lang.AssignOp, operand types.Value) (puts, deletes []Cell, err error) {
	if !slices.Contains(l.Collections, a) {
		return nil, nil, fmt.Errorf("schema %s: %s is not a collection stored one cell per element", l.Name, l.Attrs[a].Name)
	}
	table, row, err := l.tableAndRow(tuple)
	if err != nil {
		return nil, nil, err
	}
	t := l.Attrs[a].Type
	switch op {
	case lang.AssignValue:
		return l.collectionCells(nil, nil, table, row, a, operand)
	case lang.AssignAdd, lang.AssignPrepend:
		if operand != nil {
			puts, err = l.elementCells(nil, table, row, a, operand, op == lang.AssignPrepend && t.Kind() == types.ListKind)
		}
		return puts, nil, err
	case lang.AssignRemove:
		if operand == nil {
			return nil, nil, nil
		}
		if t.Kind() == types.ListKind {
			// The write reads the list and replaces it (exec's readLists).
			return nil, nil, fmt.Errorf("schema %s: a list's elements are removed by value by replacing the list read", l.Name)
		}
		keys, err := types.Coerce(operand, types.SetOf(keyType(t)))
		if err != nil {
			return nil, nil, l.valueError(a, err.Error())
		}
		fam := CollectionFamily(a)
		for _, k := range keys.(types.Set) {
			q, err := keyenc.AppendOrdered(nil, keyType(t), k, false)
			if err != nil {
				return nil, nil, l.valueError(a, err.Error())
			}
			deletes = append(deletes, Cell{Table: table, Row: row, Cell: store.Cell{Family: fam, Qualifier: q}})
		}
		return nil, deletes, nil
	}
	return nil, nil, fmt.Errorf("schema %s: operation %d on the elements of %s", l.Name, op, l.Attrs[a].Name)
}

// keyType is the type of what addresses an element of collection type t:
// a set's element, a map's key.
func keyType(t types.Type) types.Type {
	if t.Kind() == types.MapKind {
		return t.Key()
	}
	return t.Elem()
}

// listClock hands out list positions: strictly increasing within the
// process, and at least the microseconds since 2020 shifted left by 8 (so
// 256 positions per microsecond), as time-based positions are across
// processes.
var listClock struct {
	sync.Mutex
	last uint64
}

var listEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// listMid divides appended positions (above) from prepended ones (below).
const listMid = 1 << 62

// listPositions returns n positions for elements appended (increasing,
// above every position handed out before) or prepended (below every
// position prepended before, in the elements' order).
func listPositions(n int, prepend bool) []uint64 {
	listClock.Lock()
	now := uint64(time.Since(listEpoch).Microseconds()) << 8
	first := max(listClock.last+1, now)
	listClock.last = first + uint64(n) - 1
	listClock.Unlock()
	out := make([]uint64, n)
	for i := range out {
		if prepend {
			// The first element gets the lowest position: the last
			// clock value (n-1-i).
			out[i] = listMid - (first + uint64(n-1-i))
		} else {
			out[i] = listMid + first + uint64(i)
		}
	}
	return out
}

// elemCell is one element cell of a row being decoded: its qualifier and
// value, copied into the decoder's elemBuf (offsets, so that the buffer
// may grow).
type elemCell struct {
	q0, q1, v1 int // qualifier elemBuf[q0:q1], value elemBuf[q1:v1]
}

// collectionCell takes a cell of the collection attribute a's family.
func (rd *RowDecoder) collectionCell(a int, c store.Cell) {
	rd.found = true
	if rd.d.skip != nil && rd.d.skip[a] {
		return
	}
	i := slices.Index(rd.l.Collections, a) // Init made rd.elems[i]
	q0 := len(rd.elemBuf)
	rd.elemBuf = append(append(rd.elemBuf, c.Qualifier...), c.Value...)
	rd.elems[i] = append(rd.elems[i], elemCell{q0, q0 + len(c.Qualifier), len(rd.elemBuf)})
}

// endCollections sets each collection attribute of the row ending from its
// element cells (in qualifier order, whatever order the read gave them).
func (rd *RowDecoder) endCollections() error {
	buf := rd.elemBuf
	defer func() {
		// Even after an error: the next row starts with none.
		for i := range rd.elems {
			rd.elems[i] = rd.elems[i][:0]
		}
		rd.elemBuf = rd.elemBuf[:0]
	}()
	qual := func(c elemCell) []byte { return buf[c.q0:c.q1] }
	byQual := func(x, y elemCell) int { return bytes.Compare(qual(x), qual(y)) }
	for i, cells := range rd.elems {
		if len(cells) == 0 {
			continue
		}
		a := rd.l.Collections[i]
		if !slices.IsSortedFunc(cells, byQual) {
			slices.SortFunc(cells, byQual)
		}
		enc := binary.AppendUvarint(rd.collBuf[:0], uint64(len(cells)))
		for _, c := range cells {
			enc = append(enc, buf[c.q1:c.v1]...)
		}
		rd.collBuf = enc
		v, err := types.CollectionDatum(rd.l.Attrs[a].Type, enc, rd.d.strs)
		if err != nil {
			return rd.d.failIn(&rd.l.Value, enc, "%s: %v", rd.l.Attrs[a].Name, err)
		}
		rd.d.put(a, v)
	}
	return nil
}
