package kvschema

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// aggregate runs a SELECT with aggregate functions or GROUP BY, on either
// kind of schema: the SELECT of the attributes it needs (its groups and
// the aggregates' arguments, same FROM and WHERE) runs as any other, then
// the client groups its rows and computes COUNT, MIN, MAX, SUM and AVG
// with SQL's rules — NULLs are skipped, COUNT(*) counts rows, an empty
// input gives one row (COUNT 0, the others NULL) unless grouped, SUM of
// integers is an integer (an overflow is an error), AVG a DOUBLE — then
// sorts the groups and applies the limit. EXPLAIN shows the base plan and
// CLIENT AGGREGATE.
type aggregate struct {
	sel   *lang.Select
	base  *Stmt
	items []aggItem
	// groups is the number of distinct GROUP BY attributes: the first
	// columns of the base rows. width is the number of base columns named
	// (-1 for * or x.*).
	groups, width int
	order         []aggOrder
	limit         int64 // -1: none
}

// aggItem is one item of the select list: an aggregate (fn) of base
// column col (-1: COUNT(*)), or group attribute group.
type aggItem struct {
	fn    string
	col   int
	group int
	at    lang.Pos
	name  string
}

// aggOrder sorts the groups by one GROUP BY attribute.
type aggOrder struct {
	group int
	desc  bool
}

// sameRef reports whether a and b name one attribute in one way (names
// case-insensitive).
func sameRef(a lang.ColumnRef, q []string, name string) bool {
	if len(a.Qual) != len(q) || !strings.EqualFold(a.Name, name) {
		return false
	}
	for i := range q {
		if !strings.EqualFold(a.Qual[i], q[i]) {
			return false
		}
	}
	return true
}

// newAggregate checks an aggregate SELECT and builds the SELECT of its
// base rows.
func (db *DB) newAggregate(sel *lang.Select) (*aggregate, error) {
	if sel.Star {
		return nil, &lang.Error{Pos: sel.At, Msg: "SELECT * cannot be grouped: list the GROUP BY attributes and aggregates"}
	}
	a := &aggregate{sel: sel, limit: -1}
	base := *sel
	base.GroupBy, base.OrderBy, base.Limit = nil, nil, nil
	base.Columns = nil
	for _, g := range sel.GroupBy { // each once: base rows name an attribute once
		if slices.IndexFunc(base.Columns, func(b lang.ColumnRef) bool { return sameRef(b, g.Qual, g.Name) }) < 0 {
			base.Columns = append(base.Columns, g)
		}
	}
	a.groups = len(base.Columns)
	groupOf := func(q []string, name string) int {
		return slices.IndexFunc(base.Columns[:a.groups], func(g lang.ColumnRef) bool { return sameRef(g, q, name) })
	}
	for _, c := range sel.Columns {
		it := aggItem{fn: c.Agg, col: -1, group: -1, at: c.At, name: lang.PrintExpr(&c)}
		switch {
		case c.Agg == "" && c.Star:
			return nil, &lang.Error{Pos: c.At, Msg: fmt.Sprintf("%s cannot be grouped: list the GROUP BY attributes and aggregates", it.name)}
		case c.Agg == "":
			if it.group = groupOf(c.Qual, c.Name); it.group < 0 {
				return nil, &lang.Error{Pos: c.At, Msg: fmt.Sprintf("%s must appear in GROUP BY or be used in an aggregate function", it.name)}
			}
		case !c.Star:
			// Each attribute once: a select list names an attribute once
			// in its result (the advised schema's resolution merges them).
			it.col = slices.IndexFunc(base.Columns, func(b lang.ColumnRef) bool { return sameRef(b, c.Qual, c.Name) })
			if it.col < 0 {
				arg := c
				arg.Agg = ""
				it.col = len(base.Columns)
				base.Columns = append(base.Columns, arg)
			}
		}
		a.items = append(a.items, it)
	}
	if len(base.Columns) == 0 {
		// COUNT(*) alone: any attributes will do, one row per tuple (per
		// path instance, along a path or joins).
		switch {
		case len(sel.Path) > 0:
			base.Columns = []lang.ColumnRef{{At: sel.At, Qual: []string{sel.Path[len(sel.Path)-1]}, Star: true}}
		case len(sel.Joins) > 0:
			q := sel.Alias
			if q == "" {
				q = sel.Relation
			}
			base.Columns = []lang.ColumnRef{{At: sel.At, Qual: []string{q}, Star: true}}
		default:
			base.Star = true
		}
		a.width = -1 // any number of columns
	} else {
		a.width = len(base.Columns)
	}
	for _, o := range sel.OrderBy {
		g := groupOf(o.Qual, o.Column)
		if g < 0 {
			return nil, &lang.Error{Pos: o.At, Msg: "ORDER BY of a grouped query takes GROUP BY attributes"}
		}
		a.order = append(a.order, aggOrder{group: g, desc: o.Desc})
	}
	if sel.Limit != nil {
		var n int64 = -1
		if lit, ok := sel.Limit.(*lang.Literal); ok {
			if v, ok := lit.Value.(int64); ok {
				n = v
			}
		}
		if n < 0 {
			return nil, &lang.Error{Pos: sel.Limit.Pos(), Msg: "the LIMIT of an aggregate query must be a constant integer ≥ 0"}
		}
		a.limit = n
	}
	a.base = newStmt(db, &base, "")
	return a, nil
}

