package plan

import (
	"slices"
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// KeyRebind re-keys a planned read of one row key, or of one key prefix, for
// new arguments, so that a prepared statement run many times does not plan
// again. The WHERE pins, by equality, exactly the attributes of the leading
// elements of the chosen layout's row key: all of them (a point lookup) or
// those before the first element it leaves open (a prefix scan) — which,
// on a relation of one layout, the rest of the WHERE may bound by range
// predicates (a range scan). For other arguments the planner would choose
// the same layout and produce the same plan with another key, prefix or
// range. Arguments that could change the plan's shape (NULL, a value
// needing inexact coercion, a value some layout cannot encode, an empty
// range) make Plan decline, and the caller plans normally.
type KeyRebind struct {
	tmpl   *Plan
	layout *layout.Layout
	eqs    []eqSource
	// prefix is the leading ROW elements a prefix scan encodes; nil for a
	// point lookup, which encodes the whole row key.
	prefix []layout.Element
	// ranges bound the element after the prefix (rangeElem; last: it ends
	// the row key) in a range scan; nil otherwise.
	ranges    []eqSource
	rangeElem layout.Element
	last      bool
	// guards are what the planner encodes for the other layouts' candidate
	// accesses: a value one cannot encode changes that candidate (it reads
	// nothing, which may win the choice).
	guards []guard
}

// guard is elements of a layout's field that the equalities fix.
type guard struct {
	layout *layout.Layout
	field  string
	elems  []layout.Element
}

// eqSource is where the value of an equality, or of a range bound,
// comes from.
type eqSource struct {
	attr  int
	op    lang.Op // the comparison, attribute first
	param int     // -1: the literal
	lit   types.Value
}

// NewKeyRebind returns a rebinder for p, planned from st with cost model
// m, or nil when p is not such a read.
func NewKeyRebind(st *lang.Select, p *Plan, m cost.Model) *KeyRebind {
	if _, ok := m.(cost.Prefix); !ok && m != nil {
		return nil // another model may weigh the values themselves
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
	if len(acc.Reads) != 1 || acc.FanOut > 0 || acc.Layout.StaticTable() == "" || acc.Layout.HasStatic() {
		return nil
	}
	rel := p.Relation
	point := acc.Kind == PointLookup && acc.Complete && acc.NumKeys() == 1 && acc.NumRanges() == 0
	scan := acc.Kind == RangeScan && acc.FixedElems > 0 && acc.NumKeys() == 0 && acc.NumRanges() == 1
	if !point && !scan || acc.RangeElem && len(rel.ReadIndexes()) != 1 {
		// Other layouts' candidates may encode the range's values, or
		// not: only a relation of one layout is sure to plan alike.
		return nil
	}
	var conds, eqs, ranges []eqSource
	if !conditions(st.Where, rel, &conds) {
		return nil
	}
	for _, c := range conds {
		if c.op == lang.OpEq {
			eqs = append(eqs, c)
		} else {
			ranges = append(ranges, c)
		}
	}
	if acc.RangeElem != (len(ranges) > 0) {
		return nil
	}
	eq := map[int]bool{}
	for _, e := range eqs {
		eq[e.attr] = true
	}
	// The planner's key is every element up to the first attribute (or
	// size{…}) element the equalities leave open: constants and salts
	// before it included.
	inKey := map[int]bool{}
	var walk func([]layout.Element)
	walk = func(es []layout.Element) {
		for _, e := range es {
			if e.Kind == layout.ElemAttr {
				inKey[e.Attr] = true
			}
			walk(e.Body)
		}
	}
	es := acc.Layout.Row.Elems
	n := 0
	for ; n < len(es); n++ {
		if e := es[n]; e.Kind == layout.ElemAttr && !eq[e.Attr] {
			break
		}
		walk(es[n : n+1])
		if !allIn(inKey, eq) {
			break // a size{…} or salt body with an open attribute
		}
	}
	if len(inKey) != len(eqs) || !allIn(inKey, eq) {
		return nil // the equalities are not exactly those attributes
	}
	rb := &KeyRebind{tmpl: p, layout: acc.Layout, eqs: eqs}
	if scan {
		rb.prefix = es[:n]
	} else if n != len(es) {
		return nil
	}
	if len(ranges) > 0 {
		// The planner bounds the element after the prefix, an attribute
		// every range is on.
		if n == len(es) || es[n].Kind != layout.ElemAttr || n+1 < len(es) && es[n+1].Kind == layout.ElemConst {
			return nil
		}
		for _, r := range ranges {
			if r.attr != es[n].Attr {
				return nil
			}
		}
		rb.ranges, rb.rangeElem, rb.last = ranges, es[n], n == len(es)-1
	}
	for _, x := range rel.ReadIndexes() {
		if l := x.Layout(); l != acc.Layout {
			rb.guards = append(rb.guards, fixedElements(l, eq)...)
		}
	}
	return rb
}

// fixedElements lists the elements of l the planner encodes when the
// attributes in eq are fixed (see walker.walkTable and walker.walkRow):
// TABLE if it has no other attribute, and ROW up to its first open
// attribute or size{…}, but for salts over open attributes (fanned out).
func fixedElements(l *layout.Layout, eq map[int]bool) []guard {
	fixed := func(e layout.Element) bool {
		ok := true
		var walk func(layout.Element)
		walk = func(e layout.Element) {
			if e.Kind == layout.ElemAttr && !eq[e.Attr] {
				ok = false
			}
			for _, b := range e.Body {
				walk(b)
			}
		}
		walk(e)
		return ok
	}
	var out []guard
	if l.StaticTable() == "" && !slices.ContainsFunc(l.Table.Elems, func(e layout.Element) bool { return !fixed(e) }) {
		out = append(out, guard{l, "TABLE", l.Table.Elems})
	}
	var row []layout.Element
	for _, e := range l.Row.Elems {
		if !fixed(e) {
			if e.Kind == layout.ElemSalt {
				continue
			}
			break
		}
		row = append(row, e)
	}
	if len(row) > 0 {
		out = append(out, guard{l, "ROW", row})
	}
	return out
}

// allIn reports whether every attribute in a is in b.
func allIn(a, b map[int]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// equalities collects `col = ?` / `col = literal` terms of a pure
// conjunction, each attribute at most once.
// conditions lists the comparisons of attributes with values that the
// conjunction e is made of (an equality at most once per attribute); false
// when e is something else.
func conditions(e lang.Expr, rel *catalog.Relation, out *[]eqSource) bool {
	x, ok := e.(*lang.Binary)
	if !ok {
		return false
	}
	if x.Op == lang.OpAnd {
		return conditions(x.L, rel, out) && conditions(x.R, rel, out)
	}
	op, col, val := x.Op, x.L, x.R
	if _, ok := col.(*lang.ColumnRef); !ok {
		col, val, op = x.R, x.L, flipped[op]
	}
	c, ok := col.(*lang.ColumnRef)
	if !ok || op == 0 || op == lang.OpNe {
		return false
	}
	a := rel.AttrIndex(c.Name)
	if a < 0 {
		return false
	}
	for _, e := range *out {
		if e.attr == a && (e.op == lang.OpEq || op == lang.OpEq) {
			return false
		}
	}
	switch v := val.(type) {
	case *lang.Param:
		*out = append(*out, eqSource{attr: a, op: op, param: v.Index})
	case *lang.Literal:
		*out = append(*out, eqSource{attr: a, op: op, param: -1, lit: v.Value})
	default:
		return false
	}
	return true
}

// flipped is each comparison with its operands swapped.
var flipped = map[lang.Op]lang.Op{lang.OpEq: lang.OpEq, lang.OpNe: lang.OpNe, lang.OpLt: lang.OpGt, lang.OpLe: lang.OpGe, lang.OpGt: lang.OpLt, lang.OpGe: lang.OpLe}

// Plan returns the plan for args, or ok == false when the caller must plan
// normally. The plan is the caller's until it hands it to Release.
func (r *KeyRebind) Plan(args []types.Value) (p *Plan, ok bool) {
	p, ok = r.plan(args)
	if !ok {
		p.Release()
		return nil, false
	}
	return p, true
}

// rebounds recycles the memory of rebound plans: a point lookup then
// allocates nothing to plan.
var rebounds = sync.Pool{New: func() any { return new(rebound) }}

// Release gives back the memory of a plan KeyRebind made (other plans are
// left to the garbage collector): neither p nor anything read from it may be
// used afterwards.
func (p *Plan) Release() {
	if b := p.rebound; b != nil {
		*b = rebound{}
		rebounds.Put(b)
	}
}

func (r *KeyRebind) plan(args []types.Value) (_ *Plan, ok bool) {
	rel := r.tmpl.Relation
	// One piece of memory for the plan, its access, read, key and tuple.
	b := rebounds.Get().(*rebound)
	b.p.rebound = b
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
				return &b.p, false
			}
			v = args[e.param]
		}
		t := rel.Attrs[e.attr].Type
		c, err := types.Coerce(v, t)
		if err != nil || c == nil || !exactType(c, t) {
			return &b.p, false
		}
		tuple[e.attr] = c
	}
	for _, g := range r.guards {
		if _, err := g.layout.AppendElements(b.key[:0], g.field, g.elems, tuple); err != nil {
			return &b.p, false
		}
	}
	b.p, b.acc = *r.tmpl, *r.tmpl.Accesses[0]
	b.p.rebound = b
	b.reads[0] = b.acc.Reads[0]
	if r.prefix == nil {
		key, err := r.layout.AppendRowKey(b.key[:0], tuple)
		if err != nil {
			return &b.p, false
		}
		b.keys[0] = key
		b.reads[0].Rows = store.RowSet{Keys: b.keys[:]}
	} else {
		key, err := r.layout.AppendElements(b.key[:0], "ROW", r.prefix, tuple)
		if err != nil {
			return &b.p, false
		}
		var rg store.Range
		if r.ranges == nil {
			// store.PrefixRange(key), as the planner reads a fixed prefix;
			// the end follows the key in b.key when it fits.
			n := len(key)
			rg = store.Range{Start: key[:n:n], End: appendPrefixSuccessor(key[n:n], key)}
		} else if rg, ok = r.rangeUnder(key, args); !ok {
			return &b.p, false
		}
		b.rng[0] = rg
		b.reads[0].Rows = store.RowSet{Ranges: b.rng[:]}
	}
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
	rng   [1]store.Range
	key   [64]byte        // the usual key (and prefix range end) fits
	tuple [16]types.Value // the usual relation (or advised index) fits
}

