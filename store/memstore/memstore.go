// Package memstore owns kvschema's in-memory Store, for tests, examples and
// the REPL.
//
// Invariants, besides those of package store:
//   - Each table is a B-tree of rows ordered by key. A row is immutable once
//     in the tree: writes replace it. So ReadRows works on an O(1) clone of
//     the tree, a consistent snapshot, and calls back without holding a lock
//     (callbacks may call the store). Point reads and ranges cost
//     O(log n + k).
//   - Apply checks every mutation before changing anything, so it is atomic:
//     Capabilities().AtomicBatch is true.
//   - ReadRows delivers each row in a buffer that the next row overwrites,
//     as disk backends do, so a caller that keeps slices past its callback
//     fails here too, not only in production.
//   - Tables lists families in the order they were first declared; splits
//     are those of the first CreateTable and are otherwise ignored.
//   - Each index of a table (store.Indexer) is a B-tree of entries (value,
//     row key), changed with the rows by the one function every write path
//     applies mutations with (table.apply), under the data's write lock:
//     it compares the row's indexed values before and after each mutation
//     (one at most in a single-cell index, the qualifiers of the family's
//     cells in an element index). ReadIndex clones the table's row and
//     entry trees together (O(1)), so it reads one consistent state
//     without holding the lock.
//   - Cell expiry (Capabilities().Expiry): a row keeps the Expires of each
//     of its cells (exp, nil while none expires), and every read, condition
//     and guard filters the row against store.Now(ctx) (live). Expired cells
//     stay in the tree, and their index entries with them, until a write or
//     delete of the cell; ReadIndex skips an entry whose indexed cell
//     expired.
//   - Snapshot clones every table's tree (O(1) each, copy-on-write, which
//     immutable rows make safe) and copies the specs; Restore installs
//     fresh clones of the saved trees, so a snapshot is never written and
//     can be restored again. Both work on the data, so they affect every
//     handle of a "mem:NAME" store.
//
// URLs: "mem:" opens a fresh empty store. "mem:NAME" opens the process-wide
// store NAME, created empty on first use and shared by every opener of that
// name (so the connections of a pool see one database); closing a handle
// leaves the data to the other handles and to later openers.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"

	"github.com/kvschema/kvschema/store"
)

func init() {
	store.Register("mem", func(_ context.Context, name string) (store.Store, error) {
		if name == "" {
			return New(), nil
		}
		namedMu.Lock()
		defer namedMu.Unlock()
		d := named[name]
		if d == nil {
			d = newData()
			named[name] = d
		}
		return &Store{data: d}, nil
	})
}

var (
	namedMu sync.Mutex
	named   = map[string]*data{}
)

// Store is an in-memory store.Store. It is safe for concurrent use.
type Store struct {
	data   *data
	closed atomic.Bool
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Indexer = (*Store)(nil)
)

// data is the content of a store, possibly shared by several handles.
type data struct {
	mu     sync.RWMutex
	tables map[string]*table
}

type table struct {
	spec    store.TableSpec
	rows    *btree.BTreeG[row]
	indexes []*index // in the order of spec.Indexes
}

// index is the entries of one of a table's indexes.
type index struct {
	spec    store.IndexSpec
	entries *btree.BTreeG[entry]
}

// entry is an index entry: a row's indexed value and its key. Both slices
// are shared with the row and never change.
type entry struct{ value, key []byte }

func lessEntry(a, b entry) bool {
	if c := bytes.Compare(a.value, b.value); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.key, b.key) < 0
}

// row is a row key and its cells, sorted by (Family, Qualifier). Neither the
// slice nor anything it points to changes once the row is in a tree.
type row struct {
	key   []byte
	cells []store.Cell
	exp   []int64 // Mutation.Expires of each cell, or nil when none expires
}

// live returns r without the cells expired at now (Unix µs), and whether
// any cell is left. A row with expiring cells is copied (cells only).
func (r row) live(now int64) (row, bool) {
	if r.exp == nil {
		return r, len(r.cells) > 0
	}
	out := row{key: r.key, cells: make([]store.Cell, 0, len(r.cells))}
	for i, c := range r.cells {
		if e := r.exp[i]; e == 0 || e > now {
			out.cells = append(out.cells, c)
		}
	}
	return out, len(out.cells) > 0
}

