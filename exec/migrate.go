package exec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// A migration (kvschema migrate) builds a new index while the application
// writes: the index is write-only (catalog.Schema.WriteOnly) from a catalog
// version every writer has seen on, then Backfill fills it.
//
// Backfill reads the index's rows from the readable indexes (one query
// over its whole graph, planned like any other: planner.Rows) and writes
// them. A write that lands meanwhile keeps the index too, and may meet a
// row the backfill then overwrites with what it read before that write:
// so every write that changes a row of a write-only index also marks the
// row, in the same batch, in table MarkTable (the marker holds a value
// unique to the write). When the bulk copy is done, Backfill recomputes
// each marked row from the readable indexes — writes it, or deletes it
// when the data no longer implies it — and then deletes the marker if it
// still holds the value it read (store.ApplyGuards), so a write that
// came after the recomputation leaves its marker for the next round; it
// does so for batches of rows at once (catchup.go). The
// rounds end when no marker is left: every row written by the bulk copy
// is either untouched since the data it was read from, or recomputed
// after the last write that touched it.

// MarkTable holds the markers of rows of write-only indexes that writes
// changed during a migration: row INDEX 0x00 ROWKEY, cell d:w, value a
// value no other write's marker has.
const MarkTable = catalog.Table + "_migrate"

const (
	markFamily = "d"
	markQ      = "w"
)

// unmark deletes a marker: its one cell (a point deletion: on Pebble a
// DeleteRow is a range tombstone, which costs every read until flushed).
func unmark(row []byte) store.Mutation {
	return store.Mutation{Kind: store.DeleteCell, Table: MarkTable, Row: row, Family: markFamily, Qualifier: []byte(markQ)}
}

// markValue returns a marker value no other write's marker has: the
// prefix of l (random, one per lock table: per DB), then l's counter.
func (l *Locks) markValue() []byte {
	l.marks.once.Do(func() {
		if _, err := rand.Read(l.marks.prefix[:]); err != nil {
			panic(err)
		}
	})
	return binary.BigEndian.AppendUint64(l.marks.prefix[:], l.marks.n.Add(1))
}

// markCount is the number of marker values l has given out.
func (l *Locks) markCount() uint64 { return l.marks.n.Load() }

// ownMark returns the number of marker value v when writers under l made
// it (ok false: another lock table's, another DB's or process's).
func (l *Locks) ownMark(v []byte) (n uint64, ok bool) {
	l.marks.once.Do(func() {
		if _, err := rand.Read(l.marks.prefix[:]); err != nil {
			panic(err)
		}
	})
	if len(v) != 16 || !bytes.Equal(v[:8], l.marks.prefix[:]) {
		return 0, false
	}
	return binary.BigEndian.Uint64(v[8:]), true
}

func markRow(index string, row []byte) []byte {
	k := make([]byte, 0, len(index)+1+len(row))
	return append(append(append(k, index...), 0), row...)
}

// marked returns muts with a marker for every row of a write-only index
// they change.
func (e *Engine) marked(muts []store.Mutation) []store.Mutation {
	if len(e.building) == 0 {
		return muts
	}
	var v []byte
	seen := map[string]bool{}
	n := len(muts)
	for _, m := range muts[:n] {
		name, ok := e.building[m.Table]
		if !ok {
			continue
		}
		k := markRow(name, m.Row)
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		if v == nil {
			v = e.locks.markValue()
		}
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: MarkTable, Row: k, Family: markFamily, Qualifier: []byte(markQ), Value: v})
	}
	return muts
}

// BackfillOptions configure Backfill.
type BackfillOptions struct {
	// Rate bounds the rows written per second (0: no bound).
	Rate float64
	// Batch is the rows per store batch of the copy, and per batch the
	// catch-up recomputes at once (0: 256).
	Batch int
	// Progress, when set, is called as rows are written: Step "copy" (the
	// bulk copy) or "catch-up" (rows writes changed meanwhile).
	Progress func(BackfillEvent)
	// Estimate is the rows the copy is expected to write, its events'
	// Estimate (0: the model's, catalog.Index.Entries).
	Estimate int64
	// MaxRounds bounds the catch-up passes (0: 3): the first recomputes
	// every row writes changed during the bulk copy; later ones, rows
	// marked again since, which only writers of other processes leave.
	MaxRounds int
}