// aggregatePlan returns the statement's aggregate plan, made once.
func (s *Stmt) aggregatePlan(sel *lang.Select) (*aggregate, error) {
	if a := s.agg.Load(); a != nil {
		return a, nil
	}
	a, err := s.db.newAggregate(sel)
	if err != nil {
		return nil, err
	}
	s.agg.Store(a)
	return a, nil
}

// explain is the base plan followed by the aggregation.
func (a *aggregate) explain(ctx context.Context, args []any) (string, error) {
	plan, err := a.base.Explain(ctx, args...)
	if err != nil {
		return "", err
	}
	how := "CLIENT AGGREGATE INTO SINGLE ROW"
	if a.groups > 0 {
		var by []string
		for _, g := range a.sel.GroupBy {
			by = append(by, lang.PrintExpr(&g))
		}
		how = "CLIENT AGGREGATE INTO DISTINCT ROWS BY [" + strings.Join(by, ", ") + "]"
	}
	plan += how + "\n"
	if len(a.order) > 0 {
		var by []string
		for _, o := range a.sel.OrderBy {
			t := lang.PrintExpr(&lang.ColumnRef{Qual: o.Qual, Name: o.Column})
			if o.Desc {
				t += " DESC"
			}
			by = append(by, t)
		}
		plan += "CLIENT SORT BY [" + strings.Join(by, ", ") + "]\n"
	}
	if a.limit >= 0 {
		plan += fmt.Sprintf("CLIENT %d ROW LIMIT\n", a.limit)
	}
	return plan, nil
}

// accum is one aggregate's state in one group.
type accum struct {
	n    int64 // non-NULL values (rows, for COUNT(*))
	ext  types.Datum
	isum int64
	fsum float64
}

// group is one group's key values and aggregates.
type group struct {
	key  []types.Datum
	accs []accum
}

