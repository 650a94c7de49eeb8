package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// tuple is one partial result row: a value per slot (query field),
// unboxed.
type tuple []types.Datum

// program is a plan.Query compiled against the tables: which slot each
// index attribute fills, how each lookup is keyed.
type program struct {
	plan  *plan.Query
	q     *catalog.Query
	slots map[catalog.FieldRef]int
	steps []*stepProg
	sel   []int
	order []int
	desc  []bool
	// maxKey is the most key values a step's lookup takes.
	maxKey int
	// members are the alternatives of a union this program answers at
	// once (mergeBranches), nil for one query: they differ only in the
	// values of the first step's key predicates (keyPreds), which each
	// binds into runState.args1.
	members  []*catalog.Query
	keyPreds map[int]bool
	// batch, when not 0, is the size of the first batch of first-step
	// rows a limited multi-step program joins before reading on
	// (pipelined).
	batch int
	// runs recycles run states between queries (see getRun).
	runs sync.Pool
}

// keySource says where a lookup's key attribute comes from.
type keySource struct {
	slot int // from the rows of earlier steps; -1 if not
	eq   int // query predicate (equality); -1 if not
}

type stepProg struct {
	l      plan.Step
	t      *table
	toSlot []int // per table attribute: the slot it fills, or -1
	key    []keySource
	// bound is the number of leading key sources (those from earlier
	// rows, or equalities); ranges are the range predicates on the next
	// key attribute.
	ranges []int
	// join lists the table attributes, beyond the key prefix, that must
	// equal the earlier row's value (an SI's base rows: every entity key).
	join    []int
	filters []int
	reverse bool
	limit   int
	// read1 is how the first step reads; nil for later steps.
	read1 *firstRead
	// local reads through a local index instead (advised_local.go).
	local *localRead
	// executor is the engine's when compiled (Engine.SetExecutor).
	executor Executor
	// statics: a later step whose rows need static columns reads the
	// partition rows holding them with its ranges.
	statics bool
	// topK (the last of several steps, see topOf): when it probes one
	// partition, its read stops after topK rows, backwards if topDesc.
	topK    int
	topDesc bool
}

// firstRead is the first step of a program: a read of its index viewed as
// a relation (catalog.IndexRelation), planned by the client's planner
// (plan.Select) for each run's values — or re-keyed by a plan.KeyRebind
// when only the key depends on them — and run by the client's executor
// (runPlan), so an advised query derives its key reads (point lookups,
// prefix and range scans, salted fan-out with merge) as a client relation
// does.
type firstRead struct {
	view *catalog.Relation
	// sel reads the attributes the query uses, WHERE the step's key
	// predicates (parameter k takes the value of query predicate k), in
	// the ORDER BY the step delivers, up to its LIMIT. A program merging
	// the alternatives of a union (mergeBranches) reads WHERE the OR of
	// each one's key predicates, alternative j's taking parameters
	// j·len(Preds)+k.
	sel    *lang.Select
	keys   []keyCmp
	rebind atomic.Pointer[plan.KeyRebind]
	tried  atomic.Bool // a KeyRebind was sought
}

// keyCmp is one key predicate of the first step: view attribute attr
// compared by op with query predicate pred's value.
type keyCmp struct {
	attr string
	op   lang.Op
	pred int
}

// where is the conjunction of the key predicates, parameter indexes moved
// by offset; nil when there are none.
func (f *firstRead) where(offset int) lang.Expr {
	var w lang.Expr
	for _, k := range f.keys {
		c := &lang.Binary{Op: k.op, L: &lang.ColumnRef{Name: k.attr}, R: &lang.Param{Index: offset + k.pred}}
		if w == nil {
			w = c
		} else {
			w = &lang.Binary{Op: lang.OpAnd, L: w, R: c}
		}
	}
	return w
}

// plan plans the read for the predicates' values vals.
func (f *firstRead) plan(vals []types.Value) (*plan.Plan, error) {
	if rb := f.rebind.Load(); rb != nil {
		if p, ok := rb.Plan(vals); ok {
			return p, nil
		}
	}
	p, err := plan.Select(f.sel, f.view, vals, cost.Prefix{})
	if err != nil {
		return nil, err
	}
	if !f.tried.Swap(true) {
		if rb := plan.NewKeyRebind(f.sel, p, cost.Prefix{}); rb != nil {
			f.rebind.Store(rb)
		}
	}
	return p, nil
}

// newFirstRead builds the first step's read: keyed by the equalities of
// sp.key and the ranges of sp.ranges, ordered as q's ORDER BY when the
// plan is ordered, limited when it is limited.
func newFirstRead(pl *plan.Query, sp *stepProg, ref func(catalog.Attr) catalog.FieldRef) *firstRead {
	q, t := pl.Query, sp.t
	f := &firstRead{view: catalog.IndexRelation(t.x), sel: &lang.Select{Relation: t.name}}
	name := func(i int) string { return f.view.Attrs[i].Name }
	for i, s := range sp.toSlot {
		if s >= 0 {
			f.sel.Columns = append(f.sel.Columns, lang.ColumnRef{Name: name(i)})
		}
	}
	cmp := func(i, k int) {
		f.keys = append(f.keys, keyCmp{attr: name(i), op: q.Preds[k].Op.Lang(), pred: k})
	}
	for i, ks := range sp.key {
		cmp(i, ks.eq)
	}
	for _, k := range sp.ranges {
		cmp(len(sp.key), k)
	}
	f.sel.Where = f.where(0)
	if pl.Ordered {
	order:
		for _, o := range q.OrderBy {
			for i, a := range t.attrs {
				if ref(a) == o.Ref {
					f.sel.OrderBy = append(f.sel.OrderBy, lang.OrderItem{Column: name(i), Desc: o.Desc})
					continue order
				}
			}
			f.sel.OrderBy = nil // not all in the index: the program sorts
			break
		}
	}
	if pl.Limited {
		f.sel.Limit = &lang.Literal{Value: pl.Limit}
	}
	return f
}

