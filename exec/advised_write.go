package exec

import (
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

// upkeepProg is a plan.Upkeep compiled against its table.
type upkeepProg struct {
	u        *plan.Upkeep
	t        *table
	supports []*supportProg
	replace  *supportProg
	// setAt lists the table attributes at the written node the write
	// assigns, with the index in Write.Set of the last assignment of each;
	// assigns lists every one of them, in statement order (a collection's
	// elements may be changed by several).
	setAt   map[int]int
	assigns map[int][]int
}

// supportProg is a support query's program and where its slots land in the
// index's row.
type supportProg struct {
	sp       *plan.Support
	prog     *program
	attrSlot []int // per table attribute: the support slot holding it, or -1
	single   bool  // the support reads one entity: an empty answer means it does not exist
}

func (e *Engine) compileUpkeep(w *catalog.Write, u *plan.Upkeep) (*upkeepProg, error) {
	t := e.tables[u.Index]
	up := &upkeepProg{u: u, t: t, setAt: map[int]int{}, assigns: map[int][]int{}}
	for i, a := range t.attrs {
		if a.Node != u.Node {
			continue
		}
		for k, as := range w.Set {
			if as.Field == a.Field {
				up.setAt[i] = k
				up.assigns[i] = append(up.assigns[i], k)
			}
		}
	}
	comp := func(sp *plan.Support) (*supportProg, error) { return e.compileSupport(t, sp) }
	for _, sp := range u.Supports {
		s, err := comp(sp)
		if err != nil {
			return nil, err
		}
		up.supports = append(up.supports, s)
	}
	if u.Replace != nil {
		s, err := comp(u.Replace)
		if err != nil {
			return nil, err
		}
		up.replace = s
	}
	return up, nil
}

// compileSupport compiles a support query of t's index (its plan set).
func (e *Engine) compileSupport(t *table, sp *plan.Support) (*supportProg, error) {
	prog, err := e.compile(sp.Plan)
	if err != nil {
		return nil, err
	}
	s := &supportProg{sp: sp, prog: prog, attrSlot: make([]int, len(t.attrs)), single: len(sp.Query.Graph.Nodes) == 1}
	for i := range s.attrSlot {
		s.attrSlot[i] = -1
	}
	for r, slot := range prog.slots {
		// The plan may be that of a wider support query covering sp's
		// (planner.Covers): its extra fields are not sp's to fill.
		if r.Field != sp.Query.Graph.Nodes[r.Node].Entity.ID() && slices.Contains(prog.q.Select, r) && !slices.Contains(sp.Query.Select, r) {
			continue
		}
		if i, ok := t.pos[catalog.Attr{Node: sp.From[r.Node], Field: r.Field}]; ok {
			s.attrSlot[i] = slot
		}
	}
	return s, nil
}

// entityKey identifies one entity tuple for locking.
type entityKey = TupleKey

func keyOf(e *catalog.Entity, v types.Value) (entityKey, error) {
	b, err := keyenc.AppendOrdered(nil, e.ID().Type, v, true)
	return entityKey{Rel: e.Name, Key: string(b)}, err
}

// writeRun is one attempt at a write: its mutations and the entities it
// read or wrote.
type writeRun struct {
	muts    []store.Mutation
	touched map[entityKey]bool
	written map[entityKey]bool
	answers map[supportKey][]tuple
}

// supportKey identifies one support query's answer within a write.
type supportKey struct {
	plan *plan.Query
	args string
}

func (r *writeRun) touch(e *catalog.Entity, v types.Value) error {
	if v == nil {
		return nil
	}
	k, err := keyOf(e, v)
	if err == nil {
		r.touched[k] = true
	}
	return err
}

// Exec runs a prepared write and returns the number of entity tuples it
// inserted, changed or deleted (for CONNECT and DISCONNECT, 1).
func (s *Stmt) Exec(ctx context.Context, args ...types.Value) (int, error) {
	o, err := s.ExecIf(ctx, args...)
	return o.Written, err
}

// ExecIf runs a write as Exec does and reports its outcome: a conditional
// write (catalog.Write.Cond) reads the tuple it names while that tuple is
// locked, and writes only if its condition holds; an unconditional one
// always applies. When a conditional write does not apply, Current holds
// the values of CondFields as stored (NULL for a field the tuple lacks; nil
// when no tuple is stored).
func (s *Stmt) ExecIf(ctx context.Context, args ...types.Value) (Outcome, error) {
	if s.Write == nil {
		return Outcome{}, errors.New("not a write: use Query")
	}
	if err := s.checkArgs(args); err != nil {
		return Outcome{}, err
	}
	one := [1]writeItem{{s, args}}
	items := one[:]
	if s.unionWrites != nil {
		// A slice of its own: appending to one's would move one to the
		// heap on every call.
		items = make([]writeItem, 0, len(s.unionWrites))
		for _, ws := range s.unionWrites {
			items = append(items, writeItem{ws, args})
		}
	}
	o, err := s.e.exec(ctx, items)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", s.Text, err)
	}
	return o, nil
}

