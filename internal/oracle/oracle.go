// Package oracle is the reference the tests of advised schemas compare with: the
// same entity data in SQLite (modernc.org/sqlite), one table per entity with
// its declared columns (foreign keys included), queries translated from
// their model graphs into SQL joins, and writes applied with the semantics
// the engine documents (DELETE leaves referencing tuples unconnected,
// CONNECT replaces the to-one side's partner).
package oracle

import (
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"

	_ "modernc.org/sqlite" // the reference database
)

// Oracle holds a model's entity data in SQLite.
type Oracle struct {
	DB *sql.DB
	M  *catalog.Model
}

var dbSeq atomic.Int64

// NewOracle creates an in-memory SQLite database with a table per entity.
func NewOracle(m *catalog.Model) (*Oracle, error) {
	db, err := sql.Open("sqlite", fmt.Sprintf("file:oracle%d?mode=memory&cache=shared", dbSeq.Add(1)))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	for _, e := range m.Entities {
		var cols []string
		for _, c := range e.Columns {
			def := q(c.Name) + " " + SQLType(c.Type)
			if c.Field != nil && c.Field.Key {
				def += " PRIMARY KEY"
			}
			cols = append(cols, def)
		}
		if _, err := db.Exec("CREATE TABLE " + q(e.Name) + " (" + strings.Join(cols, ", ") + ")"); err != nil {
			return nil, err
		}
	}
	return &Oracle{DB: db, M: m}, nil
}

func q(name string) string { return `"` + name + `"` }

// SQLType is the SQLite column type holding values of t. A collection is
// JSON text (types.JSON), which SQLite's json_each reads for CONTAINS.
func SQLType(t types.Type) string {
	if t.IsCollection() {
		return "TEXT"
	}
	switch t {
	case types.String:
		return "TEXT"
	case types.Bytes:
		return "BLOB"
	case types.Double, types.Float:
		return "REAL"
	}
	return "INTEGER"
}

// Arg converts a value to what SQLite stores for it.
func Arg(v types.Value) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		return x.UnixMicro()
	case types.Set, types.List, types.Map:
		return types.JSON(x)
	}
	return v
}

// FromSQL converts what SQLite returns back to a value of type t.
func FromSQL(v any, t types.Type) types.Value {
	if v == nil {
		return nil
	}
	if t.IsCollection() {
		c, err := types.Coerce(v, t)
		if err != nil {
			panic(fmt.Sprintf("oracle: %s column holds %v: %v", t, v, err))
		}
		return c
	}
	switch t {
	case types.Bool:
		return v.(int64) != 0
	case types.Timestamp:
		return time.UnixMicro(v.(int64)).UTC()
	case types.String:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case types.Double, types.Float:
		if i, ok := v.(int64); ok {
			return float64(i)
		}
	}
	return v
}

// Insert adds one row (values in Entity.Columns order).
func (o *Oracle) Insert(e *catalog.Entity, row []types.Value) error {
	var cols, marks []string
	var args []any
	for i, c := range e.Columns {
		cols = append(cols, q(c.Name))
		marks = append(marks, "?")
		args = append(args, Arg(row[i]))
	}
	_, err := o.DB.Exec("INSERT INTO "+q(e.Name)+" ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(marks, ", ")+")", args...)
	return err
}

func value(x lang.Expr, args []types.Value, t types.Type) (any, error) {
	c, err := typedValue(x, args, t)
	if err != nil || c == nil || t.IsCollection() && !t.IsFrozen() && collectionLen(c) == 0 {
		return nil, err // an empty collection stored one cell per element is NULL
	}
	return Arg(c), nil
}

// cond is the SQL condition of predicate p on column col with one
// parameter, whose value *v (from Arg) it adjusts: CONTAINS looks for the
// value in the JSON text of the collection, json_extract reading the
// element's JSON as json_each does.
func cond(col string, p catalog.Pred, v *any) string {
	switch p.Op {
	case catalog.Contains, catalog.ContainsKey, catalog.NotContains, catalog.NotContainsKey:
		var elem types.Value
		switch x := (*v).(type) {
		case nil:
		case int64:
			elem = x
			if p.ValueType() == types.Timestamp {
				elem = time.UnixMicro(x).UTC()
			} else if p.ValueType() == types.Bool {
				elem = x != 0
			}
		default:
			elem = x
		}
		side := "value"
		if p.Op.OfKeys() {
			side = "key"
			if elem != nil {
				elem = types.JSONKey(elem)
			}
		}
		if elem != nil {
			*v = types.JSON(elem)
		}
		if elem == nil {
			// CONTAINS NULL is unknown, and so is its NOT: no row.
			return "(? IS NOT NULL AND 0)"
		}
		exists := "EXISTS (SELECT 1 FROM json_each(" + col + ") WHERE " + side + " = json_extract(?, '$'))"
		if p.Op.Negated() {
			// NULL (unknown) for a NULL collection, as CONTAINS.
			return "(" + col + " IS NOT NULL AND NOT " + exists + ")"
		}
		return exists
	}
	return col + " " + sqlOps[p.Op] + " ?"
}

