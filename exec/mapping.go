package exec

import (
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// table maps one index onto a store table through its layout (package
// layout owns the bytes: layout.Default). Row values are []types.Value
// aligned with attrs: the key attributes, then the value attributes.
type table struct {
	x     *catalog.Index
	l     *layout.Layout
	name  string
	attrs []catalog.Attr
	nkey  int
	pos   map[catalog.Attr]int
	nhash int // key attributes forming the partition key
	salt  int // SALT_BUCKETS or PARTITION_BUCKETS (the row key's leading bucket byte); 0: none

	decoders     sync.Pool // of *layout.RowDecoder
	cellDecoders sync.Pool // of *layout.CellDecoder
}

func newTable(x *catalog.Index) *table {
	l := x.Layout()
	t := &table{x: x, l: l, name: x.Name, attrs: x.RowAttrs(), nkey: len(x.KeyAttrs()), pos: map[catalog.Attr]int{}, nhash: len(x.Hash), salt: max(x.SaltBuckets, x.PartitionBuckets)}
	for i, a := range t.attrs {
		t.pos[a] = i
	}
	return t
}

// appendKey encodes the first n key attributes of vals (at least the
// partition key when the table is salted).
func (t *table) appendKey(dst []byte, vals []types.Value, n int) ([]byte, error) {
	return t.l.AppendKeyPrefix(dst, vals, n)
}

// appendKeyFrom encodes the first n key attributes, value(i) giving the
// i-th.
func (t *table) appendKeyFrom(dst []byte, n int, value func(int) types.Value) ([]byte, error) {
	vals := make([]types.Value, len(t.attrs))
	for i := range n {
		vals[i] = value(i)
	}
	return t.l.AppendKeyPrefix(dst, vals, n)
}

// put returns the mutations writing row vals (every attribute). NULL
// values delete their cell (point deletions: a row deletion would be a
// Pebble range tombstone per row), so a put also overwrites an older row
// with the same key.
func (t *table) put(muts []store.Mutation, vals []types.Value) ([]store.Mutation, error) {
	puts, deletes, err := t.l.PutCells(vals)
	if err != nil {
		return nil, err
	}
	return layout.AppendMutations(muts, puts, deletes), nil
}

// putNew returns the mutations writing row vals into a table that holds
// no row of its key, or holds it with vals' values (a load, resumed or
// not): only its cells, without put's deletions (a collection stored one
// cell per element replaced whole is a family deletion, a Pebble range
// tombstone, per row).
func (t *table) putNew(muts []store.Mutation, vals []types.Value) ([]store.Mutation, error) {
	puts, _, err := t.l.PutCells(vals)
	if err != nil {
		return nil, err
	}
	return layout.AppendMutations(muts, puts, nil), nil
}

// setCells returns the mutations changing, in an existing row, the value
// attributes i with set[i].
func (t *table) setCells(muts []store.Mutation, vals []types.Value, set []bool) ([]store.Mutation, error) {
	puts, deletes, err := t.l.UpdateCells(vals, set)
	if err != nil {
		return nil, err
	}
	return layout.AppendMutations(muts, puts, deletes), nil
}

// del returns the mutation deleting the row whose key attributes are vals.
func (t *table) del(muts []store.Mutation, vals []types.Value) ([]store.Mutation, error) {
	key, err := t.l.RowKey(vals)
	if err != nil {
		return nil, err
	}
	return append(muts, store.Mutation{Kind: store.DeleteRow, Table: t.name, Row: key}), nil
}

// decode fills out (len(attrs)) from a stored row; absent cells are NULL.
func (t *table) decode(r store.Row, out []types.Value) error {
	rd, _ := t.decoders.Get().(*layout.RowDecoder)
	if rd == nil {
		rd = new(layout.RowDecoder)
		rd.Init(t.l, nil)
	}
	_, err := rd.DecodeInto(t.name, r, out)
	t.decoders.Put(rd)
	return err
}

// spec is the table to create, pre-split at every salt bucket or SPLIT ON
// point.
func (t *table) spec() store.TableSpec { return t.l.TableSpec() }
