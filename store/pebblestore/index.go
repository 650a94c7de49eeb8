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

// touchesIndex reports whether m may change an entry of an index of t: a
// DeleteRow of a table with indexes, a DeleteFamily of an index's family,
// a SetCell or DeleteCell of a single-cell index's cell or of any cell of
// an element index's family. Their writers take the row's lock
// (rowStripes): a write of an element reads nothing, but must not commit
// between a DeleteFamily's (or DeleteRow's) read of the family's cells and
// its commit, which would leave the element's entry without its cell.
func touchesIndex(t *table, m *store.Mutation) bool {
	if m.Kind == store.DeleteRow {
		return len(t.indexes) > 0
	}
	for i := range t.indexes {
		x := &t.indexes[i].spec
		if x.Family == m.Family && (m.Kind == store.DeleteFamily || x.Elements || bytes.Equal(x.Qualifier, m.Qualifier)) {
			return true
		}
	}
	return false
}

// needsIndexes reports whether any of muts may change an index entry.
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

// indexWrites follows, through one batch, the index entries it changes,
// per (row, index). For a single-cell index: the indexed cell's value
// before the batch, read from the database under the row's lock, and its
// value after the mutations so far. For an element index: the elements
// whose entries the mutations so far set or delete — a SetCell or
// DeleteCell of an element decides its entry without a read; a
// DeleteFamily of the family, or a DeleteRow, deletes the entries of the
// elements it finds stored, read from the database under the row's lock,
// and of those the batch wrote before it.
type indexWrites struct {
	s      *Store
	cells  []indexedCell
	where  map[rowIndex]int // position in cells
	elems  []elementRow
	elemAt map[rowIndex]int // position in elems
}

// rowIndex names a row of an index's table.
type rowIndex struct {
	x   *tableIndex
	row string
}

// indexedCell is what a batch does to the indexed cell of one row in a
// single-cell index.
type indexedCell struct {
	x           *tableIndex
	row         []byte
	before, now []byte
	had, has    bool
}

// elementRow is what a batch does to the entries of one row in an element
// index.
type elementRow struct {
	x   *tableIndex
	row []byte
	// read: the elements stored before the batch have been read (and are
	// among elems).
	read  bool
	elems [][]byte       // the elements whose entries the batch sets or deletes, in the order met
	has   []bool         // parallel to elems: whether the entry is there after the mutations so far
	at    map[string]int // element → position in elems
}

// newIndexWrites follows the index entries of a batch whose writer holds
// the locks of their rows (rowStripes).
func newIndexWrites(s *Store) *indexWrites {
	return &indexWrites{s: s, where: map[rowIndex]int{}, elemAt: map[rowIndex]int{}}
}

// rowStripes returns, ascending, the row locks a batch of muts takes
// (with those of rows): the rows whose index entries it may change
// (touchesIndex), and its rows of tables a guard has been put on (see
// Store.guarded).
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
	id := rowIndex{x, string(row)}
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

// elements returns what the batch does to the entries of row in x, an
// element index.
func (w *indexWrites) elements(x *tableIndex, row []byte) *elementRow {
	id := rowIndex{x, string(row)}
	if i, ok := w.elemAt[id]; ok {
		return &w.elems[i]
	}
	w.elemAt[id] = len(w.elems)
	w.elems = append(w.elems, elementRow{x: x, row: bytes.Clone(row), at: map[string]int{}})
	return &w.elems[len(w.elems)-1]
}

// set records whether the entry of element q is there after the
// mutations so far.
func (e *elementRow) set(q []byte, has bool) {
	if i, ok := e.at[string(q)]; ok {
		e.has[i] = has
		return
	}
	e.at[string(q)] = len(e.elems)
	e.elems = append(e.elems, bytes.Clone(q))
	e.has = append(e.has, has)
}