var sqlOps = map[catalog.Op]string{catalog.Eq: "=", catalog.Ne: "!=", catalog.Lt: "<", catalog.Le: "<=", catalog.Gt: ">", catalog.Ge: ">="}

// Query answers a resolved query; rows hold the selected fields.
func (o *Oracle) Query(qr *catalog.Query, args []types.Value) ([][]types.Value, error) {
	return o.QueryOr(qr, [][]types.Value{args})
}

// QueryOr answers the query whose WHERE is an OR of qr's predicates, once
// for each argument list of argsets: SQL's answer to one SELECT with that
// OR, each row of the join at most once.
func (o *Oracle) QueryOr(qr *catalog.Query, argsets [][]types.Value) ([][]types.Value, error) {
	g := qr.Graph
	alias := func(n int) string { return fmt.Sprintf("n%d", n) }
	from := q(g.Nodes[0].Entity.Name) + " AS n0"
	for i := 1; i < len(g.Nodes); i++ {
		nd := g.Nodes[i]
		var on string
		if nd.Via.Many { // child holds the foreign key to its parent
			on = fmt.Sprintf("%s.%s = %s.%s", alias(i), q(nd.Via.Attr), alias(nd.Parent), q(g.Nodes[nd.Parent].Entity.ID().Name))
		} else {
			on = fmt.Sprintf("%s.%s = %s.%s", alias(nd.Parent), q(nd.Via.Attr), alias(i), q(nd.Entity.ID().Name))
		}
		from += " JOIN " + q(nd.Entity.Name) + " AS " + alias(i) + " ON " + on
	}
	col := func(r catalog.FieldRef) string { return alias(r.Node) + "." + q(r.Field.Name) }
	var sel, alts, order []string
	for _, r := range qr.Select {
		sel = append(sel, col(r))
	}
	var sqlArgs []any
	for _, args := range argsets {
		var where []string
		for _, p := range qr.Preds {
			v, err := value(p.Value, args, p.ValueType())
			if err != nil {
				return nil, err
			}
			where = append(where, cond(col(p.Ref), p, &v))
			sqlArgs = append(sqlArgs, v)
		}
		if len(where) > 0 {
			alts = append(alts, "("+strings.Join(where, " AND ")+")")
		}
	}
	for _, ob := range qr.OrderBy {
		d := ""
		if ob.Desc {
			d = " DESC"
		}
		order = append(order, col(ob.Ref)+d)
	}
	text := "SELECT " + strings.Join(sel, ", ") + " FROM " + from
	if len(alts) > 0 {
		text += " WHERE " + strings.Join(alts, " OR ")
	}
	if len(order) > 0 {
		text += " ORDER BY " + strings.Join(order, ", ")
	}
	if qr.Limit > 0 {
		text += fmt.Sprintf(" LIMIT %d", qr.Limit)
	}
	colTypes := make([]types.Type, len(qr.Select))
	for i, ref := range qr.Select {
		colTypes[i] = ref.Field.Type
	}
	out, err := o.scan(colTypes, text, sqlArgs...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", text, err)
	}
	return out, nil
}

