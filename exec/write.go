package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Apply runs a write plan in one store batch and returns the number of
// tuples written.
func (e *Engine) Apply(ctx context.Context, w *plan.Write) (int, error) {
	o, err := e.ApplyIf(ctx, w)
	return o.Written, err
}

// Outcome is what a write did. A conditional write (plan.Write.Cond)
// reports whether it applied and the tuple its condition was decided on.
type Outcome struct {
	Written int  // tuples written
	Applied bool // the condition held (true for an unconditional write)
	// Current is what the condition was decided on, as stored before the
	// write (nil: no tuple stored); nil for an unconditional write. From
	// ApplyIf: the whole tuple, by attribute; from an advised Stmt.ExecIf:
	// the values of its CondFields, and only when it did not apply.
	Current []types.Value
}

// ApplyIf runs a write plan as Apply does and reports its outcome: a
// conditional write reads the tuple it names under that tuple's lock and
// writes only if its condition holds of it, so of two writers racing on
// one key in this process, the second sees the first's write. (Across
// processes, only a store one process holds — Pebble — makes this a
// lightweight transaction; see the package doc.)
func (e *Engine) ApplyIf(ctx context.Context, w *plan.Write) (Outcome, error) {
	o := Outcome{Applied: true}
	var err error
	if w.Kind == plan.WriteUpsert {
		o.Written, err = e.upsert(ctx, w.Relation, w.Tuples, w.ReadOld, w.Cond, w.TTL, &o)
	} else {
		o.Written, err = e.update(ctx, w, &o)
	}
	return o, err
}

// bigBatch is the number of tuples from which a write takes every lock
// stripe instead of those of its keys (a quarter of the stripes: a batch
// that large holds most of them).
const bigBatch = len(Locks{}.stripes) / 4

// upsert writes tuples (INSERT semantics of Cassandra, HBase and Phoenix's
// UPSERT: an existing tuple with the same key is replaced) in one batch.
// Later tuples with the same key as earlier ones win. With readOld the
// stored tuples are read first, so that their cells are deleted.
func (e *Engine) upsert(ctx context.Context, rel *catalog.Relation, tuples [][]types.Value, readOld bool, cond *plan.Cond, ttl int64, out *Outcome) (int, error) {
	if len(rel.Indexes) == 0 {
		// Nothing would hold the tuples: refuse rather than drop them.
		return 0, fmt.Errorf("relation %s has no schema to store its tuples in (DEFINE SCHEMA … FOR %s)", rel.Name, rel.Name)
	}
	sc := e.getScratch()
	defer e.putScratch(sc)
	var err error
	if sc.expires, err = expiresAt(ctx, e.st, ttl); err != nil {
		return 0, err
	}
	var held Held
	if len(tuples) >= bigBatch {
		// Most stripes would be taken anyway: taking all of them costs
		// less than encoding and hashing every key.
		held = e.locks.All()
	} else {
		stripes := slices.Grow(sc.stripes[:0], len(tuples))
		rs := e.locks.Rel(rel.Name)
		for _, t := range tuples {
			var err error
			sc.key, err = appendKeyValues(sc.key[:0], rel, t)
			if err != nil {
				return 0, err
			}
			stripes = append(stripes, rs.Stripe(sc.key))
		}
		held = e.locks.LockStripes(stripes)
		sc.stripes = held
	}
	defer e.locks.Unlock(held)
	if !readOld {
		// Blind writes: mutations apply in order, so a later tuple with the
		// same key overwrites an earlier one cell by cell.
		changes := slices.Grow(sc.changes[:0], len(tuples))
		for _, t := range tuples {
			changes = append(changes, plan.Change{New: t, Expires: sc.expires})
		}
		sc.changes = changes
		_, err := e.apply(ctx, sc, rel, changes, nil)
		return len(tuples), err
	}
	// Last one wins within the statement: the old value each change reads
	// must be the stored one, so duplicates are merged first.
	index := map[string]int{}
	var uniq [][]types.Value
	for _, t := range tuples {
		kb, err := appendKeyValues(nil, rel, t)
		if err != nil {
			return 0, err
		}
		k := string(kb)
		if i, ok := index[k]; ok {
			uniq[i] = t
			continue
		}
		index[k] = len(uniq)
		uniq = append(uniq, t)
	}
	changes := make([]plan.Change, len(uniq))
	for {
		var olds [][]types.Value
		var guard *store.Guard
		if cond != nil {
			// One tuple (plan.Insert sees to it), locked: decide on it,
			// read where the guard reads it, in one read.
			stored, g, ok, err := e.readGuarded(ctx, rel, uniq[0])
			if err != nil {
				return 0, err
			}
			if ok {
				olds, guard = [][]types.Value{stored}, g
			}
		}
		if olds == nil {
			var err error
			if olds, err = e.lookup(ctx, rel, uniq); err != nil {
				return 0, err
			}
		}
		if cond != nil {
			out.Current = olds[0]
			if out.Applied = cond.Holds(rel, olds[0]); !out.Applied {
				return 0, nil
			}
		}
		for i, t := range uniq {
			changes[i] = plan.Change{Old: olds[i], New: t, Expires: sc.expires}
		}
		if applied, err := e.apply(ctx, sc, rel, changes, guard); err != nil || applied {
			return len(uniq), err
		}
	}
}

