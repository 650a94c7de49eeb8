package exec

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Sink takes the tuples of a query.
type Sink interface {
	// Add takes one tuple; false stops the query. The tuple slice is the
	// query's, valid only until Add returns: Add copies it to keep it (a
	// types.Slab makes that cheap). The Datums in it are Add's to keep;
	// they never alias store memory.
	Add(t []types.Datum) bool
}

// SinkFunc is a function as a Sink.
type SinkFunc func([]types.Datum) bool

// Add implements Sink.
func (f SinkFunc) Add(t []types.Datum) bool { return f(t) }

// Query runs a read plan and gives each result tuple (full tuples, not
// projected, unboxed) to sink until it refuses one. (A Sink, not a func: a
// result set's method value would be allocated on every query.)
func (e *Engine) Query(ctx context.Context, p *plan.Plan, sink Sink) error {
	return runPlan(ctx, e.st, p, sink)
}

// runPlan runs a read plan on st: Engine.Query, and the first step of an
// advised query (planned over its index viewed as a relation).
func runPlan(ctx context.Context, st store.Store, p *plan.Plan, sink Sink) error {
	q := queries.Get().(*query)
	defer func() {
		// Keep nothing of this query alive, but the bindings (the decoder
		// stays where it is: Func's binding points at it).
		q.rd.dec.Reset()
		// Field by field: assigning a whole query would copy the decoder.
		q.p, q.sink, q.seen, q.sorted, q.n, q.stopped = nil, nil, nil, nil, 0, false
		q.slab = types.Slab[types.Datum]{}
		q.rd.p, q.rd.q, q.rd.sink, q.rd.stop = nil, nil, nil, false
		queries.Put(q)
	}()
	q.p, q.sink = p, sink
	if p.Dedupe {
		q.seen = map[string]bool{}
	}
	for _, acc := range p.Accesses {
		if p.Limit == 0 {
			break
		}
		if err := access(ctx, st, q, acc); err != nil {
			return err
		}
		if q.stopped {
			break
		}
	}
	if p.Sort {
		p.SortTuples(q.sorted)
		for i, t := range q.sorted {
			if p.Limit >= 0 && i >= p.Limit {
				break
			}
			if !sink.Add(t) {
				break
			}
		}
	}
	return nil
}

// queries recycles query states: one is as large as a small result, and a
// prepared point lookup would allocate it for each run. Nothing refers to a
// query after Query returns: the store calls its reader's methods only
// during ReadRows, and parallel reads end before their access does.
var queries = sync.Pool{New: func() any {
	q := new(query)
	q.rd.bind()
	return q
}}

// query is the state of one Query: de-duplication, sorting, the limit.
type query struct {
	p       *plan.Plan
	sink    Sink
	seen    map[string]bool
	key     []byte // a tuple's key, for de-duplication
	sorted  [][]types.Datum
	slab    types.Slab[types.Datum] // the tuples in sorted
	n       int
	stopped bool
	rd      reader // the reader of a single-read access, allocated with q
}

// out takes a tuple from the reads; false stops them.
func (q *query) out(t []types.Datum) bool {
	p := q.p
	if q.seen != nil {
		var err error
		if q.key, err = appendKeyID(q.key[:0], p.Relation, t); err != nil || q.seen[string(q.key)] {
			return true
		}
		q.seen[string(q.key)] = true
	}
	if p.Sort {
		q.sorted = append(q.sorted, q.slab.Copy(t))
		return true
	}
	if p.Limit >= 0 && q.n >= p.Limit {
		q.stopped = true
		return false
	}
	q.n++
	if !q.sink.Add(t) || p.Limit >= 0 && q.n >= p.Limit {
		q.stopped = true
		return false
	}
	return true
}

