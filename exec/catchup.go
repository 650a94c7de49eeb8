package exec

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// A catch-up pass (Backfill, after the bulk copy) recomputes the marked
// rows of an index in batches, not one at a time: a write that changes
// one entity marks every row it names (an UPDATE of an item marks the row
// of each bid on it, in as many partitions), and a recompute per row
// paid a rows query, a read of the row and a guarded apply each.
//
// The pass groups the marked rows by the key attributes one rows query
// binds (catchUpPlan): those of the partition key, or any one key
// attribute, whichever the planner's costs say reads least — a rows query
// per group, or per row where one group's query would cost more than its
// rows' own. A batch of groups is then recomputed as one step
// (recomputeBatch): under the locks of every entity its rows' keys name
// (taken at once, in stripe order: Locks.Lock sorts them), it runs the
// groups' queries, keeps of each answer the rows marked, deletes the
// cells of those rows its puts do not rewrite (one read for the batch)
// and the rows no answer implies, and applies all that with the deletion
// of the batch's markers under one guard per marker (store.ApplyGuards):
// each marker is deleted only if it still holds the value read, as a
// recompute of one row did. The guarantees are those of one row's
// recompute (see the comment above MarkTable): a writer of this process
// that changes a row of the batch locks an entity its key names, so it
// waits for the batch; a writer of another process marks the row again,
// which fails the guard of its marker and leaves the row to the next
// pass.
//
// A row keeps a query of its own (recompute, as before batching) where
// no group query serves it: a partition row (static columns: the keyed
// query of its partition), a row NULL in the attributes the groups bind,
// and a row whose group's query costs more than its rows' own (one row
// marked in a large partition). It still shares its batch's locks, read
// of cells and guarded apply.

// catchUpQueries bounds the queries of one catch-up batch: a batch holds
// the locks of this process's writers of its rows while they run.
const catchUpQueries = 32

// markedRow is one row of a catch-up pass.
type markedRow struct {
	marker, value []byte        // its marker's row and the value read there
	key           []byte        // its key in the index's table
	vals          []types.Value // its key attributes (a partition row's root key)
	part          bool          // a partition row (static columns)
}

// catchUpGroup is rows one query recomputes: the rows query binding the
// key attributes at positions eq to the rows' values there, or, with eq
// nil, the query of one row alone (recompute).
type catchUpGroup struct {
	eq   []int
	rows []*markedRow
}

// decodeMarked decodes row key of t, as a marker names it.
func (t *table) decodeMarked(key []byte) (vals []types.Value, part bool, err error) {
	vals = make([]types.Value, len(t.attrs))
	marker := []store.Cell{{Family: layout.DefaultCFFamily, Qualifier: []byte{}, Value: []byte{}}}
	if err := t.decode(store.Row{Key: key, Cells: marker}, vals); err != nil {
		// Not a row's key: a partition row's.
		if !t.l.HasStatic() {
			return nil, false, err
		}
		if err := t.l.DecodePartitionRow(store.Row{Key: key}, vals); err != nil {
			return nil, false, err
		}
		return vals, true, nil
	}
	return vals, false, nil
}

// rowEq returns the non-NULL key attributes of row vals and their values:
// a row's own query binds them.
func (t *table) rowEq(vals []types.Value) ([]catalog.Attr, []types.Value) {
	var eq []catalog.Attr
	var args []types.Value
	for i := range t.nkey {
		if vals[i] != nil {
			eq, args = append(eq, t.attrs[i]), append(args, vals[i])
		}
	}
	return eq, args
}

