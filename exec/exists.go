package exec

import (
	"context"
	"fmt"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// existCheck makes a write fail when an entity it connects to does not
// exist, as load refuses a dangling foreign key. A support query that reads
// the entity already checks it (an empty answer is an error); a write
// whose upkeeps read nothing of it checks with one read of a column family
// of that entity alone, keyed by its key. Without such a family the schema
// offers no way to tell, and the write goes unchecked.
type existCheck struct {
	what  string // the link's name, or the written entity's
	ent   *catalog.Entity
	value lang.Expr // the key, in terms of the write's arguments
	t     *table
}

// existChecks lists the checks write s needs beyond its support queries.
func (e *Engine) existChecks(s *Stmt) []existCheck {
	w := s.Write
	type side struct {
		ent   *catalog.Entity
		value lang.Expr
		nav   *catalog.Nav // the link's relationship; nil for the written entity
	}
	var sides []side
	switch w.Kind {
	case catalog.Insert:
		for _, l := range w.Links {
			sides = append(sides, side{l.Nav.To, l.Value, l.Nav})
		}
	case catalog.Connect:
		sides = append(sides, side{w.Nav.To, w.Target, nil})
		for _, p := range w.Preds {
			if p.Op == catalog.Eq && p.Ref.Field == w.Entity.ID() {
				sides = append(sides, side{w.Entity, p.Value, nil})
			}
		}
	}
	var out []existCheck
	for _, sd := range sides {
		if sd.nav != nil && e.supportReads(s, sd.nav) {
			continue
		}
		if t := e.entityTable(sd.ent); t != nil {
			what := sd.ent.Name
			if sd.nav != nil {
				what = sd.nav.Name
			}
			out = append(out, existCheck{what: what, ent: sd.ent, value: sd.value, t: t})
		}
	}
	return out
}

// supportReads reports whether one of s's INSERT upkeeps reads, by its
// key, the entity the new tuple links to along nav: a support query of
// that entity alone, whose empty answer fails the write.
func (e *Engine) supportReads(s *Stmt, nav *catalog.Nav) bool {
	for _, up := range s.ups {
		for _, nb := range up.t.x.Graph.Neighbors(up.u.Node) {
			if nb.Nav != nav {
				continue
			}
			if sp := up.supportFor(nb.To); sp != nil && sp.single {
				return true
			}
		}
	}
	return false
}

// entityTable returns a column family of ent alone partitioned by its key,
// or nil: a tuple of ent exists exactly when the family has a row under
// its key.
func (e *Engine) entityTable(ent *catalog.Entity) *table {
	for _, x := range e.schema.Indexes {
		t := e.tables[x]
		if x.Kind == catalog.CF && len(x.Graph.Nodes) == 1 && x.Graph.Nodes[0].Entity == ent &&
			t.nhash == 1 && t.attrs[0].Field == ent.ID() {
			return t
		}
	}
	return nil
}

// run fails when the entity does not exist.
func (c existCheck) run(ctx context.Context, st store.Store, args []types.Value) error {
	v, err := exprValue(c.value, args)
	if err != nil || v == nil {
		return err
	}
	if v, err = types.Coerce(v, c.ent.ID().Type); err != nil {
		return err
	}
	prefix, err := c.t.appendKeyFrom(nil, 1, func(int) types.Value { return v })
	if err != nil {
		return err
	}
	found := false
	err = st.ReadRows(ctx, c.t.name, store.RowSet{Ranges: []store.Range{store.PrefixRange(prefix)}}, store.ReadOptions{Limit: 1}, func(store.Row) bool {
		found = true
		return false
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no %s has %s = %s", c.ent.Name, c.ent.ID().Name, types.Format(v))
	}
	return nil
}
