// Package prefixstore owns a Store decorator that gives its user a namespace
// of tables inside another store: table t is stored as prefix+t. Several
// users (the variants of a benchmark, a calibration run next to a deployed
// schema) can so share one store without seeing each other's tables.
//
// Invariants:
//   - Every table name passed in is prefixed before it reaches the inner
//     store; every name coming back has the prefix removed. Tables lists
//     only the inner tables that carry the prefix.
//   - Rows, cells and mutations pass through unchanged (only Mutation.Table
//     is rewritten, on a copy: the caller's slice is not modified).
//   - Close does not close the inner store, which the namespace borrows;
//     calls on the closed namespace fail with store.ErrClosed.
package prefixstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/kvschema/kvschema/store"
)

// Store is a namespace of tables in an inner store.
type Store struct {
	inner  store.Store
	prefix string
	closed atomic.Bool
}

func (s *Store) check() error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

var _ store.Store = (*Store)(nil)

// New returns the namespace prefix of inner.
func New(inner store.Store, prefix string) *Store { return &Store{inner: inner, prefix: prefix} }

// CreateTable creates prefix+spec.Name.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.check(); err != nil {
		return err
	}
	spec.Name = s.prefix + spec.Name
	return s.inner.CreateTable(ctx, spec)
}

// Tables lists the namespace's tables, without the prefix.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	all, err := s.inner.Tables(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.TableSpec
	for _, t := range all {
		if name, ok := strings.CutPrefix(t.Name, s.prefix); ok {
			t.Name = name
			out = append(out, t)
		}
	}
	return out, nil
}

// ReadRow reads from prefix+table.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if err := s.check(); err != nil {
		return store.Row{}, false, err
	}
	return s.inner.ReadRow(ctx, s.prefix+table, key)
}

// ReadRows reads from prefix+table.
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.inner.ReadRows(ctx, s.prefix+table, rs, opts, fn)
}

// Apply applies the mutations to the prefixed tables.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.inner.Apply(ctx, s.prefixed(muts))
}

// ApplyGuards forwards the call on the prefixed tables (store.Guarded);
// it fails with an error wrapping errors.ErrUnsupported when the inner
// store is no store.Guarded.
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	inner, ok := s.inner.(store.Guarded)
	if !ok {
		return false, fmt.Errorf("prefixstore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	prefixed := make([]store.Guard, len(gs))
	for i, g := range gs {
		g.Table = s.prefix + g.Table
		prefixed[i] = g
	}
	return inner.ApplyGuards(ctx, prefixed, s.prefixed(muts))
}

// ReadIndex reads through an index of prefix+table (store.Indexer); it
// fails with an error wrapping errors.ErrUnsupported when the inner store
// is no store.Indexer.
func (s *Store) ReadIndex(ctx context.Context, table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	ix, ok := s.inner.(store.Indexer)
	if !ok {
		return fmt.Errorf("prefixstore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	return ix.ReadIndex(ctx, s.prefix+table, index, values, opts, fn)
}

// prefixed returns muts on the prefixed tables.
func (s *Store) prefixed(muts []store.Mutation) []store.Mutation {
	out := make([]store.Mutation, len(muts))
	for i, m := range muts {
		m.Table = s.prefix + m.Table
		out[i] = m
	}
	return out
}

// ApplyRows applies the mutations to the prefixed tables with the inner
// store's store.ApplyRows.
func (s *Store) ApplyRows(ctx context.Context, muts []store.Mutation) error {
	if err := s.check(); err != nil {
		return err
	}
	return store.ApplyRows(ctx, s.inner, s.prefixed(muts))
}

// Capabilities are the inner store's.
func (s *Store) Capabilities() store.Capabilities { return s.inner.Capabilities() }

// Close ends the namespace's use of the inner store, which stays open: it
// belongs to the caller.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}
