package layout

import (
	"bytes"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// CellDecoder decodes the tuples of one layout from the cells of a read
// (store.ReadCells, whose callback is Cell), emitting each tuple unboxed
// as its row ends; Flush, after the read, ends the last row. It decodes a
// cell where the store lends it: nothing is copied but the bytes of STRING
// and BYTES values, into the Datums emitted (and, for layouts with wide
// rows, each row's cells, which are decoded together when it ends).
//
// Ownership: the tuple slice passed to emit is the decoder's, valid only
// until emit returns; the Datums in it are emit's to keep.
type CellDecoder struct {
	rd    RowDecoder
	table string
	emit  func([]types.Datum) bool
	open  bool // a row is begun
	// part: the row begun is a partition row (static columns); skip: it is
	// a row to pass over (preload mode).
	part, skip bool
	wide       store.Row // with wide rows: the row's cells, copied
	err        error
	cell       func(row []byte, c store.Cell, first bool) bool // Cell, bound once
}

// Func returns Cell as the callback of store.ReadCells, bound once per
// decoder (a method value passed on would be allocated on every read); the
// decoder must not move after it is called.
func (cd *CellDecoder) Func() func(row []byte, c store.Cell, first bool) bool {
	if cd.cell == nil {
		cd.cell = cd.Cell
	}
	return cd.cell
}

// Init readies the decoder for a read of l's rows in table, emitting to
// emit; skip is as for RowDecoder.Init.
func (cd *CellDecoder) Init(l *Layout, skip []bool, table string, emit func([]types.Datum) bool) {
	cd.rd.Init(l, skip)
	cd.table, cd.emit, cd.open, cd.err = table, emit, false, nil
	cd.part, cd.skip = false, false
	cd.wide.Key, cd.wide.Cells = cd.wide.Key[:0], cd.wide.Cells[:0]
}

// Reset drops what the decoder holds of its last read (values, bytes, the
// emit function), keeping its memory and Func's binding.
func (cd *CellDecoder) Reset() {
	clear(cd.rd.tuple)
	clear(cd.wide.Cells)
	cd.wide.Cells = cd.wide.Cells[:0]
	cd.emit, cd.table, cd.err, cd.open = nil, "", nil, false
	cd.part, cd.skip = false, false
	for i := range cd.rd.parts {
		clear(cd.rd.parts[i].vals)
	}
	cd.rd.parts = cd.rd.parts[:0]
}

// Cell takes the next cell of the read; it returns false once emit or an
// error stops the read.
func (cd *CellDecoder) Cell(row []byte, c store.Cell, first bool) bool {
	if first {
		if !cd.finish() {
			return false
		}
		cd.part, cd.skip = false, false
		if len(cd.rd.l.Static) > 0 {
			if c.Family == StaticColumnFamily {
				cd.part = true
				cd.rd.beginPartition(row)
			} else {
				cd.skip = cd.rd.preload
			}
		}
	}
	if cd.part {
		if err := cd.rd.partitionCell(c); err != nil {
			cd.err = err
			return false
		}
		return true
	}
	if cd.skip {
		return true
	}
	if first {
		cd.open = true
		if cd.rd.l.wideRows {
			cd.wide.Key = append(cd.wide.Key[:0], row...)
			clear(cd.wide.Cells)
			cd.wide.Cells = cd.wide.Cells[:0]
		} else if err := cd.rd.begin(cd.table, row); err != nil {
			cd.err = err
			return false
		}
	}
	if cd.rd.l.wideRows {
		cd.wide.Cells = append(cd.wide.Cells, store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Value: bytes.Clone(c.Value)})
		return true
	}
	// Assigned only when set: a pointer write per cell costs a write
	// barrier while the GC marks.
	if err := cd.rd.cell(c); err != nil {
		cd.err = err
		return false
	}
	return true
}

// finish ends the row begun, emitting its tuples; false: stop the read.
func (cd *CellDecoder) finish() bool {
	if !cd.open || cd.err != nil {
		return cd.err == nil
	}
	cd.open = false
	if !cd.rd.l.wideRows {
		found, err := cd.rd.end()
		if err != nil {
			cd.err = err
			return false
		}
		return !found || cd.emit(cd.rd.tuple)
	}
	// Reverse reads may yield a row's cells last first; a row's tuples come
	// in the order of their first cell in (family, qualifier) order.
	slices.SortFunc(cd.wide.Cells, func(a, b store.Cell) int {
		if c := strings.Compare(a.Family, b.Family); c != 0 {
			return c
		}
		return bytes.Compare(a.Qualifier, b.Qualifier)
	})
	more := true
	cd.err = cd.rd.DecodeDatums(cd.table, cd.wide, func(t []types.Datum) bool {
		more = cd.emit(t)
		return more
	})
	return more && cd.err == nil
}

// Flush ends the read: it emits the last row's tuples and returns the
// first decoding error.
func (cd *CellDecoder) Flush() error {
	cd.finish()
	return cd.err
}
