package plan

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

func errAt(p lang.Pos, format string, args ...any) error {
	return &lang.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// Bind replaces every parameter of e by its argument as a literal and checks
// that every column exists and every comparison is between compatible kinds;
// literals compared with an attribute are coerced to its type where that is
// exact. The result contains no Param.
func Bind(e lang.Expr, rel *catalog.Relation, args []types.Value) (lang.Expr, error) {
	return bind(e, rel, "", args)
}

// bind is Bind where columns may also be qualified by alias.
func bind(e lang.Expr, rel *catalog.Relation, alias string, args []types.Value) (lang.Expr, error) {
	if e == nil {
		return nil, nil
	}
	b := binder{rel: rel, alias: alias, args: args}
	return b.expr(e)
}

type binder struct {
	rel   *catalog.Relation
	alias string
	args  []types.Value
}

// checkQual accepts an unqualified column or one qualified by the relation's
// name or alias: a single-relation statement has nothing else to name.
func checkQual(at lang.Pos, qual []string, rel *catalog.Relation, alias string) error {
	switch {
	case len(qual) == 0:
		return nil
	case len(qual) == 1 && (qual[0] == rel.Name || alias != "" && qual[0] == alias):
		return nil
	}
	return errAt(at, "%s does not name relation %s: a path of foreign keys needs a conceptual model (kvschema advise)", strings.Join(qual, "."), rel.Name)
}

// Arg returns parameter i, or an error naming it.
func Arg(args []types.Value, p *lang.Param) (types.Value, error) {
	if p.Index >= len(args) {
		return nil, errAt(p.At, "missing value for parameter %d (got %d arguments)", p.Index+1, len(args))
	}
	return args[p.Index], nil
}

func (b *binder) expr(e lang.Expr) (lang.Expr, error) {
	switch x := e.(type) {
	case *lang.Literal:
		return x, nil
	case *lang.Param:
		v, err := Arg(b.args, x)
		if err != nil {
			return nil, err
		}
		return &lang.Literal{At: x.At, Value: v}, nil
	case *lang.ColumnRef:
		if err := checkQual(x.At, x.Qual, b.rel, b.alias); err != nil {
			return nil, err
		}
		if b.rel.AttrIndex(x.Name) < 0 {
			return nil, lang.UnknownAt(x.At, "relation %s has no attribute %s", b.rel.Name, x.Name)
		}
		return x, nil
	case *lang.Binary:
		l, err := b.expr(x.L)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(x.R)
		if err != nil {
			return nil, err
		}
		if x.Op != lang.OpAnd && x.Op != lang.OpOr {
			if l, r, err = b.coercePair(l, r); err != nil {
				return nil, err
			}
		}
		return &lang.Binary{At: x.At, Op: x.Op, L: l, R: r}, nil
	case *lang.Not:
		inner, err := b.expr(x.X)
		if err != nil {
			return nil, err
		}
		return &lang.Not{At: x.At, X: inner}, nil
	case *lang.In:
		col, err := b.expr(x.X)
		if err != nil {
			return nil, err
		}
		list := make([]lang.Expr, len(x.List))
		for i, item := range x.List {
			v, err := b.expr(item)
			if err != nil {
				return nil, err
			}
			if _, v, err = b.coercePair(col, v); err != nil {
				return nil, err
			}
			list[i] = v
		}
		return &lang.In{At: x.At, X: col, List: list, Not: x.Not}, nil
	case *lang.Between:
		col, err := b.expr(x.X)
		if err != nil {
			return nil, err
		}
		lo, err := b.expr(x.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.expr(x.Hi)
		if err != nil {
			return nil, err
		}
		if _, lo, err = b.coercePair(col, lo); err != nil {
			return nil, err
		}
		if _, hi, err = b.coercePair(col, hi); err != nil {
			return nil, err
		}
		return &lang.Between{At: x.At, X: col, Lo: lo, Hi: hi, Not: x.Not}, nil
	case *lang.IsNull:
		inner, err := b.expr(x.X)
		if err != nil {
			return nil, err
		}
		return &lang.IsNull{At: x.At, X: inner, Not: x.Not}, nil
	case *lang.Contains:
		col, ok := x.X.(*lang.ColumnRef)
		if !ok {
			return nil, errAt(x.X.Pos(), "CONTAINS applies to a collection attribute, not %s", lang.PrintExpr(x.X))
		}
		if _, err := b.expr(col); err != nil {
			return nil, err
		}
		t := b.typeOf(col)
		et, err := t.Contained(x.Key)
		if err != nil {
			return nil, errAt(x.At, "%s: %v", col.Name, err)
		}
		elem, err := b.expr(x.Elem)
		if err != nil {
			return nil, err
		}
		lit, ok := elem.(*lang.Literal)
		if !ok {
			return nil, errAt(x.Elem.Pos(), "CONTAINS takes a value or a parameter, not %s", lang.PrintExpr(x.Elem))
		}
		if lit.Value != nil {
			v, err := types.Coerce(lit.Value, et)
			if err != nil {
				return nil, errAt(lit.At, "%s CONTAINS%s: %v", col.Name, map[bool]string{true: " KEY"}[x.Key], err)
			}
			lit = &lang.Literal{At: lit.At, Value: v}
		}
		return &lang.Contains{At: x.At, X: col, Elem: lit, Key: x.Key}, nil
	}
	return nil, errAt(e.Pos(), "unsupported expression")
}

// coercePair checks a comparison's operands and coerces a literal compared
// with a column to the column's type when the conversion is exact (an INT
// column compared with 1.5 keeps the float: the comparison is numeric).
func (b *binder) coercePair(l, r lang.Expr) (lang.Expr, lang.Expr, error) {
	lc, lIsCol := l.(*lang.ColumnRef)
	rc, rIsCol := r.(*lang.ColumnRef)
	switch {
	case lIsCol && rIsCol:
		lt, rt := b.typeOf(lc), b.typeOf(rc)
		if !comparable(lt, rt) {
			return nil, nil, errAt(l.Pos(), "cannot compare %s (%s) with %s (%s)", lc.Name, lt, rc.Name, rt)
		}
		return l, r, nil
	case lIsCol:
		v, err := b.coerceLit(lc, r)
		return l, v, err
	case rIsCol:
		v, err := b.coerceLit(rc, l)
		return v, r, err
	}
	return l, r, nil
}

func (b *binder) typeOf(c *lang.ColumnRef) types.Type {
	return b.rel.Attrs[b.rel.AttrIndex(c.Name)].Type
}

func (b *binder) coerceLit(col *lang.ColumnRef, e lang.Expr) (lang.Expr, error) {
	lit, ok := e.(*lang.Literal)
	if !ok || lit.Value == nil {
		return e, nil
	}
	t := b.typeOf(col)
	v, err := types.Coerce(lit.Value, t)
	if err == nil {
		return &lang.Literal{At: lit.At, Value: v}, nil
	}
	if isNumeric(t) && (types.KindName(lit.Value) == "float" || types.KindName(lit.Value) == "integer") {
		// Inexact numeric comparison (INT vs 1.5, or out of INT range):
		// canonicalize to int64/float64 and let the evaluator compare.
		if f, ok := lit.Value.(float32); ok {
			return &lang.Literal{At: lit.At, Value: float64(f)}, nil
		}
		if f, ok := lit.Value.(float64); ok {
			return &lang.Literal{At: lit.At, Value: f}, nil
		}
		if v, err := types.Coerce(lit.Value, types.BigInt); err == nil {
			return &lang.Literal{At: lit.At, Value: v}, nil
		}
	}
	return nil, errAt(lit.At, "type mismatch: %s is %s: %v", col.Name, t, err)
}

func isNumeric(t types.Type) bool {
	switch t {
	case types.Int, types.BigInt, types.Float, types.Double:
		return true
	}
	return false
}

func comparable(a, b types.Type) bool {
	if a == b {
		return true
	}
	if isNumeric(a) && isNumeric(b) {
		return true
	}
	return (a == types.String || a == types.Bytes) && (b == types.String || b == types.Bytes)
}

// tri is SQL's three-valued truth.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

// Eval evaluates a bound expression over a tuple with SQL's three-valued
// logic and reports whether it is true (unknown counts as false, as in
// WHERE).
func Eval(e lang.Expr, rel *catalog.Relation, tuple []types.Datum) bool {
	return eval(e, rel, tuple) == triTrue
}

func value(e lang.Expr, rel *catalog.Relation, tuple []types.Datum) types.Datum {
	switch x := e.(type) {
	case *lang.Literal:
		if b, ok := x.Value.([]byte); ok {
			return types.OwnedBytesDatum(b) // compared, never changed
		}
		d, _ := types.DatumOf(x.Value)
		return d
	case *lang.ColumnRef:
		return tuple[rel.AttrIndex(x.Name)]
	}
	return types.Null
}

func compare(op lang.Op, a, b types.Datum) tri {
	if a.IsNull() || b.IsNull() {
		return triUnknown
	}
	if op.Holds(types.CompareDatums(a, b)) {
		return triTrue
	}
	return triFalse
}

func not(t tri) tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triUnknown
}

func eval(e lang.Expr, rel *catalog.Relation, tuple []types.Datum) tri {
	switch x := e.(type) {
	case *lang.Binary:
		switch x.Op {
		case lang.OpAnd:
			l := eval(x.L, rel, tuple)
			if l == triFalse {
				return triFalse
			}
			r := eval(x.R, rel, tuple)
			if r == triFalse {
				return triFalse
			}
			if l == triTrue && r == triTrue {
				return triTrue
			}
			return triUnknown
		case lang.OpOr:
			l := eval(x.L, rel, tuple)
			if l == triTrue {
				return triTrue
			}
			r := eval(x.R, rel, tuple)
			if r == triTrue {
				return triTrue
			}
			if l == triFalse && r == triFalse {
				return triFalse
			}
			return triUnknown
		}
		return compare(x.Op, value(x.L, rel, tuple), value(x.R, rel, tuple))
	case *lang.Not:
		return not(eval(x.X, rel, tuple))
	case *lang.In:
		v := value(x.X, rel, tuple)
		res := triFalse
		for _, item := range x.List {
			switch compare(lang.OpEq, v, value(item, rel, tuple)) {
			case triTrue:
				res = triTrue
			case triUnknown:
				if res == triFalse {
					res = triUnknown
				}
			}
			if res == triTrue {
				break
			}
		}
		if x.Not {
			return not(res)
		}
		return res
	case *lang.Between:
		v := value(x.X, rel, tuple)
		lo := compare(lang.OpGe, v, value(x.Lo, rel, tuple))
		hi := compare(lang.OpLe, v, value(x.Hi, rel, tuple))
		res := triUnknown
		switch {
		case lo == triFalse || hi == triFalse:
			res = triFalse
		case lo == triTrue && hi == triTrue:
			res = triTrue
		}
		if x.Not {
			return not(res)
		}
		return res
	case *lang.Contains:
		c, v := value(x.X, rel, tuple), value(x.Elem, rel, tuple)
		if c.IsNull() || v.IsNull() {
			return triUnknown
		}
		if types.ContainsDatum(c, v, x.Key) {
			return triTrue
		}
		return triFalse
	case *lang.IsNull:
		isNull := value(x.X, rel, tuple).IsNull()
		if isNull != x.Not {
			return triTrue
		}
		return triFalse
	case *lang.Literal:
		switch v := x.Value.(type) {
		case bool:
			if v {
				return triTrue
			}
			return triFalse
		case nil:
			return triUnknown
		}
		return triFalse
	case *lang.ColumnRef:
		if v := value(x, rel, tuple); v.Type == types.Bool {
			if v.Bool() {
				return triTrue
			}
			return triFalse
		}
		return triUnknown
	}
	return triUnknown
}