// update runs an UPDATE or DELETE with changes computed from tuples read
// under their locks: the tuples the read finds are locked, then read
// again, until the read finds none unlocked; the keys the WHERE fixes are
// locked before the first read. The changes are computed from the last
// read and applied before the locks go.
func (e *Engine) update(ctx context.Context, w *plan.Write, out *Outcome) (int, error) {
	p, rel := w.Read, w.Relation
	expires, err := expiresAt(ctx, e.st, w.TTL)
	if err != nil {
		return 0, err
	}
	var want []TupleKey
	wanted := map[string]bool{}
	for _, kv := range w.Keys {
		var b []byte
		for i, k := range rel.KeyIdx {
			var err error
			if b, err = keyenc.AppendOrdered(b, rel.Attrs[k].Type, kv[i], false); err != nil {
				return 0, err
			}
		}
		if !wanted[string(b)] {
			wanted[string(b)] = true
			want = append(want, TupleKey{Rel: rel.Name, Key: string(b)})
		}
	}
	var held Held
	if len(want) > 0 {
		held = e.locks.Lock(want)
	}
	defer func() { e.locks.Unlock(held) }()
	for attempt := 0; ; attempt++ {
		epoch := e.locks.Epoch()
		var olds [][]types.Value
		var guard *store.Guard
		if w.Cond != nil && byKeyRow(p, rel) {
			// The WHERE is the key alone, read from the row the guard
			// checks: read it once, for both.
			key := make([]types.Value, len(rel.Attrs))
			for i, k := range rel.KeyIdx {
				key[k] = w.Keys[0][i]
			}
			stored, g, ok, err := e.readGuarded(ctx, rel, key)
			if err != nil {
				return 0, err
			}
			if ok {
				guard = g
				if stored != nil {
					olds = [][]types.Value{stored}
				}
			}
		}
		var missing []TupleKey
		var key []byte
		var err error
		if guard == nil {
			err = e.Query(ctx, p, SinkFunc(func(d []types.Datum) bool {
				olds = append(olds, box(make([]types.Value, 0, len(d)), d))
				var err error
				if key, err = appendKeyID(key[:0], rel, d); err == nil && !wanted[string(key)] && !e.locks.Full(held) {
					wanted[string(key)] = true
					missing = append(missing, TupleKey{Rel: rel.Name, Key: string(key)})
				}
				return true
			}))
		}
		if err != nil {
			return 0, err
		}
		if len(missing) > 0 {
			// Lock what the read found, then read again if another writer
			// may have changed those tuples before they were locked.
			reread := true
			switch ok := false; {
			case len(held) == 0 && attempt == 0:
				held = e.locks.Lock(missing) // nothing held: waiting cannot deadlock
				reread = !e.locks.Unchanged(epoch, missing)
			case attempt < 3:
				if held, ok = e.locks.TryLock(held, missing); ok {
					reread = !e.locks.Unchanged(epoch, missing)
					break
				}
				fallthrough
			default:
				e.locks.Unlock(held)
				held = e.locks.All()
			}
			if reread {
				continue
			}
		}
		if w.Cond != nil {
			// The WHERE names one tuple (plan.Write.condition sees to it),
			// locked before the read: decide on it.
			out.Current = nil
			if len(olds) > 0 {
				out.Current = olds[0]
			}
			if out.Applied = w.Cond.Holds(rel, out.Current); !out.Applied {
				return 0, nil
			}
			if len(w.Keys) == 1 && guard == nil {
				key := make([]types.Value, len(rel.Attrs))
				for i, k := range rel.KeyIdx {
					key[k] = w.Keys[0][i]
				}
				same := false
				if guard, same, err = e.guardTuple(ctx, rel, key, out.Current); err != nil {
					return 0, err
				} else if !same {
					continue // another process changed it: decide again
				}
			}
		}
		changes := make([]plan.Change, len(olds), len(olds)+len(w.Partitions))
		assigned := w.Assigned()
		for i, t := range olds {
			changes[i] = plan.Change{Old: t, New: w.New(t), Assigned: assigned, Expires: expires}
		}
		for _, part := range w.Partitions {
			changes = append(changes, plan.Change{Partition: part})
		}
		sc := e.getScratch()
		applied, err := e.apply(ctx, sc, rel, changes, guard)
		e.putScratch(sc)
		if err != nil || applied {
			return len(olds), err
		}
	}
}

