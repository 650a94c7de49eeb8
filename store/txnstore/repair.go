package txnstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/kvschema/kvschema/store"
)

// RepairStats say what Repair did.
type RepairStats struct {
	RolledForward int   // unfinished writes finished
	Rows          int64 // rows scanned
	StaleMarkers  int   // markers of finished writes cleared
	Tombstones    int   // deleted rows' bookkeeping removed
}

func (r RepairStats) String() string {
	return fmt.Sprintf("%d unfinished writes rolled forward; %d rows scanned: %d stale markers cleared, %d tombstones removed",
		r.RolledForward, r.Rows, r.StaleMarkers, r.Tombstones)
}

// Repair finishes every write left in the intent log, then scans every
// table: it clears the markers of finished writes (a writer that died
// after a reader finished its write leaves them; readers step over them at
// the cost of a lookup) and removes the tombstones of rows deleted more
// than tombstoneAge ago. A tombstone keeps an older write rolled forward
// late from bringing its row back, so tombstoneAge must exceed the longest
// time a reader may take between reading an intent and rolling it
// forward. progress (if set) is called after each table.
func (s *Store) Repair(ctx context.Context, tombstoneAge time.Duration, progress func(table string, rows int64)) (RepairStats, error) {
	var st RepairStats
	var err error
	if st.RolledForward, err = s.RollForward(ctx, nil); err != nil {
		return st, err
	}
	specs, err := s.inner.Tables(ctx)
	if err != nil {
		return st, err
	}
	horizon := uint64(time.Now().Add(-tombstoneAge).UnixMicro())
	live := map[string]bool{} // intent versions: still in the log?
	for _, spec := range specs {
		if spec.Name == IntentTable || !slices.Contains(spec.Families, Family) {
			continue
		}
		var rows int64
		var cbErr error
		err := s.inner.ReadRows(ctx, spec.Name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			rows++
			cbErr = s.repairRow(ctx, spec.Name, r, horizon, live, &st)
			return cbErr == nil
		})
		if err = cmpErr(cbErr, err); err != nil {
			return st, fmt.Errorf("txnstore: repair %s: %w", spec.Name, err)
		}
		st.Rows += rows
		if progress != nil {
			progress(spec.Name, rows)
		}
	}
	return st, nil
}

func (s *Store) repairRow(ctx context.Context, table string, r store.Row, horizon uint64, live map[string]bool, st *RepairStats) error {
	_, marker, hasUser := userRow(r)
	var seq []byte
	for _, c := range r.Cells {
		if c.Family == Family && bytes.Equal(c.Qualifier, seqQ) {
			seq = c.Value
		}
	}
	if marker != nil {
		v := slices.Clone(marker)
		inLog, ok := live[string(v)]
		if !ok {
			_, found, err := s.inner.ReadRow(ctx, IntentTable, v)
			if err != nil {
				return err
			}
			inLog, live[string(v)] = found, found
		}
		if inLog {
			return nil // a write in progress: its writer or a reader finishes it
		}
		cond := store.Cond{Family: Family, Qualifier: txnQ, Min: v, Max: store.KeySuccessor(v)}
		matched, err := s.inner.ApplyIf(ctx, table, r.Key, cond, []store.Mutation{unmark(table, r.Key)}, nil)
		if err != nil {
			return err
		}
		if matched {
			st.StaleMarkers++
		}
		return nil
	}
	if hasUser || len(seq) < 8 || binary.BigEndian.Uint64(seq) >= horizon {
		return nil
	}
	// Only bookkeeping left, old enough: delete the row unless a write
	// reached it meanwhile (its seq would differ).
	cond := store.Cond{Family: Family, Qualifier: seqQ, Min: slices.Clone(seq), Max: store.KeySuccessor(seq)}
	del := []store.Mutation{{Kind: store.DeleteRow, Table: table, Row: r.Key}}
	matched, err := s.inner.ApplyIf(ctx, table, r.Key, cond, del, nil)
	if err != nil {
		return err
	}
	if matched {
		st.Tombstones++
	}
	return nil
}
