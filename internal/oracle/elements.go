package oracle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// ApplyElements is the reference of CQL's operations on a collection's
// elements, on Go values: old is the collection (nil: none), op the
// operation, operand its value (coerced to the assignment's operand type)
// and key a map's key or a list's position (AssignElement,
// AssignDelete). The result is canonical, NULL when empty for a collection
// stored one cell per element (as Cassandra reads an empty one). A list's
// position past its end is an error.
func ApplyElements(t types.Type, old types.Value, op lang.AssignOp, operand, key types.Value) (types.Value, error) {
	if l, _ := old.(types.List); t.Kind() == types.ListKind && (key != nil || op == lang.AssignRemove) {
		return listElements(t, slices.Clone(l), op, operand, key)
	}
	var out types.Value
	switch op {
	case lang.AssignValue:
		out = operand
	case lang.AssignDelete:
		if key == nil {
			return nil, nil
		}
		out = removeKeys(t, old, types.Set{key})
	case lang.AssignElement:
		if operand == nil {
			out = removeKeys(t, old, types.Set{key})
			break
		}
		m, _ := old.(types.Map)
		m = slices.DeleteFunc(slices.Clone(m), func(e types.Entry) bool { return types.Compare(e.Key, key) == 0 })
		out = append(m, types.Entry{Key: key, Val: operand})
	case lang.AssignAdd, lang.AssignPrepend:
		if operand == nil {
			out = old
			break
		}
		switch x := operand.(type) {
		case types.Set:
			// An element equal to one held replaces it (its cell is
			// rewritten): the new ones first, as Coerce keeps the first.
			s, _ := old.(types.Set)
			out = append(slices.Clone(x), s...)
		case types.List:
			l, _ := old.(types.List)
			if op == lang.AssignPrepend {
				out = append(slices.Clone(x), l...)
			} else {
				out = append(slices.Clone(l), x...)
			}
		case types.Map:
			m, _ := old.(types.Map)
			m = slices.DeleteFunc(slices.Clone(m), func(e types.Entry) bool {
				return slices.ContainsFunc(x, func(n types.Entry) bool { return types.Compare(n.Key, e.Key) == 0 })
			})
			out = append(m, x...)
		}
	case lang.AssignRemove:
		if operand == nil {
			out = old
			break
		}
		out = removeKeys(t, old, operand.(types.Set))
	default:
		return nil, fmt.Errorf("oracle: operation %d", op)
	}
	if out == nil {
		return nil, nil
	}
	c, err := types.Coerce(out, t)
	if err != nil {
		return nil, err
	}
	if !t.IsFrozen() && collectionLen(c) == 0 {
		return nil, nil
	}
	return c, nil
}

// listElements is ApplyElements of a list's operations by position (key)
// or value (AssignRemove).
func listElements(t types.Type, l types.List, op lang.AssignOp, operand, key types.Value) (types.Value, error) {
	switch {
	case op == lang.AssignRemove:
		if operand != nil {
			drop := operand.(types.List)
			l = slices.DeleteFunc(l, func(e types.Value) bool {
				return slices.ContainsFunc(drop, func(d types.Value) bool { return types.Compare(d, e) == 0 })
			})
		}
	default:
		i := key.(int64)
		if i < 0 || i >= int64(len(l)) {
			return nil, fmt.Errorf("oracle: list index %d out of bound (%d elements)", i, len(l))
		}
		if op == lang.AssignElement && operand != nil {
			l[i] = operand
		} else {
			l = slices.Delete(l, int(i), int(i)+1)
		}
	}
	if len(l) == 0 {
		return nil, nil
	}
	return types.Coerce(l, t)
}

// removeKeys is old without the set's elements or the map's entries whose
// key is in keys.
func removeKeys(t types.Type, old types.Value, keys types.Set) types.Value {
	in := func(k types.Value) bool {
		return slices.ContainsFunc(keys, func(x types.Value) bool { return types.Compare(x, k) == 0 })
	}
	switch x := old.(type) {
	case types.Set:
		return slices.DeleteFunc(slices.Clone(x), in)
	case types.Map:
		return slices.DeleteFunc(slices.Clone(x), func(e types.Entry) bool { return in(e.Key) })
	}
	return old
}

func collectionLen(v types.Value) int {
	switch x := v.(type) {
	case types.Set:
		return len(x)
	case types.List:
		return len(x)
	case types.Map:
		return len(x)
	}
	return -1
}

// hasElementOps reports whether w changes a collection element by element
// (or deletes a column), which SQL's UPDATE cannot say of JSON text.
func hasElementOps(w *catalog.Write) bool {
	return slices.ContainsFunc(w.Set, func(a catalog.Assign) bool { return a.Op != lang.AssignValue })
}

// elementWrite applies an UPDATE with operations on elements: it reads the
// tuples the WHERE selects (wh, wv), computes each one's new values in Go
// (ApplyElements) and writes them back by key.
func (o *Oracle) elementWrite(w *catalog.Write, args []types.Value, wh string, wv []any) error {
	e := w.Entity
	cols := []string{q(e.ID().Name)}
	for _, a := range w.Set {
		cols = append(cols, q(a.Field.Name))
	}
	rows, err := o.DB.Query("SELECT "+strings.Join(cols, ", ")+" FROM "+q(e.Name)+wh, wv...)
	if err != nil {
		return err
	}
	type tuple struct {
		id   any
		vals []types.Value
	}
	var tuples []tuple
	for rows.Next() {
		raw := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return err
		}
		tp := tuple{id: raw[0]}
		for i, a := range w.Set {
			tp.vals = append(tp.vals, FromSQL(raw[i+1], a.Field.Type))
		}
		tuples = append(tuples, tp)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, tp := range tuples {
		// A column's operations apply in statement order, each to what
		// the one before made of it; it is written once.
		cur := map[*catalog.Field]types.Value{}
		var order []*catalog.Field
		for i, a := range w.Set {
			var operand, key types.Value
			if a.Value != nil {
				v, err := typedValue(a.Value, args, a.OperandType())
				if err != nil {
					return err
				}
				operand = v
			}
			if a.Key != nil {
				k, err := typedValue(a.Key, args, a.KeyType())
				if err != nil {
					return err
				}
				key = k
			}
			old, seen := cur[a.Field]
			if !seen {
				old = tp.vals[i]
				order = append(order, a.Field)
			}
			nv, err := ApplyElements(a.Field.Type, old, a.Op, operand, key)
			if err != nil {
				return err
			}
			cur[a.Field] = nv
		}
		var sets []string
		var vals []any
		for _, f := range order {
			sets, vals = append(sets, q(f.Name)+" = ?"), append(vals, Arg(cur[f]))
		}
		if _, err := o.DB.Exec("UPDATE "+q(e.Name)+" SET "+strings.Join(sets, ", ")+" WHERE "+q(e.ID().Name)+" = ?", append(vals, tp.id)...); err != nil {
			return err
		}
	}
	return nil
}

// typedValue is the value x gives (a literal, or args' parameter),
// coerced to t.
func typedValue(x lang.Expr, args []types.Value, t types.Type) (types.Value, error) {
	var v types.Value
	switch e := x.(type) {
	case *lang.Literal:
		v = e.Value
	case *lang.Param:
		v = args[e.Index]
	default:
		return nil, fmt.Errorf("not a value: %s", lang.PrintExpr(x))
	}
	if v == nil {
		return nil, nil
	}
	return types.Coerce(v, t)
}