// CondFields lists the fields whose stored values a conditional write
// reports when it does not apply, as Cassandra's lightweight transactions
// do: for IF NOT EXISTS every field the entity's column family holds (the
// one the condition is read from), in the entity's order; for IF a = ? …
// each field the condition compares, in the order it first appears; none
// for IF EXISTS or an unconditional write.
func (s *Stmt) CondFields() []*catalog.Field { return s.condFields }

// writeItem is one write of a batch: a prepared statement and its
// arguments.
type writeItem struct {
	s    *Stmt
	args []types.Value
}

// ExecBatch runs a prepared INSERT once per argument list, atomically: one
// store batch holds every tuple's writes to every index, or none does. The
// tuples must have distinct keys. It returns the number of tuples inserted.
func (s *Stmt) ExecBatch(ctx context.Context, argLists [][]types.Value) (int, error) {
	if s.Write == nil || s.Write.Kind != catalog.Insert {
		return 0, errors.New("ExecBatch runs INSERTs only")
	}
	for _, args := range argLists {
		if err := s.checkArgs(args); err != nil {
			return 0, err
		}
	}
	items := make([]writeItem, len(argLists))
	for i, args := range argLists {
		items[i] = writeItem{s, args}
	}
	o, err := s.e.exec(ctx, items)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.Text, err)
	}
	return o.Written, nil
}

// boundWrite is one execution of a write: its arguments and the values it
// assigns.
type boundWrite struct {
	args, set []types.Value
	// ops are the assignments' operations, with a map's element set or
	// deleted made an entry added or a key removed, and DELETE of a
	// column a NULL assigned; keys are a list's positions (l[i] = v,
	// DELETE l[i]), until readLists makes each list changed by position
	// or value the list replaced whole.
	ops  []lang.AssignOp
	keys []types.Value
	// expires is the expiry of the cells the write puts (USING TTL; 0:
	// never).
	expires int64
}