// catchUpPlan groups rows for their recompute. The candidates bind the
// partition key or one key attribute; each takes the rows whose values
// there are not NULL, grouped by those values, and the others alone. A
// group whose query costs more than its rows' own queries is split into
// them. The candidate of least cost in all wins (the plans' Cost: one
// execution each), ties to the earlier (the partition key first); a
// candidate whose query scans a table is none.
func (e *Engine) catchUpPlan(t *table, rows []*markedRow) ([]catchUpGroup, error) {
	// The cost of each row's own query, by the attributes it binds.
	own := map[string]float64{}
	rowCost := make([]float64, len(rows))
	for i, r := range rows {
		if r.part {
			continue // its own query in any case (recompute)
		}
		eq, _ := t.rowEq(r.vals)
		k := fmt.Sprint(eq)
		c, ok := own[k]
		if !ok {
			sp, err := e.rowsProgram(t, eq)
			if err != nil {
				return nil, err
			}
			c = sp.sp.Plan.Cost
			own[k] = c
		}
		rowCost[i] = c
	}
	var cands [][]int
	if t.nhash > 0 {
		cands = append(cands, seq(0, t.nhash))
	}
	for i := range t.nkey {
		if t.nhash != 1 || i != 0 {
			cands = append(cands, []int{i})
		}
	}
	var best []catchUpGroup
	bestCost := 0.0
	for i, r := range rows {
		if !r.part {
			bestCost += rowCost[i]
		}
	}
	for _, eq := range cands {
		attrs := make([]catalog.Attr, len(eq))
		for j, p := range eq {
			attrs[j] = t.attrs[p]
		}
		sp, err := e.rowsProgram(t, attrs)
		if err != nil || sp.sp.Plan.Scans() {
			continue
		}
		groups := map[string]int{} // the values bound, encoded → position in gs
		var gs []catchUpGroup
		var costs []float64 // per group: its rows' own queries
		for i, r := range rows {
			if r.part || slices.ContainsFunc(eq, func(p int) bool { return r.vals[p] == nil }) {
				continue
			}
			var k []byte
			for _, p := range eq {
				if k, err = keyenc.AppendOrdered(k, t.attrs[p].Field.Type, r.vals[p], true); err != nil {
					return nil, err
				}
			}
			g, ok := groups[string(k)]
			if !ok {
				g = len(gs)
				groups[string(k)] = g
				gs = append(gs, catchUpGroup{eq: eq})
				costs = append(costs, 0)
			}
			gs[g].rows = append(gs[g].rows, r)
			costs[g] += rowCost[i]
		}
		cost := 0.0
		in := map[*markedRow]bool{}
		var out []catchUpGroup
		for g := range gs {
			if c := sp.sp.Plan.Cost; c < costs[g] {
				cost += c
				out = append(out, gs[g])
				for _, r := range gs[g].rows {
					in[r] = true
				}
			}
		}
		for i, r := range rows {
			if !r.part && !in[r] {
				cost += rowCost[i]
			}
		}
		if cost < bestCost {
			best, bestCost = out, cost
		}
	}
	// The rows no group takes: each its own query.
	in := map[*markedRow]bool{}
	for _, g := range best {
		for _, r := range g.rows {
			in[r] = true
		}
	}
	for _, r := range rows {
		if !in[r] {
			best = append(best, catchUpGroup{rows: []*markedRow{r}})
		}
	}
	return best, nil
}

// seq returns the integers [from, to).
func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// recomputeBatch makes the rows of groups what the readable indexes
// imply, holding the locks of every entity their keys name, and deletes
// each row's marker if it still holds the value read (see the comment at
// the top of this file). It returns this DB's marker count at the time.
// It applies at most chunk rows per store batch.
func (e *Engine) recomputeBatch(ctx context.Context, t *table, groups []catchUpGroup, chunk int) (since uint64, err error) {
	var keys []entityKey
	var rows []*markedRow
	for _, g := range groups {
		for _, r := range g.rows {
			rows = append(rows, r)
			for i := range t.nkey {
				if a := t.attrs[i]; a.Field.Key && r.vals[i] != nil {
					k, err := keyOf(t.x.Graph.Nodes[a.Node].Entity, r.vals[i])
					if err != nil {
						return 0, err
					}
					keys = append(keys, k)
				}
			}
		}
	}
	held := e.locks.Lock(keys)
	defer e.locks.Unlock(held)
	// A marker this DB's writers number higher is a write after this
	// batch (it waits for these locks).
	since = e.locks.markCount()
	// Each row's mutations: the deletion of the row, then its puts.
	muts := make(map[*markedRow][]store.Mutation, len(rows))
	for _, g := range groups {
		if g.eq == nil {
			r := g.rows[0]
			if muts[r], err = e.recompute(ctx, t, r.key, r.vals, r.part); err != nil {
				return 0, err
			}
			continue
		}
		if err := e.recomputeGroup(ctx, t, g, muts); err != nil {
			return 0, err
		}
	}
	if err := e.cellDeletes(ctx, t, rows, muts); err != nil {
		return 0, err
	}
	for len(rows) > 0 {
		n := min(chunk, len(rows))
		if err := e.applyUnmarking(ctx, rows[:n], muts); err != nil {
			return 0, err
		}
		rows = rows[n:]
	}
	return since, nil
}

