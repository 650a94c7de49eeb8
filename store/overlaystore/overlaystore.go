// Package overlaystore owns the pending writes of a write transaction: a
// Store that keeps the mutations applied to it in memory, over a base store
// it reads through, until Commit applies them to the base as one batch
// (all-or-nothing where the base's Apply is) or Discard drops them.
//
// Invariants, besides those of package store:
//   - The base is never written before Commit. Reads see the base's rows
//     with the pending mutations applied on top, in order: a transaction
//     reads its own writes.
//   - Pending rows are kept per table in a B-tree, each immutable once in
//     it (a write replaces it), so a read works on an O(1) clone of the tree
//     and calls back without holding a lock (callbacks may call the store).
//   - Apply checks every mutation (its table and family exist, its kind is
//     known, the base's MutationChecker accepts it) before keeping any, so
//     it is atomic: Capabilities().AtomicBatch is true; and a write the
//     base would refuse fails now, not at Commit.
//   - Commit applies the pending mutations in the order they were applied,
//     in one Apply of the base (so a later mutation of a cell wins, as
//     within one Apply), then empties the overlay; if that Apply fails the
//     overlay keeps them. Discard empties it without writing.
//   - Pending cells keep no expiry: Capabilities().Expiry is false and
//     Apply refuses a SetCell with Expires (store.ErrNoExpiry).
//   - CreateTable and Tables go to the base at once: tables are not
//     transactional. Close discards the pending writes and leaves the base
//     open.
//
// Memory: every pending mutation is held twice (the ordered log Commit
// applies, and the merged rows reads see) until Commit or Discard.
package overlaystore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/btree"

	"github.com/kvschema/kvschema/store"
)

// Store is an overlay of pending writes over a base store. It is safe for
// concurrent use.
type Store struct {
	base store.Store

	mu     sync.Mutex
	closed bool
	tables map[string]*btree.BTreeG[*row] // pending rows by table
	known  map[string][]string            // families of the base's tables seen
	ixs    map[string][]store.IndexSpec   // their local indexes (store.Indexer)
	log    []store.Mutation               // pending mutations, owned copies, in order
}

// row is a pending row: what the pending mutations did to a row of the base.
type row struct {
	key     []byte
	cleared bool         // a DeleteRow: the base's cells are gone
	gone    []string     // DeleteFamily: families whose base cells are gone (none when cleared)
	edits   []store.Cell // sorted by (family, qualifier); nil Value with deleted
	deleted []bool       // parallel to edits: the cell is deleted
}

func lessRow(a, b *row) bool { return bytes.Compare(a.key, b.key) < 0 }

// New returns an empty overlay over base.
func New(base store.Store) *Store {
	return &Store{base: base, tables: map[string]*btree.BTreeG[*row]{}, known: map[string][]string{}, ixs: map[string][]store.IndexSpec{}}
}

// Base is the store the overlay reads through and commits to.
func (s *Store) Base() store.Store { return s.base }

// Pending is the number of mutations Commit would apply.
func (s *Store) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log)
}

func (s *Store) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("overlaystore: %w", store.ErrClosed)
	}
	return nil
}

// CreateTable creates the table in the base at once.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := s.base.CreateTable(ctx, spec); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.known, spec.Name) // families may have been added
	s.mu.Unlock()
	return nil
}

// Tables lists the base's tables.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.base.Tables(ctx)
}

// pending returns a clone of table's pending rows, nil if it has none.
func (s *Store) pending(table string) *btree.BTreeG[*row] {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[table]
	if t == nil || t.Len() == 0 {
		return nil
	}
	return t.Clone()
}

// ReadRow reads the base's row with the pending writes applied.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if err := s.check(ctx); err != nil {
		return store.Row{}, false, err
	}
	t := s.pending(table)
	var p *row
	if t != nil {
		p, _ = t.Get(&row{key: key})
	}
	if p != nil && p.cleared {
		if _, err := s.families(ctx, table); err != nil {
			return store.Row{}, false, err
		}
		return owned(merge(p, store.Row{}))
	}
	base, ok, err := s.base.ReadRow(ctx, table, key)
	if err != nil || p == nil {
		return base, ok, err
	}
	return owned(merge(p, base))
}

// owned is ReadRow's result: the caller's copy of r, or no row.
func owned(r store.Row, ok bool) (store.Row, bool, error) {
	if !ok {
		return store.Row{}, false, nil
	}
	return store.CloneRow(r), true, nil
}

