// Package countstore owns a Store decorator that counts what passes through
// it: calls per method, round trips, rows, cells and bytes read, mutations
// and bytes written. Benchmarks and EXPLAIN ANALYZE use it to measure plans
// on any backend.
//
// Invariants:
//   - Counters are atomic: the Store is safe for concurrent use when the
//     inner one is, and Stats may be read at any time.
//   - Every call except Capabilities and Close is one round trip, counted
//     when it starts, whether or not it fails.
//   - ReadIndex (store.Indexer) is one read round trip, counted apart
//     (Stats.ReadIndex); its probes are the values and value ranges it asks
//     for, its rows those it delivers, as for ReadRows.
//   - Probes count what a read asks for: 1 per ReadRow, and per ReadRows
//     call the keys plus ranges of its RowSet (a plan step probing P
//     partitions asks for P of them), whatever the rows found.
//   - Reads are counted as rows are delivered: ReadRow's row if found, each
//     row passed to a ReadRows callback. Writes are counted when Apply
//     succeeds.
//   - Bytes are counted per cell as HBase stores and ships them: row key +
//     family + qualifier + value. So layouts that repeat a long row key in
//     many cells pay for it. A DeleteCell counts row key + family +
//     qualifier, a DeleteFamily row key + family, a DeleteRow its row key.
package countstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kvschema/kvschema/store"
)

// Stats is a snapshot of the counters.
type Stats struct {
	CreateTable, Tables, ReadRow, ReadRows, Apply int64 // calls per method
	ReadIndex                                     int64 // store.Indexer reads

	RoundTrips   int64
	Probes       int64 // keys and ranges asked for by reads
	RowsRead     int64
	CellsRead    int64
	BytesRead    int64
	Mutations    int64 // mutations applied
	BytesWritten int64
}

// String prints the counters on one line, e.g.
// "rt=2 (get=1 scan=1) rows=3 cells=4 read=56B muts=0 written=0B"; method
// counts that are zero are left out.
func (s Stats) String() string {
	calls := ""
	for _, c := range []struct {
		name string
		n    int64
	}{{"create", s.CreateTable}, {"tables", s.Tables}, {"get", s.ReadRow}, {"scan", s.ReadRows}, {"index", s.ReadIndex}, {"apply", s.Apply}} {
		if c.n != 0 {
			if calls != "" {
				calls += " "
			}
			calls += fmt.Sprintf("%s=%d", c.name, c.n)
		}
	}
	if calls != "" {
		calls = " (" + calls + ")"
	}
	return fmt.Sprintf("rt=%d%s rows=%d cells=%d read=%dB muts=%d written=%dB",
		s.RoundTrips, calls, s.RowsRead, s.CellsRead, s.BytesRead, s.Mutations, s.BytesWritten)
}

// Store counts the traffic to an inner store.
type Store struct {
	inner store.Store

	createTable, tables, readRow, readRows, apply atomic.Int64
	readIndex                                     atomic.Int64
	probes, rowsRead, cellsRead, bytesRead        atomic.Int64
	mutations, bytesWritten                       atomic.Int64
}

var _ store.Store = (*Store)(nil)

// New returns a counting decorator of inner.
func New(inner store.Store) *Store { return &Store{inner: inner} }

// Stats returns the counters.
func (s *Store) Stats() Stats {
	st := Stats{
		CreateTable:  s.createTable.Load(),
		Tables:       s.tables.Load(),
		ReadRow:      s.readRow.Load(),
		ReadRows:     s.readRows.Load(),
		Apply:        s.apply.Load(),
		ReadIndex:    s.readIndex.Load(),
		Probes:       s.probes.Load(),
		RowsRead:     s.rowsRead.Load(),
		CellsRead:    s.cellsRead.Load(),
		BytesRead:    s.bytesRead.Load(),
		Mutations:    s.mutations.Load(),
		BytesWritten: s.bytesWritten.Load(),
	}
	st.RoundTrips = st.CreateTable + st.Tables + st.ReadRow + st.ReadRows + st.Apply + st.ReadIndex
	return st
}