// nowOf is the instant of ctx at which reads decide expiry, in Unix µs.
func nowOf(ctx context.Context) int64 { return store.Now(ctx).UnixMicro() }

func lessRow(a, b row) bool { return bytes.Compare(a.key, b.key) < 0 }

// New returns an empty store.
func New() *Store { return &Store{data: newData()} }

func newData() *data { return &data{tables: map[string]*table{}} }

func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// DropTable implements store.TableDropper: the table and its rows go.
func (s *Store) DropTable(ctx context.Context, name string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.tables, name)
	return nil
}

// CreateTable creates the table or adds the families and indexes it
// lacks; the entries of an added index are built from the rows under the
// data's write lock, so no write comes between.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if spec.Name == "" {
		return fmt.Errorf("memstore: create table: empty name")
	}
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tables[spec.Name]
	families := slices.Clone(spec.Families)
	var old []store.IndexSpec
	if t != nil {
		families = slices.Concat(t.spec.Families, spec.Families)
		old = t.spec.Indexes
	}
	all, added, err := store.MergeIndexes(families, old, spec.Indexes)
	if err != nil {
		return fmt.Errorf("memstore: create table %q: %w", spec.Name, err)
	}
	if t == nil {
		t = &table{
			spec: store.TableSpec{Name: spec.Name, Splits: cloneAll(spec.Splits)},
			rows: btree.NewG(32, lessRow),
		}
		d.tables[spec.Name] = t
	}
	for _, f := range spec.Families {
		if !slices.Contains(t.spec.Families, f) {
			t.spec.Families = append(t.spec.Families, f)
		}
	}
	t.spec.Indexes = all
	var values [][]byte
	for _, ix := range added {
		x := &index{spec: ix, entries: btree.NewG(32, lessEntry)}
		t.rows.Ascend(func(r row) bool {
			values = ix.AppendIndexedValues(values[:0], r.cells)
			for _, v := range values {
				x.entries.ReplaceOrInsert(entry{value: v, key: r.key})
			}
			return true
		})
		t.indexes = append(t.indexes, x)
	}
	return nil
}