// ReadRows reads the base's rows with the pending writes applied: the
// base's read (its limit raised by the number of pending rows selected,
// which is as many rows as pending deletes can hide) merged in key order
// with the pending rows the base does not hold.
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	t := s.pending(table)
	if t == nil {
		return s.base.ReadRows(ctx, table, rs, opts, fn)
	}
	ranges := rs.Normalize()
	var mine []*row // the pending rows selected, in read order
	for i := range ranges {
		rg := ranges[i]
		if opts.Reverse {
			rg = ranges[len(ranges)-1-i]
		}
		scan(t, rg, opts.Reverse, func(p *row) bool {
			mine = append(mine, p)
			return true
		})
	}
	if len(mine) == 0 {
		return s.base.ReadRows(ctx, table, rs, opts, fn)
	}
	before := func(a, b []byte) bool { // a comes before b in read order
		if opts.Reverse {
			return bytes.Compare(a, b) > 0
		}
		return bytes.Compare(a, b) < 0
	}
	n, done := 0, false
	emit := func(r store.Row) bool {
		n++
		done = !fn(r) || n == opts.Limit
		return !done
	}
	i := 0
	// mineUntil emits the pending rows that come before key (all, with
	// all: a base row's key may be nil, the empty key).
	mineUntil := func(key []byte, all bool) bool {
		for ; i < len(mine) && (all || before(mine[i].key, key)); i++ {
			if r, ok := merge(mine[i], store.Row{}); ok && !emit(r) {
				i++
				return false
			}
		}
		return true
	}
	baseOpts := opts
	if opts.Limit > 0 {
		baseOpts.Limit = opts.Limit + len(mine)
	}
	err := s.base.ReadRows(ctx, table, rs, baseOpts, func(b store.Row) bool {
		if !mineUntil(b.Key, false) {
			return false
		}
		if i < len(mine) && bytes.Equal(mine[i].key, b.Key) {
			p := mine[i]
			i++
			if r, ok := merge(p, b); ok {
				return emit(r)
			}
			return true
		}
		return emit(b)
	})
	if err != nil || done {
		return err
	}
	// The base read ended: it held no more rows (had its raised limit cut
	// it, at least Limit rows would have been emitted).
	mineUntil(nil, true)
	return nil
}

// merge applies pending row p to base (the base's row of p's key, or an
// empty Row); ok is false if the result has no cell.
func merge(p *row, base store.Row) (store.Row, bool) {
	out := store.Row{Key: p.key}
	var cells []store.Cell
	if !p.cleared {
		cells = base.Cells
	}
	res := make([]store.Cell, 0, len(cells)+len(p.edits))
	i, j := 0, 0
	for i < len(cells) || j < len(p.edits) {
		var c int
		switch {
		case i == len(cells):
			c = 1
		case j == len(p.edits):
			c = -1
		default:
			c = compareCells(cells[i], p.edits[j])
		}
		switch {
		case c < 0:
			if len(p.gone) == 0 || !slices.Contains(p.gone, cells[i].Family) {
				res = append(res, cells[i])
			}
			i++
		default:
			if c == 0 {
				i++
			}
			if !p.deleted[j] {
				res = append(res, p.edits[j])
			}
			j++
		}
	}
	out.Cells = res
	return out, len(res) > 0
}

func compareCells(a, b store.Cell) int {
	return cmp.Or(strings.Compare(a.Family, b.Family), bytes.Compare(a.Qualifier, b.Qualifier))
}

// scan calls visit for the pending rows of t in rg, in key order or
// reversed, until visit returns false.
func scan(t *btree.BTreeG[*row], rg store.Range, reverse bool, visit func(*row) bool) {
	start := &row{key: rg.Start}
	if !reverse {
		if rg.End == nil {
			t.AscendGreaterOrEqual(start, visit)
		} else {
			t.AscendRange(start, &row{key: rg.End}, visit)
		}
		return
	}
	down := func(p *row) bool {
		if bytes.Compare(p.key, rg.Start) < 0 {
			return false
		}
		if rg.End != nil && bytes.Equal(p.key, rg.End) {
			return true // End is exclusive
		}
		return visit(p)
	}
	if rg.End == nil {
		t.Descend(down)
	} else {
		t.DescendLessOrEqual(&row{key: rg.End}, down)
	}
}