// Reset sets every counter to zero.
func (s *Store) Reset() {
	for _, c := range []*atomic.Int64{
		&s.createTable, &s.tables, &s.readRow, &s.readRows, &s.apply, &s.readIndex,
		&s.probes, &s.rowsRead, &s.cellsRead, &s.bytesRead, &s.mutations, &s.bytesWritten,
	} {
		c.Store(0)
	}
}

// CreateTable counts a call and forwards it.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	s.createTable.Add(1)
	return s.inner.CreateTable(ctx, spec)
}

// Tables counts a call and forwards it.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	s.tables.Add(1)
	return s.inner.Tables(ctx)
}

// ReadRow counts a call and the row it returns.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	s.readRow.Add(1)
	s.probes.Add(1)
	row, ok, err := s.inner.ReadRow(ctx, table, key)
	if ok {
		s.countRow(row)
	}
	return row, ok, err
}

// ReadRows counts a call and the rows it delivers.
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	s.readRows.Add(1)
	s.probes.Add(int64(len(rs.Keys) + len(rs.Ranges)))
	return s.inner.ReadRows(ctx, table, rs, opts, func(row store.Row) bool {
		s.countRow(row)
		return fn(row)
	})
}

// ReadIndex forwards the call (store.Indexer), counted as one round trip,
// its probes and the rows it delivers; it fails with an error wrapping
// errors.ErrUnsupported when the inner store is no store.Indexer.
func (s *Store) ReadIndex(ctx context.Context, table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	ix, ok := s.inner.(store.Indexer)
	if !ok {
		return fmt.Errorf("countstore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	s.readIndex.Add(1)
	s.probes.Add(int64(len(values.Keys) + len(values.Ranges)))
	return ix.ReadIndex(ctx, table, index, values, opts, func(row store.Row) bool {
		s.countRow(row)
		return fn(row)
	})
}

func (s *Store) countRow(row store.Row) {
	n := 0
	for _, c := range row.Cells {
		n += len(row.Key) + len(c.Family) + len(c.Qualifier) + len(c.Value)
	}
	s.rowsRead.Add(1)
	s.cellsRead.Add(int64(len(row.Cells)))
	s.bytesRead.Add(int64(n))
}

// ApplyGuards forwards the call (store.Guarded), counted as one ReadRows
// probing the guards' rows and one Apply.
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	inner, ok := s.inner.(store.Guarded)
	if !ok {
		return false, fmt.Errorf("countstore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	s.readRows.Add(1)
	s.probes.Add(int64(len(gs)))
	s.apply.Add(1)
	return inner.ApplyGuards(ctx, gs, muts)
}

func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	s.apply.Add(1)
	if err := s.inner.Apply(ctx, muts); err != nil {
		return err
	}
	s.countWrites(muts)
	return nil
}

// ApplyRows forwards the call (store.RowWriter; the inner store's Apply
// where it is none), counted as one Apply.
func (s *Store) ApplyRows(ctx context.Context, muts []store.Mutation) error {
	s.apply.Add(1)
	if err := store.ApplyRows(ctx, s.inner, muts); err != nil {
		return err
	}
	s.countWrites(muts)
	return nil
}

// countWrites counts applied mutations and their bytes.
func (s *Store) countWrites(muts []store.Mutation) {
	n := 0
	for _, m := range muts {
		n += len(m.Row)
		switch m.Kind {
		case store.DeleteRow:
		case store.DeleteFamily:
			n += len(m.Family)
		default:
			n += len(m.Family) + len(m.Qualifier)
		}
		if m.Kind == store.SetCell {
			n += len(m.Value)
		}
	}
	s.mutations.Add(int64(len(muts)))
	s.bytesWritten.Add(int64(n))
}

// Capabilities are those of the inner store.
func (s *Store) Capabilities() store.Capabilities { return s.inner.Capabilities() }

// Close closes the inner store.
func (s *Store) Close() error { return s.inner.Close() }