// Tables lists the tables in name order.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	d := s.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]store.TableSpec, 0, len(d.tables))
	for _, t := range d.tables {
		out = append(out, store.TableSpec{
			Name:     t.spec.Name,
			Families: slices.Clone(t.spec.Families),
			Splits:   cloneAll(t.spec.Splits),
			Indexes:  store.CloneIndexes(t.spec.Indexes),
		})
	}
	slices.SortFunc(out, func(a, b store.TableSpec) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ReadRow returns a copy of the row, which the caller owns.
func (s *Store) ReadRow(ctx context.Context, name string, key []byte) (store.Row, bool, error) {
	if err := s.check(ctx); err != nil {
		return store.Row{}, false, err
	}
	d := s.data
	d.mu.RLock()
	t, err := d.table(name)
	var r row
	var ok bool
	if err == nil {
		r, ok = t.rows.Get(row{key: key})
	}
	d.mu.RUnlock()
	if ok {
		r, ok = r.live(nowOf(ctx))
	}
	if !ok {
		return store.Row{}, false, err
	}
	return store.CloneRow(store.Row{Key: r.key, Cells: r.cells}), true, nil
}

// ReadRows calls fn for the selected rows of a snapshot of the table.
func (s *Store) ReadRows(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	d := s.data
	// Clone writes to the tree's copy-on-write state, hence the write lock;
	// it is O(1).
	d.mu.Lock()
	t, err := d.table(name)
	var snap *btree.BTreeG[row]
	if err == nil {
		snap = t.rows.Clone()
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}

	var buf rowBuffer
	n := 0
	done := false
	now := nowOf(ctx)
	visit := func(r row) bool {
		r, ok := r.live(now)
		if !ok {
			return true
		}
		n++
		done = !fn(buf.load(r)) || n == opts.Limit
		return !done
	}
	inOrder(rs.Normalize(), opts.Reverse, func(rg store.Range) bool {
		scan(snap, rg, opts.Reverse, visit)
		return !done
	})
	return nil
}

// inOrder calls fn with each of ranges (sorted, disjoint), last first when
// reverse, until fn returns false.
func inOrder(ranges []store.Range, reverse bool, fn func(store.Range) bool) {
	for i := range ranges {
		rg := ranges[i]
		if reverse {
			rg = ranges[len(ranges)-1-i]
		}
		if !fn(rg) {
			return
		}
	}
}

// scan calls visit for the rows of t in rg, in key order or reversed, until
// visit returns false.
func scan(t *btree.BTreeG[row], rg store.Range, reverse bool, visit func(row) bool) {
	start := row{key: rg.Start}
	if !reverse {
		if rg.End == nil {
			t.AscendGreaterOrEqual(start, visit)
		} else {
			t.AscendRange(start, row{key: rg.End}, visit)
		}
		return
	}
	// The tree has no descent from below an exclusive bound: start at End
	// and skip a row equal to it.
	visitDown := func(r row) bool {
		if bytes.Compare(r.key, rg.Start) < 0 {
			return false
		}
		if rg.End != nil && bytes.Equal(r.key, rg.End) {
			return true
		}
		return visit(r)
	}
	if rg.End == nil {
		t.Descend(visitDown)
	} else {
		t.DescendLessOrEqual(row{key: rg.End}, visitDown)
	}
}

// rowBuffer holds the row being handed to a callback.
type rowBuffer struct {
	bytes []byte
	cells []store.Cell
}

// load copies r into the buffer, overwriting the previous row.
func (b *rowBuffer) load(r row) store.Row {
	n := len(r.key)
	for _, c := range r.cells {
		n += len(c.Qualifier) + len(c.Value)
	}
	if cap(b.bytes) < n {
		b.bytes = make([]byte, 0, n)
	}
	buf := b.bytes[:0]
	// Appends never reallocate (capacity is n), so earlier slices stay valid.
	take := func(p []byte) []byte {
		i := len(buf)
		buf = append(buf, p...)
		return buf[i:len(buf):len(buf)]
	}
	out := store.Row{Key: take(r.key), Cells: b.cells[:0]}
	for _, c := range r.cells {
		out.Cells = append(out.Cells, store.Cell{Family: c.Family, Qualifier: take(c.Qualifier), Value: take(c.Value)})
	}
	b.cells = out.Cells
	return out
}

// ReadIndex implements store.Indexer: it clones the table's rows and the
// index's entries (O(1) each, under the write lock, as ReadRows does) and
// walks the entries of the selected values, calling fn with each entry's
// row (a row with several entries, once per entry), without holding a
// lock.
func (s *Store) ReadIndex(ctx context.Context, name, ixName string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	d := s.data
	d.mu.Lock()
	t, err := d.table(name)
	var rows *btree.BTreeG[row]
	var entries *btree.BTreeG[entry]
	var ix store.IndexSpec
	if err == nil {
		i := slices.IndexFunc(t.indexes, func(x *index) bool { return x.spec.Name == ixName })
		if i < 0 {
			err = fmt.Errorf("memstore: table %q, index %q: %w", name, ixName, store.ErrNoIndex)
		} else {
			rows, entries, ix = t.rows.Clone(), t.indexes[i].entries.Clone(), t.indexes[i].spec
		}
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}

	var buf rowBuffer
	n := 0
	done := false
	now := nowOf(ctx)
	visit := func(e entry) bool {
		r, ok := rows.Get(row{key: e.key})
		if !ok { // a broken invariant: say so rather than skip the entry
			err = fmt.Errorf("memstore: table %q, index %q: entry %q of row %q, which is absent", name, ixName, e.value, e.key)
			return false
		}
		if r, ok = r.live(now); !ok {
			return true // every cell of the row expired
		}
		if !ix.HasValue(r.cells, e.value) {
			return true // the entry's indexed cell expired
		}
		n++
		done = !fn(buf.load(r)) || n == opts.Limit
		return !done
	}
	inOrder(values.Normalize(), opts.Reverse, func(rg store.Range) bool {
		scanEntries(entries, rg, opts.Reverse, visit)
		return !done && err == nil
	})
	return err
}

// scanEntries calls visit for the entries of t whose value is in rg, in
// (value, key) order or reversed, until visit returns false.
func scanEntries(t *btree.BTreeG[entry], rg store.Range, reverse bool, visit func(entry) bool) {
	// The first entry of value v is (v, ""), the smallest key.
	start := entry{value: rg.Start, key: []byte{}}
	if !reverse {
		if rg.End == nil {
			t.AscendGreaterOrEqual(start, visit)
		} else {
			t.AscendRange(start, entry{value: rg.End, key: []byte{}}, visit)
		}
		return
	}
	visitDown := func(e entry) bool {
		if bytes.Compare(e.value, rg.Start) < 0 {
			return false
		}
		if rg.End != nil && bytes.Compare(e.value, rg.End) >= 0 {
			return true // the entry (End, "") that DescendLessOrEqual starts at
		}
		return visit(e)
	}
	if rg.End == nil {
		t.Descend(visitDown)
	} else {
		t.DescendLessOrEqual(entry{value: rg.End, key: []byte{}}, visitDown)
	}
}

// Apply applies muts atomically: it checks them all, then applies them in
// order.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, m := range muts {
		if d.tables[m.Table] == nil {
			return fmt.Errorf("memstore: mutation %d: table %q: %w", i, m.Table, store.ErrNoTable)
		}
		if !m.Kind.Valid() {
			return fmt.Errorf("memstore: mutation %d: unknown kind %v", i, m.Kind)
		}
	}
	for _, m := range muts {
		d.tables[m.Table].apply(m)
	}
	return nil
}

