package plan

import (
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/schema"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// PointRebind re-keys a planned exact-key point lookup for new arguments, so
// that a prepared statement run many times does not plan again: the WHERE
// pins every attribute of one layout's row key by equality, so for other
// arguments the planner would choose the same layout and produce the same
// plan with another key. Arguments that could change the plan's shape (NULL,
// a value needing inexact coercion, a value the layout cannot encode) make
// Plan decline, and the caller plans normally.
type PointRebind struct {
	tmpl   *Plan
	layout *schema.Layout
	eqs    []eqSource
}

// eqSource is where an equality's value comes from.
type eqSource struct {
	attr  int
	param int // -1: the literal
	lit   types.Value
}

// NewPointRebind returns a rebinder for p, planned from st with chooser ch,
// or nil when p is not such a point lookup.
func NewPointRebind(st *lang.Select, p *Plan, ch Chooser) *PointRebind {
	if _, ok := ch.(PrefixChooser); !ok {
		return nil // another chooser may weigh the values themselves
	}
	if st.Limit != nil {
		if _, ok := st.Limit.(*lang.Literal); !ok {
			return nil
		}
	}
	if len(p.Accesses) != 1 || p.Residual != nil || p.Sort || p.Merge || p.Dedupe {
		return nil
	}
	acc := p.Accesses[0]
	if acc.Kind != PointLookup || !acc.Complete || len(acc.Reads) != 1 || acc.NumKeys() != 1 || acc.Layout.StaticTable() == "" {
		return nil
	}
	rel := p.Relation
	var eqs []eqSource
	if !equalities(st.Where, rel, &eqs) {
		return nil
	}
	// The equalities must be exactly the attributes of the row key.
	inKey := map[int]bool{}
	var walk func([]schema.Element)
	walk = func(es []schema.Element) {
		for _, e := range es {
			if e.Kind == schema.ElemAttr {
				inKey[e.Attr] = true
			}
			walk(e.Body)
		}
	}
	walk(acc.Layout.Row.Elems)
	if len(inKey) != len(eqs) {
		return nil
	}
	for _, e := range eqs {
		if !inKey[e.attr] {
			return nil
		}
	}
	return &PointRebind{tmpl: p, layout: acc.Layout, eqs: eqs}
}

// equalities collects `col = ?` / `col = literal` terms of a pure
// conjunction, each attribute at most once.
func equalities(e lang.Expr, rel *schema.Relation, out *[]eqSource) bool {
	switch x := e.(type) {
	case *lang.Binary:
		if x.Op == lang.OpAnd {
			return equalities(x.L, rel, out) && equalities(x.R, rel, out)
		}
		if x.Op != lang.OpEq {
			return false
		}
		col, ok := x.L.(*lang.ColumnRef)
		val := x.R
		if !ok {
			if col, ok = x.R.(*lang.ColumnRef); !ok {
				return false
			}
			val = x.L
		}
		a := rel.AttrIndex(col.Name)
		if a < 0 {
			return false
		}
		for _, e := range *out {
			if e.attr == a {
				return false
			}
		}
		switch v := val.(type) {
		case *lang.Param:
			*out = append(*out, eqSource{attr: a, param: v.Index})
		case *lang.Literal:
			*out = append(*out, eqSource{attr: a, param: -1, lit: v.Value})
		default:
			return false
		}
		return true
	}
	return false
}

// Plan returns the plan for args, or ok == false when the caller must plan
// normally.
func (r *PointRebind) Plan(args []types.Value) (p *Plan, ok bool) {
	rel := r.tmpl.Relation
	// One allocation for the plan, its access, read, key and tuple.
	b := &rebound{}
	var tuple []types.Value
	if len(rel.Attrs) <= len(b.tuple) {
		tuple = b.tuple[:len(rel.Attrs)]
	} else {
		tuple = make([]types.Value, len(rel.Attrs))
	}
	for _, e := range r.eqs {
		v := e.lit
		if e.param >= 0 {
			if e.param >= len(args) {
				return nil, false
			}
			v = args[e.param]
		}
		t := rel.Attrs[e.attr].Type
		c, err := types.Coerce(v, t)
		if err != nil || c == nil || !exactType(c, t) {
			return nil, false
		}
		tuple[e.attr] = c
	}
	key, err := r.layout.AppendRowKey(b.key[:0], tuple)
	if err != nil {
		return nil, false
	}
	b.p, b.acc = *r.tmpl, *r.tmpl.Accesses[0]
	b.keys[0] = key
	b.reads[0] = b.acc.Reads[0]
	b.reads[0].Rows = store.RowSet{Keys: b.keys[:]}
	b.acc.Reads = b.reads[:]
	b.acc.parts = nil // EXPLAIN plans afresh; bounds are not needed here
	b.accs[0] = &b.acc
	b.p.Accesses = b.accs[:]
	return &b.p, true
}

type rebound struct {
	p     Plan
	acc   Access
	accs  [1]*Access
	reads [1]Read
	keys  [1][]byte
	key   [64]byte       // the usual key fits
	tuple [8]types.Value // the usual relation fits
}