func (e *Engine) compile(pl *plan.Query) (*program, error) {
	q := pl.Query
	p := &program{plan: pl, q: q, slots: map[catalog.FieldRef]int{}}
	slot := func(r catalog.FieldRef) int {
		if s, ok := p.slots[r]; ok {
			return s
		}
		p.slots[r] = len(p.slots)
		return len(p.slots) - 1
	}
	for n, nd := range q.Graph.Nodes {
		slot(catalog.FieldRef{Node: n, Field: nd.Entity.ID()})
	}
	for _, l := range pl.Steps {
		if l.Role == cost.AfterSI {
			// The SI step delivers the base rows' whole key (its rows hold
			// it, catalog.Index.BaseOrder): kept, it makes the base lookup
			// a point lookup.
			for _, a := range l.Index.KeyAttrs() {
				slot(catalog.FieldRef{Node: l.Map[a.Node], Field: a.Field})
			}
		}
	}
	for _, r := range q.Select {
		p.sel = append(p.sel, slot(r))
	}
	for _, pr := range q.Preds {
		slot(pr.Ref)
	}
	for _, o := range q.OrderBy {
		p.order = append(p.order, slot(o.Ref))
		p.desc = append(p.desc, o.Desc)
	}
	filled := map[int]bool{}
	applied := map[int]bool{} // predicates tested by earlier steps
	for si := 0; si < len(pl.Steps); si++ {
		l := pl.Steps[si]
		if base := e.schema.Local[l.Index]; base != nil {
			// The store's local index: one read through it returns the
			// base rows, answering this step and the base's after it.
			fused := si+1 < len(pl.Steps) && pl.Steps[si+1].Role == cost.AfterSI && pl.Steps[si+1].Index == base
			sp, err := p.compileLocal(e, si, fused, filled, applied)
			if err != nil {
				return nil, err
			}
			if fused {
				si++
			}
			p.steps = append(p.steps, sp)
			continue
		}
		t := e.tables[l.Index]
		if t == nil {
			return nil, fmt.Errorf("plan step %d reads %s, which is not in the schema", si+1, l.Index.Name)
		}
		sp := &stepProg{l: l, t: t, toSlot: make([]int, len(t.attrs)), filters: append([]int(nil), l.Filters...), executor: e.executor}
		ref := func(a catalog.Attr) catalog.FieldRef { return catalog.FieldRef{Node: l.Map[a.Node], Field: a.Field} }
		for i, a := range t.attrs {
			sp.toSlot[i] = -1
			if s, ok := p.slots[ref(a)]; ok {
				sp.toSlot[i] = s
				sp.statics = sp.statics || t.l.Attrs[i].Static
			}
		}
		used := map[int]bool{}
		eqOn := func(r catalog.FieldRef) int {
			for _, k := range l.KeyPreds {
				if !used[k] && q.Preds[k].Ref == r && q.Preds[k].Op == catalog.Eq {
					return k
				}
			}
			return -1
		}
		fromRows := func(i int) bool {
			if si == 0 || sp.toSlot[i] < 0 || !filled[sp.toSlot[i]] {
				return false
			}
			return i < t.nhash || l.Role == cost.AfterSI
		}
		for i := 0; i < t.nkey; i++ {
			r := ref(t.attrs[i])
			if fromRows(i) {
				sp.key = append(sp.key, keySource{slot: sp.toSlot[i], eq: -1})
				continue
			}
			if k := eqOn(r); k >= 0 {
				used[k] = true
				sp.key = append(sp.key, keySource{slot: -1, eq: k})
				continue
			}
			for _, k := range l.KeyPreds {
				if !used[k] && q.Preds[k].Ref == r && q.Preds[k].Op.IsRange() {
					used[k] = true
					sp.ranges = append(sp.ranges, k)
				}
			}
			break
		}
		p.maxKey = max(p.maxKey, len(sp.key))
		if len(sp.key) < t.nhash && l.Role != cost.Scan {
			return nil, fmt.Errorf("plan step %d: nothing binds the partition key of %s", si+1, t.name)
		}
		for _, k := range l.KeyPreds {
			if !used[k] {
				return nil, fmt.Errorf("plan step %d: the key of %s cannot answer %s", si+1, t.name, q.Graph.DescribeRef(q.Preds[k].Ref))
			}
		}
		if l.Role == cost.AfterSI {
			for i := len(sp.key); i < t.nkey; i++ {
				if sp.toSlot[i] >= 0 && filled[sp.toSlot[i]] {
					sp.join = append(sp.join, i)
				}
			}
		}
		if si == 0 {
			if pl.Ordered && len(q.OrderBy) > 0 && q.OrderBy[0].Desc {
				sp.reverse = true
			}
			if pl.Limited {
				sp.limit = int(pl.Limit)
			}
			sp.read1 = newFirstRead(pl, sp, ref)
		}
		p.settle(sp, filled, applied, l.KeyPreds, l.Filters)
		p.steps = append(p.steps, sp)
	}
	if n := len(p.steps); n > 1 && pl.Limit > 0 {
		if sp := p.steps[n-1]; sp.local == nil && p.keyFilters(sp) && len(sp.join) == 0 {
			sp.topK, sp.topDesc = p.topOf(sp)
		}
	}
	if pl.Limit > 0 {
		p.batch = firstBatch(pl, p.steps)
	}
	return p, nil
}