// bind evaluates the values a write assigns and adds the entities known
// before reading (its key, its links, the keys its predicates fix) to
// static.
func (e *Engine) bind(w *catalog.Write, args []types.Value, static *writeRun) (boundWrite, error) {
	set := make([]types.Value, len(w.Set))
	ops := make([]lang.AssignOp, len(w.Set))
	var keys []types.Value
	for i, as := range w.Set {
		v, op, k, err := bindAssign(as, args)
		if err != nil {
			return boundWrite{}, err
		}
		if as.Field.Key && v == nil {
			return boundWrite{}, fmt.Errorf("%s: the key cannot be NULL", as.Field)
		}
		set[i], ops[i] = v, op
		if k != nil {
			if keys == nil {
				keys = make([]types.Value, len(w.Set))
			}
			keys[i] = k
		}
	}
	for _, l := range w.Links {
		v, err := exprValue(l.Value, args)
		if err != nil {
			return boundWrite{}, err
		}
		if err := static.touch(l.Nav.To, v); err != nil {
			return boundWrite{}, err
		}
	}
	for i, as := range w.Set {
		if as.Field.Key {
			if err := static.touch(w.Entity, set[i]); err != nil {
				return boundWrite{}, err
			}
		}
	}
	for _, p := range w.Preds {
		if p.Op == catalog.Eq && p.Ref.Field.Key {
			v, err := exprValue(p.Value, args)
			if err != nil {
				return boundWrite{}, err
			}
			if err := static.touch(w.Entity, v); err != nil {
				return boundWrite{}, err
			}
		}
	}
	if w.Target != nil {
		v, err := exprValue(w.Target, args)
		if err != nil {
			return boundWrite{}, err
		}
		if err := static.touch(w.Nav.To, v); err != nil {
			return boundWrite{}, err
		}
	}
	return boundWrite{args: args, set: set, ops: ops, keys: keys}, nil
}

// bindAssign evaluates an assignment's value: for AssignValue, AssignAdd,
// AssignPrepend and AssignRemove the operand, of as.OperandType(); a map's
// element set (m[k] = v) becomes the entry {k: v} added, or with v NULL
// the key removed, as does DELETE m[k]; DELETE c assigns NULL. A list's
// element set (l[i] = v) or deleted (DELETE l[i], or l[i] = NULL) keeps
// its operation, AssignElement or AssignDelete, with its position i
// (readLists applies it).
func bindAssign(as catalog.Assign, args []types.Value) (v types.Value, op lang.AssignOp, key types.Value, err error) {
	if as.Value != nil {
		if v, err = exprValue(as.Value, args); err != nil {
			return nil, 0, nil, err
		}
		if v != nil {
			if v, err = types.Coerce(v, as.OperandType()); err != nil {
				return nil, 0, nil, fmt.Errorf("%s = %s: %v", as.Field.Name, types.Format(v), err)
			}
		}
	}
	if as.Key == nil {
		if as.Op == lang.AssignDelete {
			return nil, lang.AssignValue, nil, nil
		}
		return v, as.Op, nil, nil
	}
	k, err := exprValue(as.Key, args)
	if err != nil {
		return nil, 0, nil, err
	}
	if k != nil {
		if k, err = types.Coerce(k, as.KeyType()); err != nil {
			return nil, 0, nil, fmt.Errorf("%s[%s]: %v", as.Field.Name, types.Format(k), err)
		}
	}
	isList := as.Field.Type.Kind() == types.ListKind
	switch {
	case k == nil && isList:
		return nil, 0, nil, fmt.Errorf("%s[NULL]: a list's position cannot be NULL", as.Field.Name)
	case k == nil:
		return nil, 0, nil, fmt.Errorf("%s[NULL]: a map's key cannot be NULL", as.Field.Name)
	case isList && as.Op == lang.AssignElement && v != nil:
		return v, lang.AssignElement, k, nil
	case isList:
		return nil, lang.AssignDelete, k, nil
	case as.Op == lang.AssignElement && v != nil:
		return types.Map{{Key: k, Val: v}}, lang.AssignAdd, nil, nil
	}
	return types.Set{k}, lang.AssignRemove, nil, nil
}