// BackfillEvent reports a backfill's progress.
type BackfillEvent struct {
	Index    string
	Step     string
	Rows     int64
	Estimate int64
	Done     bool
}

// BackfillStats say what a backfill did.
type BackfillStats struct {
	Rows      int64         // rows written by the bulk copy
	Recounted int64         // marked rows recomputed
	Rounds    int           // catch-up rounds
	Copy      time.Duration // the bulk copy's part of Elapsed
	Elapsed   time.Duration
}

// Backfill fills write-only index name with the rows the readable indexes
// imply, while writers keep it (see the comment above MarkTable). A local
// index (catalog.Schema.Local) needs none: the store built its entries
// when its table declared it. The caller makes the index readable after.
func (e *Engine) Backfill(ctx context.Context, name string, opt BackfillOptions) (BackfillStats, error) {
	start := time.Now()
	var stats BackfillStats
	if e.schema == nil {
		return stats, ErrNoSchema
	}
	x := e.schema.Index(name)
	switch {
	case x == nil:
		return stats, fmt.Errorf("no index %s", name)
	case !e.schema.WriteOnly[x]:
		return stats, fmt.Errorf("%s is readable: only a write-only index is backfilled", name)
	case e.schema.Local[x] != nil:
		return stats, nil
	}
	if opt.Batch <= 0 {
		opt.Batch = 256
	}
	if opt.MaxRounds <= 0 {
		opt.MaxRounds = 3
	}
	progress := func(ev BackfillEvent) {
		if opt.Progress != nil {
			ev.Index = name
			opt.Progress(ev)
		}
	}
	estimate := opt.Estimate
	if estimate <= 0 {
		estimate = int64(x.Entries)
	}
	t := e.tables[x]
	w := &throttle{rate: opt.Rate, start: time.Now()}
	// The bulk copy reads one point in time where the store offers it.
	src := e.st
	if vr, ok := e.st.(store.Viewer); ok {
		v, err := vr.View(ctx)
		if err != nil {
			return stats, err
		}
		defer v.Close()
		src = v
	}
	var muts []store.Mutation
	rows := 0
	flush := func(step string, n int64) error {
		if len(muts) == 0 {
			return nil
		}
		if err := e.st.Apply(ctx, muts); err != nil {
			return err
		}
		muts, rows = muts[:0], 0
		progress(BackfillEvent{Step: step, Rows: n, Estimate: estimate})
		return w.wait(ctx, n)
	}
	add := func(more []store.Mutation, err error, step string, n int64) error {
		if err != nil {
			return err
		}
		muts = more
		if rows++; rows >= opt.Batch {
			return flush(step, n)
		}
		return nil
	}
	progress(BackfillEvent{Step: "copy", Estimate: estimate})
	sp, err := e.rowsProgram(t, nil)
	if err != nil {
		return stats, fmt.Errorf("%s: %w", name, err)
	}
	// The rows are read whole before any is written: joined in batches
	// as the read went on, the copy took 15% longer (a later step's
	// lookups of one batch are sparse over its table, where all the
	// rows' are dense enough to advance by Next).
	got, err := sp.answer(ctx, src, t, nil, &writeRun{answers: map[supportKey][]tuple{}})
	if err != nil {
		return stats, fmt.Errorf("%s: reading its rows: %w", name, err)
	}
	for _, r := range got {
		stats.Rows++
		more, err := t.put(muts, r)
		if err := add(more, err, "copy", stats.Rows); err != nil {
			return stats, err
		}
	}
	if t.l.HasStatic() {
		sp, err := e.partitionProgram(t, false)
		if err != nil {
			return stats, fmt.Errorf("%s: %w", name, err)
		}
		got, err := sp.answer(ctx, src, t, nil, &writeRun{answers: map[supportKey][]tuple{}})
		if err != nil {
			return stats, fmt.Errorf("%s: reading its partition rows: %w", name, err)
		}
		for _, r := range got {
			puts, deletes, err := t.l.StaticCells(r, nil)
			if err := add(layout.AppendMutations(muts, puts, deletes), err, "copy", stats.Rows); err != nil {
				return stats, err
			}
		}
	}
	if err := flush("copy", stats.Rows); err != nil {
		return stats, err
	}
	stats.Copy = time.Since(start)
	// Catch-up passes: the first recomputes every marked row; a later one
	// those marked again since (by a writer of another process: this
	// process's writers are excluded while a row is recomputed). A row
	// is known right from the copy's end if no write had marked it by
	// then, and from its recompute: after that, a write of this DB's keeps
	// it right (the copy no longer writes, and a recompute of it waits
	// for the writer's locks), so its marker is only deleted.
	cu := &catchUpState{done: map[string]string{}, rightSince: map[string]uint64{}}
	copied := e.locks.markCount()
	if err := e.markRows(ctx, t, func(row []byte) { cu.rightSince[string(row)] = noMark }); err != nil {
		return stats, err
	}
	cu.copied = copied
	progress(BackfillEvent{Step: "copy", Rows: stats.Rows, Done: true})
	for stats.Rounds < opt.MaxRounds {
		stats.Rounds++
		n, err := e.catchUp(ctx, t, opt.Batch, w, cu, progress, &stats)
		if err != nil {
			return stats, err
		}
		if n == 0 {
			break
		}
	}
	progress(BackfillEvent{Step: "catch-up", Rows: stats.Recounted, Done: true})
	stats.Elapsed = time.Since(start)
	return stats, nil
}