// ApplyIf applies then or otherwise to one row, depending on cond, under
// the store's lock.
func (s *Store) ApplyIf(ctx context.Context, name string, key []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, err
	}
	if err := store.CheckRowMutations(name, key, append(slices.Clip(then), otherwise...)); err != nil {
		return false, fmt.Errorf("memstore: %w", err)
	}
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	t, err := d.table(name)
	if err != nil {
		return false, err
	}
	for _, m := range append(slices.Clip(then), otherwise...) {
		if !m.Kind.Valid() {
			return false, fmt.Errorf("memstore: unknown mutation kind %v", m.Kind)
		}
	}
	r, _ := t.rows.Get(row{key: key})
	r, _ = r.live(nowOf(ctx))
	matched := cond.Holds(store.Row{Key: r.key, Cells: r.cells})
	muts := otherwise
	if matched {
		muts = then
	}
	for _, m := range muts {
		t.apply(m)
	}
	return matched, nil
}

// ApplyGuards applies muts if every guard of gs holds, under the store's
// lock (store.Guarded).
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, err
	}
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	guarded := make([]*table, len(gs))
	for i, g := range gs {
		t, err := d.table(g.Table)
		if err != nil {
			return false, err
		}
		guarded[i] = t
	}
	for i, m := range muts {
		if d.tables[m.Table] == nil {
			return false, fmt.Errorf("memstore: mutation %d: table %q: %w", i, m.Table, store.ErrNoTable)
		}
		if !m.Kind.Valid() {
			return false, fmt.Errorf("memstore: mutation %d: unknown kind %v", i, m.Kind)
		}
	}
	now := nowOf(ctx)
	for i, g := range gs {
		r, _ := guarded[i].rows.Get(row{key: g.Row})
		r, _ = r.live(now)
		if !g.Holds(r.cells) {
			return false, nil
		}
	}
	for _, m := range muts {
		d.tables[m.Table].apply(m)
	}
	return true, nil
}

// apply applies m to the table's rows and keeps its indexes: every write
// path changes rows through it alone. Each index loses the entries of the
// row's indexed values before m that it has no more after m, and gains
// those it did not have.
func (t *table) apply(m store.Mutation) {
	if len(t.indexes) == 0 {
		t.applyRow(m)
		return
	}
	before, _ := t.rows.Get(row{key: m.Row})
	t.applyRow(m)
	after, _ := t.rows.Get(row{key: m.Row})
	var old, now [][]byte
	for _, x := range t.indexes {
		old = x.spec.AppendIndexedValues(old[:0], before.cells)
		now = x.spec.AppendIndexedValues(now[:0], after.cells)
		// Both are ascending: walk them together.
		for i, j := 0, 0; i < len(old) || j < len(now); {
			switch {
			case j == len(now) || i < len(old) && bytes.Compare(old[i], now[j]) < 0:
				x.entries.Delete(entry{value: old[i], key: before.key})
				i++
			case i == len(old) || bytes.Compare(old[i], now[j]) > 0:
				x.entries.ReplaceOrInsert(entry{value: now[j], key: after.key})
				j++
			default: // an entry before and after
				i, j = i+1, j+1
			}
		}
	}
}