// readLists returns b with every list w changes by position or value
// (catalog.Assign.ReadsList) replaced whole: each of its assignments,
// in statement order, applied to the stored list (current, a value per
// field in fields; nil: empty), as Cassandra applies them after reading
// the list. A position past the list's end fails the write, as in
// Cassandra.
func readLists(w *catalog.Write, b boundWrite, fields []*catalog.Field, current []types.Value) (boundWrite, error) {
	out := b
	out.set, out.ops = slices.Clone(b.set), slices.Clone(b.ops)
	for fi, f := range fields {
		reads := false
		for _, as := range w.Set {
			reads = reads || as.Field == f && as.ReadsList()
		}
		if !reads {
			continue
		}
		var l types.List
		if current[fi] != nil {
			l = slices.Clone(current[fi].(types.List))
		}
		var ks []int
		for k, as := range w.Set {
			if as.Field != f {
				continue
			}
			ks = append(ks, k)
			var err error
			if l, err = applyListOp(f, l, b.ops[k], b.set[k], b.keys, k); err != nil {
				return boundWrite{}, err
			}
		}
		var v types.Value
		if len(l) > 0 {
			v = l
		}
		for _, k := range ks {
			out.set[k], out.ops[k] = v, lang.AssignValue
		}
	}
	return out, nil
}

// applyListOp applies one bound operation (op, operand v, position
// keys[k]) to list l of field f.
func applyListOp(f *catalog.Field, l types.List, op lang.AssignOp, v types.Value, keys []types.Value, k int) (types.List, error) {
	switch op {
	case lang.AssignValue:
		if v == nil {
			return nil, nil
		}
		return slices.Clone(v.(types.List)), nil
	case lang.AssignAdd:
		if v == nil {
			return l, nil
		}
		return append(l, v.(types.List)...), nil
	case lang.AssignPrepend:
		if v == nil {
			return l, nil
		}
		return append(slices.Clone(v.(types.List)), l...), nil
	case lang.AssignRemove:
		if v == nil {
			return l, nil
		}
		drop := v.(types.List)
		return slices.DeleteFunc(l, func(e types.Value) bool {
			return slices.ContainsFunc(drop, func(d types.Value) bool { return types.Compare(d, e) == 0 })
		}), nil
	case lang.AssignElement, lang.AssignDelete:
		i := keys[k].(int64)
		if i < 0 || i >= int64(len(l)) {
			return nil, fmt.Errorf("%s[%d]: list index out of bound, the list has %d elements", f.Name, i, len(l))
		}
		if op == lang.AssignDelete {
			return slices.Delete(l, int(i), int(i)+1), nil
		}
		l[i] = v
		return l, nil
	}
	return nil, fmt.Errorf("%s: operation %d on a list", f.Name, op)
}

// exec runs write s once per argument list, all in one store batch.
//
// The items are the tuples of one INSERT, or the alternatives of one UPDATE
// or DELETE (one statement each, the same kind and assignments): all of
// them read the store as it was before the batch, so alternatives that
// match one tuple write it alike, and it counts once.
func (e *Engine) exec(ctx context.Context, items []writeItem) (Outcome, error) {
	n, o, err := e.execItems(ctx, items)
	o.Written = n
	return o, err
}

