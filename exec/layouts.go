package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// A client layout added online (DEFINE SCHEMA on a relation that has
// layouts already: see package kvschema) is write-only
// (catalog.Index.WriteOnly) from a catalog version every writer of this
// process has seen on: every write of the relation keeps it. BackfillLayout
// then copies the tuples the writes have not touched. It reads the
// relation from a readable layout (at one point in time where the store
// offers it: store.Viewer) and, a batch of tuples at a time, takes their
// locks (Locks, in stripe order: no deadlock with the writers), reads
// them again from the readable layouts under the locks, writes what it
// found into the new layout — nothing for a tuple deleted since — and
// lets the locks go. A write of one of those tuples either ended before
// the locks were taken (the second read sees it) or starts after they
// are released (it keeps the new layout itself, from the tuple the copy
// wrote): no write is lost, and no deleted tuple comes back. Writers of
// other processes do not take these locks; the verification that follows
// the backfill is what catches a race with one of them.

// LayoutBackfillOptions configure BackfillLayout.
type LayoutBackfillOptions struct {
	// Rate bounds the tuples copied a second (0: no bound).
	Rate float64
	// Batch is the tuples copied under one set of locks, in one store
	// batch (0: 256).
	Batch int
	// Progress, when set, is called with the tuples copied so far after
	// each batch.
	Progress func(n int64)
}

// BackfillLayout copies every tuple of rel into its write-only layout
// name, as the comment above LayoutBackfillOptions says, and returns the
// number of tuples it read. A relation with no readable layout has nothing
// to copy from: every tuple it holds was written since name was added, so
// name holds it already.
func (e *Engine) BackfillLayout(ctx context.Context, rel *catalog.Relation, name string, opt LayoutBackfillOptions) (int64, error) {
	var x *catalog.Index
	for _, y := range rel.Indexes {
		if strings.EqualFold(y.Name, name) {
			x = y
		}
	}
	switch {
	case x == nil:
		return 0, fmt.Errorf("relation %s has no schema %s", rel.Name, name)
	case !x.WriteOnly:
		return 0, fmt.Errorf("schema %s is readable: only a write-only layout is backfilled", name)
	}
	readable := rel.ReadIndexes()
	if len(readable) == 0 {
		return 0, nil
	}
	if opt.Batch <= 0 {
		opt.Batch = 256
	}
	// The source: a layout one read scans whole, if there is one (a salted
	// layout's buckets, or the tables of a TABLE pattern, are read in
	// parallel and gathered in memory first).
	src := readable[0]
	for _, y := range readable {
		if l := y.Layout(); l.StaticTable() != "" && l.SaltBuckets == 0 {
			src = y
			break
		}
	}
	from := e.st
	if vr, ok := e.st.(store.Viewer); ok {
		v, err := vr.View(ctx)
		if err != nil {
			return 0, err
		}
		defer v.Close()
		from = v
	}
	// Writes of the new layout alone: rel with x as its one index.
	only := *rel
	only.Indexes = []*catalog.Index{x}
	w := &throttle{rate: opt.Rate, start: time.Now()}
	var n int64
	var batch [][]types.Value
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := e.copyLocked(ctx, rel, &only, batch); err != nil {
			return err
		}
		n += int64(len(batch))
		batch = batch[:0]
		if opt.Progress != nil {
			opt.Progress(n)
		}
		return w.wait(ctx, n)
	}
	acc := plan.Derive(src.Layout(), make(plan.Constraints, len(rel.Attrs)))
	p := &plan.Plan{Relation: rel, Accesses: []*plan.Access{acc}, Limit: -1}
	var ferr error
	err := runPlan(ctx, from, p, SinkFunc(func(d []types.Datum) bool {
		batch = append(batch, box(make([]types.Value, 0, len(d)), d))
		if len(batch) >= opt.Batch {
			ferr = flush()
		}
		return ferr == nil
	}))
	if err == nil {
		err = ferr
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, fmt.Errorf("schema %s: copying the tuples of %s from schema %s: %w", name, rel.Name, src.Name, err)
	}
	return n, nil
}