// byKeyRow reports whether read plan p reads exactly the one tuple its
// key names from the row a conditional write's guard checks: one point
// lookup of one key in rel's layout addressed by key, with no filter
// after it (so the WHERE is the key's equalities alone).
func byKeyRow(p *plan.Plan, rel *catalog.Relation) bool {
	x := rel.KeyIndex()
	if x == nil || p.Residual != nil || len(p.Accesses) != 1 {
		return false
	}
	a := p.Accesses[0]
	return a.Layout == x.Layout() && a.Kind == plan.PointLookup && a.Complete && a.NumKeys() == 1
}

// apply writes changes in one batch; with a guard, only if it holds when
// the batch would apply (applied false: it did not, nothing is written).
func (e *Engine) apply(ctx context.Context, sc *writeScratch, rel *catalog.Relation, changes []plan.Change, guard *store.Guard) (applied bool, err error) {
	if len(changes) == 0 {
		return true, nil
	}
	muts, err := plan.AppendMutations(sc.muts[:0], &sc.arena, rel, changes)
	sc.muts = muts
	if err != nil {
		return false, err
	}
	if err := e.ensureTables(ctx, rel, muts); err != nil {
		return false, err
	}
	if guard != nil {
		applied, supported, err := store.ApplyGuards(ctx, e.st, []store.Guard{*guard}, muts)
		if err != nil {
			return false, fmt.Errorf("writing %s: %w", rel.Name, err)
		}
		if supported {
			return applied, nil
		}
	}
	if err := e.st.Apply(ctx, muts); err != nil {
		return false, fmt.Errorf("writing %s: %w", rel.Name, err)
	}
	return true, nil
}

// guardTuple reads the row holding the tuple of rel with t's key in a
// layout addressed by key, and returns a guard that holds while that row
// is unchanged — for a conditional write decided on cur, so that, on a
// store other processes write too (store.Guarded), it applies only if no
// one changed the tuple since. same is false when the row no longer holds
// cur (the tuple changed since cur was read: decide again). The guard is
// nil, and same true, when the store has no guarded writes or no layout
// of rel is addressed by its key (then the tuple locks of this process
// are all there is).
func (e *Engine) guardTuple(ctx context.Context, rel *catalog.Relation, t, cur []types.Value) (guard *store.Guard, same bool, err error) {
	stored, guard, ok, err := e.readGuarded(ctx, rel, t)
	if err != nil || !ok {
		return nil, err == nil, err
	}
	if !sameTuple(stored, cur) {
		return nil, false, nil
	}
	return guard, true, nil
}

