package kvschema

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

// aggregate runs a SELECT with aggregate functions or GROUP BY, on either
// kind of schema: the SELECT of the attributes it needs (its groups and
// the aggregates' arguments, same FROM and WHERE) runs as any other, then
// the client groups its rows and computes COUNT, MIN, MAX, SUM and AVG
// (of DISTINCT values too) with SQL's rules — NULLs are skipped, COUNT(*)
// counts rows, an empty input gives one row (COUNT 0, the others NULL)
// unless grouped, SUM of integers is an integer (an overflow is an error),
// AVG a DOUBLE — keeps the groups HAVING holds for, sorts them (by GROUP BY
// attributes and aggregates) and applies the limit. EXPLAIN shows the base
// plan and CLIENT AGGREGATE.
type aggregate struct {
	sel  *lang.Select
	base *Stmt
	// nbase is the number of parameters the base SELECT takes: the first
	// ones (JOIN and WHERE come before HAVING and LIMIT).
	nbase int
	// items are the select list's (the first visible), then the
	// aggregates only HAVING or ORDER BY compute.
	items   []aggItem
	visible int
	// groups is the number of distinct GROUP BY attributes: the first
	// columns of the base rows. width is the number of base columns named
	// (-1 for * or x.*).
	groups, width int
	// having is the HAVING condition over a group's row (its GROUP BY
	// attributes, then its items, named as havingNames says), or nil.
	having     lang.Expr
	groupNames []string
	order      []aggOrder
	limit      lang.Expr // nil: none
}

// aggItem is one aggregate (fn) of base column col (-1: COUNT(*)), of its
// distinct values when distinct, or group attribute group.
type aggItem struct {
	fn       string
	col      int
	group    int
	distinct bool
	at       lang.Pos
	name     string
}