// execItems is exec; o's Written is left to exec.
func (e *Engine) execItems(ctx context.Context, items []writeItem) (n int, o Outcome, err error) {
	w := items[0].s.Write
	// The entities known before reading: locked first.
	want := map[entityKey]bool{}
	static := &writeRun{touched: want}
	bound := make([]boundWrite, len(items))
	keys := map[entityKey]int{}
	for i, it := range items {
		b, err := e.bind(it.s.Write, it.args, static)
		if err != nil {
			if len(items) > 1 && w.Kind == catalog.Insert {
				return 0, o, fmt.Errorf("tuple %d: %w", i+1, err)
			}
			return 0, o, err
		}
		if w.TTL != nil {
			v, err := exprValue(w.TTL, b.args)
			if err != nil {
				return 0, o, err
			}
			ttl, err := catalog.TTLSeconds(v)
			if err != nil {
				return 0, o, err
			}
			if b.expires, err = expiresAt(ctx, e.st, ttl); err != nil {
				return 0, o, err
			}
		}
		bound[i] = b
		if len(items) > 1 && w.Kind == catalog.Insert {
			for k, as := range w.Set {
				if !as.Field.Key {
					continue
				}
				id, err := keyOf(w.Entity, b.set[k])
				if err != nil {
					return 0, o, err
				}
				if j, dup := keys[id]; dup {
					return 0, o, fmt.Errorf("tuples %d and %d have the same key %s = %s", j+1, i+1, as.Field.Name, types.Format(b.set[k]))
				}
				keys[id] = i
			}
		}
	}
	// Lock what is known, read, and lock what the reads found; read again
	// until the reads find nothing unlocked, unless no writer of this
	// process held what they found since they began (Locks.Unchanged: the
	// usual case, where a second read would return the same). New
	// entities are locked without letting go of those held (a blocking lock out of stripe
	// order could deadlock, so they are only tried); when that fails, or
	// the reads keep finding more, the write takes every stripe, so that no
	// writer of this process can change what it reads: it always finishes.
	initial := make([]entityKey, 0, len(want))
	for k := range want {
		initial = append(initial, k)
	}
	held := e.locks.Lock(initial)
	defer func() { e.locks.Unlock(held) }()
	// The entities it connects to exist (they are locked: no writer of
	// this process deletes them meanwhile).
	if err := e.runChecks(ctx, items, bound); err != nil {
		return 0, o, err
	}
	// A conditional write (one item: see PrepareAST) decides on the tuple
	// it names, locked above, and applies only if the row it decided on is
	// unchanged (the guard): a writer of another process sharing the store
	// may have changed it since; then it decides again.
	orig := bound[0] // as bound: readLists rewrites it at each decision
decide:
	var guard *store.Guard
	if c := items[0].s.cond; c != nil {
		found, holds, current, g, err := c.holds(ctx, e.st, bound[0].args, w.CondPreds, items[0].s.readFields)
		if err != nil {
			return 0, o, err
		}
		switch w.Cond {
		case catalog.IfNotExists:
			holds = !found
		case catalog.IfExists, catalog.Unconditional:
			holds = found
		}
		if !holds {
			if w.Cond == catalog.Unconditional {
				return 0, Outcome{Applied: true}, nil // no tuple to change
			}
			o.Current = current[:min(len(current), len(items[0].s.condFields))]
			return 0, o, nil
		}
		guard = g
		if len(items[0].s.readFields) > len(items[0].s.condFields) {
			// Lists changed by position or value, from the values read.
			if bound[0], err = readLists(w, orig, items[0].s.readFields, current); err != nil {
				return 0, o, err
			}
		}
	}
	for attempt := 0; ; attempt++ {
		epoch := e.locks.Epoch()
		var muts []store.Mutation
		var missing []entityKey
		written := map[entityKey]bool{}
		for i, b := range bound {
			run, err := e.plan(ctx, items[i].s, b)
			if err != nil {
				if len(bound) > 1 && w.Kind == catalog.Insert {
					return 0, o, fmt.Errorf("tuple %d: %w", i+1, err)
				}
				return 0, o, err
			}
			plan.Expire(run.muts, b.expires) // USING TTL, where checkTTL allows it
			muts = append(muts, run.muts...)
			for k := range run.written {
				written[k] = true
			}
			if !e.locks.Full(held) {
				for k := range run.touched {
					if !want[k] {
						want[k] = true
						missing = append(missing, k)
					}
				}
			}
		}
		if len(missing) > 0 {
			var ok bool
			if held, ok = e.locks.TryLock(held, missing); !ok || attempt >= 3 {
				e.locks.Unlock(held)
				held = e.locks.All()
				continue
			}
			if !e.locks.Unchanged(epoch, missing) {
				continue // a writer had some of them: read again
			}
			// Locked, and no writer of this process had them since the
			// reads began: what they read stands (one read, not two).
		}
		if len(muts) > 0 {
			muts = e.marked(muts)
			applied, supported := false, false
			if guard != nil {
				if applied, supported, err = store.ApplyGuards(ctx, e.st, []store.Guard{*guard}, muts); err != nil {
					return 0, o, err
				}
			}
			if supported && !applied {
				goto decide
			}
			if !supported {
				if err := e.st.Apply(ctx, muts); err != nil {
					return 0, o, err
				}
			}
		}
		if w.Kind == catalog.Insert || w.Kind == catalog.Connect || w.Kind == catalog.Disconnect {
			return len(bound), Outcome{Applied: true}, nil
		}
		return len(written), Outcome{Applied: true}, nil
	}
}

