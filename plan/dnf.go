package plan

import (
	"math"
	"sort"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// maxConjuncts bounds DNF expansion: past it the WHERE is evaluated as a
// filter over a full scan instead of being split into key ranges.
const maxConjuncts = 256

// Conjunct is one AND-term of the WHERE in disjunctive normal form.
type Conjunct []lang.Expr

// DNF rewrites a bound WHERE as an OR of conjuncts of atoms (comparisons,
// IN, IS NULL, …), NOT pushed down to the atoms. A nil WHERE is one empty
// conjunct (everything). ok is false when the expansion exceeded
// maxConjuncts.
func DNF(e lang.Expr) (cs []Conjunct, ok bool) {
	if e == nil {
		return []Conjunct{{}}, true
	}
	cs = dnf(pushNot(e, false))
	if cs == nil {
		return []Conjunct{{}}, false
	}
	return cs, true
}

// pushNot returns e (negated if neg) with NOT applied to atoms only.
func pushNot(e lang.Expr, neg bool) lang.Expr {
	switch x := e.(type) {
	case *lang.Not:
		return pushNot(x.X, !neg)
	case *lang.Binary:
		switch x.Op {
		case lang.OpAnd, lang.OpOr:
			op := x.Op
			if neg {
				op = map[lang.Op]lang.Op{lang.OpAnd: lang.OpOr, lang.OpOr: lang.OpAnd}[op]
			}
			return &lang.Binary{At: x.At, Op: op, L: pushNot(x.L, neg), R: pushNot(x.R, neg)}
		}
		if !neg {
			return x
		}
		inv := map[lang.Op]lang.Op{lang.OpEq: lang.OpNe, lang.OpNe: lang.OpEq, lang.OpLt: lang.OpGe, lang.OpLe: lang.OpGt, lang.OpGt: lang.OpLe, lang.OpGe: lang.OpLt}
		return &lang.Binary{At: x.At, Op: inv[x.Op], L: x.L, R: x.R}
	case *lang.In:
		if neg {
			return &lang.In{At: x.At, X: x.X, List: x.List, Not: !x.Not}
		}
		return x
	case *lang.Between:
		if x.Not != neg {
			// x NOT BETWEEN lo AND hi  ≡  x < lo OR x > hi (same NULL semantics)
			return &lang.Binary{At: x.At, Op: lang.OpOr,
				L: &lang.Binary{At: x.At, Op: lang.OpLt, L: x.X, R: x.Lo},
				R: &lang.Binary{At: x.At, Op: lang.OpGt, L: x.X, R: x.Hi}}
		}
		return &lang.Binary{At: x.At, Op: lang.OpAnd,
			L: &lang.Binary{At: x.At, Op: lang.OpGe, L: x.X, R: x.Lo},
			R: &lang.Binary{At: x.At, Op: lang.OpLe, L: x.X, R: x.Hi}}
	case *lang.IsNull:
		if neg {
			return &lang.IsNull{At: x.At, X: x.X, Not: !x.Not}
		}
		return x
	}
	if neg {
		return &lang.Not{At: e.Pos(), X: e}
	}
	return e
}

// dnf distributes AND over OR; nil means the expansion was too large.
func dnf(e lang.Expr) []Conjunct {
	b, ok := e.(*lang.Binary)
	if !ok || (b.Op != lang.OpAnd && b.Op != lang.OpOr) {
		return []Conjunct{{e}}
	}
	l, r := dnf(b.L), dnf(b.R)
	if l == nil || r == nil {
		return nil
	}
	if b.Op == lang.OpOr {
		if len(l)+len(r) > maxConjuncts {
			return nil
		}
		return append(append([]Conjunct{}, l...), r...)
	}
	if len(l)*len(r) > maxConjuncts {
		return nil
	}
	out := make([]Conjunct, 0, len(l)*len(r))
	for _, a := range l {
		for _, c := range r {
			out = append(out, append(append(Conjunct{}, a...), c...))
		}
	}
	return out
}

// Constraint is what one conjunct says about one attribute's value, in the
// attribute's canonical type.
type Constraint struct {
	Points    []types.Value // sorted, distinct; meaningful when HasPoints
	HasPoints bool
	Lo, Hi    types.Value
	LoIncl    bool
	HiIncl    bool
	HasLo     bool
	HasHi     bool
}

// Fixed reports whether the constraint pins the attribute to finitely many
// values.
func (c *Constraint) Fixed() bool { return c != nil && c.HasPoints }

// Bounded reports whether the constraint has at least one range bound.
func (c *Constraint) Bounded() bool { return c != nil && !c.HasPoints && (c.HasLo || c.HasHi) }

// Constraints holds a conjunct's constraint per attribute index (nil: none).
type Constraints []*Constraint

// ConstraintsOf summarizes a conjunct per attribute. unsat is true when no
// tuple can satisfy it. Atoms that do not constrain a single attribute to
// exactly-typed values (!=, IS NULL, column-vs-column, inexact numerics) are
// left to the filter.
func ConstraintsOf(c Conjunct, rel *catalog.Relation) (cons Constraints, unsat bool) {
	cons = make(Constraints, len(rel.Attrs))
	var store []Constraint // one allocation for the conjunct's constraints
	get := func(a int) *Constraint {
		if cons[a] == nil {
			if store == nil {
				store = make([]Constraint, 0, len(c))
			}
			if len(store) == cap(store) {
				cons[a] = &Constraint{} // never reallocate: pointers into store are live
			} else {
				store = append(store, Constraint{})
				cons[a] = &store[len(store)-1]
			}
		}
		return cons[a]
	}
	for _, atom := range c {
		switch x := atom.(type) {
		case *lang.Literal:
			if b, ok := x.Value.(bool); !ok || !b {
				return nil, true // FALSE, NULL or a non-boolean constant
			}
		case *lang.Binary:
			col, lit, op, ok := colLit(x)
			if !ok {
				continue
			}
			if lit.Value == nil {
				return nil, true // comparison with NULL is never true
			}
			a := rel.AttrIndex(col.Name)
			if !exactType(lit.Value, rel.Attrs[a].Type) {
				continue
			}
			k := get(a)
			switch op {
			case lang.OpEq:
				k.intersect([]types.Value{lit.Value})
			case lang.OpLt, lang.OpLe:
				k.tightenHi(lit.Value, op == lang.OpLe)
			case lang.OpGt, lang.OpGe:
				k.tightenLo(lit.Value, op == lang.OpGe)
			}
		case *lang.In:
			col, ok := x.X.(*lang.ColumnRef)
			if !ok || x.Not {
				continue
			}
			a := rel.AttrIndex(col.Name)
			var pts []types.Value
			exact := true
			for _, item := range x.List {
				lit, ok := item.(*lang.Literal)
				if !ok {
					exact = false
					break
				}
				if lit.Value == nil {
					continue // x IN (NULL, …) never matches through NULL
				}
				if !exactType(lit.Value, rel.Attrs[a].Type) {
					exact = false
					break
				}
				pts = append(pts, lit.Value)
			}
			if exact {
				get(a).intersect(pts)
			}
		case *lang.IsNull:
			if col, ok := x.X.(*lang.ColumnRef); ok && !x.Not && rel.Attrs[rel.AttrIndex(col.Name)].Key {
				return nil, true // key attributes are never NULL
			}
		}
	}
	for _, k := range cons {
		if k != nil && !k.finish() {
			return nil, true
		}
	}
	return cons, false
}

// colLit normalizes `col op lit` / `lit op col` to col, lit, op.
func colLit(b *lang.Binary) (*lang.ColumnRef, *lang.Literal, lang.Op, bool) {
	if c, ok := b.L.(*lang.ColumnRef); ok {
		if l, ok := b.R.(*lang.Literal); ok {
			return c, l, b.Op, true
		}
	}
	if c, ok := b.R.(*lang.ColumnRef); ok {
		if l, ok := b.L.(*lang.Literal); ok {
			return c, l, flipped[b.Op], true
		}
	}
	return nil, nil, 0, false
}

// exactType reports whether v already is the canonical Go type of t (the
// binder coerced it), so it can be key-encoded as is.
func exactType(v types.Value, t types.Type) bool {
	switch t {
	case types.String:
		_, ok := v.(string)
		return ok
	case types.Bytes:
		_, ok := v.([]byte)
		return ok
	case types.BigInt:
		_, ok := v.(int64)
		return ok
	case types.Int:
		i, ok := v.(int64)
		return ok && i >= math.MinInt32 && i <= math.MaxInt32
	case types.Double:
		_, ok := v.(float64)
		return ok
	case types.Float:
		f, ok := v.(float64)
		return ok && float64(float32(f)) == f
	case types.Bool:
		_, ok := v.(bool)
		return ok
	case types.Timestamp:
		ts, ok := v.(time.Time)
		return ok && ts.Location() == time.UTC && ts.Equal(ts.Truncate(types.TimestampPrecision))
	}
	return false
}

func (k *Constraint) intersect(pts []types.Value) {
	if len(pts) == 1 && !k.HasPoints {
		k.Points, k.HasPoints = pts, true
		return
	}
	sorted := append([]types.Value(nil), pts...)
	sort.Slice(sorted, func(i, j int) bool { return types.Compare(sorted[i], sorted[j]) < 0 })
	uniq := sorted[:0]
	for _, p := range sorted {
		if len(uniq) == 0 || types.Compare(uniq[len(uniq)-1], p) != 0 {
			uniq = append(uniq, p)
		}
	}
	if !k.HasPoints {
		k.Points, k.HasPoints = uniq, true
		return
	}
	var both []types.Value
	for _, p := range k.Points {
		i := sort.Search(len(uniq), func(i int) bool { return types.Compare(uniq[i], p) >= 0 })
		if i < len(uniq) && types.Compare(uniq[i], p) == 0 {
			both = append(both, p)
		}
	}
	k.Points = both
}

func (k *Constraint) tightenLo(v types.Value, incl bool) {
	if !k.HasLo {
		k.Lo, k.LoIncl, k.HasLo = v, incl, true
		return
	}
	switch c := types.Compare(v, k.Lo); {
	case c > 0:
		k.Lo, k.LoIncl = v, incl
	case c == 0:
		k.LoIncl = k.LoIncl && incl
	}
}

func (k *Constraint) tightenHi(v types.Value, incl bool) {
	if !k.HasHi {
		k.Hi, k.HiIncl, k.HasHi = v, incl, true
		return
	}
	switch c := types.Compare(v, k.Hi); {
	case c < 0:
		k.Hi, k.HiIncl = v, incl
	case c == 0:
		k.HiIncl = k.HiIncl && incl
	}
}

// finish applies the bounds to the points; false means unsatisfiable.
func (k *Constraint) finish() bool {
	if k.HasPoints {
		kept := k.Points[:0]
		for _, p := range k.Points {
			if k.admits(p) {
				kept = append(kept, p)
			}
		}
		k.Points = kept
		return len(kept) > 0
	}
	if k.HasLo && k.HasHi {
		c := types.Compare(k.Lo, k.Hi)
		return c < 0 || c == 0 && k.LoIncl && k.HiIncl
	}
	return true
}

func (k *Constraint) admits(v types.Value) bool {
	if k.HasLo {
		if c := types.Compare(v, k.Lo); c < 0 || c == 0 && !k.LoIncl {
			return false
		}
	}
	if k.HasHi {
		if c := types.Compare(v, k.Hi); c > 0 || c == 0 && !k.HiIncl {
			return false
		}
	}
	return true
}

// maxFixedKeys bounds the keys FixedKeys lists.
const maxFixedKeys = 1024

// FixedKeys lists the keys of every tuple a bound WHERE can select, when
// each conjunct of its DNF pins every key attribute of rel to finitely
// many values (k = ? AND …, k IN (…)); ok is false otherwise, or when they
// would be more than maxFixedKeys. Writers lock them before reading.
func FixedKeys(where lang.Expr, rel *catalog.Relation) (keys [][]types.Value, ok bool) {
	if where == nil {
		return nil, false
	}
	cs, ok := DNF(where)
	if !ok {
		return nil, false
	}
	for _, c := range cs {
		cons, unsat := ConstraintsOf(c, rel)
		if unsat {
			continue
		}
		n := 1
		for _, k := range rel.KeyIdx {
			if !cons[k].Fixed() {
				return nil, false
			}
			n *= len(cons[k].Points)
			if len(keys)+n > maxFixedKeys {
				return nil, false
			}
		}
		// The cross product of the key attributes' points.
		part := [][]types.Value{make([]types.Value, len(rel.KeyIdx))}
		for i, k := range rel.KeyIdx {
			var next [][]types.Value
			for _, p := range part {
				for _, v := range cons[k].Points {
					t := append([]types.Value(nil), p...)
					t[i] = v
					next = append(next, t)
				}
			}
			part = next
		}
		keys = append(keys, part...)
	}
	return keys, true
}