// run computes the aggregates over the base rows.
func (a *aggregate) run(ctx context.Context, args []any) (*Rows, error) {
	_, in, err := a.base.run(ctx, args)
	if err != nil {
		return nil, err
	}
	if a.width >= 0 && len(in.Columns()) != a.width {
		return nil, &lang.Error{Pos: a.sel.At, Msg: "the select list names one attribute in two ways: name it one way"}
	}
	colTypes := in.ColumnTypes()
	cols := make([]string, len(a.items))
	outTypes := make([]types.Type, len(a.items))
	for i, it := range a.items {
		cols[i] = it.name
		switch {
		case it.fn == "":
			cols[i] = in.Columns()[it.group]
			outTypes[i] = colTypes[it.group]
		case it.fn == "COUNT":
			outTypes[i] = types.BigInt
		case it.fn == "MIN" || it.fn == "MAX":
			outTypes[i] = colTypes[it.col]
		default: // SUM, AVG
			t := colTypes[it.col]
			if !numeric(t) {
				return nil, &lang.Error{Pos: it.at, Msg: fmt.Sprintf("%s needs a numeric attribute, not %s", it.name, t)}
			}
			outTypes[i] = types.Double
			if it.fn == "SUM" && !isFloat(t) {
				outTypes[i] = types.BigInt
			}
		}
	}
	var groups []*group
	byKey := map[string]*group{}
	var key []byte
	for in.Next() {
		row := in.Datums()
		key = key[:0]
		for g := 0; g < a.groups; g++ {
			if key, err = keyenc.AppendOrdered(key, colTypes[g], row[g].Value(), true); err != nil {
				return nil, err
			}
		}
		gr := byKey[string(key)]
		if gr == nil {
			gr = &group{key: slices.Clone(row[:a.groups]), accs: make([]accum, len(a.items))}
			byKey[string(key)] = gr
			groups = append(groups, gr)
		}
		for i, it := range a.items {
			if err := it.add(&gr.accs[i], row, colTypes); err != nil {
				return nil, err
			}
		}
	}
	if len(groups) == 0 && a.groups == 0 {
		groups = []*group{{accs: make([]accum, len(a.items))}} // one row over nothing
	}
	if len(a.order) > 0 {
		slices.SortStableFunc(groups, func(x, y *group) int {
			for _, o := range a.order {
				c := types.CompareDatums(x.key[o.group], y.key[o.group])
				if o.desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	if a.limit >= 0 && int64(len(groups)) > a.limit {
		groups = groups[:a.limit]
	}
	out := newRows(cols, outTypes)
	for _, gr := range groups {
		row := out.add()
		for i, it := range a.items {
			row[i] = it.result(gr, &gr.accs[i], outTypes[i])
		}
	}
	return out, nil
}

func numeric(t types.Type) bool {
	return t == types.Int || t == types.BigInt || t == types.Float || t == types.Double
}

func isFloat(t types.Type) bool { return t == types.Float || t == types.Double }

// add takes one base row into an aggregate.
func (it aggItem) add(acc *accum, row []types.Datum, colTypes []types.Type) error {
	if it.fn == "" {
		return nil
	}
	if it.col < 0 { // COUNT(*)
		acc.n++
		return nil
	}
	d := row[it.col]
	if d.IsNull() {
		return nil
	}
	acc.n++
	switch it.fn {
	case "MIN", "MAX":
		if acc.n == 1 {
			acc.ext = d
			break
		}
		c := types.CompareDatums(d, acc.ext)
		if it.fn == "MIN" && c < 0 || it.fn == "MAX" && c > 0 {
			acc.ext = d
		}
	case "SUM", "AVG":
		if isFloat(colTypes[it.col]) {
			acc.fsum += d.Float()
			break
		}
		v := d.Int()
		s := acc.isum + v
		if (v > 0 && s < acc.isum) || (v < 0 && s > acc.isum) {
			return &lang.Error{Pos: it.at, Msg: fmt.Sprintf("%s: integer overflow", it.name)}
		}
		acc.isum = s
	}
	return nil
}

// result is an aggregate's value for a group.
func (it aggItem) result(gr *group, acc *accum, t types.Type) types.Datum {
	switch it.fn {
	case "":
		return gr.key[it.group]
	case "COUNT":
		return types.IntDatum(types.BigInt, acc.n)
	}
	if acc.n == 0 {
		return types.Datum{} // NULL
	}
	switch it.fn {
	case "MIN", "MAX":
		return acc.ext
	case "SUM":
		if t == types.BigInt {
			return types.IntDatum(types.BigInt, acc.isum)
		}
		return types.FloatDatum(types.Double, acc.fsum)
	}
	// AVG: one of the sums is zero (the column is of integers or not).
	return types.FloatDatum(types.Double, (acc.fsum+float64(acc.isum))/float64(acc.n))
}

// runAggregate runs s if it is an aggregate SELECT or its EXPLAIN (ok
// reports whether it is).
func (s *Stmt) runAggregate(ctx context.Context, args []any) (res Result, rows *Rows, ok bool, err error) {
	sel, _ := s.ast.(*lang.Select)
	ex, explain := s.ast.(*lang.Explain)
	if explain {
		sel, _ = ex.Stmt.(*lang.Select)
	}
	if sel == nil || !sel.Aggregated() {
		return Result{}, nil, false, nil
	}
	res.Statement = kindOf(s.ast)
	a, err := s.aggregatePlan(sel)
	if err != nil {
		return res, nil, true, err
	}
	if explain {
		res.Plan, err = a.explain(ctx, args)
		return res, nil, true, err
	}
	rows, err = a.run(ctx, args)
	if err != nil {
		return res, nil, true, err
	}
	res.RowsAffected = int64(rows.n)
	return res, rows, true, nil
}