// rangeUnder is the range of the keys starting with prefix whose range
// element the range predicates bound, for args, as the planner computes
// it (elemBounds); false when it would plan otherwise.
func (r *KeyRebind) rangeUnder(prefix []byte, args []types.Value) (store.Range, bool) {
	var c Constraint
	t := r.layout.Attrs[r.rangeElem.Attr].Type
	for _, s := range r.ranges {
		v := s.lit
		if s.param >= 0 {
			if s.param >= len(args) {
				return store.Range{}, false
			}
			v = args[s.param]
		}
		v, err := types.Coerce(v, t)
		if err != nil || v == nil || !exactType(v, t) {
			return store.Range{}, false
		}
		if s.op == lang.OpLt || s.op == lang.OpLe {
			c.tightenHi(v, s.op == lang.OpLe)
		} else {
			c.tightenLo(v, s.op == lang.OpGe)
		}
	}
	if !c.finish() {
		return store.Range{}, false // the planner reads nothing
	}
	b, ok := elemBounds(r.layout, r.rangeElem, &c, r.last)
	if !ok || b.empty {
		return store.Range{}, false
	}
	rg, _ := b.under(prefix[len(prefix):], prefix)
	if rg.Empty() {
		return store.Range{}, false // bounds that meet: the planner reads nothing
	}
	return rg, true
}

// appendPrefixSuccessor appends store.PrefixSuccessor(p) to dst; nil, as
// there, when p has none.
func appendPrefixSuccessor(dst, p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xFF {
			dst = append(dst, p[:i+1]...)
			dst[len(dst)-1]++
			return dst
		}
	}
	return nil
}
