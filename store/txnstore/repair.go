package txnstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kvschema/kvschema/store"
)

// RepairStats say what Repair did.
type RepairStats struct {
	RolledForward int   // committed writes finished
	Aborted       int   // writes left prepared by dead writers, aborted
	Rows          int64 // rows scanned
	StaleLocks    int   // locks of aborted or finished writes removed
	Legacy        int   // rows cleared of format-1 bookkeeping ("seq")
}

func (r RepairStats) String() string {
	return fmt.Sprintf("%d unfinished writes rolled forward, %d abandoned writes aborted; %d rows scanned: %d stale locks removed, %d rows cleared of old bookkeeping",
		r.RolledForward, r.Aborted, r.Rows, r.StaleLocks, r.Legacy)
}

// RollForward finishes every committed write left in the intent log,
// calling progress (if set) after each; it returns how many it finished.
// Prepared writes are left to their writers (see Repair).
func (s *Store) RollForward(ctx context.Context, progress func(done int)) (int, error) {
	n := 0
	_, err := s.eachIntent(ctx, func(id []byte, st intentState) error {
		if st.state != stateCommitted {
			return nil
		}
		if err := s.finish(ctx, id, st, true); err != nil {
			return err
		}
		n++
		if progress != nil {
			progress(n)
		}
		return nil
	})
	return n, err
}

// eachIntent calls f for every write in the intent log, oldest first, and
// returns the ids of the prepared ones.
func (s *Store) eachIntent(ctx context.Context, f func(id []byte, st intentState) error) ([][]byte, error) {
	var ids [][]byte
	err := s.inner.ReadRows(ctx, IntentTable, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		ids = append(ids, slices.Clone(r.Key))
		return true
	})
	if errors.Is(err, store.ErrNoTable) {
		return nil, nil // nothing was ever written through txnstore
	}
	if err != nil {
		return nil, fmt.Errorf("txnstore: read intents: %w", err)
	}
	var pending [][]byte
	for _, id := range ids {
		st, err := s.intent(ctx, id)
		if err != nil {
			return nil, err
		}
		if st.state == statePrepared {
			pending = append(pending, id)
		}
		if err := f(id, st); err != nil {
			return nil, err
		}
	}
	return pending, nil
}

// Repair clears the bookkeeping dead writers left:
//   - it finishes every committed write in the intent log;
//   - it aborts the writes still prepared after Options.LockTimeout (it
//     waits that long once if it finds any: a live writer commits or gives
//     up well within it);
//   - it scans every table: it finishes or removes each lock it meets (a
//     lock whose write is still prepared is left to it), and clears the
//     row versions of format-1 stores.
//
// progress (if set) is called after each table.
func (s *Store) Repair(ctx context.Context, progress func(table string, rows int64)) (RepairStats, error) {
	var st RepairStats
	var err error
	if st.RolledForward, err = s.RollForward(ctx, nil); err != nil {
		return st, err
	}
	pending, err := s.eachIntent(ctx, func([]byte, intentState) error { return nil })
	if err != nil {
		return st, err
	}
	if len(pending) > 0 {
		if err := sleep(ctx, s.opts.LockTimeout); err != nil {
			return st, err
		}
		for _, id := range pending {
			ok, err := s.inner.ApplyIf(ctx, IntentTable, id, statusIs(prepared), []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: id}}, nil)
			if err != nil {
				return st, fmt.Errorf("txnstore: abort %x: %w", id, err)
			}
			if ok {
				st.Aborted++
				s.aborted.Add(1)
			}
		}
	}
	specs, err := s.inner.Tables(ctx)
	if err != nil {
		return st, err
	}
	for _, spec := range specs {
		if spec.Name == IntentTable || !slices.Contains(spec.Families, Family) {
			continue
		}
		var rows int64
		var cbErr error
		err := s.inner.ReadRows(ctx, spec.Name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			rows++
			cbErr = s.repairRow(ctx, spec.Name, r, &st)
			return cbErr == nil
		})
		if err = cmp(cbErr, err); err != nil {
			return st, fmt.Errorf("txnstore: repair %s: %w", spec.Name, err)
		}
		st.Rows += rows
		if progress != nil {
			progress(spec.Name, rows)
		}
	}
	return st, nil
}

func (s *Store) repairRow(ctx context.Context, table string, r store.Row, st *RepairStats) error {
	_, lock, _ := userRow(r)
	if lock != nil {
		lock = slices.Clone(lock)
		is, err := s.intent(ctx, lock)
		if err != nil {
			return err
		}
		switch is.state {
		case stateCommitted:
			if err := s.finish(ctx, lock, is, true); err != nil {
				return err
			}
			st.RolledForward++
		case stateGone:
			ok, err := s.inner.ApplyIf(ctx, table, r.Key, lockIs(lock), []store.Mutation{delLock(table, r.Key)}, nil)
			if err != nil {
				return err
			}
			if ok {
				st.StaleLocks++
			}
		}
		return nil
	}
	for _, c := range r.Cells {
		if c.Family == Family && bytes.Equal(c.Qualifier, seqQ) {
			// Unless a write locked the row meanwhile.
			seq := store.Mutation{Kind: store.DeleteCell, Table: table, Row: r.Key, Family: Family, Qualifier: seqQ}
			held, err := s.inner.ApplyIf(ctx, table, r.Key, locked, nil, []store.Mutation{seq})
			if err != nil {
				return err
			}
			if !held {
				st.Legacy++
			}
		}
	}
	return nil
}