// catchUp recomputes every row of t the markers name that it has not
// recomputed at the marker's value (done: marker row → value), in batches
// of about batch rows (see catchup.go), each under the locks of the
// entities its rows' keys name, so that no writer of this process changes
// them meanwhile; it deletes each marker that still holds the value it
// read, and returns how many rows it recomputed.
func (e *Engine) catchUp(ctx context.Context, t *table, batch int, w *throttle, cu *catchUpState, progress func(BackfillEvent), stats *BackfillStats) (int, error) {
	type mark struct{ row, value []byte }
	var marks []mark
	prefix := markRow(t.x.Name, nil)
	err := e.st.ReadRows(ctx, MarkTable, store.RowSet{Ranges: []store.Range{store.PrefixRange(prefix)}}, store.ReadOptions{}, func(r store.Row) bool {
		for _, c := range r.Cells {
			if c.Family == markFamily && string(c.Qualifier) == markQ && cu.done[string(r.Key)] != string(c.Value) {
				marks = append(marks, mark{bytes.Clone(r.Key), bytes.Clone(c.Value)})
			}
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	// The markers of rows found right go in plain batches: no recompute
	// of those rows runs in this pass, so losing a marker another
	// process wrote over one meanwhile loses nothing, and a plain batch
	// needs no guard.
	var right []store.Mutation
	flushRight := func() error {
		if len(right) == 0 {
			return nil
		}
		err := e.st.Apply(ctx, right)
		right = right[:0]
		return err
	}
	var todo []*markedRow
	for _, m := range marks {
		if cu.rightAfter(e.locks, m.row, m.value) {
			cu.done[string(m.row)] = string(m.value)
			right = append(right, unmark(m.row))
			if len(right) >= 256 {
				if err := flushRight(); err != nil {
					return 0, err
				}
			}
			continue
		}
		key := m.row[len(prefix):]
		vals, part, err := t.decodeMarked(key)
		if err != nil {
			return 0, fmt.Errorf("%s: recomputing a row a write changed: %w", t.x.Name, err)
		}
		todo = append(todo, &markedRow{marker: m.row, value: m.value, key: key, vals: vals, part: part})
	}
	if err := flushRight(); err != nil {
		return 0, err
	}
	groups, err := e.catchUpPlan(t, todo)
	if err != nil {
		return 0, fmt.Errorf("%s: recomputing the rows writes changed: %w", t.x.Name, err)
	}
	n := 0
	for len(groups) > 0 {
		// A batch: whole groups, up to batch rows (or one group), and
		// catchUpQueries queries, which bounds how long it holds the
		// locks of this process's writers.
		k, rows := 0, 0
		for k < len(groups) && k < catchUpQueries && (k == 0 || rows+len(groups[k].rows) <= batch) {
			rows += len(groups[k].rows)
			k++
		}
		since, err := e.recomputeBatch(ctx, t, groups[:k], batch)
		if err != nil {
			return 0, fmt.Errorf("%s: recomputing rows writes changed: %w", t.x.Name, err)
		}
		for _, g := range groups[:k] {
			for _, r := range g.rows {
				cu.rightSince[string(r.marker)] = since
				cu.done[string(r.marker)] = string(r.value)
			}
		}
		groups = groups[k:]
		stats.Recounted += int64(rows)
		n += rows
		progress(BackfillEvent{Step: "catch-up", Rows: stats.Recounted})
		if err := w.wait(ctx, stats.Rows+stats.Recounted); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// catchUpState is what a backfill's catch-up passes know.
type catchUpState struct {
	// done: marker row → the value its row was recomputed (or found
	// right) at.
	done map[string]string
	// rightSince: marker row → the count of this DB's marker values
	// (Locks.markCount) after which its row was right; noMark for a row
	// marked when the copy ended (right only once recomputed). A row
	// missing is right since copied.
	rightSince map[string]uint64
	copied     uint64
}

// noMark is a rightSince no marker value exceeds.
const noMark = ^uint64(0)

// rightAfter reports whether the marker value v of row needs no
// recompute: this DB's writer made it after the row was right.
func (cu *catchUpState) rightAfter(l *Locks, row, v []byte) bool {
	n, own := l.ownMark(v)
	if !own {
		return false
	}
	since, ok := cu.rightSince[string(row)]
	if !ok {
		since = cu.copied
	}
	return n > since
}

// markRows calls fn with every marker row of t's index.
func (e *Engine) markRows(ctx context.Context, t *table, fn func(row []byte)) error {
	prefix := markRow(t.x.Name, nil)
	return e.st.ReadRows(ctx, MarkTable, store.RowSet{Ranges: []store.Range{store.PrefixRange(prefix)}}, store.ReadOptions{}, func(r store.Row) bool {
		fn(bytes.Clone(r.Key))
		return true
	})
}

// recompute returns the mutations making row key of t (decoded: vals; a
// partition row: part) what the readable indexes imply.
func (e *Engine) recompute(ctx context.Context, t *table, key []byte, vals []types.Value, part bool) ([]store.Mutation, error) {
	run := &writeRun{touched: map[entityKey]bool{}, answers: map[supportKey][]tuple{}}
	del := []store.Mutation{{Kind: store.DeleteRow, Table: t.name, Row: key}}
	if part {
		sp, err := e.partitionProgram(t, true)
		if err != nil {
			return nil, err
		}
		got, err := sp.answer(ctx, e.st, t, []types.Value{vals[0]}, run)
		if err != nil || len(got) == 0 {
			return del, err
		}
		puts, deletes, err := t.l.StaticCells(got[0], nil)
		return layout.AppendMutations(del, puts, deletes), err
	}
	// Equalities on the key attributes that are not NULL; the answers
	// whose key is this row's are its content (the last, as a load keeps
	// the last of tuples with one key).
	var eq []catalog.Attr
	var args []types.Value
	for i := range t.nkey {
		if vals[i] != nil {
			eq, args = append(eq, t.attrs[i]), append(args, vals[i])
		}
	}
	sp, err := e.rowsProgram(t, eq)
	if err != nil {
		return nil, err
	}
	got, err := sp.answer(ctx, e.st, t, args, run)
	if err != nil {
		return nil, err
	}
	muts := del
	for _, r := range got {
		k, err := t.l.RowKey(r)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(k, key) {
			if muts, err = t.put(muts[:1], r); err != nil {
				return nil, err
			}
		}
	}
	return muts, nil
}

// CanBackfill reports, as an error, why write-only index name cannot be
// backfilled from the readable indexes: the attributes and relationships
// its rows need that none of them stores (a migration builds only from
// what the store holds), or the plan its rows' query lacks.
func (e *Engine) CanBackfill(name string) error {
	x := e.schema.Index(name)
	if x == nil {
		return fmt.Errorf("no index %s", name)
	}
	if e.schema.Local[x] != nil {
		return nil
	}
	var readable []*catalog.Index
	for _, y := range e.schema.Indexes {
		if e.schema.Readable(y) {
			readable = append(readable, y)
		}
	}
	if lack := planner.Unstored(readable, x); len(lack) > 0 {
		return fmt.Errorf("%s cannot be built from this store: no index of it holds %s (a migration builds new indexes from the data the store keeps; load the data into a new store with the new schema, or keep these in the deployed schema)", name, strings.Join(lack, ", "))
	}
	t := e.tables[x]
	if _, err := e.rowsProgram(t, nil); err != nil {
		return fmt.Errorf("%s cannot be built from this store (no index of it holds every tuple its rows join): %w", name, err)
	}
	if t.l.HasStatic() {
		if _, err := e.partitionProgram(t, false); err != nil {
			return fmt.Errorf("%s cannot be built from this store: %w", name, err)
		}
	}
	return nil
}

// CountTuples counts the tuples of relation name the store holds: the rows
// of a readable column family of it alone keyed by its key, one row per
// tuple, read without decoding; else the keys a query of them reads
// (materialized, as a query's answer is). ok is false when no readable
// index gives them.
func (e *Engine) CountTuples(ctx context.Context, name string) (n int64, ok bool, err error) {
	if e.schema == nil {
		return 0, false, ErrNoSchema
	}
	ent := e.m.Entity(name)
	if ent == nil {
		return 0, false, fmt.Errorf("no relation %s", name)
	}
	for _, x := range e.schema.Indexes {
		if x.Kind != catalog.CF || !e.schema.Readable(x) || len(x.Graph.Nodes) != 1 || x.Graph.Nodes[0].Entity != ent || x.OnElements() || len(x.Static) > 0 {
			continue
		}
		keyed := true
		for _, f := range ent.Key {
			keyed = keyed && x.InKey(catalog.Attr{Node: 0, Field: f})
		}
		if !keyed {
			continue
		}
		err := e.st.ReadRows(ctx, e.tables[x].name, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true })
		return n, err == nil, err
	}
	keys := make([]string, len(ent.Key))
	for i, f := range ent.Key {
		keys[i] = ent.Name + "." + f.Name
	}
	st, err := e.Prepare("SELECT " + strings.Join(keys, ", ") + " FROM " + ent.Name)
	if err != nil {
		return 0, false, nil
	}
	res, err := st.Query(ctx)
	if err != nil {
		return 0, false, err
	}
	return int64(len(res.Rows)), true, nil
}

// BackfillReadCost is the cost, at the engine's profile, of reading one
// of index name's rows from the readable indexes as its backfill does:
// its rows query's plan cost per row (0 for a local index, whose entries
// the store builds). CanBackfill says first whether there is a plan.
func (e *Engine) BackfillReadCost(name string) (float64, error) {
	x := e.schema.Index(name)
	if x == nil {
		return 0, fmt.Errorf("no index %s", name)
	}
	if e.schema.Local[x] != nil {
		return 0, nil
	}
	sp, err := e.rowsProgram(e.tables[x], nil)
	if err != nil {
		return 0, err
	}
	return sp.sp.Plan.Cost / max(sp.sp.Plan.Rows, 1), nil
}

// rowsProgram compiles the plan of t's rows with equalities on eq
// (planner.Planner.Rows), once per set of attributes.
func (e *Engine) rowsProgram(t *table, eq []catalog.Attr) (*supportProg, error) {
	k := fmt.Sprint("rows ", t.name, eq)
	if p, ok := e.migration.Load(k); ok {
		return p.(*supportProg), nil
	}
	sp, err := e.planner.Rows(t.x, eq)
	if err != nil {
		return nil, fmt.Errorf("the readable indexes cannot give its rows: %w", err)
	}
	return e.cacheProgram(k, t, sp)
}

// partitionProgram is rowsProgram for t's partition rows
// (planner.Planner.PartitionRows).
func (e *Engine) partitionProgram(t *table, keyed bool) (*supportProg, error) {
	k := fmt.Sprint("partitions ", t.name, keyed)
	if p, ok := e.migration.Load(k); ok {
		return p.(*supportProg), nil
	}
	sp, err := e.planner.PartitionRows(t.x, keyed)
	if err != nil {
		return nil, fmt.Errorf("the readable indexes cannot give its partition rows: %w", err)
	}
	return e.cacheProgram(k, t, sp)
}

func (e *Engine) cacheProgram(k string, t *table, sp *plan.Support) (*supportProg, error) {
	p, err := e.compileSupport(t, sp)
	if err != nil {
		return nil, err
	}
	e.migration.Store(k, p)
	return p, nil
}

// throttle keeps a rate of rows per second.
type throttle struct {
	rate  float64
	start time.Time
}

// wait sleeps until n rows are due at the rate.
func (w *throttle) wait(ctx context.Context, n int64) error {
	if w.rate <= 0 {
		return ctx.Err()
	}
	due := w.start.Add(time.Duration(float64(n) / w.rate * float64(time.Second)))
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// DropRows deletes every row of table (the table of an index a migration
// dropped) and the markers of its rows: the table at once on a store that
// drops tables (store.TableDropper; whole is true then, and n 0: its rows
// were not counted), else the rows in batches, at most rate rows a second
// (0: no bound), calling progress with the rows deleted so far.
func DropRows(ctx context.Context, st store.Store, table string, rate float64, progress func(n int64)) (n int64, whole bool, err error) {
	if d, ok := st.(store.TableDropper); ok {
		err := d.DropTable(ctx, table)
		if err == nil {
			return 0, true, ClearMarks(ctx, st, table)
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return 0, false, err
		}
	}
	w := &throttle{rate: rate, start: time.Now()}
	rows, err := deleteRows(ctx, st, table, store.All(), func(k int) error {
		if progress != nil {
			progress(int64(k))
		}
		return w.wait(ctx, int64(k))
	})
	if err != nil {
		return int64(rows), false, err
	}
	return int64(rows), false, ClearMarks(ctx, st, table)
}

// ClearMarks deletes the markers of index's rows (MarkTable): once the
// index is readable, writes no longer mark it.
func ClearMarks(ctx context.Context, st store.Store, index string) error {
	rs := store.RowSet{Ranges: []store.Range{store.PrefixRange(markRow(index, nil))}}
	_, err := deleteRows(ctx, st, MarkTable, rs, nil)
	return err
}

// deleteRows deletes the rows of table rs selects, a batch at a time,
// calling after with the rows deleted so far after each batch. Each read
// starts after the last row deleted, not over the deletions (an LSM store
// would skip ever more tombstones).
func deleteRows(ctx context.Context, st store.Store, table string, rs store.RowSet, after func(n int) error) (int, error) {
	n := 0
	ranges := rs.Normalize()
	for len(ranges) > 0 {
		var muts []store.Mutation
		err := st.ReadRows(ctx, table, store.RowSet{Ranges: ranges}, store.ReadOptions{Limit: 512}, func(r store.Row) bool {
			muts = append(muts, store.Mutation{Kind: store.DeleteRow, Table: table, Row: bytes.Clone(r.Key)})
			return true
		})
		if errors.Is(err, store.ErrNoTable) || err == nil && len(muts) == 0 {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if err := st.Apply(ctx, muts); err != nil {
			return n, err
		}
		n += len(muts)
		if after != nil {
			if err := after(n); err != nil {
				return n, err
			}
		}
		// The ranges left: those after the last key deleted.
		next := store.KeySuccessor(muts[len(muts)-1].Row)
		var rest []store.Range
		for _, r := range ranges {
			if r.End != nil && bytes.Compare(r.End, next) <= 0 {
				continue
			}
			if bytes.Compare(r.Start, next) < 0 {
				r.Start = next
			}
			rest = append(rest, r)
		}
		ranges = rest
	}
	return n, nil
}

// VerifyBuilt checks indexes a migration built (write-only, or not) against
// the rows the readable indexes imply for them: each one's rows query
// (planner.Planner.Rows, the backfill's own), and its partition rows for
// static columns. It reads the indexes that query reads and the built
// index, not the whole store as Verify does: run on a view (FromCatalog
// over store.Viewer.View), it checks that the copy and the catch-up left
// each index equal to what the data it is built from says at one point in
// time. Verify still checks the readable indexes against each other.
func (e *Engine) VerifyBuilt(ctx context.Context, names []string, progress func(VerifyEvent)) (*Report, error) {
	ctx = store.WithNow(ctx, store.Now(ctx)) // one instant, as Verify
	if e.schema == nil {
		return nil, ErrNoSchema
	}
	if progress == nil {
		progress = func(VerifyEvent) {}
	}
	rep := &Report{Rows: map[string]int{}, Partitions: map[string]PartitionStats{}}
	for _, name := range names {
		x := e.schema.Index(name)
		if x == nil {
			return nil, fmt.Errorf("no index %s", name)
		}
		t := e.tables[x]
		progress(VerifyEvent{Step: "read", Index: name, Estimate: int64(x.Entries)})
		var got []keyedRow
		parts := map[string][]types.Value{}
		var derr error
		err := e.readIndexRows(ctx, x, &derr, func(r store.Row, vals []types.Value) bool {
			if t.l.IsPartitionRow(r) {
				parts[string(r.Key)] = vals
			} else {
				got = append(got, keyedRow{bytes.Clone(r.Key), vals})
			}
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
		rep.Rows[name] = len(got)
		progress(VerifyEvent{Step: "read", Index: name, Rows: int64(len(got)), Done: true})
		progress(VerifyEvent{Step: "compare", Index: name, Estimate: int64(len(got))})
		sp, err := e.rowsProgram(t, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rows, err := sp.answer(ctx, e.st, t, nil, &writeRun{answers: map[supportKey][]tuple{}})
		if err != nil {
			return nil, fmt.Errorf("%s: reading its rows: %w", name, err)
		}
		want := make([]keyedRow, 0, len(rows))
		for _, vals := range rows {
			err := e.entriesOf(x, vals, func(vals []types.Value) error {
				k, err := t.appendKey(nil, vals, t.nkey)
				want = append(want, keyedRow{k, vals})
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		rep.Differences = append(rep.Differences, t.diffSorted(want, got)...)
		if t.l.HasStatic() {
			diffs, err := e.verifyBuiltPartitions(ctx, t, parts)
			if err != nil {
				return nil, err
			}
			rep.Differences = append(rep.Differences, diffs...)
		}
		progress(VerifyEvent{Step: "compare", Index: name, Rows: int64(len(want)), Done: true})
	}
	rep.sortDifferences()
	return rep, nil
}

// verifyBuiltPartitions is VerifyBuilt for t's partition rows (its static
// columns), got by stored row key.
func (e *Engine) verifyBuiltPartitions(ctx context.Context, t *table, got map[string][]types.Value) ([]Difference, error) {
	sp, err := e.partitionProgram(t, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	want, err := sp.answer(ctx, e.st, t, nil, &writeRun{answers: map[supportKey][]tuple{}})
	if err != nil {
		return nil, fmt.Errorf("%s: reading its partition rows: %w", t.name, err)
	}
	return t.diffPartitions(func(yield func(vals []types.Value, known []bool) error) error {
		for _, vals := range want {
			if err := yield(vals, nil); err != nil {
				return err
			}
		}
		return nil
	}, got)
}