// firstBatch is the number of first-step rows a program with a LIMIT
// joins before it reads on (pipelined), or 0 when it reads them all
// first: when the client sorts the result (every row is needed) or the
// first step stops at the LIMIT itself (Limited). Otherwise a filter or a
// join that drops rows made the whole first range be read and joined for
// LIMIT rows (RUBiS query 35: a category's items by end date, then each
// item's seller's region, for 25 rows). A one-step program's batch is the
// LIMIT: its rows are filtered already. A longer one's first batch is
// twice the first-step rows the plan's estimates say yield the LIMIT
// (the last step's rows against the first's), at least 16; each next
// batch is four times the one before, so a run whose estimate was too
// hopeful takes at most one more round trip a later step per fourfold of
// the rows it reads. The planner prices plans so (planner.DAG.pipeline).
func firstBatch(pl *plan.Query, steps []*stepProg) int {
	if pl.Sort || pl.Limited {
		return 0
	}
	if len(steps) == 1 {
		return int(min(pl.Limit, 1<<20))
	}
	n := 2 * float64(pl.Limit)
	first, last := pl.Steps[0].Kept, pl.Steps[len(pl.Steps)-1].Kept
	if first > 0 && last > 0 && last < first {
		n *= first / last
	}
	return int(min(max(n, 16), 1<<20))
}

// keyFilters reports whether every filter of step sp tests an attribute
// its lookup key fixes: one value for every row of a partition it probes,
// so the filter keeps all of them or none.
func (p *program) keyFilters(sp *stepProg) bool {
	for _, k := range sp.filters {
		slot, fixed := p.slots[p.q.Preds[k].Ref], false
		for i := range sp.key {
			fixed = fixed || sp.toSlot[i] == slot
		}
		if !fixed {
			return false
		}
	}
	return true
}

// topOf says whether the last lookup sp decides alone which rows are the
// query's first LIMIT: nothing filters its rows, and the ORDER BY is none
// or the clustering attributes after its key, in order, one direction
// (the client sort runs after it). Then a read of one partition (the
// earlier rows all probing it) need not go beyond LIMIT rows in that
// order: each earlier row joins the same rows, so the first LIMIT of
// the result are among them. A descending read meets a partition row last,
// so a step reading static columns stays forward. A partition with
// buckets is read bucket by bucket then, each read limited (a read's limit
// is on all its ranges): the first LIMIT are among the buckets' firsts.
func (p *program) topOf(sp *stepProg) (int, bool) {
	q, limit := p.q, int(p.plan.Limit)
	if len(sp.key) == sp.t.nkey {
		return 0, false // a point lookup: one row a probe
	}
	if len(q.OrderBy) == 0 {
		return limit, false
	}
	if !p.plan.Sort {
		return 0, false // an earlier step delivers the order
	}
	desc := q.OrderBy[0].Desc
	for j, o := range q.OrderBy {
		k := len(sp.key) + j
		if o.Desc != desc || k >= sp.t.nkey || sp.toSlot[k] < 0 || sp.toSlot[k] != p.slots[o.Ref] {
			return 0, false
		}
	}
	if desc && sp.statics {
		return 0, false
	}
	return limit, desc
}

// settle finishes a compiled step: it adds the filters its rows need
// again, then marks the predicates it applies (done) and the slots it
// fills.
func (p *program) settle(sp *stepProg, filled, applied map[int]bool, done ...[]int) {
	q := p.q
	// Rows of this step carry fresh values of fields an earlier step
	// already tested (an SI's base rows hold the indexed attribute):
	// test them again, so that a row a concurrent write moved out of
	// the predicate is not returned.
	refills := map[int]bool{}
	for _, s := range sp.toSlot {
		if s >= 0 && filled[s] {
			refills[s] = true
		}
	}
	mine := map[int]bool{}
	for _, k := range sp.filters {
		mine[k] = true
	}
	for k := range applied {
		if refills[p.slots[q.Preds[k].Ref]] && !mine[k] {
			sp.filters = append(sp.filters, k)
		}
	}
	sort.Ints(sp.filters)
	for _, ks := range done {
		for _, k := range ks {
			applied[k] = true
		}
	}
	for _, s := range sp.toSlot {
		if s >= 0 {
			filled[s] = true
		}
	}
}

