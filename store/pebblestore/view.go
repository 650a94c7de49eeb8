package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

// View implements store.Viewer: the view reads through a Pebble iterator
// made now, which sees the database as it is at this moment (Pebble
// iterators read from an implicit snapshot), and its clones. The view counts as a
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
	return &view{s: s, base: r, tables: tables}, nil
}

// view is a store.View over one pinned iterator, base, which no call
// reads: each call takes a reader of its own, over a clone of it (the same
// memtables and sstables: the same point in time), from the free ones or
// new, so calls may run at once and a read callback may read the view (a
// pipelined query joins its first step's rows as they come; with one
// reader, it waited for itself).
type view struct {
	s      *Store
	mu     sync.Mutex
	base   *reader
	free   []*reader
	closed bool
	tables map[string]*table // as of the view's point in time
}

func (v *view) enter(ctx context.Context, name string) (*reader, *table, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, nil, store.ErrClosed
	}
	t := v.tables[name]
	if t == nil {
		return nil, nil, fmt.Errorf("pebblestore: table %q: %w", name, store.ErrNoTable)
	}
	var r *reader
	if n := len(v.free); n > 0 {
		r, v.free = v.free[n-1], v.free[:n-1]
	} else {
		it, err := v.base.it.Clone(pebble.CloneOptions{})
		if err != nil {
			return nil, nil, err
		}
		r = &reader{pinned: true, it: it}
	}
	r.nowCtx = ctx
	return r, t, nil
}

// exit takes back a reader enter gave: one whose iterator failed (closed
// by reader.fail), or one of a closed view, is dropped.
func (v *view) exit(r *reader) {
	r.nowCtx = nil
	r.trim()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || r.it == nil {
		r.closeIter()
		return
	}
	v.free = append(v.free, r)
}

func (v *view) ReadRow(ctx context.Context, name string, key []byte) (store.Row, bool, error) {
	r, t, err := v.enter(ctx, name)
	if err != nil {
		return store.Row{}, false, err
	}
	defer v.exit(r)
	return v.s.readRowWith(r, t, key)
}

func (v *view) ReadRows(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	r, t, err := v.enter(ctx, name)
	if err != nil {
		return err
	}
	defer v.exit(r)
	return v.s.readRowsWith(r, t, rs, opts, fn)
}

func (v *view) ReadCells(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(row []byte, c store.Cell, first bool) bool) error {
	r, t, err := v.enter(ctx, name)
	if err != nil {
		return err
	}
	defer v.exit(r)
	return v.s.readCellsWith(r, t, rs, opts, fn)
}

// ReadIndex reads through an index at the view's point in time
// (store.Indexer).
func (v *view) ReadIndex(ctx context.Context, name, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	r, t, err := v.enter(ctx, name)
	if err != nil {
		return err
	}
	defer v.exit(r)
	return v.s.readIndexWith(r, t, index, values, opts, fn)
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
	var err error
	for _, r := range v.free {
		err = errors.Join(err, r.closeIter())
	}
	v.free = nil
	err = errors.Join(err, v.base.closeIter())
	v.base.pinned = false
	v.s.exitReader(v.base)
	return err
}