// copyLocked writes the current value of each tuple of batch (read again
// from rel's readable layouts, under the tuples' locks) into the layout of
// only, rel with the new layout as its one index.
func (e *Engine) copyLocked(ctx context.Context, rel, only *catalog.Relation, batch [][]types.Value) error {
	rs := e.locks.Rel(rel.Name)
	stripes := make([]int, 0, len(batch))
	var key []byte
	for _, t := range batch {
		var err error
		if key, err = appendKeyValues(key[:0], rel, t); err != nil {
			return err
		}
		stripes = append(stripes, rs.Stripe(key))
	}
	held := e.locks.LockStripes(stripes)
	defer e.locks.Unlock(held)
	cur, err := e.lookup(ctx, rel, batch)
	if err != nil {
		return err
	}
	changes := make([]plan.Change, 0, len(cur))
	for _, t := range cur {
		if t != nil {
			changes = append(changes, plan.Change{New: t})
		}
	}
	sc := e.getScratch()
	defer e.putScratch(sc)
	_, err = e.apply(ctx, sc, only, changes, nil)
	return err
}

// DropLayoutRows deletes what layout l — a layout DROP SCHEMA took out of
// its relation — holds: each of its tables (its TABLE, or every table its
// pattern matches) whole when no layout of keep uses it (DropRows: one
// step on a store.TableDropper, else batched deletes), else, in a table
// it shares, only the cells of its families no layout of keep may own. At
// most rate rows are deleted a second (0: no bound); progress, when set,
// is told the rows deleted so far. Deleting again what is deleted does
// nothing, so a drop interrupted at any point is finished by running it
// again.
func DropLayoutRows(ctx context.Context, st store.Store, l *layout.Layout, keep []*layout.Layout, rate float64, progress func(n int64)) (int64, error) {
	tables := []string{l.StaticTable()}
	if l.StaticTable() == "" {
		var err error
		if tables, err = layoutTables(ctx, st, l); err != nil {
			return 0, err
		}
	}
	var total int64
	for _, table := range tables {
		var sharers []*layout.Layout
		for _, k := range keep {
			if k.TableMatches(table) {
				sharers = append(sharers, k)
			}
		}
		report := func(n int64) {
			if progress != nil {
				progress(total + n)
			}
		}
		var n int64
		var err error
		if len(sharers) == 0 {
			n, _, err = DropRows(ctx, st, table, rate, report)
		} else {
			n, err = deleteFamilies(ctx, st, table, func(fam string) bool {
				if !l.OwnsFamily(fam) {
					return false
				}
				for _, k := range sharers {
					if k.OwnsFamily(fam) {
						return false
					}
				}
				return true
			}, rate, report)
		}
		total += n
		if err != nil {
			return total, fmt.Errorf("table %s: %w", table, err)
		}
	}
	return total, nil
}

// deleteFamilies deletes the cells of table whose family drop selects, a
// batch of rows at a time, at most rate rows a second (0: no bound),
// calling progress with the rows changed so far.
func deleteFamilies(ctx context.Context, st store.Store, table string, drop func(fam string) bool, rate float64, progress func(int64)) (int64, error) {
	w := &throttle{rate: rate, start: time.Now()}
	var n int64
	var start []byte
	for {
		var muts []store.Mutation
		var last []byte
		rows := 0
		err := st.ReadRows(ctx, table, store.RowSet{Ranges: []store.Range{{Start: start}}}, store.ReadOptions{Limit: 512}, func(r store.Row) bool {
			rows++
			last = bytes.Clone(r.Key)
			for _, c := range r.Cells {
				if drop(c.Family) {
					muts = append(muts, store.Mutation{Kind: store.DeleteCell, Table: table, Row: last, Family: c.Family, Qualifier: bytes.Clone(c.Qualifier)})
				}
			}
			return true
		})
		if errors.Is(err, store.ErrNoTable) || err == nil && rows == 0 {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(muts) > 0 {
			if err := st.Apply(ctx, muts); err != nil {
				return n, err
			}
			n += int64(len(store.GroupByRow(muts)))
			if progress != nil {
				progress(n)
			}
			if err := w.wait(ctx, n); err != nil {
				return n, err
			}
		}
		start = store.KeySuccessor(last)
	}
}