// appendKeyValues is appendKeyID for a boxed tuple.
func appendKeyValues(dst []byte, rel *catalog.Relation, t []types.Value) ([]byte, error) {
	for _, k := range rel.KeyIdx {
		var err error
		if dst, err = keyenc.AppendOrdered(dst, rel.Attrs[k].Type, t[k], false); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// appendKeyID appends the identity of tuple t of rel (its key, encoded).
func appendKeyID(dst []byte, rel *catalog.Relation, t []types.Datum) ([]byte, error) {
	for _, k := range rel.KeyIdx {
		var err error
		if dst, err = keyenc.AppendOrderedDatum(dst, rel.Attrs[k].Type, t[k], false); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// box appends the Values of t to dst.
func box(dst []types.Value, t []types.Datum) []types.Value {
	for _, d := range t {
		dst = append(dst, d.Value())
	}
	return dst
}

// access runs one access: one read streamed, or several in parallel then
// merged (k-way by ORDER BY when the plan says so, else concatenated).
func access(ctx context.Context, st store.Store, q *query, acc *plan.Access) error {
	p := q.p
	if len(acc.Reads) == 1 {
		q.rd.p, q.rd.q, q.rd.stop = p, q, false
		return read(ctx, st, acc, acc.Reads[0], &q.rd)
	}
	results := make([][][]types.Datum, len(acc.Reads))
	errs := make([]error, len(acc.Reads))
	var wg sync.WaitGroup
	for i, r := range acc.Reads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var slab types.Slab[types.Datum]
			rd := &reader{p: p, sink: func(t []types.Datum) bool {
				results[i] = append(results[i], slab.Copy(t))
				return p.Limit < 0 || p.Sort || len(results[i]) < p.Limit
			}}
			rd.bind()
			errs[i] = read(ctx, st, acc, r, rd)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !p.Merge {
		for _, ts := range results {
			for _, t := range ts {
				if !q.out(t) {
					return nil
				}
			}
		}
		return nil
	}
	h := &mergeHeap{p: p}
	for i, ts := range results {
		if len(ts) > 0 {
			h.items = append(h.items, mergeItem{src: i})
		}
	}
	h.results = results
	heap.Init(h)
	for h.Len() > 0 {
		top := h.items[0]
		if !q.out(results[top.src][top.pos]) {
			return nil
		}
		h.items[0].pos++
		if h.items[0].pos == len(results[top.src]) {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return nil
}

type mergeItem struct{ src, pos int }

// mergeHeap is the k-way merge of ordered per-bucket results.
type mergeHeap struct {
	p       *plan.Plan
	results [][][]types.Datum
	items   []mergeItem
}

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return h.p.Less(h.results[a.src][a.pos], h.results[b.src][b.pos])
}
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(v any)    { h.items = append(h.items, v.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}

// read runs one store read, decoding the cells it lends and filtering.
func read(ctx context.Context, st store.Store, acc *plan.Access, r plan.Read, rd *reader) error {
	var one [1]string
	tables := one[:]
	one[0] = r.Table
	if r.Table == "" {
		var err error
		if tables, err = layoutTables(ctx, st, acc.Layout); err != nil {
			return err
		}
	}
	opts := store.ReadOptions{Limit: rd.p.PerRead, Reverse: rd.p.Reverse}
	rows := r.Rows
	if len(r.Partitions) > 0 && !opts.Reverse {
		// The partition rows come first, in the same call.
		rows.Keys = append(rows.Keys[:len(rows.Keys):len(rows.Keys)], r.Partitions...)
	}
	if opts.Limit > 0 {
		opts.Limit += r.Slack // partition rows count against it
	}
	for _, table := range tables {
		rd.dec.Init(acc.Layout, rd.p.Unneeded, table, rd.emit)
		var err error
		if opts.Reverse && (len(r.Partitions) > 0 || r.PreloadRows) {
			err = readPreloaded(ctx, st, table, r, rows, opts, &rd.dec)
		} else {
			err = store.ReadCells(ctx, st, table, rows, opts, rd.dec.Func())
		}
		if err != nil {
			if isNoTable(err) && acc.Layout.StaticTable() == "" {
				// A table named by attributes is created on its first
				// write; one of a constant name exists from the
				// definition on, unless a migration dropped it.
				continue
			}
			return fmt.Errorf("reading %s: %w", table, err)
		}
		if err := rd.dec.Flush(); err != nil {
			return err
		}
		if rd.stop {
			return nil
		}
	}
	return nil
}

// readPreloaded is a reverse read of a layout with static columns: the
// partition rows (r.Partitions, or r's rows read forward) are read in a
// call of their own, in parallel with the reverse read, whose rows wait
// for them before they are decoded; the decoder keeps them all.
func readPreloaded(ctx context.Context, st store.Store, table string, r plan.Read, rows store.RowSet, opts store.ReadOptions, dec *layout.CellDecoder) error {
	pre := store.RowSet{Keys: r.Partitions}
	if r.PreloadRows {
		pre = r.Rows
	}
	cell := dec.Func()
	done := make(chan error, 1)
	dec.PreloadPartitions(true)
	go func() {
		err := store.ReadCells(ctx, st, table, pre, store.ReadOptions{}, cell)
		dec.PreloadPartitions(false)
		done <- err
	}()
	var preErr error
	waited := false
	wait := func() {
		if !waited {
			waited, preErr = true, <-done
		}
	}
	err := store.ReadCells(ctx, st, table, rows, opts, func(row []byte, c store.Cell, first bool) bool {
		if wait(); preErr != nil {
			return false
		}
		return cell(row, c, first)
	})
	wait()
	if preErr != nil && !isNoTable(preErr) {
		return preErr
	}
	return err
}

// reader decodes, filters and passes on the tuples of one read, to its
// query (q) or, for parallel reads, to a sink. It must not be copied once
// bound.
type reader struct {
	p    *plan.Plan
	dec  layout.CellDecoder // of the access's layout
	q    *query
	sink func([]types.Datum) bool
	stop bool
	// emit is tuple bound once (per pooled query): a method value passed
	// on would be allocated on every read.
	emit func([]types.Datum) bool
}

func (rd *reader) bind() {
	rd.emit = rd.tuple
}

func (rd *reader) tuple(t []types.Datum) bool {
	if rd.p.Residual != nil && !plan.Eval(rd.p.Residual, rd.p.Relation, t) {
		return true
	}
	var more bool
	if rd.q != nil {
		more = rd.q.out(t)
	} else {
		more = rd.sink(t)
	}
	if !more {
		rd.stop = true
	}
	return more
}

// layoutTables lists the store tables that belong to a layout whose TABLE
// depends on attributes.
func layoutTables(ctx context.Context, st store.Store, l *layout.Layout) ([]string, error) {
	specs, err := st.Tables(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range specs {
		// kvschema's own tables (catalog.Table and those named after it,
		// as the observed workload's) are no layout's, whatever a TABLE
		// pattern would make of the name.
		if strings.HasPrefix(s.Name, catalog.Table) {
			continue
		}
		if l.TableMatches(s.Name) {
			out = append(out, s.Name)
		}
	}
	return out, nil
}
