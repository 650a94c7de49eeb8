package pebblestore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

var _ store.Indexer = (*Store)(nil)

// tableIndex is one of a table's indexes.
type tableIndex struct {
	spec   store.IndexSpec
	prefix []byte // 'i' + enc(table) + enc(index)
}

// entryKey appends the key of the entry (value, row) of x to dst.
func (x *tableIndex) entryKey(dst, value, row []byte) []byte {
	return append(appendEnc(append(dst, x.prefix...), value), row...)
}

// rowLockStripes is the number of row locks: writers of the indexed cells
// of different rows mostly take different ones, so they commit in
// parallel (and Pebble syncs their batches together).
const rowLockStripes = 64

var rowLockSeed = maphash.MakeSeed()

func rowLock(table string, row []byte) int {
	var h maphash.Hash
	h.SetSeed(rowLockSeed)
	h.WriteString(table)
	h.WriteByte(0)
	h.Write(row)
	return int(h.Sum64() % rowLockStripes)
}

// touchesIndex reports whether m may change an indexed cell of t.
func touchesIndex(t *table, m *store.Mutation) bool {
	switch m.Kind {
	case store.DeleteRow:
		return len(t.indexes) > 0
	case store.DeleteFamily:
		for i := range t.indexes {
			if t.indexes[i].spec.Family == m.Family {
				return true
			}
		}
		return false
	}
	for i := range t.indexes {
		if x := &t.indexes[i].spec; x.Family == m.Family && bytes.Equal(x.Qualifier, m.Qualifier) {
			return true
		}
	}
	return false
}

// needsIndexes reports whether any of muts may change an indexed cell.
func needsIndexes(tables map[string]*table, muts []store.Mutation) bool {
	var t *table
	name := ""
	for i := range muts {
		if m := &muts[i]; t == nil || m.Table != name {
			// Batches write a few tables, in runs: look each run up once.
			t, name = tables[m.Table], m.Table
		}
		if t != nil && len(t.indexes) > 0 && touchesIndex(t, &muts[i]) {
			return true
		}
	}
	return false
}

// indexWrites follows, through one batch, the indexed cells it changes:
// for each (row, index), the value before the batch, read from the
// database under the row's lock, and the value after the mutations so far.
type indexWrites struct {
	s     *Store
	cells []indexedCell
	where map[string]int // table 0x00 row 0x00 index name → position in cells
}

type indexedCell struct {
	x            *tableIndex
	row          []byte
	before, now  []byte
	had, has     bool
	loaded, seen bool
}

// newIndexWrites follows the indexed cells of a batch whose writer holds
// the locks of their rows (rowStripes).
func newIndexWrites(s *Store) *indexWrites {
	return &indexWrites{s: s, where: map[string]int{}}
}

// rowStripes returns, ascending, the row locks a batch of muts takes
// (with those of rows): the rows whose indexed cells it changes, and its
// rows of tables a guard has been put on (see Store.guarded).
func rowStripes(tables map[string]*table, guarded map[string]bool, muts []store.Mutation, rows ...int) []int {
	locks := rows
	var t *table
	name := ""
	for i := range muts {
		m := &muts[i]
		if t == nil || m.Table != name {
			t, name = tables[m.Table], m.Table
		}
		if t != nil && (guarded[m.Table] || touchesIndex(t, m)) {
			if l := rowLock(m.Table, m.Row); !slices.Contains(locks, l) {
				locks = append(locks, l)
			}
		}
	}
	slices.Sort(locks) // one order for every writer: no deadlock
	return locks
}

func (s *Store) lockRows(locks []int) {
	for _, l := range locks {
		s.rowLocks[l].Lock()
	}
}

func (s *Store) unlockRows(locks []int) {
	for _, l := range locks {
		s.rowLocks[l].Unlock()
	}
}

// state returns the indexed cell of x in row, loading its value before the
// batch from the cell's key cellKey on first use.
func (w *indexWrites) state(t *table, x *tableIndex, row, cellKey []byte) (*indexedCell, error) {
	id := t.spec.Name + "\x00" + string(row) + "\x00" + x.spec.Name
	if i, ok := w.where[id]; ok {
		return &w.cells[i], nil
	}
	c := indexedCell{x: x, row: bytes.Clone(row)}
	v, closer, err := w.s.db.Get(cellKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if t.expiry {
			// The entry follows the stored cell, expired or not (ReadIndex
			// skips it once expired): its old value is the stored one.
			if v, _, err = unwrapValue(v, 0); err != nil {
				closer.Close()
				return nil, err
			}
		}
		c.before, c.had = bytes.Clone(v), true
		closer.Close()
	}
	c.now, c.has = c.before, c.had
	w.where[id] = len(w.cells)
	w.cells = append(w.cells, c)
	return &w.cells[len(w.cells)-1], nil
}

// cell follows m, a SetCell or DeleteCell of t whose cell has key
// cellKey.
func (w *indexWrites) cell(t *table, m *store.Mutation, cellKey []byte) error {
	for i := range t.indexes {
		x := &t.indexes[i]
		if x.spec.Family != m.Family || !bytes.Equal(x.spec.Qualifier, m.Qualifier) {
			continue
		}
		c, err := w.state(t, x, m.Row, cellKey)
		if err != nil {
			return err
		}
		if m.Kind == store.SetCell {
			c.now, c.has = bytes.Clone(m.Value), true
		} else {
			c.now, c.has = nil, false
		}
	}
	return nil
}

// deleteRow follows a DeleteRow of row, whose encoded key (with t's
// prefix) is rowKey.
func (w *indexWrites) deleteRow(t *table, row, rowKey []byte) error {
	n := len(rowKey)
	for i := range t.indexes {
		x := &t.indexes[i]
		key := append(append(append(rowKey[:n:n], x.spec.Family...), 0), x.spec.Qualifier...)
		c, err := w.state(t, x, row, key)
		if err != nil {
			return err
		}
		c.now, c.has = nil, false
	}
	return nil
}

