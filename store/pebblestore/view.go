package pebblestore

import (
	"context"
	"fmt"
	"sync"

	"github.com/kvschema/kvschema/store"
)

// View implements store.Viewer: the view reads through one Pebble
// iterator, made now, which sees the database as it is at this moment
// (Pebble iterators read from an implicit snapshot). The view counts as a
// running call until it is closed: Restore and Close wait for it.
func (s *Store) View(ctx context.Context) (store.View, error) {
	r, err := s.enterReader(ctx)
	if err != nil {
		return nil, err
	}
	// A reader of its own, not a spare one: its iterator must be new.
	r.closeIter()
	r.pinned = true
	// The tables as they are before the iterator: one created, or an
	// index added, after this point is not the view's (ErrNoTable,
	// ErrNoIndex), even if the iterator happens to see its keys.
	tables := *s.tables.Load()
	it, err := s.db.NewIter(nil)
	if err != nil {
		r.pinned = false
		s.exitReader(r)
		return nil, err
	}
	r.it, r.bounded = it, false
	return &view{s: s, r: r, tables: tables}, nil
}

// view is a store.View over one pinned reader; mu makes it safe for
// concurrent use (a reader serves one call at a time).
type view struct {
	s      *Store
	mu     sync.Mutex
	r      *reader
	closed bool
	tables map[string]*table // as of the view's point in time
}

func (v *view) enter(ctx context.Context, name string) (*table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil, store.ErrClosed
	}
	t := v.tables[name]
	if t == nil {
		v.mu.Unlock()
		return nil, fmt.Errorf("pebblestore: table %q: %w", name, store.ErrNoTable)
	}
	v.r.nowCtx = ctx
	return t, nil
}

func (v *view) ReadRow(ctx context.Context, name string, key []byte) (store.Row, bool, error) {
	t, err := v.enter(ctx, name)
	if err != nil {
		return store.Row{}, false, err
	}
	defer v.mu.Unlock()
	return v.s.readRowWith(v.r, t, key)
}

func (v *view) ReadRows(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	t, err := v.enter(ctx, name)
	if err != nil {
		return err
	}
	defer v.mu.Unlock()
	return v.s.readRowsWith(v.r, t, rs, opts, fn)
}

func (v *view) ReadCells(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(row []byte, c store.Cell, first bool) bool) error {
	t, err := v.enter(ctx, name)
	if err != nil {
		return err
	}
	defer v.mu.Unlock()
	return v.s.readCellsWith(v.r, t, rs, opts, fn)
}

// ReadIndex reads through an index at the view's point in time
// (store.Indexer).
func (v *view) ReadIndex(ctx context.Context, name, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	t, err := v.enter(ctx, name)
	if err != nil {
		return err
	}
	defer v.mu.Unlock()
	return v.s.readIndexWith(v.r, t, index, values, opts, fn)
}

// Tables lists the tables as of the view's point in time.
func (v *view) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return specsOf(v.tables), nil
}

func (v *view) CreateTable(context.Context, store.TableSpec) error { return store.ErrReadOnly }

func (v *view) Apply(context.Context, []store.Mutation) error { return store.ErrReadOnly }

func (v *view) Capabilities() store.Capabilities { return v.s.Capabilities() }

// Close releases the iterator and ends the view's call.
func (v *view) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	err := v.r.closeIter()
	v.r.pinned = false
	v.s.exitReader(v.r)
	return err
}