// families returns the families of a table of the base, or ErrNoTable
// (one Tables call the first time a table is seen).
func (s *Store) families(ctx context.Context, table string) ([]string, error) {
	s.mu.Lock()
	fams, ok := s.known[table]
	s.mu.Unlock()
	if ok {
		return fams, nil
	}
	specs, err := s.base.Tables(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range specs {
		s.known[sp.Name] = sp.Families
		s.ixs[sp.Name] = sp.Indexes
	}
	if fams, ok = s.known[table]; !ok {
		return nil, fmt.Errorf("table %q: %w", table, store.ErrNoTable)
	}
	return fams, nil
}

// ReadIndex reads through the base's local index (store.Indexer) with
// the pending writes applied: a row with pending writes is found by the
// indexed values of its merged row, not by the base's entries. It is one
// ReadIndex of the base, plus, when the table has pending rows, one
// ReadRows of their base images. It fails with an error wrapping
// errors.ErrUnsupported when the base is no Indexer.
func (s *Store) ReadIndex(ctx context.Context, table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	ix, ok := s.base.(store.Indexer)
	if !ok {
		return fmt.Errorf("overlaystore: %T keeps no indexes: %w", s.base, errors.ErrUnsupported)
	}
	t := s.pending(table)
	if t == nil {
		return ix.ReadIndex(ctx, table, index, values, opts, fn)
	}
	if _, err := s.families(ctx, table); err != nil {
		return err
	}
	s.mu.Lock()
	specs := s.ixs[table]
	s.mu.Unlock()
	var spec *store.IndexSpec
	for i := range specs {
		if specs[i].Name == index {
			spec = &specs[i]
		}
	}
	if spec == nil {
		return fmt.Errorf("overlaystore: table %q, index %q: %w", table, index, store.ErrNoIndex)
	}
	type entry struct {
		value []byte
		row   store.Row
	}
	var out []entry
	keys := make([][]byte, 0, t.Len())
	t.Ascend(func(p *row) bool {
		keys = append(keys, p.key)
		return true
	})
	images := map[string]store.Row{}
	if err := s.base.ReadRows(ctx, table, store.RowSet{Keys: keys}, store.ReadOptions{}, func(r store.Row) bool {
		images[string(r.Key)] = store.CloneRow(r)
		return true
	}); err != nil {
		return err
	}
	ranges := values.Normalize()
	selected := func(v []byte) bool {
		for _, rg := range ranges {
			if rg.Contains(v) {
				return true
			}
		}
		return false
	}
	var vs [][]byte
	t.Ascend(func(p *row) bool {
		if r, ok := merge(p, images[string(p.key)]); ok {
			vs = spec.AppendIndexedValues(vs[:0], r.Cells)
			for _, v := range vs {
				if selected(v) {
					out = append(out, entry{v, r})
				}
			}
		}
		return true
	})
	// The first Limit entries of the answer are among the pending rows'
	// and the base's first Limit entries of other rows. The base delivers
	// a row once per entry, in (value, row key) order: the k-th time with
	// its k-th selected value in that order.
	delivered := map[string]int{}
	var broken error
	n := 0
	if err := ix.ReadIndex(ctx, table, index, values, store.ReadOptions{Reverse: opts.Reverse}, func(r store.Row) bool {
		if _, mine := t.Get(&row{key: r.Key}); mine {
			return true
		}
		r = store.CloneRow(r)
		vs = slices.DeleteFunc(spec.AppendIndexedValues(vs[:0], r.Cells), func(v []byte) bool { return !selected(v) })
		k := delivered[string(r.Key)]
		if k == len(vs) { // a broken invariant: say so rather than guess a value
			broken = fmt.Errorf("overlaystore: table %q, index %q: the base delivered row %q more often than it has selected values", table, index, r.Key)
			return false
		}
		delivered[string(r.Key)] = k + 1
		if opts.Reverse {
			k = len(vs) - 1 - k
		}
		out = append(out, entry{vs[k], r})
		n++
		return n != opts.Limit
	}); err != nil {
		return err
	}
	if broken != nil {
		return broken
	}
	slices.SortFunc(out, func(a, b entry) int {
		c := bytes.Compare(a.value, b.value)
		if c == 0 {
			c = bytes.Compare(a.row.Key, b.row.Key)
		}
		if opts.Reverse {
			c = -c
		}
		return c
	})
	for i, e := range out {
		if opts.Limit > 0 && i == opts.Limit || !fn(e.row) {
			break
		}
	}
	return nil
}

// CheckMutations reports the first mutation Apply would refuse for its
// kind or the base would refuse (store.MutationChecker).
func (s *Store) CheckMutations(muts []store.Mutation) error {
	// Pending cells keep no expiry (Capabilities().Expiry is false).
	if err := store.CheckNoExpiry("overlaystore", muts); err != nil {
		return err
	}
	for i, m := range muts {
		if !m.Kind.Valid() {
			return fmt.Errorf("overlaystore: mutation %d: unknown kind %v", i, m.Kind)
		}
	}
	if mc, ok := s.base.(store.MutationChecker); ok {
		return mc.CheckMutations(muts)
	}
	return nil
}

// Apply keeps muts as pending writes, all or none.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	for i, m := range muts {
		fams, err := s.families(ctx, m.Table)
		if err != nil {
			return fmt.Errorf("overlaystore: mutation %d: %w", i, err)
		}
		if m.Kind != store.DeleteRow && !slices.Contains(fams, m.Family) {
			return fmt.Errorf("overlaystore: mutation %d: table %s has no family %q", i, m.Table, m.Family)
		}
	}
	if err := s.CheckMutations(muts); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("overlaystore: %w", store.ErrClosed)
	}
	for _, m := range muts {
		m.Row, m.Qualifier, m.Value = bytes.Clone(m.Row), bytes.Clone(m.Qualifier), bytes.Clone(m.Value)
		if m.Kind == store.SetCell && m.Value == nil {
			m.Value = []byte{}
		}
		s.log = append(s.log, m)
		t := s.tables[m.Table]
		if t == nil {
			t = btree.NewG(16, lessRow)
			s.tables[m.Table] = t
		}
		old, _ := t.Get(&row{key: m.Row})
		t.ReplaceOrInsert(applyTo(old, m))
	}
	return nil
}