// bindPreds gives each query predicate its value for args, coerced to the
// field's type (nil: NULL, which no comparison satisfies), into vals
// (len(q.Preds)).
func bindPreds(vals []types.Value, q *catalog.Query, args []types.Value) ([]types.Value, error) {
	clear(vals)
	for i, pr := range q.Preds {
		v, err := exprValue(pr.Value, args)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if vals[i], err = types.Coerce(v, pr.ValueType()); err != nil {
			return nil, fmt.Errorf("%s %s %s: %v", q.Graph.DescribeRef(pr.Ref), pr.Op, types.Format(v), err)
		}
	}
	return vals, nil
}

func exprValue(x lang.Expr, args []types.Value) (types.Value, error) {
	switch v := x.(type) {
	case *lang.Literal:
		return v.Value, nil
	case *lang.Param:
		if v.Index >= len(args) {
			return nil, fmt.Errorf("%d:%d: parameter %d has no value (%d given)", v.At.Line, v.At.Col, v.Index+1, len(args))
		}
		return args[v.Index], nil
	}
	return nil, fmt.Errorf("%s is not a value", lang.PrintExpr(x))
}

// bind binds the predicates of q (the program's query) to args, and those
// of each member of a merged union.
func (p *program) bind(r *runState, q *catalog.Query, args []types.Value) error {
	if _, err := bindPreds(r.vals, q, args); err != nil {
		return err
	}
	n := len(q.Preds)
	for j, m := range p.members {
		if _, err := bindPreds(r.args1[j*n:(j+1)*n], m, args); err != nil {
			return err
		}
	}
	return nil
}

// newRun returns a run state for the program: the predicates' values
// (vals, to be bound by the caller) and the run's memory.
func (p *program) newRun() *runState {
	nv := len(p.q.Preds)
	// One allocation for the run's three Datum slices.
	mem := make([]types.Datum, nv+len(p.slots)+p.maxKey)
	r := &runState{p: p, vals: make([]types.Value, nv)}
	if p.members != nil {
		r.args1 = make([]types.Value, nv*len(p.members))
	}
	r.preds, mem = mem[:nv:nv], mem[nv:]
	r.blank, r.key = tuple(mem[:len(p.slots):len(p.slots)]), mem[len(p.slots):]
	return r
}

// getRun returns a recycled run state. A caller that keeps nothing of the
// run's rows after it ends (Stmt.Query copies the result out) gives it
// back with putRun, so that a warm prepared query allocates little more
// than its result.
func (p *program) getRun() *runState {
	if r, ok := p.runs.Get().(*runState); ok {
		return r
	}
	return p.newRun()
}

func (p *program) putRun(r *runState) {
	clear(r.vals)
	clear(r.args1)
	clear(r.preds)
	clear(r.key)
	clear(r.rows)
	r.rows = r.rows[:0]
	r.slab.Reset()
	r.cur = nil
	p.runs.Put(r)
}

// run executes the program with the predicates' values r.vals and returns
// the result tuples (every slot), sorted and limited; they live in r.
func (p *program) run(ctx context.Context, st store.Store, r *runState) ([]tuple, error) {
	vals := r.vals
	for i, v := range vals {
		if v == nil {
			if p.keyPreds[i] {
				continue // an alternative's own: its key read finds nothing
			}
			// NULL satisfies no comparison (SQL's unknown).
			return nil, nil
		}
		r.preds[i], _ = types.DatumOf(v) // bound values are canonical
	}
	if p.batch > 0 && p.members == nil {
		return p.pipelined(ctx, st, r)
	}
	var rows []tuple
	for si, sp := range p.steps {
		var err error
		switch {
		case sp.local != nil:
			rows, err = sp.readLocal(ctx, st, r)
		case si == 0:
			rows, err = sp.first(ctx, st, r)
		default:
			if len(rows) == 0 {
				return nil, nil
			}
			rows, err = sp.next(ctx, st, r, rows)
		}
		if err != nil {
			return nil, err
		}
	}
	if p.plan.Sort {
		SortRows(rows, p.order, p.desc)
	}
	if p.plan.Limit > 0 && int64(len(rows)) > p.plan.Limit {
		rows = rows[:p.plan.Limit]
	}
	return rows, nil
}

// pipelined runs a program firstBatch says joins in batches: the first
// step's read goes on while each batch of its rows is joined through the
// later steps (a store's read callback may call the store), and stops
// once the results reach the LIMIT (a program of one step: once its
// filtered rows do). The later steps keep the order of the
// first step's rows, so the first LIMIT results are those of a run that
// read everything (the order an ORDER BY the first step delivers, too).
func (p *program) pipelined(ctx context.Context, st store.Store, r *runState) ([]tuple, error) {
	sp := p.steps[0]
	var out []tuple
	var joinErr error
	batch := p.batch
	join := func() bool {
		rows := r.rows
		for _, later := range p.steps[1:] {
			if len(rows) == 0 {
				break
			}
			if rows, joinErr = later.next(ctx, st, r, rows); joinErr != nil {
				return false
			}
		}
		out = append(out, rows...)
		r.rows = r.rows[:0]
		return int64(len(out)) < p.plan.Limit
	}
	r.cur = sp
	sink := func(d []types.Datum) bool {
		r.Add(d)
		if len(r.rows) < batch {
			return true
		}
		batch *= 4
		return join()
	}
	var err error
	if sp.local != nil {
		err = sp.readLocalEach(ctx, st, r, sink)
	} else {
		var pl *plan.Plan
		if pl, err = sp.read1.plan(r.vals); err != nil {
			return nil, err
		}
		err = runPlan(ctx, st, pl, SinkFunc(sink))
		pl.Release()
	}
	if err == nil && joinErr == nil && len(r.rows) > 0 && int64(len(out)) < p.plan.Limit {
		join()
	}
	if err == nil {
		err = joinErr
	}
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > p.plan.Limit {
		out = out[:p.plan.Limit]
	}
	return out, nil
}