// plan runs every support query and computes the write's mutations.
func (e *Engine) plan(ctx context.Context, s *Stmt, b boundWrite) (*writeRun, error) {
	run := &writeRun{touched: map[entityKey]bool{}, written: map[entityKey]bool{}, answers: map[supportKey][]tuple{}}
	for _, up := range s.ups {
		if err := up.apply(ctx, e.st, s.Write, b, run); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// answer runs a support query and returns its rows as partial index rows.
func (sp *supportProg) answer(ctx context.Context, st store.Store, t *table, args []types.Value, run *writeRun) ([][]types.Value, error) {
	// Equal support queries share one plan: run it once per write, as the
	// advisor costs it, however many upkeeps need its answer.
	k := supportKey{sp.prog.plan, fmt.Sprint(args)}
	rows, done := run.answers[k]
	if !done {
		// A run of its own: the rows stay in run.answers.
		r := sp.prog.newRun()
		if _, err := bindPreds(r.vals, sp.sp.Query, args); err != nil {
			return nil, err
		}
		var err error
		if rows, err = sp.prog.run(ctx, st, r); err != nil {
			return nil, err
		}
		run.answers[k] = rows
	}
	// A run without touched locks nothing (a backfill's, a verify's).
	locked := sp.sp.Query.Graph.Nodes
	if run.touched == nil {
		locked = nil
	}
	out := make([][]types.Value, len(rows))
	for i, r := range rows {
		row := make([]types.Value, len(t.attrs))
		for j, slot := range sp.attrSlot {
			if slot >= 0 {
				row[j] = r[slot].Value()
			}
		}
		// Every entity the support read is locked before the write lands.
		for n, nd := range locked {
			if err := run.touch(nd.Entity, r[sp.prog.slots[catalog.FieldRef{Node: n, Field: nd.Entity.ID()}]].Value()); err != nil {
				return nil, err
			}
		}
		out[i] = row
	}
	return out, nil
}

// supportFor returns the support rooted at index node n, or nil.
func (up *upkeepProg) supportFor(n int) *supportProg {
	for _, s := range up.supports {
		if s.sp.From[0] == n {
			return s
		}
	}
	return nil
}

// side returns the partial rows of the part of the graph rooted at index
// node n, whose entity has key k: the support's answer, or k alone.
func (up *upkeepProg) side(ctx context.Context, st store.Store, n int, k types.Value, run *writeRun) ([][]types.Value, error) {
	t := up.t
	keyAt := t.pos[catalog.Attr{Node: n, Field: t.x.Graph.Nodes[n].Entity.ID()}]
	var rows [][]types.Value
	if sp := up.supportFor(n); sp != nil {
		var err error
		if rows, err = sp.answer(ctx, st, t, []types.Value{k}, run); err != nil {
			return nil, err
		}
		if len(rows) == 0 && sp.single {
			ent := t.x.Graph.Nodes[n].Entity
			return nil, fmt.Errorf("no %s has %s = %s", ent.Name, ent.ID().Name, types.Format(k))
		}
	} else {
		rows = [][]types.Value{make([]types.Value, len(t.attrs))}
		if err := run.touch(t.x.Graph.Nodes[n].Entity, k); err != nil {
			return nil, err
		}
	}
	for _, r := range rows {
		r[keyAt] = k
	}
	return rows, nil
}

// product combines partial rows of disjoint parts of the graph.
func product(sides [][][]types.Value, width int) [][]types.Value {
	out := [][]types.Value{make([]types.Value, width)}
	for _, side := range sides {
		var next [][]types.Value
		for _, o := range out {
			for _, r := range side {
				c := append([]types.Value(nil), o...)
				for i, v := range r {
					if v != nil {
						c[i] = v
					}
				}
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

func (up *upkeepProg) apply(ctx context.Context, st store.Store, w *catalog.Write, b boundWrite, run *writeRun) error {
	t, u := up.t, up.u
	args, set := b.args, b.set
	g := t.x.Graph
	if u.Static {
		return up.applyStatic(ctx, st, w, args, set, run)
	}
	var err error
	switch u.Kind {
	case catalog.Insert:
		var sides [][][]types.Value
		self := make([]types.Value, len(t.attrs))
		for i, k := range up.setAt {
			self[i] = set[k]
		}
		sides = append(sides, [][]types.Value{self})
		for _, nb := range g.Neighbors(u.Node) {
			var link types.Value
			for _, l := range w.Links {
				if l.Nav == nb.Nav {
					if link, err = exprValue(l.Value, args); err != nil {
						return err
					}
					if link != nil {
						if link, err = types.Coerce(link, nb.Nav.To.ID().Type); err != nil {
							return fmt.Errorf("%s: %v", l.Nav.Name, err)
						}
					}
				}
			}
			if link == nil {
				return nil // not connected: the new tuple joins nothing here
			}
			rows, err := up.side(ctx, st, nb.To, link, run)
			if err != nil {
				return fmt.Errorf("%s(%s): %w", nb.Nav.Name, types.Format(link), err)
			}
			sides = append(sides, rows)
		}
		for _, r := range product(sides, len(t.attrs)) {
			if run.muts, err = t.put(run.muts, r); err != nil {
				return err
			}
		}
	case catalog.Update, catalog.Delete:
		rows, err := up.target(ctx, st, w, args, run)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := run.touchWritten(g.Nodes[u.Node].Entity, r[t.pos[catalog.Attr{Node: u.Node, Field: g.Nodes[u.Node].Entity.ID()}]]); err != nil {
				return err
			}
			if u.Kind == catalog.Delete {
				if run.muts, err = t.del(run.muts, r); err != nil {
					return err
				}
				continue
			}
			changed := make([]bool, len(t.attrs))
			if u.ChangesKey {
				if run.muts, err = t.del(run.muts, r); err != nil {
					return err
				}
			}
			for i, ks := range up.assigns {
				if !slices.Contains(t.l.Collections, i) {
					r[i] = set[ks[len(ks)-1]]
					changed[i] = true
					continue
				}
				// A collection stored one cell per element: each
				// operation's cells (a replacement's family deleted, its
				// elements put), whatever the collection holds, in
				// statement order (a later mutation of a cell wins).
				for _, k := range ks {
					puts, deletes, err := t.l.ElementCells(r, i, b.ops[k], set[k])
					if err != nil {
						return err
					}
					run.muts = layout.AppendMutations(run.muts, puts, deletes)
				}
			}
			if u.ChangesKey {
				run.muts, err = t.put(run.muts, r)
			} else {
				run.muts, err = t.setCells(run.muts, r, changed)
			}
			if err != nil {
				return err
			}
		}
	case catalog.Connect, catalog.Disconnect:
		k, err := exprValue(w.Preds[0].Value, args)
		if err != nil {
			return err
		}
		target, err := exprValue(w.Target, args)
		if err != nil {
			return err
		}
		if k, err = types.Coerce(k, w.Entity.ID().Type); err != nil {
			return err
		}
		if target, err = types.Coerce(target, w.Nav.To.ID().Type); err != nil {
			return err
		}
		if k == nil || target == nil {
			return errors.New("CONNECT and DISCONNECT need both keys")
		}
		if up.replace != nil {
			// The replaced partner belongs to the to-one side's tuple.
			v := k
			if w.Nav.Many {
				v = target
			}
			old, err := up.replace.answer(ctx, st, t, []types.Value{v}, run)
			if err != nil {
				return err
			}
			for _, r := range old {
				if run.muts, err = t.del(run.muts, r); err != nil {
					return err
				}
			}
		}
		a, err := up.side(ctx, st, u.Node, k, run)
		if err != nil {
			return err
		}
		b, err := up.side(ctx, st, u.Edge, target, run)
		if err != nil {
			return err
		}
		for _, r := range product([][][]types.Value{a, b}, len(t.attrs)) {
			if u.Kind == catalog.Connect {
				run.muts, err = t.put(run.muts, r)
			} else {
				run.muts, err = t.del(run.muts, r)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *writeRun) touchWritten(e *catalog.Entity, v types.Value) error {
	if v == nil {
		return nil
	}
	k, err := keyOf(e, v)
	if err == nil {
		r.touched[k] = true
		r.written[k] = true
	}
	return err
}

// target finds the rows an UPDATE or DELETE changes: its support's answer
// completed by the values the predicates fix, or the one row they fix.
func (up *upkeepProg) target(ctx context.Context, st store.Store, w *catalog.Write, args []types.Value, run *writeRun) ([][]types.Value, error) {
	t, u := up.t, up.u
	var rows [][]types.Value
	if len(up.supports) > 0 {
		var err error
		if rows, err = up.supports[0].answer(ctx, st, t, args, run); err != nil {
			return nil, err
		}
	} else {
		rows = [][]types.Value{make([]types.Value, len(t.attrs))}
	}
	for _, p := range w.Preds {
		if p.Op != catalog.Eq {
			continue
		}
		i, ok := t.pos[catalog.Attr{Node: u.Node, Field: p.Ref.Field}]
		if !ok {
			continue
		}
		v, err := exprValue(p.Value, args)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, nil
		}
		if v, err = types.Coerce(v, p.ValueType()); err != nil {
			return nil, fmt.Errorf("%s: %v", p.Ref.Field, err)
		}
		for _, r := range rows {
			if r[i] == nil {
				r[i] = v
			}
		}
	}
	return rows, nil
}

// applyStatic keeps the static columns of the root tuples a write inserts,
// changes or deletes, in their partition rows (plan.Upkeep.Static).
func (up *upkeepProg) applyStatic(ctx context.Context, st store.Store, w *catalog.Write, args, set []types.Value, run *writeRun) error {
	t, u := up.t, up.u
	if u.Kind == catalog.Insert {
		row := make([]types.Value, len(t.attrs))
		for i, k := range up.setAt {
			row[i] = set[k]
		}
		puts, deletes, err := t.l.StaticCells(row, nil)
		if err != nil {
			return err
		}
		run.muts = layout.AppendMutations(run.muts, puts, deletes)
		return nil
	}
	rows, err := up.target(ctx, st, w, args, run)
	if err != nil {
		return err
	}
	root := t.x.Graph.Nodes[0].Entity
	for _, r := range rows {
		if err := run.touchWritten(root, r[0]); err != nil {
			return err
		}
		if u.Kind == catalog.Delete {
			key, err := t.l.AppendPartitionKey(nil, r)
			if err != nil {
				return err
			}
			run.muts = append(run.muts, store.Mutation{Kind: store.DeleteRow, Table: t.name, Row: key})
			continue
		}
		changed := make([]bool, len(t.attrs))
		for i, k := range up.setAt {
			if t.l.Attrs[i].Static {
				r[i], changed[i] = set[k], true
			}
		}
		puts, deletes, err := t.l.StaticCells(r, changed)
		if err != nil {
			return err
		}
		run.muts = layout.AppendMutations(run.muts, puts, deletes)
	}
	return nil
}