// readGuarded reads the tuple of rel with t's key (nil: none) from the row
// holding it in a layout addressed by key, with a guard that holds while
// that row is unchanged (see guardTuple). ok is false, and nothing read,
// when the store has no guarded writes or no layout of rel is addressed by
// its key.
func (e *Engine) readGuarded(ctx context.Context, rel *catalog.Relation, t []types.Value) (stored []types.Value, guard *store.Guard, ok bool, err error) {
	if _, ok := e.st.(store.Guarded); !ok {
		return nil, nil, false, nil
	}
	x := rel.KeyIndex()
	if x == nil {
		return nil, nil, false, nil
	}
	l := x.Layout()
	table, err := l.TableOf(t)
	if err != nil {
		return nil, nil, false, err
	}
	key, err := l.RowKey(t)
	if err != nil {
		return nil, nil, false, err
	}
	row, found, err := e.st.ReadRow(ctx, table, key)
	if err != nil && !isNoTable(err) {
		return nil, nil, false, err
	}
	want, err := appendKeyValues(nil, rel, t)
	if err != nil {
		return nil, nil, false, err
	}
	if found {
		var dec layout.RowDecoder
		dec.Init(l, nil)
		if err := dec.Decode(table, row, func(tu []types.Value) bool {
			if k, err := appendKeyValues(nil, rel, tu); err == nil && bytes.Equal(k, want) {
				stored = slices.Clone(tu)
				return false
			}
			return true
		}); err != nil {
			return nil, nil, false, err
		}
	}
	if stored != nil {
		if err := e.fillStatics(ctx, l, table, [][]types.Value{stored}); err != nil {
			return nil, nil, false, err
		}
	}
	snapshot := row.Cells // ReadRow's row is the caller's
	return stored, &store.Guard{Table: table, Row: key, Holds: func(cells []store.Cell) bool { return store.SameCells(cells, snapshot) }}, true, nil
}

// sameTuple reports whether a and b are the same tuple, or both none.
func sameTuple(a, b []types.Value) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || a[i] != nil && types.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// getScratch returns a scratch to encode one batch in. The scratch is
// reused from batch to batch (stores do not retain what Apply is given):
// a bulk load allocates next to nothing per row.
func (e *Engine) getScratch() *writeScratch {
	if sc, ok := e.scratch.Get().(*writeScratch); ok {
		return sc
	}
	return new(writeScratch)
}

func (e *Engine) putScratch(sc *writeScratch) {
	sc.reset()
	e.scratch.Put(sc)
}

// writeScratch is the memory a write encodes a batch in, kept between
// batches; one writer uses it at a time.
type writeScratch struct {
	expires int64 // the write's cells' expiry (USING TTL; 0: never)
	changes []plan.Change
	muts    []store.Mutation
	stripes []int
	key     []byte
	arena   layout.Arena
}

// scratchKeep bounds the mutations reset keeps room for.
const scratchKeep = 1 << 14

// reset forgets the batch: nothing it pointed to stays reachable.
func (sc *writeScratch) reset() {
	sc.expires = 0
	clear(sc.changes)
	clear(sc.muts)
	if cap(sc.muts) > scratchKeep {
		sc.changes, sc.muts, sc.stripes = nil, nil, nil
	}
	sc.changes, sc.muts, sc.stripes = sc.changes[:0], sc.muts[:0], sc.stripes[:0]
	sc.arena.Reset()
}

// ensureTables creates the tables of layouts whose TABLE depends on
// attributes before the first write to them.
func (e *Engine) ensureTables(ctx context.Context, rel *catalog.Relation, muts []store.Mutation) error {
	dynamic := false
	for _, x := range rel.Indexes {
		if x.Layout().StaticTable() == "" {
			dynamic = true
		}
	}
	if !dynamic {
		return nil
	}
	fams := map[string]map[string]bool{}
	for _, m := range muts {
		if fams[m.Table] == nil {
			fams[m.Table] = map[string]bool{}
		}
		if m.Family != "" {
			fams[m.Table][m.Family] = true
		}
	}
	for t, fs := range fams {
		spec := store.TableSpec{Name: t}
		for f := range fs {
			spec.Families = append(spec.Families, f)
		}
		if err := e.st.CreateTable(ctx, spec); err != nil {
			return err
		}
	}
	return nil
}