// deleteFamily follows a DeleteFamily of family in row, whose cells'
// keys start with famKey ('t' + enc(table) + enc(row) + family + 0x00):
// each index on a cell of the family loses the row's value, as if that
// cell were deleted. Indexes on other families keep theirs.
func (w *indexWrites) deleteFamily(t *table, row []byte, family string, famKey []byte) error {
	n := len(famKey)
	for i := range t.indexes {
		x := &t.indexes[i]
		if x.spec.Family != family {
			continue
		}
		c, err := w.state(t, x, row, append(famKey[:n:n], x.spec.Qualifier...))
		if err != nil {
			return err
		}
		c.now, c.has = nil, false
	}
	return nil
}

// write adds to b the entry changes of the batch: the entry of each
// changed cell's old value goes, that of its new value comes.
func (w *indexWrites) write(b *pebble.Batch) error {
	var key []byte
	for _, c := range w.cells {
		if c.had == c.has && bytes.Equal(c.before, c.now) {
			continue
		}
		if c.had {
			key = c.x.entryKey(key[:0], c.before, c.row)
			if err := b.Delete(key, nil); err != nil {
				return err
			}
		}
		if c.has {
			key = c.x.entryKey(key[:0], c.now, c.row)
			if err := b.Set(key, nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildIndexes adds to b the entries of the indexes xs of t for the rows
// stored, which no write may change meanwhile.
func (s *Store) buildIndexes(b *pebble.Batch, t *table, xs []tableIndex) error {
	var r reader
	r.now = math.MinInt64 // every stored cell has an entry, expired or not
	defer r.closeIter()
	it, err := r.iter(s, true)
	if err != nil {
		return err
	}
	r.setBounds(it, t, store.Range{})
	var key []byte
	var setErr error
	_, err = r.scan(it, t, false, func(row store.Row) bool {
		for i := range xs {
			if v, ok := xs[i].spec.IndexedValue(row.Cells); ok {
				key = xs[i].entryKey(key[:0], v, row.Key)
				if setErr = b.Set(key, nil, nil); setErr != nil {
					return false
				}
			}
		}
		return true
	})
	return cmp.Or(err, setErr)
}

// index returns t's index name.
func (t *table) index(name string) (*tableIndex, error) {
	for i := range t.indexes {
		if t.indexes[i].spec.Name == name {
			return &t.indexes[i], nil
		}
	}
	return nil, fmt.Errorf("pebblestore: table %q, index %q: %w", t.spec.Name, name, store.ErrNoIndex)
}

// ReadIndex implements store.Indexer with two iterators over one
// consistent state (the second a clone of the first): one walks the
// entries of each selected value range, the other reads each entry's row.
// Kept apart, neither leaves its key range between entries — the index
// and the base table live in different files, and an iterator that
// switched files at every entry would load them again each time.
func (s *Store) ReadIndex(ctx context.Context, name, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	r, t, err := s.enterTable(ctx, name)
	if err != nil {
		return err
	}
	defer s.exitReader(r)
	return s.readIndexWith(r, t, index, values, opts, fn)
}

// readIndexWith is ReadIndex with reader r.
func (s *Store) readIndexWith(r *reader, t *table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) (err error) {
	x, err := t.index(index)
	if err != nil {
		return err
	}
	ranges := values.Normalize()
	if len(ranges) == 0 {
		return nil
	}
	if opts.Reverse {
		slices.Reverse(ranges)
	}
	it, err := r.iter(s, false)
	if err != nil {
		return err
	}
	var rows *pebble.Iterator // the clone reading base rows, made at the first entry
	defer func() {
		if rows != nil {
			err = cmp.Or(err, rows.Close())
		}
	}()
	n := 0
	var lo, hi []byte
	for _, rg := range ranges {
		lo = appendEnc(append(lo[:0], x.prefix...), rg.Start)
		if rg.End == nil {
			hi = endOfPrefix(append(hi[:0], x.prefix...))
		} else {
			hi = appendEnc(append(hi[:0], x.prefix...), rg.End)
		}
		var ok bool
		if opts.Reverse {
			ok = it.SeekLT(hi)
		} else {
			ok = it.SeekGE(lo)
		}
		for ; ok; ok = step(it, opts.Reverse) {
			k := it.Key()
			if opts.Reverse && bytes.Compare(k, lo) < 0 || !opts.Reverse && bytes.Compare(k, hi) >= 0 {
				break
			}
			vlen, _, err := encLen(k[len(x.prefix):])
			if err != nil {
				return r.fail(err)
			}
			row := k[len(x.prefix)+vlen:]
			if rows == nil {
				if rows, err = it.Clone(pebble.CloneOptions{}); err != nil {
					return r.fail(err)
				}
			}
			found, err := r.readRowAt(rows, t, row)
			if err != nil {
				return r.fail(err)
			}
			if t.expiry && (!found || r.skipped) {
				// An expired cell keeps its entry until it is written or
				// deleted: skip the row if the indexed cell is one.
				if !found {
					continue
				}
				if _, ok := x.spec.IndexedValue(r.cells); !ok {
					continue
				}
			}
			if !found { // a broken invariant: say so rather than skip the entry
				return r.fail(fmt.Errorf("pebblestore: table %q, index %q: entry of row %q, which is absent: %w", t.spec.Name, index, row, errCorrupt))
			}
			if n++; !fn(r.row(false)) || n == opts.Limit {
				return nil
			}
		}
		if err := it.Error(); err != nil {
			return r.fail(err)
		}
	}
	return nil
}