// keyPrefix encodes the key sources of a later step's lookup for one
// earlier row, leaving them in r.key; ok is false when one is NULL, which
// joins nothing. With partition buckets it is the prefix in bucket 0
// (layout.AppendKeyPrefixDatumsIn), which identifies the partition.
func (sp *stepProg) keyPrefix(dst []byte, r *runState, row tuple) ([]byte, bool, error) {
	key := r.key[:len(sp.key)]
	for i, ks := range sp.key {
		if ks.slot >= 0 {
			key[i] = row[ks.slot]
		} else {
			key[i] = r.preds[ks.eq]
		}
		if key[i].IsNull() {
			return nil, false, nil
		}
	}
	dst, err := sp.t.l.AppendKeyPrefixDatumsIn(dst, key, len(key), 0)
	return dst, err == nil, err
}

// rangeOf narrows the partition prefix by the range predicates.
func (sp *stepProg) rangeOf(prefix []byte, q *catalog.Query, vals []types.Value) (store.Range, error) {
	if len(sp.ranges) == 0 {
		return store.PrefixRange(prefix), nil
	}
	e, _ := sp.t.l.RowElem(len(sp.key))
	bounds := make([]layout.Bound, len(sp.ranges))
	for i, k := range sp.ranges {
		op := q.Preds[k].Op
		bounds[i] = layout.Bound{Value: vals[k], Upper: op == catalog.Lt || op == catalog.Le, Inclusive: op == catalog.Le || op == catalog.Ge}
	}
	return sp.t.l.KeyRange(prefix, e, bounds)
}

// runState is one run of a program: the predicates' values, boxed for
// key encoding and unboxed for filters, and the memory of its tuples.
type runState struct {
	p     *program
	vals  []types.Value
	args1 []types.Value // a merged union's alternatives' values (program.members)
	preds []types.Datum
	blank tuple // len(slots) NULLs, copied into the slab for each tuple
	slab  types.Slab[types.Datum]
	key   []types.Datum // a lookup's key values
	// The first step and its rows (r is the Sink of its read).
	cur  *stepProg
	rows []tuple
}

// Add takes a row of the first step's read (the Sink of runPlan).
func (r *runState) Add(d []types.Datum) bool {
	t := tuple(r.slab.Copy(r.blank))
	r.cur.fill(t, d)
	if r.p.keep(t, r.cur.filters, r.preds) {
		r.rows = append(r.rows, t)
	}
	return true
}

// read decodes the rows of rs in t's table, the cells lent by the store,
// and calls emit with each (the tuple is lent until emit returns).
func (sp *stepProg) read(ctx context.Context, st store.Store, rs store.RowSet, opts store.ReadOptions, emit func([]types.Datum) bool) error {
	t := sp.t
	dec, _ := t.cellDecoders.Get().(*layout.CellDecoder)
	if dec == nil {
		dec = new(layout.CellDecoder)
	}
	defer t.cellDecoders.Put(dec)
	dec.Init(t.l, nil, t.name, emit)
	err := store.ReadCells(ctx, st, t.name, rs, opts, dec.Func())
	if err == nil {
		err = dec.Flush()
	}
	dec.Reset() // keep nothing of this read alive
	return err
}

func (sp *stepProg) first(ctx context.Context, st store.Store, r *runState) ([]tuple, error) {
	vals := r.vals
	if r.p.members != nil {
		vals = r.args1
	}
	p, err := sp.read1.plan(vals)
	if err != nil {
		return nil, err
	}
	r.cur = sp
	err = runPlan(ctx, st, p, r)
	p.Release()
	return r.rows, err
}

func (sp *stepProg) fill(t tuple, d []types.Datum) {
	for i, s := range sp.toSlot {
		if s >= 0 {
			t[s] = d[i]
		}
	}
}

