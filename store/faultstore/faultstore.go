// Package faultstore injects failures into a store that is atomic per row
// (txnstore.Inner), to test what survives them. It applies the rows of an
// Apply one at a time, yielding between them, so that even over an
// all-or-nothing store (memstore) concurrent readers see what Bigtable
// allows them to see: rows of one batch written one by one.
//
// It counts row mutations —
// each row an Apply changes, and each ApplyIf — and at the k-th one either
// fails that call (a transient error; rows of the same Apply before it are
// written, the others not, as a bulk write that fails midway), fails it
// after writing that row (the reply was lost: the caller cannot tell), or
// stops: that call and every later call of any kind fail, as if the
// process died there.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/txnstore"
)

// ErrInjected is the error of an injected failure.
var ErrInjected = errors.New("injected failure")

// Mode says what happens at the k-th row mutation.
type Mode int

const (
	// Fail fails the k-th row mutation's call; later calls work.
	Fail Mode = iota
	// Stop fails the k-th row mutation's call and every call after it.
	Stop
	// FailAfter applies the k-th row mutation, then fails its call (the
	// rows of an Apply after it are not written); later calls work.
	FailAfter
)

// Store wraps an Inner store.
type Store struct {
	txnstore.Inner

	mu      sync.Mutex
	at      int // the row mutation to fail at (1-based); 0: none
	mode    Mode
	count   int
	stopped bool
}

// New wraps inner without any fault armed.
func New(inner txnstore.Inner) *Store { return &Store{Inner: inner} }

// Arm makes the k-th row mutation from now on fail (k ≥ 1).
func (s *Store) Arm(k int, mode Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.mode, s.count = k, mode, 0
}

// Count is the number of row mutations since the last Arm (or New).
func (s *Store) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Stopped reports whether a Stop fault has fired.
func (s *Store) Stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *Store) alive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("faultstore: stopped: %w", ErrInjected)
	}
	return nil
}

// next counts n row mutations and returns how many of them are written
// and whether the call fails (a fault fires among them).
func (s *Store) next(n int) (written int, fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.count
	s.count += n
	if s.at > start && s.at <= s.count {
		written = s.at - start - 1
		switch s.mode {
		case Stop:
			s.stopped = true
		case FailAfter:
			written++
		}
		return written, true
	}
	return n, false
}

// Apply applies the rows of muts before the fault (and the faulty one with
// FailAfter), if one fires in this call, and fails; otherwise all of them.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := s.alive(); err != nil {
		return err
	}
	rows := store.GroupByRow(muts)
	ok, fail := s.next(len(rows))
	for _, r := range rows[:ok] {
		if err := s.Inner.Apply(ctx, r); err != nil {
			return err
		}
		runtime.Gosched()
	}
	if fail {
		r := rows[min(ok, len(rows)-1)][0]
		return fmt.Errorf("faultstore: %s row %q: %w", r.Table, r.Row, ErrInjected)
	}
	return nil
}

// ApplyIf is one row mutation.
func (s *Store) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	if err := s.alive(); err != nil {
		return false, err
	}
	ok, fail := s.next(1)
	if ok == 0 {
		return false, fmt.Errorf("faultstore: conditional row mutation: %w", ErrInjected)
	}
	matched, err := s.Inner.ApplyIf(ctx, table, row, cond, then, otherwise)
	runtime.Gosched()
	if err == nil && fail {
		err = fmt.Errorf("faultstore: conditional row mutation (written): %w", ErrInjected)
	}
	return matched, err
}

// The reads and table operations fail once stopped.

func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.Inner.CreateTable(ctx, spec)
}

func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.Inner.Tables(ctx)
}

func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if err := s.alive(); err != nil {
		return store.Row{}, false, err
	}
	return s.Inner.ReadRow(ctx, table, key)
}

func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.Inner.ReadRows(ctx, table, rs, opts, fn)
}

// Capabilities are the inner store's, without its local indexes: a
// faultstore offers no ReadIndex (it stands for Bigtable, which has none).
func (s *Store) Capabilities() store.Capabilities {
	c := s.Inner.Capabilities()
	c.LocalIndexes = false
	return c
}