// recomputeGroup sets muts of each row of g: its deletion, then the puts
// of the last answer of g's query with its key (a load keeps the last of
// tuples with one key), if any.
func (e *Engine) recomputeGroup(ctx context.Context, t *table, g catchUpGroup, muts map[*markedRow][]store.Mutation) error {
	attrs := make([]catalog.Attr, len(g.eq))
	args := make([]types.Value, len(g.eq))
	for j, p := range g.eq {
		attrs[j], args[j] = t.attrs[p], g.rows[0].vals[p]
	}
	sp, err := e.rowsProgram(t, attrs)
	if err != nil {
		return err
	}
	run := &writeRun{touched: map[entityKey]bool{}, answers: map[supportKey][]tuple{}}
	got, err := sp.answer(ctx, e.st, t, args, run)
	if err != nil {
		return err
	}
	byKey := make(map[string]*markedRow, len(g.rows))
	for _, r := range g.rows {
		byKey[string(r.key)] = r
		muts[r] = []store.Mutation{{Kind: store.DeleteRow, Table: t.name, Row: r.key}}
	}
	last := map[*markedRow][]types.Value{}
	for _, vals := range got {
		k, err := t.l.RowKey(vals)
		if err != nil {
			return err
		}
		// Answers of rows not marked are right, or another marker's.
		if r := byKey[string(k)]; r != nil {
			last[r] = vals
		}
	}
	for r, vals := range last {
		if muts[r], err = t.put(muts[r][:1], vals); err != nil {
			return err
		}
	}
	return nil
}

// cellDeletes replaces the deletion of each row in muts (recompute's
// first mutation) by deletions of the cells the row holds that its
// mutations do not set again, read for every row at once. On Pebble a
// DeleteRow is a range tombstone, which every read pays for until a flush
// (see pebblestore's maxMemRangeDels); a catch-up recomputes thousands of
// rows. The read is safe under the locks recomputeBatch holds: every
// writer of one of the rows takes one of them (a writer of another
// process marks the row again, and the next pass recomputes it).
func (e *Engine) cellDeletes(ctx context.Context, t *table, rows []*markedRow, muts map[*markedRow][]store.Mutation) error {
	type cell struct{ family, qualifier string }
	byKey := map[string]*markedRow{}
	var keys [][]byte
	for _, r := range rows {
		m := muts[r]
		if len(m) == 0 || m[0].Kind != store.DeleteRow || !bytes.Equal(m[0].Row, r.key) {
			continue
		}
		byKey[string(r.key)] = r
		keys = append(keys, r.key)
		muts[r] = m[1:]
	}
	if len(keys) == 0 {
		return nil
	}
	return e.st.ReadRows(ctx, t.name, store.RowSet{Keys: keys}, store.ReadOptions{}, func(row store.Row) bool {
		r := byKey[string(row.Key)]
		if r == nil {
			return true
		}
		set := map[cell]bool{}
		for _, m := range muts[r] {
			if m.Kind == store.SetCell && bytes.Equal(m.Row, r.key) {
				set[cell{m.Family, string(m.Qualifier)}] = true
			}
		}
		for _, c := range row.Cells {
			if !set[cell{c.Family, string(c.Qualifier)}] {
				muts[r] = append(muts[r], store.Mutation{Kind: store.DeleteCell, Table: t.name, Row: r.key, Family: c.Family, Qualifier: bytes.Clone(c.Qualifier)})
			}
		}
		return true
	})
}

// applyUnmarking applies the mutations of rows with the deletion of each
// row's marker, in one batch guarded by every marker still holding the
// value read (store.ApplyGuards). A guard that refuses (a write of another
// process marked the row again) is dropped with its marker's deletion and
// the batch tried again: the row's marker stays for the next pass. On a
// store without guards every marker stays (until ClearMarks).
func (e *Engine) applyUnmarking(ctx context.Context, rows []*markedRow, muts map[*markedRow][]store.Mutation) error {
	var body []store.Mutation
	for _, r := range rows {
		body = append(body, muts[r]...)
	}
	guarded := slices.Clone(rows)
	for {
		refused := -1
		gs := make([]store.Guard, len(guarded))
		batch := slices.Clip(body)
		for i, r := range guarded {
			gs[i] = store.Guard{Table: MarkTable, Row: r.marker, Holds: func(cells []store.Cell) bool {
				ok := len(cells) == 1 && bytes.Equal(cells[0].Value, r.value)
				if !ok {
					refused = i
				}
				return ok
			}}
			batch = append(batch, unmark(r.marker))
		}
		applied, supported, err := store.ApplyGuards(ctx, e.st, gs, batch)
		switch {
		case err != nil:
			return err
		case applied:
			return nil
		case !supported || refused < 0:
			// The markers stay (for the next pass, or until the index is
			// readable: ClearMarks).
			return e.st.Apply(ctx, body)
		}
		guarded = slices.Delete(guarded, refused, refused+1)
	}
}