// next runs a later lookup for all earlier rows and joins: in one round
// trip, or with the PerPartition executor (Engine.SetExecutor) in one per
// partition probed, the partitions read one after another.
func (sp *stepProg) next(ctx context.Context, st store.Store, r *runState, rows []tuple) ([]tuple, error) {
	p := r.p
	// With an ORDER BY or a LIMIT the joined rows keep the earlier rows'
	// order (and each partition's clustering order): the order the first
	// step delivers, and the same rows, ties and all, whatever the
	// executor (PerPartition reads partition after partition). The rows
	// read are grouped by partition, then joined in the earlier rows'
	// order. Otherwise each row read joins as it comes, to the earlier
	// rows probing its partition (probers), without a copy of it or a
	// group: 6_secondary of RUBiS (18,183 rows) 55 → 44 ms at rtt 0.
	ordered := len(p.q.OrderBy) > 0 || p.plan.Limit > 0
	keys := make([]string, len(rows))
	var ranges []store.Range
	var parts [][]byte // per range, its partition row (sp.statics)
	seen := map[string]bool{}
	var probers map[string][]int
	if !ordered {
		probers = make(map[string][]int, len(rows))
	}
	var buf []byte
	buckets := sp.t.l.OpenSalt(len(sp.key))
	for i, row := range rows {
		k, ok, err := sp.keyPrefix(buf[:0], r, row)
		if err != nil {
			return nil, err
		}
		if !ok {
			keys[i] = "\xff-null" // matches no group
			continue
		}
		keys[i] = string(k)
		if probers != nil {
			probers[keys[i]] = append(probers[keys[i]], i)
		}
		if !seen[keys[i]] {
			seen[keys[i]] = true
			rg, err := sp.rangeOf([]byte(keys[i]), p.q, r.vals)
			if err != nil {
				return nil, err
			}
			// With partition buckets, the partition's other buckets too.
			for b := 1; b < buckets && !rg.Empty(); b++ {
				pb, err := sp.t.l.AppendKeyPrefixDatumsIn(nil, r.key[:len(sp.key)], len(sp.key), b)
				if err != nil {
					return nil, err
				}
				rb, err := sp.rangeOf(pb, p.q, r.vals)
				if err != nil {
					return nil, err
				}
				ranges = append(ranges, rb)
			}
			if !rg.Empty() {
				ranges = append(ranges, rg)
				if sp.statics {
					pk, err := sp.t.l.AppendPartitionKeyDatums(nil, r.key[:len(sp.key)])
					if err != nil {
						return nil, err
					}
					parts = append(parts, pk)
				}
			}
		}
		buf = k
	}
	if len(ranges) == 0 {
		return nil, nil
	}
	groups := map[string][][]types.Datum{}
	var slab types.Slab[types.Datum]
	var err error
	var k []byte
	var out []tuple
	// A partition's rows come one after another: its probers are looked up
	// once, for its first row.
	nk := len(sp.key)
	prev := make([]types.Datum, 0, nk) // the key of the partition of the last row read
	var prevProbers []int
	group := func(d []types.Datum) bool {
		if !ordered {
			if len(prev) == 0 || !slices.EqualFunc(prev, d[:nk], equalDatums) {
				if k, err = sp.t.l.AppendKeyPrefixDatumsIn(k[:0], d, nk, 0); err != nil {
					return false
				}
				prev, prevProbers = append(prev[:0], d[:nk]...), probers[string(k)]
			}
			for _, i := range prevProbers {
				out = sp.join1(r, out, rows[i], d)
			}
			return true
		}
		if k, err = sp.t.l.AppendKeyPrefixDatumsIn(k[:0], d, nk, 0); err != nil {
			return false
		}
		groups[string(k)] = append(groups[string(k)], slab.Copy(d))
		return true
	}
	var opts store.ReadOptions
	// One partition probed: its read stops after topK rows — with
	// buckets, each bucket's read, the buckets read in parallel.
	onePartition := len(ranges) == 1 || buckets > 0 && len(ranges) == buckets
	if sp.topK > 0 && onePartition && p.members == nil {
		opts = store.ReadOptions{Limit: sp.topK, Reverse: sp.topDesc}
		if sp.t.l.HasStatic() {
			opts.Limit++ // the partition row, if the range meets it
		}
	}
	var rerr error
	switch {
	case opts.Limit > 0 && len(ranges) > 1:
		rerr = sp.readEach(ctx, st, ranges, opts, group)
	case sp.executor == PerPartition:
		for i := 0; i < len(ranges) && rerr == nil && err == nil; i++ {
			rs := store.RowSet{Ranges: ranges[i : i+1]}
			if parts != nil {
				rs.Keys = parts[i : i+1]
			}
			rerr = sp.read(ctx, st, rs, opts, group)
		}
	default:
		rerr = sp.read(ctx, st, store.RowSet{Ranges: ranges, Keys: parts}, opts, group)
	}
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	if !ordered {
		return out, nil
	}
	if buckets > 0 {
		// A partition's buckets were read one after another: its rows in
		// clustering order again, as one range would give them.
		for _, g := range groups {
			slices.SortStableFunc(g, func(a, b []types.Datum) int {
				for j := len(sp.key); j < sp.t.nkey; j++ {
					if c := types.CompareDatums(a[j], b[j]); c != 0 {
						return c
					}
				}
				return 0
			})
		}
	}
	for i, row := range rows {
		for _, g := range groups[keys[i]] {
			out = sp.join1(r, out, row, g)
		}
	}
	return out, nil
}

func equalDatums(a, b types.Datum) bool { return types.CompareDatums(a, b) == 0 }

// join1 appends to out the tuple joining earlier row to the row d the
// step read in the partition row probes, unless the step's join
// attributes differ or its filters drop it.
func (sp *stepProg) join1(r *runState, out []tuple, row tuple, d []types.Datum) []tuple {
	for _, j := range sp.join {
		if types.CompareDatums(d[j], row[sp.toSlot[j]]) != 0 {
			return out
		}
	}
	t := tuple(r.slab.Copy(row))
	sp.fill(t, d)
	if r.p.keep(t, sp.filters, r.preds) {
		out = append(out, t)
	}
	return out
}

