// Package undostore gives any store snapshots (store.Snapshotter) by
// logging undo images, for engines that have no cheap snapshot of their own
// (the Bigtable emulator): while a snapshot is held, every Apply first
// reads the rows it is about to change — one ReadRows per table — and keeps
// each row's first image; Restore writes those images back.
//
// Invariants:
//   - At most one snapshot is held at a time; Release ends it.
//   - Restore makes every row written since the snapshot (through this
//     Store value) what it was, in batches of the inner store's Apply;
//     writes by other clients are not undone. An image is the whole row,
//     read before the first mutation of it of any kind, so the undo of a
//     DeleteCell, DeleteFamily or DeleteRow brings back every cell it
//     removed; Restore writes each row as a DeleteRow then a SetCell per
//     cell of its image (none if the row was absent).
//   - While a snapshot is held, CreateTable fails: the Store seam cannot
//     drop a table, so Restore could not undo it.
//   - It keeps no cell expiry (Capabilities().Expiry is false): an undo
//     image is a row as read, without its cells' expiry, so Apply refuses
//     a SetCell with Expires (store.ErrNoExpiry).
//   - The undo reads cost one extra round trip per table per Apply; they go
//     to the inner store directly, so decorators above undostore (round-trip
//     counters, latency simulation) do not see them.
package undostore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/kvschema/kvschema/store"
)

// Store wraps an inner store.
type Store struct {
	store.Store

	mu     sync.Mutex
	held   *snapshot
	images map[string]map[string]*store.Row // table → row key → first image (nil: absent)
}

// New wraps inner.
func New(inner store.Store) *Store { return &Store{Store: inner} }

// Snapshot starts logging undo images.
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		return nil, errors.New("undostore: a snapshot is already held")
	}
	s.held = &snapshot{s: s}
	s.images = map[string]map[string]*store.Row{}
	return s.held, nil
}

// Capabilities are the inner store's without cell expiry: undo images
// are rows as read, without their cells' expiry, so a SetCell with
// Expires is refused (store.ErrNoExpiry) whether a snapshot is held or not.
func (s *Store) Capabilities() store.Capabilities {
	c := s.Store.Capabilities()
	c.Expiry = false
	return c
}

// CreateTable fails while a snapshot is held.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	s.mu.Lock()
	held := s.held != nil
	s.mu.Unlock()
	if held {
		return fmt.Errorf("undostore: create table %s: not while a snapshot is held (it could not be undone)", spec.Name)
	}
	return s.Store.CreateTable(ctx, spec)
}

// ReadIndex forwards the call (store.Indexer); it fails with an error
// wrapping errors.ErrUnsupported when the inner store is no Indexer.
// Restore's writes are Applies, which keep the inner store's indexes.
func (s *Store) ReadIndex(ctx context.Context, table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	return store.ReadIndex(ctx, s.Store, table, index, values, opts, fn)
}

// Apply records the first image of every row muts change, then applies
// them.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := store.CheckNoExpiry("undostore", muts); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		if err := s.record(ctx, muts); err != nil {
			return err
		}
	}
	return s.Store.Apply(ctx, muts)
}

// record reads the rows of muts not logged yet.
func (s *Store) record(ctx context.Context, muts []store.Mutation) error {
	missing := map[string]map[string]bool{}
	for _, m := range muts {
		if _, ok := s.images[m.Table][string(m.Row)]; ok {
			continue
		}
		if missing[m.Table] == nil {
			missing[m.Table] = map[string]bool{}
		}
		missing[m.Table][string(m.Row)] = true
	}
	for table, rows := range missing {
		rs := store.RowSet{}
		for k := range rows {
			rs.Keys = append(rs.Keys, []byte(k))
		}
		got := map[string]*store.Row{}
		err := s.Store.ReadRows(ctx, table, rs, store.ReadOptions{}, func(r store.Row) bool {
			c := store.CloneRow(r)
			got[string(c.Key)] = &c
			return true
		})
		if err != nil {
			return fmt.Errorf("undostore: read undo images: %w", err)
		}
		if s.images[table] == nil {
			s.images[table] = map[string]*store.Row{}
		}
		for k := range rows {
			s.images[table][k] = got[k] // nil: the row did not exist
		}
	}
	return nil
}

// restoreBatch bounds the rows of one restoring Apply.
const restoreBatch = 500

type snapshot struct {
	s        *Store
	released bool
}

// Restore writes every logged image back and starts the log afresh.
func (sn *snapshot) Restore(ctx context.Context) error {
	s := sn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn.released {
		return errors.New("undostore: snapshot released")
	}
	tables := make([]string, 0, len(s.images))
	for t := range s.images {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var batch []store.Mutation
	rows := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.Store.Apply(ctx, batch)
		batch, rows = batch[:0], 0
		return err
	}
	for _, t := range tables {
		keys := make([]string, 0, len(s.images[t]))
		for k := range s.images[t] {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })
		for _, k := range keys {
			batch = append(batch, store.Mutation{Kind: store.DeleteRow, Table: t, Row: []byte(k)})
			if img := s.images[t][k]; img != nil {
				for _, c := range img.Cells {
					batch = append(batch, store.Mutation{Kind: store.SetCell, Table: t, Row: []byte(k), Family: c.Family, Qualifier: c.Qualifier, Value: c.Value})
				}
			}
			if rows++; rows == restoreBatch {
				if err := flush(); err != nil {
					return fmt.Errorf("undostore: restore: %w", err)
				}
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("undostore: restore: %w", err)
	}
	s.images = map[string]map[string]*store.Row{}
	return nil
}

// Release stops logging.
func (sn *snapshot) Release() error {
	s := sn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sn.released {
		sn.released = true
		s.held, s.images = nil, nil
	}
	return nil
}