// lookup reads the current tuples with the keys of ts (nil where absent),
// in one store round trip per table of a key-addressed layout.
func (e *Engine) lookup(ctx context.Context, rel *catalog.Relation, ts [][]types.Value) ([][]types.Value, error) {
	var l *layout.Layout
	if x := rel.KeyIndex(); x != nil {
		l = x.Layout()
	}
	out := make([][]types.Value, len(ts))
	want := map[string]int{}
	for i, t := range ts {
		k, err := appendKeyValues(nil, rel, t)
		if err != nil {
			return nil, err
		}
		want[string(k)] = i
	}
	var slab types.Slab[types.Value]
	collect := func(t []types.Value) bool {
		k, err := appendKeyValues(nil, rel, t)
		if err == nil {
			if i, ok := want[string(k)]; ok {
				out[i] = slab.Copy(t)
			}
		}
		return true
	}
	if l == nil {
		// Every layout is addressed by non-key attributes: find the old
		// tuples with a planned read on their keys.
		return out, e.lookupByPlan(ctx, rel, ts, collect)
	}
	var dec layout.RowDecoder
	dec.Init(l, nil)
	byTable := map[string][][]byte{}
	for _, t := range ts {
		table, err := l.TableOf(t)
		if err != nil {
			return nil, err
		}
		row, err := l.RowKey(t)
		if err != nil {
			return nil, err
		}
		byTable[table] = append(byTable[table], row)
	}
	for table, keys := range byTable {
		err := e.st.ReadRows(ctx, table, store.RowSet{Keys: keys}, store.ReadOptions{}, func(row store.Row) bool {
			return dec.Decode(table, row, collect) == nil
		})
		if err != nil && !isNoTable(err) {
			return nil, err
		}
	}
	if l.HasStatic() {
		var found [][]types.Value
		for _, t := range out {
			if t != nil {
				found = append(found, t)
			}
		}
		if err := e.fillStatics(ctx, l, l.StaticTable(), found); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fillStatics sets the static columns of tuples, read from rows of l (in
// table), from their partitions' rows, in one read.
func (e *Engine) fillStatics(ctx context.Context, l *layout.Layout, table string, tuples [][]types.Value) error {
	if !l.HasStatic() || len(tuples) == 0 {
		return nil
	}
	var keys [][]byte
	for _, t := range tuples {
		k, err := l.AppendPartitionKey(nil, t)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	parts := map[string][]types.Value{}
	var derr error
	err := e.st.ReadRows(ctx, table, store.RowSet{Keys: keys}, store.ReadOptions{}, func(row store.Row) bool {
		if !l.IsPartitionRow(row) {
			return true
		}
		vals := make([]types.Value, len(l.Attrs))
		if derr = l.DecodePartitionRow(row, vals); derr != nil {
			return false
		}
		parts[string(row.Key)] = vals
		return true
	})
	if err != nil && !isNoTable(err) {
		return err
	}
	if derr != nil {
		return derr
	}
	for i, t := range tuples {
		p := parts[string(keys[i])]
		for _, a := range l.Static {
			t[a] = nil
			if p != nil {
				t[a] = p[a]
			}
		}
	}
	return nil
}

func isNoTable(err error) bool { return errors.Is(err, store.ErrNoTable) }

// lookupByPlan finds tuples by key through the planner, in chunks small
// enough to stay within its DNF bound.
func (e *Engine) lookupByPlan(ctx context.Context, rel *catalog.Relation, ts [][]types.Value, collect func([]types.Value) bool) error {
	const chunk = 128
	for start := 0; start < len(ts); start += chunk {
		var where lang.Expr
		for _, t := range ts[start:min(start+chunk, len(ts))] {
			var conj lang.Expr
			for _, k := range rel.KeyIdx {
				eq := &lang.Binary{Op: lang.OpEq, L: &lang.ColumnRef{Name: rel.Attrs[k].Name}, R: &lang.Literal{Value: t[k]}}
				if conj == nil {
					conj = eq
				} else {
					conj = &lang.Binary{Op: lang.OpAnd, L: conj, R: eq}
				}
			}
			if where == nil {
				where = conj
			} else {
				where = &lang.Binary{Op: lang.OpOr, L: where, R: conj}
			}
		}
		p, err := plan.Reads(where, rel, nil)
		if err != nil {
			return err
		}
		var t []types.Value
		if err := e.Query(ctx, p, SinkFunc(func(d []types.Datum) bool { t = box(t[:0], d); return collect(t) })); err != nil {
			return err
		}
	}
	return nil
}

// expiresAt is the expiry, in Unix microseconds, of the cells a write
// USING TTL ttl puts now (store.Now: a context may fix the instant), or 0
// without a TTL. A store that keeps no expiry refuses the write.
func expiresAt(ctx context.Context, st store.Store, ttl int64) (int64, error) {
	if ttl == 0 {
		return 0, nil
	}
	if !st.Capabilities().Expiry {
		return 0, fmt.Errorf("USING TTL: %w", store.ErrNoExpiry)
	}
	return store.Now(ctx).UnixMicro() + ttl*1e6, nil
}