// aggOrder sorts the groups by one GROUP BY attribute (group), or by an
// item (item ≥ 0).
type aggOrder struct {
	group, item int
	desc        bool
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
	a := &aggregate{sel: sel}
	base := *sel
	base.GroupBy, base.Having, base.OrderBy, base.Limit = nil, nil, nil, nil
	base.Columns = nil
	for _, g := range sel.GroupBy { // each once: base rows name an attribute once
		if slices.IndexFunc(base.Columns, func(b lang.ColumnRef) bool { return sameRef(b, g.Qual, g.Name) }) < 0 {
			base.Columns = append(base.Columns, g)
		}
	}
	a.groups = len(base.Columns)
	for _, g := range base.Columns {
		a.groupNames = append(a.groupNames, lang.PrintExpr(&g))
	}
	groupOf := func(q []string, name string) int {
		return slices.IndexFunc(base.Columns[:a.groups], func(g lang.ColumnRef) bool { return sameRef(g, q, name) })
	}
	// resolve makes the item of aggregate c, its argument a base column.
	resolve := func(c lang.ColumnRef) aggItem {
		it := aggItem{fn: c.Agg, col: -1, group: -1, distinct: c.Distinct, at: c.At, name: lang.PrintExpr(&c)}
		if !c.Star {
			// Each attribute once: a select list names an attribute once
			// in its result (the advised schema's resolution merges them).
			it.col = slices.IndexFunc(base.Columns, func(b lang.ColumnRef) bool { return sameRef(b, c.Qual, c.Name) })
			if it.col < 0 {
				arg := c
				arg.Agg, arg.Distinct = "", false
				it.col = len(base.Columns)
				base.Columns = append(base.Columns, arg)
			}
		}
		return it
	}
	for _, c := range sel.Columns {
		name := lang.PrintExpr(&c)
		switch {
		case c.Agg == "" && c.Star:
			return nil, &lang.Error{Pos: c.At, Msg: fmt.Sprintf("%s cannot be grouped: list the GROUP BY attributes and aggregates", name)}
		case c.Agg == "":
			g := groupOf(c.Qual, c.Name)
			if g < 0 {
				return nil, &lang.Error{Pos: c.At, Msg: fmt.Sprintf("%s must appear in GROUP BY or be used in an aggregate function", name)}
			}
			a.items = append(a.items, aggItem{col: -1, group: g, at: c.At, name: name})
		default:
			a.items = append(a.items, resolve(c))
		}
	}
	a.visible = len(a.items)
	// aggOf returns the item computing aggregate c, added (hidden) if new.
	aggOf := func(c lang.ColumnRef) int {
		it := resolve(c)
		if i := slices.IndexFunc(a.items, func(x aggItem) bool {
			return x.fn == it.fn && x.col == it.col && x.distinct == it.distinct
		}); i >= 0 {
			return i
		}
		a.items = append(a.items, it)
		return len(a.items) - 1
	}
	if sel.Having != nil {
		h, err := a.groupExpr(sel.Having, groupOf, aggOf)
		if err != nil {
			return nil, err
		}
		a.having = h
	}
	for _, o := range sel.OrderBy {
		if o.Agg != "" {
			a.order = append(a.order, aggOrder{group: -1, item: aggOf(o.Ref()), desc: o.Desc})
			continue
		}
		g := groupOf(o.Qual, o.Column)
		if g < 0 {
			return nil, &lang.Error{Pos: o.At, Msg: "ORDER BY of a grouped query takes GROUP BY attributes and aggregates"}
		}
		a.order = append(a.order, aggOrder{group: g, item: -1, desc: o.Desc})
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
	a.limit = sel.Limit
	a.nbase = lang.CountParams(&base)
	a.base = newStmt(db, &base, "")
	return a, nil
}

// groupExpr rewrites e, a HAVING condition, over a group's row: each
// GROUP BY attribute and each aggregate becomes a reference to its column
// there (named by groupRow).
func (a *aggregate) groupExpr(e lang.Expr, groupOf func([]string, string) int, aggOf func(lang.ColumnRef) int) (lang.Expr, error) {
	var err error
	var walk func(e lang.Expr) lang.Expr
	walk = func(e lang.Expr) lang.Expr {
		switch x := e.(type) {
		case *lang.ColumnRef:
			if x.Agg != "" {
				return &lang.ColumnRef{At: x.At, Name: a.colName(a.groups + aggOf(*x))}
			}
			g := groupOf(x.Qual, x.Name)
			if g < 0 {
				if err == nil {
					err = &lang.Error{Pos: x.At, Msg: fmt.Sprintf("HAVING: %s must appear in GROUP BY or be used in an aggregate function", lang.PrintExpr(x))}
				}
				return x
			}
			return &lang.ColumnRef{At: x.At, Name: a.colName(g)}
		case *lang.Binary:
			return &lang.Binary{At: x.At, Op: x.Op, L: walk(x.L), R: walk(x.R)}
		case *lang.Not:
			return &lang.Not{At: x.At, X: walk(x.X)}
		case *lang.IsNull:
			return &lang.IsNull{At: x.At, X: walk(x.X), Not: x.Not}
		case *lang.Contains:
			return &lang.Contains{At: x.At, X: walk(x.X), Elem: walk(x.Elem), Key: x.Key}
		case *lang.Between:
			return &lang.Between{At: x.At, X: walk(x.X), Lo: walk(x.Lo), Hi: walk(x.Hi), Not: x.Not}
		case *lang.In:
			in := &lang.In{At: x.At, X: walk(x.X), Not: x.Not}
			for _, v := range x.List {
				in.List = append(in.List, walk(v))
			}
			return in
		}
		return e
	}
	out := walk(e)
	return out, err
}

// colName names column j of a group's row (its GROUP BY attributes, then
// its items) in the relation HAVING is evaluated over: as written, so that
// errors read as the statement does (groupRow keeps names unique).
func (a *aggregate) colName(j int) string {
	if j < a.groups {
		return a.groupNames[j]
	}
	return a.items[j-a.groups].name
}

// groupRow is the relation of a group's row, its columns of types ts.
// A name written twice (SELECT COUNT(*), COUNT(*)) names the first such
// column: the one HAVING refers to (aggOf finds the first).
func (a *aggregate) groupRow(ts []types.Type) *catalog.Relation {
	fields := make([]*catalog.Field, len(ts))
	seen := map[string]bool{}
	for j, t := range ts {
		name := a.colName(j)
		if k := strings.ToLower(name); seen[k] {
			name = fmt.Sprintf("%s (%d)", name, j+1)
		} else {
			seen[k] = true
		}
		fields[j] = &catalog.Field{Name: name, Type: t}
	}
	return catalog.NewRelation("groups", fields)
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
	if a.sel.Having != nil {
		plan += "CLIENT FILTER BY " + lang.PrintExpr(a.sel.Having) + "\n"
	}
	if len(a.order) > 0 {
		var by []string
		for _, o := range a.sel.OrderBy {
			r := o.Ref()
			t := lang.PrintExpr(&r)
			if o.Desc {
				t += " DESC"
			}
			by = append(by, t)
		}
		plan += "CLIENT SORT BY [" + strings.Join(by, ", ") + "]\n"
	}
	if a.limit != nil {
		plan += "CLIENT " + lang.PrintExpr(a.limit) + " ROW LIMIT\n"
	}
	return plan, nil
}

// accum is one aggregate's state in one group.
type accum struct {
	seen map[string]bool // the values taken, for an aggregate of DISTINCT values
	n    int64           // non-NULL values (rows, for COUNT(*))
	ext  types.Datum
	isum int64
	fsum float64
}

// group is one group's key values and aggregates, and once they are
// computed its row (key values, then every item's value).
type group struct {
	key  []types.Datum
	accs []accum
	row  []types.Datum
}

// run computes the aggregates over the base rows.
func (a *aggregate) run(ctx context.Context, args []any) (*Rows, error) {
	_, in, err := a.base.run(ctx, args[:min(a.nbase, len(args))])
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
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	var having lang.Expr
	var rowRel *catalog.Relation
	if a.having != nil {
		rowRel = a.groupRow(append(slices.Clone(colTypes[:a.groups]), outTypes...))
		if having, err = plan.Bind(a.having, rowRel, vals); err != nil {
			return nil, err
		}
	}
	limit := int64(-1)
	if a.limit != nil {
		var v types.Value
		switch x := a.limit.(type) {
		case *lang.Literal:
			v = x.Value
		case *lang.Param:
			if v, err = plan.Arg(vals, x); err != nil {
				return nil, err
			}
		}
		n, ok := v.(int64)
		if !ok || n < 0 {
			return nil, &lang.Error{Pos: a.limit.Pos(), Msg: fmt.Sprintf("LIMIT takes an integer ≥ 0, not %s", types.Format(v))}
		}
		limit = n
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
	// Each group's row: its GROUP BY attributes, then its items.
	kept := groups[:0]
	for _, gr := range groups {
		gr.row = append(make([]types.Datum, 0, a.groups+len(a.items)), gr.key...)
		for i, it := range a.items {
			gr.row = append(gr.row, it.result(gr, &gr.accs[i], outTypes[i]))
		}
		if having == nil || plan.Eval(having, rowRel, gr.row) {
			kept = append(kept, gr)
		}
	}
	groups = kept
	if len(a.order) > 0 {
		slices.SortStableFunc(groups, func(x, y *group) int {
			for _, o := range a.order {
				j := o.group
				if o.item >= 0 {
					j = a.groups + o.item
				}
				c := types.CompareDatums(x.row[j], y.row[j])
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
	if limit >= 0 && int64(len(groups)) > limit {
		groups = groups[:limit]
	}
	out := newRows(cols[:a.visible], outTypes[:a.visible])
	for _, gr := range groups {
		copy(out.add(), gr.row[a.groups:])
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
	if it.distinct {
		k, err := keyenc.AppendOrderedDatum(nil, colTypes[it.col], d, true)
		if err != nil {
			return err
		}
		if acc.seen == nil {
			acc.seen = map[string]bool{}
		}
		if acc.seen[string(k)] {
			return nil // each value once
		}
		acc.seen[string(k)] = true
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