// applyTo returns pending row old (nil: none yet) with m applied, as a new
// row: old may be in use by a read's clone of the tree.
func applyTo(old *row, m store.Mutation) *row {
	n := &row{key: m.Row}
	if m.Kind == store.DeleteRow {
		n.cleared = true
		return n
	}
	if old != nil {
		n.cleared, n.gone = old.cleared, old.gone
		n.edits, n.deleted = old.edits, old.deleted
	}
	if m.Kind == store.DeleteFamily {
		// The family's pending cells go, and so do its base cells.
		i, _ := slices.BinarySearchFunc(n.edits, m.Family, func(c store.Cell, f string) int { return strings.Compare(c.Family, f) })
		j := i
		for j < len(n.edits) && n.edits[j].Family == m.Family {
			j++
		}
		if i < j {
			n.edits = slices.Concat(n.edits[:i:i], n.edits[j:])
			n.deleted = slices.Concat(n.deleted[:i:i], n.deleted[j:])
		}
		if !n.cleared && !slices.Contains(n.gone, m.Family) {
			n.gone = slices.Concat(n.gone, []string{m.Family})
		}
		return n
	}
	c := store.Cell{Family: m.Family, Qualifier: m.Qualifier, Value: m.Value}
	i, found := slices.BinarySearchFunc(n.edits, c, compareCells)
	del := m.Kind == store.DeleteCell
	if del {
		c.Value = nil
	}
	if found {
		n.edits, n.deleted = slices.Clone(n.edits), slices.Clone(n.deleted)
		n.edits[i], n.deleted[i] = c, del
	} else {
		n.edits = slices.Concat(n.edits[:i:i], []store.Cell{c}, n.edits[i:])
		n.deleted = slices.Concat(n.deleted[:i:i], []bool{del}, n.deleted[i:])
	}
	return n
}

// Commit applies the pending mutations to the base in one Apply and, if
// it succeeds, empties the overlay.
func (s *Store) Commit(ctx context.Context) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) == 0 {
		return nil
	}
	if err := s.base.Apply(ctx, s.log); err != nil {
		return err
	}
	s.discard()
	return nil
}

// Discard drops the pending mutations.
func (s *Store) Discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discard()
}

func (s *Store) discard() {
	s.log = nil
	clear(s.tables)
}

// Capabilities are the base's, with Apply atomic (it only buffers), and
// without cell expiry: pending cells keep none, so a SetCell with Expires
// is refused (store.ErrNoExpiry).
func (s *Store) Capabilities() store.Capabilities {
	c := s.base.Capabilities()
	c.AtomicBatch = true
	c.Expiry = false
	_, ix := s.base.(store.Indexer)
	c.LocalIndexes = c.LocalIndexes && ix
	return c
}

// Close discards the pending writes; it does not close the base.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.discard()
	return nil
}
