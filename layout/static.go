package layout

import (
	"bytes"
	"fmt"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Static columns (Cassandra's): a Default layout's attributes marked
// Attr.Static hold one value per partition. They live in the partition
// row, whose key is the rows' key up to the partition key (the salt byte
// included) and which therefore sorts before every row of its partition:
// one cell per non-NULL static column, in family StaticColumnFamily,
// named by the attribute, valued in its natural encoding (as attr_value
// writes a value). The partition's rows hold no static cell; decoders fill
// a row's static columns from its partition row when the read met that row
// first (a forward read of the partition, or PreloadPartitions).

// StaticColumnFamily is the family of a partition row's cells.
const StaticColumnFamily = "s"

// HasStatic reports whether the layout has static columns.
func (l *Layout) HasStatic() bool { return len(l.Static) > 0 }

// PartitionKeys is the number of key attributes forming the partition key
// of a Default layout (the first ones).
func (l *Layout) PartitionKeys() int { return l.partitionKeys }

// AppendPartitionKey appends the key of the partition row of tuple's
// partition (only its partition key attributes are read).
func (l *Layout) AppendPartitionKey(dst []byte, tuple []types.Value) ([]byte, error) {
	return l.AppendKeyPrefix(dst, tuple, l.partitionKeys)
}

// AppendPartitionKeyDatums is AppendPartitionKey for an unboxed tuple.
func (l *Layout) AppendPartitionKeyDatums(dst []byte, tuple []types.Datum) ([]byte, error) {
	return l.AppendKeyPrefixDatums(dst, tuple, l.partitionKeys)
}

// StaticRow returns the deletion of every static value of tuple's
// partition (only its partition key attributes are read): the partition
// row's static family whole (Cell.WholeFamily).
func (l *Layout) StaticRow(tuple []types.Value) (Cell, error) {
	if len(l.Static) == 0 {
		return Cell{}, fmt.Errorf("schema %s has no static columns", l.Name)
	}
	row, err := l.AppendPartitionKey(nil, tuple)
	if err != nil {
		return Cell{}, err
	}
	return Cell{Table: l.staticTable, Row: row, Cell: store.Cell{Family: StaticColumnFamily}, WholeFamily: true}, nil
}

// StaticCells returns the cells of the partition row of tuple's partition
// that change when its static columns marked in changed take tuple's
// values: a put for each value, a delete for each NULL. With changed nil,
// every static column is written, and the row's existence marker (an
// empty cell): the partition row of a root tuple exists, whatever its
// values.
func (l *Layout) StaticCells(tuple []types.Value, changed []bool) (puts, deletes []Cell, err error) {
	if len(l.Static) == 0 {
		return nil, nil, nil
	}
	row, err := l.AppendPartitionKey(nil, tuple)
	if err != nil {
		return nil, nil, err
	}
	if changed == nil {
		puts = append(puts, Cell{Table: l.staticTable, Row: row, Cell: store.Cell{Family: StaticColumnFamily, Qualifier: []byte{}, Value: []byte{}}})
	}
	for _, a := range l.Static {
		if changed != nil && !changed[a] {
			continue
		}
		c := Cell{Table: l.staticTable, Row: row, Cell: store.Cell{Family: StaticColumnFamily, Qualifier: l.names[a]}}
		if tuple[a] == nil {
			deletes = append(deletes, c)
			continue
		}
		if c.Value, err = keyenc.AppendNatural([]byte{}, l.Attrs[a].Type, tuple[a]); err != nil {
			return nil, nil, &EncodeError{Layout: l.Name, Field: "VALUE", Attr: l.Attrs[a].Name, Msg: err.Error()}
		}
		if len(c.Value) > MaxValueBytes {
			return nil, nil, &EncodeError{Layout: l.Name, Field: "VALUE", Attr: l.Attrs[a].Name, Msg: fmt.Sprintf("value is %d bytes; the limit is %d", len(c.Value), MaxValueBytes)}
		}
		puts = append(puts, c)
	}
	return puts, deletes, nil
}

// IsPartitionRow reports whether row is a partition row (it holds static
// columns) rather than a row of tuples.
func (l *Layout) IsPartitionRow(row store.Row) bool {
	return len(l.Static) > 0 && len(row.Cells) > 0 && row.Cells[0].Family == StaticColumnFamily
}

// DecodePartitionRow decodes a partition row into out (len(Attrs)): its
// partition key attributes and static columns; the others are NULL.
func (l *Layout) DecodePartitionRow(row store.Row, out []types.Value) error {
	clear(out)
	es, err := l.keyPrefixElems(l.partitionKeys)
	if err != nil {
		return err
	}
	d := decoder{l: l, tuple: make([]types.Datum, len(l.Attrs)), set: newAttrSet(len(l.Attrs))}
	if err := d.decodeElems(es, row.Key); err != nil {
		if de, ok := err.(*DecodeError); ok && de.Field == "" {
			de.Field, de.Bytes = "ROW", bytes.Clone(row.Key)
		}
		return err
	}
	for _, c := range row.Cells {
		a, v, err := l.staticCell(c, nil)
		if err != nil {
			return err
		}
		if a >= 0 {
			d.tuple[a] = v
		}
	}
	for i, v := range d.tuple {
		out[i] = v.Value()
	}
	return nil
}

// staticCell decodes one cell of a partition row: the static column it
// holds and its value (a = -1 for a cell of another family).
func (l *Layout) staticCell(c store.Cell, s *types.Strings) (a int, v types.Datum, err error) {
	if c.Family != StaticColumnFamily || len(c.Qualifier) == 0 {
		return -1, types.Null, nil // another family's, or the marker
	}
	a = l.AttrIndex(string(c.Qualifier))
	if a < 0 || !l.Attrs[a].Static {
		return -1, types.Null, &DecodeError{Layout: l.Name, Field: "QUALIFIER", Bytes: bytes.Clone(c.Qualifier), Msg: fmt.Sprintf("%q is not a static column", c.Qualifier)}
	}
	if v, err = keyenc.DecodeNaturalDatum(l.Attrs[a].Type, c.Value, s); err != nil {
		return -1, types.Null, &DecodeError{Layout: l.Name, Field: "VALUE", Bytes: bytes.Clone(c.Value), Msg: fmt.Sprintf("%s: %v", l.Attrs[a].Name, err)}
	}
	return a, v, nil
}

// partitionStatics is what a decoder knows of one partition row: its key
// and its static columns' values (in Layout.Static's order).
type partitionStatics struct {
	key  []byte
	vals []types.Datum
}

// beginPartition starts decoding a partition row. A decoder keeps the one
// partition row met last, or, once it has preloaded some, every one.
func (rd *RowDecoder) beginPartition(key []byte) {
	for i := range rd.parts {
		if bytes.Equal(rd.parts[i].key, key) {
			// Met again (preloaded, then within the rows read): the
			// values are read afresh.
			p := rd.parts[i]
			copy(rd.parts[i:], rd.parts[i+1:])
			rd.parts[len(rd.parts)-1] = p
			clear(p.vals)
			return
		}
	}
	if !rd.keepParts {
		rd.parts = rd.parts[:0]
	}
	if len(rd.parts) < cap(rd.parts) {
		rd.parts = rd.parts[:len(rd.parts)+1]
	} else {
		rd.parts = append(rd.parts, partitionStatics{})
	}
	p := &rd.parts[len(rd.parts)-1]
	p.key = append(p.key[:0], key...)
	if cap(p.vals) >= len(rd.l.Static) {
		p.vals = p.vals[:len(rd.l.Static)]
		clear(p.vals)
	} else {
		p.vals = make([]types.Datum, len(rd.l.Static))
	}
}

// partitionCell decodes one cell of the partition row begun.
func (rd *RowDecoder) partitionCell(c store.Cell) error {
	a, v, err := rd.l.staticCell(c, &rd.strs)
	if err != nil || a < 0 || rd.skip != nil && rd.skip[a] {
		return err
	}
	p := &rd.parts[len(rd.parts)-1]
	for j, s := range rd.l.Static {
		if s == a {
			p.vals[j] = v
		}
	}
	return nil
}

// fillStatic sets the static columns of the row begun (key) from its
// partition row, when the decoder has met it.
func (rd *RowDecoder) fillStatic(key []byte) {
	for i := len(rd.parts) - 1; i >= 0; i-- {
		p := &rd.parts[i]
		// Partition keys are self-delimiting (ordered encodings, a salt
		// byte): a row belongs to the partition whose key prefixes it.
		if !bytes.HasPrefix(key, p.key) {
			continue
		}
		for j, a := range rd.l.Static {
			if !p.vals[j].IsNull() {
				rd.d.put(a, p.vals[j])
			}
		}
		return
	}
}

// PreloadPartitions switches the decoder into (on) or out of preload
// mode: a read in preload mode passes over every row but partition rows,
// and the decoder keeps every partition row it meets until Init, so that
// a later read (a reverse one, which meets a partition row after its rows)
// fills static columns from them.
func (cd *CellDecoder) PreloadPartitions(on bool) {
	cd.finish()
	cd.rd.preload = on
	cd.rd.keepParts = cd.rd.keepParts || on
}