// scan runs a query and converts its rows, column i to colTypes[i].
func (o *Oracle) scan(colTypes []types.Type, text string, args ...any) ([][]types.Value, error) {
	rows, err := o.DB.Query(text, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]types.Value
	raw := make([]any, len(colTypes))
	ptrs := make([]any, len(colTypes))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make([]types.Value, len(colTypes))
		for i, t := range colTypes {
			r[i] = FromSQL(raw[i], t)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Write applies a resolved write.
func (o *Oracle) Write(w *catalog.Write, args []types.Value) error {
	return o.WriteOr(w, [][]types.Value{args})
}

// WriteOr applies a resolved write whose WHERE is an OR of w's predicates,
// once for each argument list of argsets (the first gives the values it
// assigns): SQL's one statement, its WHERE evaluated before any change.
func (o *Oracle) WriteOr(w *catalog.Write, argsets [][]types.Value) error {
	e := w.Entity
	args := argsets[0]
	where := func() (string, []any, error) {
		var alts []string
		var vals []any
		for _, args := range argsets {
			var conds []string
			for _, p := range w.Preds {
				v, err := value(p.Value, args, p.ValueType())
				if err != nil {
					return "", nil, err
				}
				conds = append(conds, cond(q(p.Ref.Field.Name), p, &v))
				vals = append(vals, v)
			}
			if len(conds) == 0 {
				return "", nil, nil
			}
			alts = append(alts, "("+strings.Join(conds, " AND ")+")")
		}
		return " WHERE " + strings.Join(alts, " OR "), vals, nil
	}
	switch w.Kind {
	case catalog.Insert:
		var cols, marks []string
		var vals []any
		for _, a := range w.Set {
			v, err := value(a.Value, args, a.Field.Type)
			if err != nil {
				return err
			}
			cols, marks, vals = append(cols, q(a.Field.Name)), append(marks, "?"), append(vals, v)
		}
		for _, l := range w.Links {
			v, err := value(l.Value, args, l.Nav.To.ID().Type)
			if err != nil {
				return err
			}
			cols, marks, vals = append(cols, q(l.Nav.Attr)), append(marks, "?"), append(vals, v)
		}
		_, err := o.DB.Exec("INSERT INTO "+q(e.Name)+" ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(marks, ", ")+")", vals...)
		return err
	case catalog.Update:
		if hasElementOps(w) {
			wh, wv, err := where()
			if err != nil {
				return err
			}
			return o.elementWrite(w, args, wh, wv)
		}
		var sets []string
		var vals []any
		for _, a := range w.Set {
			v, err := value(a.Value, args, a.Field.Type)
			if err != nil {
				return err
			}
			sets, vals = append(sets, q(a.Field.Name)+" = ?"), append(vals, v)
		}
		wh, wv, err := where()
		if err != nil {
			return err
		}
		_, err = o.DB.Exec("UPDATE "+q(e.Name)+" SET "+strings.Join(sets, ", ")+wh, append(vals, wv...)...)
		return err
	case catalog.Delete:
		wh, wv, err := where()
		if err != nil {
			return err
		}
		// Tuples referencing the deleted ones are left unconnected.
		for _, n := range e.Navs {
			if n.Many {
				sub := "SELECT " + q(e.ID().Name) + " FROM " + q(e.Name) + wh
				if _, err := o.DB.Exec("UPDATE "+q(n.To.Name)+" SET "+q(n.Attr)+" = NULL WHERE "+q(n.Attr)+" IN ("+sub+")", wv...); err != nil {
					return err
				}
			}
		}
		_, err = o.DB.Exec("DELETE FROM "+q(e.Name)+wh, wv...)
		return err
	case catalog.Connect, catalog.Disconnect:
		k, err := value(w.Preds[0].Value, args, e.ID().Type)
		if err != nil {
			return err
		}
		t, err := value(w.Target, args, w.Nav.To.ID().Type)
		if err != nil {
			return err
		}
		child, parentKey, childKey := e, t, k
		if w.Nav.Many {
			child, parentKey, childKey = w.Nav.To, k, t
		}
		if w.Kind == catalog.Connect {
			_, err = o.DB.Exec("UPDATE "+q(child.Name)+" SET "+q(w.Nav.Attr)+" = ? WHERE "+q(child.ID().Name)+" = ?", parentKey, childKey)
		} else {
			_, err = o.DB.Exec("UPDATE "+q(child.Name)+" SET "+q(w.Nav.Attr)+" = NULL WHERE "+q(child.ID().Name)+" = ? AND "+q(w.Nav.Attr)+" = ?", childKey, parentKey)
		}
		return err
	}
	return fmt.Errorf("unknown write %v", w.Kind)
}

// Rows returns every row of an entity (Entity.Columns order), by key.
func (o *Oracle) Rows(e *catalog.Entity) ([][]types.Value, error) {
	var cols []string
	var colTypes []types.Type
	for _, c := range e.Columns {
		cols = append(cols, q(c.Name))
		colTypes = append(colTypes, c.Type)
	}
	return o.scan(colTypes, "SELECT "+strings.Join(cols, ", ")+" FROM "+q(e.Name)+" ORDER BY "+q(e.ID().Name))
}

// Canon writes rows as sorted text lines, for comparing multisets.
func Canon(rows [][]types.Value) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			parts[j] = types.Format(v)
		}
		out[i] = strings.Join(parts, " | ")
	}
	sort.Strings(out)
	return out
}

// Lines writes rows as text lines in their order.
func Lines(rows [][]types.Value) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			parts[j] = types.Format(v)
		}
		out[i] = strings.Join(parts, " | ")
	}
	return out
}