func (t *table) applyRow(m store.Mutation) {
	switch m.Kind {
	case store.DeleteRow:
		t.rows.Delete(row{key: m.Row})
		return
	case store.DeleteFamily:
		t.deleteFamily(m.Row, m.Family)
		return
	}
	r, found := t.rows.Get(row{key: m.Row})
	i, exists := slices.BinarySearchFunc(r.cells, m, func(c store.Cell, m store.Mutation) int {
		return cmp.Or(strings.Compare(c.Family, m.Family), bytes.Compare(c.Qualifier, m.Qualifier))
	})
	if !found {
		r.key = bytes.Clone(m.Row)
	}
	// Build new cell (and expiry) slices: the old ones may be in use by a
	// snapshot.
	switch {
	case m.Kind == store.SetCell && exists:
		r.cells = slices.Clone(r.cells)
		r.cells[i].Value = bytes.Clone(m.Value)
		if r.exp != nil || m.Expires != 0 {
			if r.exp == nil {
				r.exp = make([]int64, len(r.cells))
			} else {
				r.exp = slices.Clone(r.exp)
			}
			r.exp[i] = m.Expires
		}
	case m.Kind == store.SetCell:
		c := store.Cell{Family: m.Family, Qualifier: bytes.Clone(m.Qualifier), Value: bytes.Clone(m.Value)}
		if r.exp != nil || m.Expires != 0 {
			if r.exp == nil {
				r.exp = make([]int64, len(r.cells))
			}
			r.exp = slices.Concat(r.exp[:i], []int64{m.Expires}, r.exp[i:])
		}
		r.cells = slices.Concat(r.cells[:i], []store.Cell{c}, r.cells[i:])
	case !exists: // DeleteCell of a missing cell
		return
	case len(r.cells) == 1: // DeleteCell of the last cell
		t.rows.Delete(r)
		return
	default:
		r.cells = slices.Concat(r.cells[:i], r.cells[i+1:])
		if r.exp != nil {
			r.exp = slices.Concat(r.exp[:i], r.exp[i+1:])
		}
	}
	r.exp = compactExp(r.exp)
	t.rows.ReplaceOrInsert(r)
}

// deleteFamily removes the cells of family of the row key, which are
// contiguous in its sorted cells, and the row if they were its last.
func (t *table) deleteFamily(key []byte, family string) {
	r, found := t.rows.Get(row{key: key})
	if !found {
		return
	}
	i, _ := slices.BinarySearchFunc(r.cells, family, func(c store.Cell, f string) int { return strings.Compare(c.Family, f) })
	j := i
	for j < len(r.cells) && r.cells[j].Family == family {
		j++
	}
	switch {
	case i == j: // no cell of the family
		return
	case j-i == len(r.cells):
		t.rows.Delete(r)
		return
	}
	// A new cell slice: the old one may be in use by a snapshot.
	r.cells = slices.Concat(r.cells[:i:i], r.cells[j:])
	if r.exp != nil {
		r.exp = compactExp(slices.Concat(r.exp[:i:i], r.exp[j:]))
	}
	t.rows.ReplaceOrInsert(r)
}

// compactExp returns exp, or nil if no cell expires.
func compactExp(exp []int64) []int64 {
	if slices.ContainsFunc(exp, func(e int64) bool { return e != 0 }) {
		return exp
	}
	return nil
}

func (d *data) table(name string) (*table, error) {
	t := d.tables[name]
	if t == nil {
		return nil, fmt.Errorf("memstore: table %q: %w", name, store.ErrNoTable)
	}
	return t, nil
}

// Capabilities reports atomic batches.
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{AtomicBatch: true, SnapshotReads: true, LocalIndexes: true, Expiry: true, Engine: "mem"}
}

// Close closes this handle; later calls on it fail with store.ErrClosed.
// Closing twice is harmless.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

var _ store.Snapshotter = (*Store)(nil)