// readEach reads each of ranges with opts (a limit each), in parallel, and
// passes their rows to emit, range after range.
func (sp *stepProg) readEach(ctx context.Context, st store.Store, ranges []store.Range, opts store.ReadOptions, emit func([]types.Datum) bool) error {
	rows := make([][][]types.Datum, len(ranges))
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for i := range ranges {
		wg.Go(func() {
			var slab types.Slab[types.Datum]
			errs[i] = sp.read(ctx, st, store.RowSet{Ranges: ranges[i : i+1]}, opts, func(d []types.Datum) bool {
				rows[i] = append(rows[i], slab.Copy(d))
				return true
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, rs := range rows {
		for _, d := range rs {
			if !emit(d) {
				return nil
			}
		}
	}
	return nil
}

// keep applies the client-side filters.
func (p *program) keep(t tuple, filters []int, preds []types.Datum) bool {
	for _, k := range filters {
		pr := p.q.Preds[k]
		v := t[p.slots[pr.Ref]]
		if v.IsNull() {
			return false
		}
		if pr.Op.IsContains() {
			if types.ContainsDatum(v, preds[k], pr.Op.OfKeys()) == pr.Op.Negated() {
				return false
			}
			continue
		}
		if !pr.Op.Holds(types.CompareDatums(v, preds[k])) {
			return false
		}
	}
	return true
}

// explain writes the plan with each step's table and key.
func (p *program) explain() string {
	var b strings.Builder
	b.WriteString(p.plan.Describe(""))
	for i, sp := range p.steps {
		if sp.local != nil {
			sp.explainLocal(&b, p)
		} else {
			sp.explain(&b, p, i)
		}
	}
	if p.plan.Sort {
		var keys []string
		for _, o := range p.q.OrderBy {
			k := p.q.Graph.DescribeRef(o.Ref)
			if o.Desc {
				k += " DESC"
			}
			keys = append(keys, k)
		}
		fmt.Fprintf(&b, "CLIENT SORT BY [%s]\n", strings.Join(keys, ", "))
	}
	switch {
	case p.batch > 0 && len(p.steps) == 1:
		b.WriteString("CLIENT FILTERED READ STOPPING AT THE LIMIT\n")
	case p.batch > 0:
		fmt.Fprintf(&b, "CLIENT PIPELINED: STEPS 2-%d JOIN THE FIRST STEP'S ROWS %d AT A TIME (4x MORE EACH TIME), ITS READ STOPPING AT THE LIMIT\n", len(p.steps), p.batch)
	}
	if p.plan.Limit > 0 {
		fmt.Fprintf(&b, "CLIENT %d ROW LIMIT\n", p.plan.Limit)
	}
	for _, sp := range p.steps {
		explainPartitions(&b, sp.t.x)
	}
	return b.String()
}

// explainPartitions warns, in EXPLAIN, about an index whose partitions
// are large by the model's statistics (catalog.Index.PartitionWarning).
func explainPartitions(b *strings.Builder, x *catalog.Index) {
	if w := x.PartitionWarning(); w != "" {
		fmt.Fprintf(b, "WARNING %s: %s\n", x.Name, w)
	}
}

// explain writes the step's store access in the client's EXPLAIN
// vocabulary (Phoenix's): POINT LOOKUP when the key is whole, RANGE SCAN
// over a key prefix, SKIP SCAN for a batch of prefixes (the keys of the
// previous step's rows, read in one round trip), then what the step does
// on the server (row limit) and on the client (filters).
func (sp *stepProg) explain(b *strings.Builder, p *program, i int) {
	t, q := sp.t, p.q
	var key []string
	for j, ks := range sp.key {
		name := t.x.AttrName(t.attrs[j])
		if ks.slot >= 0 {
			key = append(key, name+" = (from step "+fmt.Sprint(i)+")")
		} else {
			key = append(key, predText(q, q.Preds[ks.eq]))
		}
	}
	for _, k := range sp.ranges {
		key = append(key, predText(q, q.Preds[k]))
	}
	whole := len(sp.key) == t.nkey
	alts := max(len(p.members), 1)
	if i == 0 && alts > 1 {
		// A merged union: each alternative's key, one read.
		var ors []string
		for _, m := range p.members {
			var and []string
			for _, k := range sp.read1.keys {
				and = append(and, predText(m, m.Preds[k.pred]))
			}
			ors = append(ors, strings.Join(and, " AND "))
		}
		key = []string{strings.Join(ors, " OR ")}
	}
	var what string
	switch {
	case sp.l.Role == cost.Scan && len(sp.ranges) == 0:
		what = "FULL SCAN"
	case i == 0 && whole:
		what = "POINT LOOKUP ON " + plural(alts, "KEY", "KEYS")
	case i == 0 && alts > 1:
		what = "SKIP SCAN ON " + plural(alts, "RANGE", "RANGES")
	case i == 0:
		what = "RANGE SCAN"
	case whole:
		what = fmt.Sprintf("POINT LOOKUP ON THE KEYS OF STEP %d", i)
	default:
		what = fmt.Sprintf("SKIP SCAN ON THE KEYS OF STEP %d", i)
	}
	if sp.reverse {
		what = "REVERSE " + what
	}
	salt := ""
	switch {
	case t.x.PartitionBuckets > 0 && whole:
		salt = fmt.Sprintf(" (PARTITION BUCKET FROM THE KEY, %d BUCKETS)", t.salt)
	case t.x.PartitionBuckets > 0:
		salt = fmt.Sprintf(" (EACH PARTITION IN %d BUCKETS)", t.salt)
	case t.salt > 0:
		salt = fmt.Sprintf(" (SALT BUCKET FROM THE PARTITION KEY, %d BUCKETS)", t.salt)
	}
	keyText := " [" + strings.Join(key, ", ") + "]"
	if len(key) == 0 {
		keyText = ""
	}
	// A scan that fixes no partition key reads every salt bucket, in
	// parallel, merged when the step delivers the order.
	// So does a first step's read of a partition with buckets, one read
	// per bucket (a later step's is one read of every bucket's range, its
	// rows put back in clustering order per partition).
	ways := 1
	switch {
	case sp.read1 != nil && sp.l.Role == cost.Scan && t.x.PartitionBuckets > 0:
		ways, salt = t.salt, fmt.Sprintf(" (ALL %d PARTITION BUCKETS)", t.salt)
	case sp.read1 != nil && sp.l.Role == cost.Scan && t.salt > 0:
		ways, salt = t.salt, fmt.Sprintf(" (ALL %d SALT BUCKETS)", t.salt)
	case sp.read1 != nil && t.x.PartitionBuckets > 0 && !whole:
		ways = t.salt
	}
	kind := ""
	if t.x.Kind == catalog.SI {
		// An SI the client keeps in a table (no local index): its read
		// returns keys, and the base rows are another round trip.
		kind = " (SECONDARY INDEX TABLE: 1 ROUND TRIP)"
		if i+1 < len(p.steps) && p.steps[i+1].l.Role == cost.AfterSI {
			kind = " (SECONDARY INDEX TABLE: 1 ROUND TRIP, THE BASE ROWS ANOTHER)"
		}
	}
	fmt.Fprintf(b, "CLIENT PARALLEL %d-WAY %s OVER %s%s%s%s\n", ways, what, t.name, keyText, salt, kind)
	switch {
	case ways > 1 && len(sp.read1.sel.OrderBy) > 0:
		b.WriteString("CLIENT MERGE SORT\n")
	case sp.read1 == nil && t.x.PartitionBuckets > 0 && !whole:
		b.WriteString("CLIENT MERGE SORT OF EACH PARTITION'S BUCKETS\n")
	}
	if sp.statics {
		b.WriteString(staticsLine(sp, i, alts))
	}
	if sp.limit > 0 {
		fmt.Fprintf(b, "    SERVER %d ROW LIMIT\n", sp.limit)
	}
	if sp.topK > 0 {
		dir := ""
		if sp.topDesc {
			dir = ", SCANNED BACKWARDS"
		}
		if t.x.PartitionBuckets > 0 {
			dir += fmt.Sprintf(", EACH OF ITS %d BUCKETS IN A READ OF ITS OWN, IN PARALLEL", t.x.PartitionBuckets)
		}
		fmt.Fprintf(b, "    SERVER %d ROW LIMIT WHEN ONE PARTITION IS PROBED%s\n", sp.topK, dir)
	}
	if len(sp.join) > 0 {
		var on []string
		for _, a := range sp.join {
			on = append(on, t.x.AttrName(t.attrs[a])+" = (from step "+fmt.Sprint(i)+")")
		}
		fmt.Fprintf(b, "    CLIENT FILTER BY %s\n", strings.Join(on, " AND "))
	}
	if len(sp.filters) > 0 {
		var fs []string
		for _, k := range sp.filters {
			fs = append(fs, predText(q, q.Preds[k]))
		}
		fmt.Fprintf(b, "    CLIENT FILTER BY %s\n", strings.Join(fs, " AND "))
	}
}

// staticsLine says how step i, which returns static columns, reads the
// partition rows holding them (plan.Read.Partitions).
func staticsLine(sp *stepProg, i, alts int) string {
	switch {
	case sp.l.Role == cost.Scan && sp.reverse:
		return "    STATIC COLUMNS: THE SAME RANGES READ FORWARD FIRST FOR THEIR PARTITION ROWS\n"
	case sp.l.Role == cost.Scan:
		return "    STATIC COLUMNS: EACH PARTITION ROW MET BEFORE ITS ROWS (SAME CALL)\n"
	case i > 0:
		return fmt.Sprintf("    STATIC COLUMNS: THE PARTITION ROW OF EACH KEY OF STEP %d READ WITH THE ROWS (SAME CALL)\n", i)
	case sp.reverse:
		return fmt.Sprintf("    STATIC COLUMNS: %s READ IN A PARALLEL CALL, DECODED BEFORE THE ROWS\n", plural(alts, "PARTITION ROW", "PARTITION ROWS"))
	}
	return fmt.Sprintf("    STATIC COLUMNS: %s READ WITH THE ROWS (SAME CALL)\n", plural(alts, "PARTITION ROW", "PARTITION ROWS"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func predText(q *catalog.Query, p catalog.Pred) string {
	return fmt.Sprintf("%s %s %s", q.Graph.DescribeRef(p.Ref), p.Op, lang.PrintExpr(p.Value))
}