// clear follows the deletion of every cell of e's family in its row (a
// DeleteFamily or DeleteRow), whose keys start with famKey ('t' +
// enc(table) + enc(row) + family + 0x00): every entry of the row goes,
// those of the elements written before in the batch and those of the
// elements stored, expired or not, which it reads (once per row) from the
// keys alone.
func (w *indexWrites) clear(e *elementRow, famKey []byte) error {
	for i := range e.has {
		e.has[i] = false
	}
	if e.read {
		return nil
	}
	e.read = true
	n := len(famKey)
	// famKey's last byte 0x00 raised to 0x01: above every key of the
	// family, below the next family's (family names have no 0x00).
	end := append(famKey[:n-1:n-1], 1)
	it, err := w.s.db.NewIter(&pebble.IterOptions{LowerBound: famKey, UpperBound: end})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		e.set(it.Key()[n:], false)
	}
	return cmp.Or(it.Error(), it.Close())
}

// cell follows m, a SetCell or DeleteCell of t whose cell has key
// cellKey.
func (w *indexWrites) cell(t *table, m *store.Mutation, cellKey []byte) error {
	for i := range t.indexes {
		x := &t.indexes[i]
		switch {
		case x.spec.Family != m.Family:
		case x.spec.Elements:
			w.elements(x, m.Row).set(m.Qualifier, m.Kind == store.SetCell)
		case bytes.Equal(x.spec.Qualifier, m.Qualifier):
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
	}
	return nil
}

// deleteRow follows a DeleteRow of row, whose encoded key (with t's
// prefix) is rowKey: every index loses the row's entries, as if each of
// its families were deleted.
func (w *indexWrites) deleteRow(t *table, row, rowKey []byte) error {
	n := len(rowKey)
	for i := range t.indexes {
		x := &t.indexes[i]
		if err := w.deleteIndexed(t, x, row, append(append(rowKey[:n:n], x.spec.Family...), 0)); err != nil {
			return err
		}
	}
	return nil
}

// deleteFamily follows a DeleteFamily of family in row, whose cells'
// keys start with famKey ('t' + enc(table) + enc(row) + family + 0x00):
// each index on a cell of the family (or on all of them) loses the row's
// entries, as if those cells were deleted. Indexes on other families keep
// theirs.
func (w *indexWrites) deleteFamily(t *table, row []byte, family string, famKey []byte) error {
	for i := range t.indexes {
		if x := &t.indexes[i]; x.spec.Family == family {
			if err := w.deleteIndexed(t, x, row, famKey); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteIndexed follows the deletion of the cells of x's family in row,
// whose keys start with famKey.
func (w *indexWrites) deleteIndexed(t *table, x *tableIndex, row, famKey []byte) error {
	if x.spec.Elements {
		return w.clear(w.elements(x, row), famKey)
	}
	n := len(famKey)
	c, err := w.state(t, x, row, append(famKey[:n:n], x.spec.Qualifier...))
	if err != nil {
		return err
	}
	c.now, c.has = nil, false
	return nil
}

// write adds to b the entry changes of the batch: the entry of each
// changed cell's old value goes, that of its new value comes; each
// element's entry is set or deleted as the batch leaves the element.
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
	for _, e := range w.elems {
		for i, q := range e.elems {
			key = e.x.entryKey(key[:0], q, e.row)
			var err error
			if e.has[i] {
				err = b.Set(key, nil, nil)
			} else {
				err = b.Delete(key, nil)
			}
			if err != nil {
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
	var values [][]byte
	var setErr error
	_, err = r.scan(it, t, false, func(row store.Row) bool {
		for i := range xs {
			values = xs[i].spec.AppendIndexedValues(values[:0], row.Cells)
			for _, v := range values {
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
// entries of each selected value range, the other reads each entry's row
// (a row with several entries, an element index's, once per entry).
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
	var decoded []byte // an entry's value, when it has escapes
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
			enc := k[len(x.prefix):] // enc(value) + row
			vlen, escaped, err := encLen(enc)
			if err != nil {
				return r.fail(err)
			}
			row := enc[vlen:]
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
				// deleted: skip the entry if its indexed cell is one.
				if !found {
					continue
				}
				value := enc[:vlen-2] // without escapes, the encoding is the value and a terminator
				if escaped {
					if cap(decoded) < vlen {
						decoded = make([]byte, vlen)
					}
					m, _, err := decodeEnc(decoded[:vlen], enc)
					if err != nil {
						return r.fail(err)
					}
					value = decoded[:m]
				}
				if !x.spec.HasValue(r.cells, value) {
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