// snapshot is a saved content of a store's data.
type snapshot struct {
	store *Store // the handle that took it
	// tables are never changed: Restore clones them again, and their trees'
	// clones copy on write. Nil once released. Guarded by data.mu.
	tables map[string]*table
}

// View implements store.Viewer: a read-only store over clones of the
// tables' trees (copy on write), made in O(number of tables).
func (s *Store) View(ctx context.Context) (store.View, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	d := s.data
	d.mu.Lock() // Clone writes to the tree's copy-on-write state
	defer d.mu.Unlock()
	return &view{Store: Store{data: &data{tables: cloneTables(d.tables)}}}, nil
}

// view is a Store over cloned tables that refuses writes.
type view struct{ Store }

func (v *view) CreateTable(context.Context, store.TableSpec) error { return store.ErrReadOnly }

func (v *view) Apply(context.Context, []store.Mutation) error { return store.ErrReadOnly }

func (v *view) ApplyIf(context.Context, string, []byte, store.Cond, []store.Mutation, []store.Mutation) (bool, error) {
	return false, store.ErrReadOnly
}

func (v *view) ApplyGuards(context.Context, []store.Guard, []store.Mutation) (bool, error) {
	return false, store.ErrReadOnly
}

// Snapshot saves the content of the store's data in O(number of tables).
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	d := s.data
	// Clone writes to the tree's copy-on-write state, hence the write lock.
	d.mu.Lock()
	defer d.mu.Unlock()
	return &snapshot{store: s, tables: cloneTables(d.tables)}, nil
}

// Restore puts back the saved content. It takes the data's write lock, so
// it waits for running calls, and ReadRows calls already running go on
// with the content they started on. It fails once the handle that took
// the snapshot is closed.
func (sn *snapshot) Restore(ctx context.Context) error {
	if err := sn.store.check(ctx); err != nil {
		return err
	}
	d := sn.store.data
	d.mu.Lock()
	defer d.mu.Unlock()
	if sn.tables == nil {
		return errors.New("memstore: restore: snapshot released")
	}
	d.tables = cloneTables(sn.tables)
	return nil
}

// Release drops the saved content.
func (sn *snapshot) Release() error {
	d := sn.store.data
	d.mu.Lock()
	sn.tables = nil
	d.mu.Unlock()
	return nil
}

// cloneTables returns a copy of tables that shares no mutable state with it:
// trees are cloned, specs copied (CreateTable appends to Families).
func cloneTables(tables map[string]*table) map[string]*table {
	out := make(map[string]*table, len(tables))
	for name, t := range tables {
		c := &table{
			spec: store.TableSpec{Name: t.spec.Name, Families: slices.Clone(t.spec.Families), Splits: cloneAll(t.spec.Splits), Indexes: store.CloneIndexes(t.spec.Indexes)},
			rows: t.rows.Clone(),
		}
		for _, x := range t.indexes {
			c.indexes = append(c.indexes, &index{spec: x.spec, entries: x.entries.Clone()})
		}
		out[name] = c
	}
	return out
}

func cloneAll(bs [][]byte) [][]byte {
	if bs == nil {
		return nil
	}
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = bytes.Clone(b)
	}
	return out
}

// SweepExpired removes the cells expired at store.Now(ctx)
// (store.Sweeper), under the store's lock, as DeleteCell would.
func (s *Store) SweepExpired(ctx context.Context, progress func(table string, cells int64)) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	now := store.Now(ctx).UnixMicro()
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.tables))
	for name := range d.tables {
		names = append(names, name)
	}
	slices.Sort(names)
	var total int64
	for _, name := range names {
		t := d.tables[name]
		var muts []store.Mutation
		t.rows.Ascend(func(r row) bool {
			for i, c := range r.cells {
				if r.exp != nil && store.Expired(r.exp[i], time.UnixMicro(now)) {
					muts = append(muts, store.Mutation{Kind: store.DeleteCell, Table: name, Row: r.key, Family: c.Family, Qualifier: c.Qualifier})
				}
			}
			return true
		})
		for _, m := range muts {
			t.apply(m)
		}
		total += int64(len(muts))
		if progress != nil {
			progress(name, int64(len(muts)))
		}
	}
	return total, nil
}
