// Package rttstore owns a Store decorator that adds a network round-trip
// time to every call, so that benchmarks on an embedded engine can show
// what plans cost against a remote one, where round trips dominate.
//
// Invariants:
//   - Every call except Capabilities and Close is one round trip: it waits
//     rtt once, then calls the inner store (a request travels, the engine
//     answers; the whole round trip is modelled as one delay before the
//     call). ReadRows waits once however many rows it delivers.
//   - The wait honours ctx: a call whose ctx is done before or during it
//     returns ctx.Err() without calling the inner store.
//   - An rtt of 0 adds nothing: no timer, no wait.
//   - RoundTrips counts the round trips atomically, when they start,
//     whether or not they fail (as countstore does); the Store is safe for
//     concurrent use when the inner one is.
//   - Snapshot and the Restore and Release of the snapshot it returns pass
//     through undelayed: restoring is benchmark housekeeping, not a
//     request a client would make, so it must not weigh on what is
//     measured. Since Go cannot implement an interface only when the inner
//     store does, *Store always implements store.Snapshotter, and its
//     Snapshot fails with an error wrapping errors.ErrUnsupported when the
//     inner store is no Snapshotter.
//
// The wait is a Go timer, and timers fire late, so the realized delay is
// rtt plus an overshoot that depends on the load; BenchmarkRealizedDelay
// measures it. While goroutines keep the CPUs busy, a timer mostly fires
// within microseconds of its time, with a tail of waits for a CPU. But in a
// process with idle CPUs, the Go runtime on Linux (up to Go 1.26 at least)
// sleeps in epoll_wait, whose timeout is in whole milliseconds: a wait
// shorter than 1ms then takes about 1ms, and a longer one is late by up to
// about 1ms (measured on a 2-core VM: rtt 500µs and 1ms both took about
// 1.15ms on average, up to 1.3ms in noisier runs). So RoundTrips times
// Delay underestimates the time spent waiting, most for sub-millisecond
// rtts: benchmarks that need it exactly read Waited.
package rttstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/store"
)

// Store adds a round-trip time to the calls to an inner store.
type Store struct {
	inner      store.Store
	rtt        time.Duration
	roundTrips atomic.Int64
	waited     atomic.Int64 // nanoseconds spent in completed waits
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.Snapshotter = (*Store)(nil)
)

// New returns inner with a delay of rtt added to every round trip. A
// negative rtt counts as 0.
func New(inner store.Store, rtt time.Duration) *Store {
	return &Store{inner: inner, rtt: max(rtt, 0)}
}

// Delay is the round-trip time added to each call.
func (s *Store) Delay() time.Duration { return s.rtt }

// RoundTrips is the number of round trips started so far.
func (s *Store) RoundTrips() int64 { return s.roundTrips.Load() }

// Waited is the time the round trips waited so far, as realized: rtt plus
// each timer's overshoot. Benchmarks report Waited / RoundTrips as the
// delay they actually simulated.
func (s *Store) Waited() time.Duration { return time.Duration(s.waited.Load()) }

// roundTrip counts a round trip and waits rtt, or until ctx is done.
func (s *Store) roundTrip(ctx context.Context) error {
	s.roundTrips.Add(1)
	if s.rtt == 0 {
		return nil // the inner store checks ctx
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	t := time.NewTimer(s.rtt)
	defer t.Stop()
	select {
	case <-t.C:
		s.waited.Add(int64(time.Since(start)))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CreateTable waits a round trip and forwards the call.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.roundTrip(ctx); err != nil {
		return err
	}
	return s.inner.CreateTable(ctx, spec)
}

// Tables waits a round trip and forwards the call.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.roundTrip(ctx); err != nil {
		return nil, err
	}
	return s.inner.Tables(ctx)
}

// ReadRow waits a round trip and forwards the call.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if err := s.roundTrip(ctx); err != nil {
		return store.Row{}, false, err
	}
	return s.inner.ReadRow(ctx, table, key)
}

// ReadRows waits one round trip and forwards the call.
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.roundTrip(ctx); err != nil {
		return err
	}
	return s.inner.ReadRows(ctx, table, rs, opts, fn)
}

// Apply waits a round trip and forwards the call.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := s.roundTrip(ctx); err != nil {
		return err
	}
	return s.inner.Apply(ctx, muts)
}

// ApplyRows waits a round trip and forwards the call (store.RowWriter; the
// inner store's Apply where it is none).
func (s *Store) ApplyRows(ctx context.Context, muts []store.Mutation) error {
	if err := s.roundTrip(ctx); err != nil {
		return err
	}
	return store.ApplyRows(ctx, s.inner, muts)
}

// ApplyGuards waits one round trip and forwards the call
// (store.Guarded); it fails with an error wrapping errors.ErrUnsupported
// when the inner store is no store.Guarded.
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	inner, ok := s.inner.(store.Guarded)
	if !ok {
		return false, fmt.Errorf("rttstore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	if err := s.roundTrip(ctx); err != nil {
		return false, err
	}
	return inner.ApplyGuards(ctx, gs, muts)
}

// ReadIndex waits a round trip and forwards the call (store.Indexer); it
// fails with an error wrapping errors.ErrUnsupported when the inner store
// is no store.Indexer.
func (s *Store) ReadIndex(ctx context.Context, table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	ix, ok := s.inner.(store.Indexer)
	if !ok {
		return fmt.Errorf("rttstore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	if err := s.roundTrip(ctx); err != nil {
		return err
	}
	return ix.ReadIndex(ctx, table, index, values, opts, fn)
}

// Capabilities are those of the inner store; asking is no round trip.
func (s *Store) Capabilities() store.Capabilities { return s.inner.Capabilities() }

// Close closes the inner store, without delay.
func (s *Store) Close() error { return s.inner.Close() }

// Snapshot snapshots the inner store, without delay: see the package doc.
// It fails with an error wrapping errors.ErrUnsupported if the inner store
// is no store.Snapshotter.
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	sn, ok := s.inner.(store.Snapshotter)
	if !ok {
		return nil, fmt.Errorf("rttstore: snapshot of a %T: %w", s.inner, errors.ErrUnsupported)
	}
	return sn.Snapshot(ctx)
}

// ConditionalStore is a Store over a store with conditional row mutations,
// which it keeps (store.Conditional): so it can go under an intent log
// (package txnstore), whose every call to the store then pays the round
// trip, as on a remote Bigtable.
type ConditionalStore struct {
	*Store
	cond store.Conditional
}

var _ store.Conditional = (*ConditionalStore)(nil)

// NewConditional is New for a store with conditional row mutations.
func NewConditional[S interface {
	store.Store
	store.Conditional
}](inner S, rtt time.Duration) *ConditionalStore {
	return &ConditionalStore{Store: New(inner, rtt), cond: inner}
}

// ApplyIf waits a round trip and forwards the call.
func (s *ConditionalStore) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	if err := s.roundTrip(ctx); err != nil {
		return false, err
	}
	return s.cond.ApplyIf(ctx, table, row, cond, then, otherwise)
}
