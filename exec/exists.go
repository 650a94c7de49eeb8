package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// existCheck makes a write fail when an entity it connects to does not
// exist, as load refuses a dangling foreign key. A support query that reads
// the entity already checks it (an empty answer is an error); a write
// whose upkeeps read nothing of it checks with one read of a column family
// of that entity alone, keyed by its key, or else of the partition row of
// a column family with static columns rooted at it. Without either the
// schema offers no way to tell, and the write goes unchecked.
type existCheck struct {
	what  string // the link's name, or the written entity's
	ent   *catalog.Entity
	value lang.Expr // the key, in terms of the write's arguments
	t     *table
}

// existChecks lists the checks write s needs beyond its support queries
// (planner.Checks, planner.ReadsLinked: the rule the advisor prices).
func (e *Engine) existChecks(s *Stmt) []existCheck {
	var out []existCheck
	for _, c := range planner.Checks(s.Write) {
		if slices.ContainsFunc(s.ups, func(up *upkeepProg) bool { return planner.ReadsLinked(up.u, c.Nav) }) {
			continue
		}
		ent := c.Entity
		t := e.entityTable(func(x *catalog.Index) bool { return x.KeyedBy(ent) })
		if t == nil {
			// A column family with static columns keeps a partition row
			// for every tuple of its root, first in the partition.
			t = e.entityTable(func(x *catalog.Index) bool { return planner.CanCheck(x, ent) })
		}
		if t != nil {
			what := ent.Name
			if c.Nav != nil {
				what = c.Nav.Name
			}
			out = append(out, existCheck{what: what, ent: ent, value: c.Value, t: t})
		}
	}
	return out
}

// entityTable returns a table whose index accept accepts
// (catalog.Index.KeyedBy, catalog.Write.CondSource), or nil. Of several,
// it prefers one with no clustering key (its row is the tuple's alone: a
// conditional write can guard it), then the first.
func (e *Engine) entityTable(accept func(*catalog.Index) bool) *table {
	var found *table
	for _, x := range e.schema.Indexes {
		// A partition with buckets is not one prefix to probe.
		if t := e.tables[x]; e.schema.Readable(x) && x.PartitionBuckets == 0 && accept(x) && (found == nil || found.nkey > 1 && t.nkey == 1) {
			found = t
		}
	}
	return found
}

// maxChecks bounds the existence checks one write runs at once.
const maxChecks = 16

// runChecks runs the existence checks of the items' tuples, at most
// maxChecks at once: each is a read of its own, and none depends on
// another, so a write connecting to two entities waits for one round trip
// instead of two. The error is the first tuple's (in order), as running
// them one after another would report.
func (e *Engine) runChecks(ctx context.Context, items []writeItem, bound []boundWrite) error {
	type job struct {
		tuple int
		c     existCheck
	}
	var jobs []job
	for i := range bound {
		for _, c := range items[i].s.checks {
			jobs = append(jobs, job{i, c})
		}
	}
	errs := make([]error, len(jobs))
	if len(jobs) == 1 {
		errs[0] = jobs[0].c.run(ctx, e.st, bound[0].args)
	} else if len(jobs) > 1 {
		var wg sync.WaitGroup
		sem := make(chan struct{}, maxChecks)
		for k, j := range jobs {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				errs[k] = j.c.run(ctx, e.st, bound[j.tuple].args)
			})
		}
		wg.Wait()
	}
	for k, err := range errs {
		if err != nil {
			if len(bound) > 1 {
				return fmt.Errorf("tuple %d: %w", jobs[k].tuple+1, err)
			}
			return err
		}
	}
	return nil
}

// run fails when the entity does not exist.
func (c existCheck) run(ctx context.Context, st store.Store, args []types.Value) error {
	v, _, found, err := c.exists(ctx, st, args, nil)
	if err == nil && v != nil && !found {
		err = fmt.Errorf("no %s has %s = %s", c.ent.Name, c.ent.ID().Name, types.Format(v))
	}
	return err
}

// holds reads the entity whose key is c.value and reports whether it
// exists and preds (of its fields, all in c.t) hold of what c.t stores of
// it, and the stored values of fields (nil when it does not exist). The
// guard holds while the row it read is unchanged: a write decided on the
// answer applies under it on a store other processes share (nil when c.t
// is clustered too, so that the tuple's row key is not its key's alone).
func (c existCheck) holds(ctx context.Context, st store.Store, args []types.Value, preds []catalog.Pred, fields []*catalog.Field) (found, ok bool, current []types.Value, guard *store.Guard, err error) {
	vals := make([]types.Value, len(c.t.attrs))
	var derr error
	var snapshot []store.Cell
	decode := func(r store.Row) { // the row is lent
		derr = c.t.decode(r, vals)
		for _, cell := range r.Cells {
			snapshot = append(snapshot, store.Cell{Family: cell.Family, Qualifier: bytes.Clone(cell.Qualifier), Value: bytes.Clone(cell.Value)})
		}
	}
	var key []byte
	if _, key, found, err = c.exists(ctx, st, args, decode); err != nil || derr != nil {
		return found, false, nil, nil, errors.Join(err, derr)
	}
	if key != nil && c.t.nkey == 1 {
		guard = &store.Guard{Table: c.t.name, Row: key, Holds: func(cells []store.Cell) bool { return store.SameCells(cells, snapshot) }}
	}
	if !found {
		return false, false, nil, guard, nil
	}
	current = make([]types.Value, len(fields))
	for i, f := range fields {
		current[i] = vals[c.t.pos[catalog.Attr{Node: 0, Field: f}]]
	}
	for _, p := range preds {
		want, err := exprValue(p.Value, args)
		if err != nil {
			return true, false, nil, nil, err
		}
		if want != nil {
			if want, err = types.Coerce(want, p.ValueType()); err != nil {
				return true, false, nil, nil, fmt.Errorf("%s: %v", p.Ref.Field, err)
			}
		}
		got := vals[c.t.pos[catalog.Attr{Node: 0, Field: p.Ref.Field}]]
		if got == nil || want == nil || !p.Op.Test(got, want) {
			return true, false, current, guard, nil // SQL's NULL: unknown, so not true
		}
	}
	return true, true, current, guard, nil
}

// exists reads whether the entity whose key is c.value exists (v: that
// key; nil, and found false, when it is NULL; prefix: the row-key prefix
// of its rows in c.t), passing its row to row if not nil (lent: valid only
// during the call).
func (c existCheck) exists(ctx context.Context, st store.Store, args []types.Value, row func(store.Row)) (v types.Value, prefix []byte, found bool, err error) {
	if v, err = exprValue(c.value, args); err != nil || v == nil {
		return nil, nil, false, err
	}
	if v, err = types.Coerce(v, c.ent.ID().Type); err != nil {
		return nil, nil, false, err
	}
	if prefix, err = c.t.appendKeyFrom(nil, 1, func(int) types.Value { return v }); err != nil {
		return nil, nil, false, err
	}
	err = st.ReadRows(ctx, c.t.name, store.RowSet{Ranges: []store.Range{store.PrefixRange(prefix)}}, store.ReadOptions{Limit: 1}, func(r store.Row) bool {
		found = true
		if row != nil {
			row(r)
		}
		return false
	})
	return v, prefix, found, err
}
