//go:build !race

package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// insertAll loads data through the engine's INSERT path and the oracle.
func insertAll(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, d *gen.Data) {
	t.Helper()
	for _, e := range d.Order {
		var cols, marks []string
		for _, c := range e.Columns {
			cols = append(cols, c.Name)
			marks = append(marks, "?")
		}
		st, err := en.Prepare("INSERT INTO " + e.Name + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")")
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range d.Rows[e] {
			if _, err := st.Exec(ctx, row...); err != nil {
				t.Fatalf("%s %v: %v", e.Name, row, err)
			}
			if err := or.Insert(e, row); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkQuery compares one query's answer with the oracle's.
func checkQuery(t testing.TB, ctx context.Context, st *exec.Stmt, or *oracle.Oracle, args []types.Value) int {
	t.Helper()
	return checkQueryOr(t, ctx, st, or, [][]types.Value{args})
}

// checkQueryOr compares the answer of a query whose WHERE is an OR of the
// WHERE of st.Resolved with each argument list of argsets (st takes their
// concatenation) with the oracle's.
func checkQueryOr(t testing.TB, ctx context.Context, st *exec.Stmt, or *oracle.Oracle, argsets [][]types.Value) int {
	t.Helper()
	args := slices.Concat(argsets...)
	got, err := st.Query(ctx, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", st.Text, args, err)
	}
	want, err := or.QueryOr(st.Resolved, argsets)
	if err != nil {
		t.Fatal(err)
	}
	q := st.Resolved
	switch {
	case q.Limit > 0 && len(q.OrderBy) > 0:
		checkTopK(t, st, or, argsets, got.Values())
	case q.Limit > 0 && len(q.OrderBy) == 0:
		// Any Limit rows of the answer will do.
		full := *q
		full.Limit = 0
		all, err := or.QueryOr(&full, argsets)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != len(want) || !subset(oracle.Canon(got.Values()), oracle.Canon(all)) {
			t.Fatalf("%s %v:\n got %d rows %v\nwant %d of %v\nplan:\n%s", st.Text, args, len(got.Rows), oracle.Canon(got.Values()), len(want), oracle.Canon(all), st.Explain())
		}
	default:
		g, w := oracle.Canon(got.Values()), oracle.Canon(want)
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%s %v:\n got %v\nwant %v\nplan:\n%s", st.Text, args, g, w, st.Explain())
		}
		if len(q.OrderBy) > 0 && !ordered(got.Values(), st) {
			t.Fatalf("%s: rows out of order: %v", st.Text, oracle.Lines(got.Values()))
		}
	}
	return len(got.Rows)
}

func subset(a, b []string) bool {
	have := map[string]int{}
	for _, s := range b {
		have[s]++
	}
	for _, s := range a {
		if have[s] == 0 {
			return false
		}
		have[s]--
	}
	return true
}

// ordered checks the ORDER BY on the selected columns it names.
func ordered(rows [][]types.Value, st *exec.Stmt) bool {
	q := st.Resolved
	for i := 1; i < len(rows); i++ {
		for _, o := range q.OrderBy {
			col := -1
			for j, r := range q.Select {
				if r == o.Ref {
					col = j
				}
			}
			if col < 0 {
				break
			}
			c := types.Compare(rows[i-1][col], rows[i][col])
			if o.Desc {
				c = -c
			}
			if c < 0 {
				break
			}
			if c > 0 {
				return false
			}
		}
	}
	return true
}

// TestRUBiSAgainstSQLite runs every statement of the 61-statement workload
// on the advisor's schema in each mode and compares with SQLite.
func TestRUBiSAgainstSQLite(t *testing.T) {
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	for _, mode := range []advisor.Mode{advisor.WithSI, advisor.NoSI, advisor.Normalized} {
		t.Run(mode.String(), func(t *testing.T) {
			res := advise(t, m, w, mode, 161e6)
			runRUBiS(t, m, w, res, memstore.New())
		})
	}
}

// TestRUBiSStaticAgainstSQLite runs the 61-statement workload on the
// advisor's schema with static-column candidates (it picks several, with
// the items' fields kept once per item beside its bids) and compares with
// SQLite.
func TestRUBiSStaticAgainstSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("advises the 61 statements with more candidates (seconds)")
	}
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	res, err := advisor.Advise(context.Background(), m, w, advisor.Options{Mix: "bidding", Profile: cost.Cassandra, Budget: 161e6, Solver: &solver.CBC{}, StaticColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	static := 0
	for _, x := range res.Indexes {
		if len(x.Static) > 0 {
			static++
		}
	}
	if static < 2 {
		t.Fatalf("%d column families with static columns: the test checks little", static)
	}
	runRUBiS(t, m, w, res, memstore.New())
}

func runRUBiS(t *testing.T, m *catalog.Model, w *workload.Workload, res *advisor.Result, st store.Store) {
	ctx := context.Background()
	en := exec.New(st, m, res.Schema, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	or, err := oracle.NewOracle(m)
	if err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, tinyRUBiS, 1, 0)
	insertAll(t, ctx, en, or, d)
	r := rand.New(rand.NewPCG(2, 3))
	nonEmpty := 0
	for round := 0; round < 3; round++ {
		nonEmpty += runQueries(t, ctx, en, or, w, d, r, 5)
	}
	if nonEmpty == 0 {
		t.Fatal("every query answered nothing: the test checks nothing")
	}
	if scans == 0 || mergedUnions == 0 {
		t.Fatalf("%d queries answered by a full scan, %d IN lists by one program: checkScan or checkUnions checks nothing", scans, mergedUnions)
	}
	checkVerify(t, ctx, en, or)
	// Writes of the workload with random arguments, then every query again.
	next := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		next[e] = len(d.Rows[e]) + 1
	}
	for round := 0; round < 2; round++ {
		runWrites(t, ctx, en, or, w, d, r, next, 3)
		checkVerify(t, ctx, en, or)
		runQueries(t, ctx, en, or, w, d, r, 3)
	}
	if rangeWrites == 0 || orWrites == 0 {
		t.Fatalf("%d writes with ranges, %d with OR: rangeWrite or orWrite checks nothing", rangeWrites, orWrites)
	}
	t.Logf("%d non-empty answers, %d queries answered by a full scan, %d IN lists by one program, %d writes with ranges, %d with OR", nonEmpty, scans, mergedUnions, rangeWrites, orWrites)
}

// writeArgs draws arguments for a write: fresh keys for inserted tuples,
// existing keys for links and predicates, random values otherwise.
func writeArgs(r *rand.Rand, d *gen.Data, w *catalog.Write, next map[*catalog.Entity]int) []types.Value {
	var args []types.Value
	put := func(x lang.Expr, v types.Value) {
		if p, ok := x.(*lang.Param); ok {
			for len(args) <= p.Index {
				args = append(args, nil)
			}
			args[p.Index] = v
		}
	}
	existing := func(e *catalog.Entity) types.Value {
		rows := d.Rows[e]
		return rows[r.IntN(len(rows))][e.Column(e.ID())]
	}
	for _, a := range w.Set {
		if a.Field.Key {
			put(a.Value, gen.KeyValue(a.Field.Type, next[w.Entity]))
			next[w.Entity]++
			continue
		}
		card := int(min(a.Field.Cardinality, 8))
		if a.Value != nil {
			put(a.Value, gen.RandomValue(r, a.OperandType(), card))
		}
		if a.Key != nil {
			put(a.Key, gen.RandomValue(r, a.KeyType(), card))
		}
	}
	for _, l := range w.Links {
		put(l.Value, existing(l.Nav.To))
	}
	for _, p := range w.Preds {
		if p.Ref.Field.Key {
			put(p.Value, existing(w.Entity))
		} else {
			put(p.Value, gen.RandomValue(r, p.ValueType(), int(min(p.Ref.Field.Cardinality, 8))))
		}
	}
	if w.Target != nil {
		put(w.Target, existing(w.Nav.To))
	}
	return args
}

// refresh reloads the generated data from the oracle after writes.
func refresh(t testing.TB, d *gen.Data, or *oracle.Oracle) {
	t.Helper()
	for _, e := range d.Order {
		rows, err := or.Rows(e)
		if err != nil {
			t.Fatal(err)
		}
		d.Rows[e] = rows
	}
}

// checkVerify runs Verify against the oracle's data and on its own.
func checkVerify(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle) {
	t.Helper()
	// The engine's model may be another parse of the oracle's: entities
	// match by name.
	ref := exec.NewDataset(en.Model())
	for _, e := range or.M.Entities {
		rows, err := or.Rows(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			ref.Add(en.Model().Entity(e.Name), row)
		}
	}
	for _, d := range []*exec.Dataset{ref, nil} {
		rep, err := en.Verify(ctx, exec.VerifyOptions{Reference: d})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() {
			t.Fatalf("verify (reference %v):\n%s", d != nil, rep)
		}
	}
}

// checkTopK checks an ORDER BY … LIMIT k answer whose order has ties: the
// rows before the k-th row's tie group must all be there, the rest must
// come from that group, in order.
func checkTopK(t testing.TB, st *exec.Stmt, or *oracle.Oracle, argsets [][]types.Value, got [][]types.Value) {
	t.Helper()
	args := slices.Concat(argsets...)
	q := st.Resolved
	full := *q
	full.Limit = 0
	full.Select = append(append([]catalog.FieldRef(nil), q.Select...), orderRefs(q)...)
	all, err := or.QueryOr(&full, argsets)
	if err != nil {
		t.Fatal(err)
	}
	n := len(q.Select)
	k := min(int(q.Limit), len(all))
	if len(got) != k {
		t.Fatalf("%s %v: %d rows, want %d\n%s", st.Text, args, len(got), k, st.Explain())
	}
	if k == 0 {
		return
	}
	key := func(r []types.Value) string { return fmt.Sprint(oracle.Lines([][]types.Value{r[n:]})) }
	boundary := key(all[k-1])
	var before, group []string
	for _, r := range all {
		switch {
		case key(r) == boundary:
			group = append(group, oracle.Lines([][]types.Value{r[:n]})[0])
		case len(group) == 0:
			before = append(before, oracle.Lines([][]types.Value{r[:n]})[0])
		}
	}
	g := oracle.Lines(got)
	if !subset(before, g) || !subset(g[len(before):], group) || !subset(g, append(append([]string(nil), before...), group...)) {
		t.Fatalf("%s %v:\n got %v\nwant the %d rows %v then any of %v\n%s", st.Text, args, g, len(before), before, group, st.Explain())
	}
}

func orderRefs(q *catalog.Query) []catalog.FieldRef {
	var out []catalog.FieldRef
	for _, o := range q.OrderBy {
		out = append(out, o.Ref)
	}
	return out
}

// runQueries checks every query of w, times runs each with arguments drawn
// from the data, and returns how many answers were not empty.
func runQueries(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, w *workload.Workload, d *gen.Data, r *rand.Rand, times int) int {
	t.Helper()
	nonEmpty := 0
	for _, s := range w.Statements {
		if s.Query == nil {
			continue
		}
		st, err := en.PrepareAST(s.AST)
		if err != nil {
			t.Fatalf("%s: %v", s.Tag, err)
		}
		for i := 0; i < times; i++ {
			if checkQuery(t, ctx, st, or, st.Resolved.SampleArgs(r, d.Rows)) > 0 {
				nonEmpty++
			}
		}
		checkUnions(t, ctx, en, or, s.AST.(*lang.Select), st, d, r)
	}
	return nonEmpty
}

// checkUnions runs two variants of a query whose WHERE has an OR: the
// WHERE OR itself (with other arguments), and an equality on a parameter
// turned into an IN list of two; the oracle answers each as one SQL OR.
func checkUnions(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, sel *lang.Select, st *exec.Stmt, d *gen.Data, r *rand.Rand) {
	t.Helper()
	if sel.Where == nil {
		return
	}
	n := lang.CountParams(sel)
	twice := *sel
	twice.Where = &lang.Binary{Op: lang.OpOr, L: sel.Where, R: renumber(sel.Where, n)}
	ust, err := en.PrepareAST(&twice)
	if err != nil {
		t.Fatalf("%s: %v", lang.Print(&twice), err)
	}
	a1, a2 := st.Resolved.SampleArgs(r, d.Rows), st.Resolved.SampleArgs(r, d.Rows)
	checkQueryOr(t, ctx, ust, or, [][]types.Value{a1, a2})
	checkQueryOr(t, ctx, ust, or, [][]types.Value{a1, a1})

	// The first equality on a parameter becomes IN (?, ?), the new
	// parameter last.
	var k int
	in := *sel
	in.Where = replaceFirst(sel.Where, func(e lang.Expr) lang.Expr {
		b, ok := e.(*lang.Binary)
		if !ok || b.Op != lang.OpEq {
			return nil
		}
		p, ok := b.R.(*lang.Param)
		if !ok {
			return nil
		}
		k = p.Index
		return &lang.In{At: b.At, X: b.L, List: []lang.Expr{p, &lang.Param{At: p.At, Index: n}}}
	})
	if in.Where == nil {
		return
	}
	checkScan(t, ctx, en, or, sel, a1)

	ist, err := en.PrepareAST(&in)
	if err != nil {
		t.Fatalf("%s: %v", lang.Print(&in), err)
	}
	if !strings.Contains(ist.Explain(), "CLIENT UNION OF") {
		mergedUnions++ // one program reads both values (mergeBranches)
	}
	other := slices.Clone(a1)
	other[k] = a2[k]
	args := append(slices.Clone(a1), a2[k])
	got, err := ist.Query(ctx, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", ist.Text, args, err)
	}
	full := *st.Resolved
	full.Limit = 0
	all, err := or.QueryOr(&full, [][]types.Value{a1, other})
	if err != nil {
		t.Fatal(err)
	}
	want := oracle.Canon(all)
	if g := oracle.Canon(got.Values()); st.Resolved.Limit > 0 && !subset(g, want) || st.Resolved.Limit == 0 && fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("%s %v:\n got %v\nwant %v\nplan:\n%s", ist.Text, args, g, want, ist.Explain())
	}
}

// checkScan runs the query with each equality on a parameter turned into
// a range (f >= ? AND f <= ?, the same value twice): no key lookup can
// start its plan, so it is answered by a full scan.
func checkScan(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, sel *lang.Select, args []types.Value) {
	t.Helper()
	scan := *sel
	var sargs []types.Value
	scan.Where, sargs = eqToRange(sel.Where, args, lang.CountParams(sel))
	st, err := en.PrepareAST(&scan)
	if err != nil {
		t.Fatalf("%s: %v", lang.Print(&scan), err)
	}
	if st.Plan.Steps[0].Role == cost.Scan {
		scans++
	}
	checkQueryOr(t, ctx, st, or, [][]types.Value{sargs})
}

// eqToRange rewrites each top-level equality on a parameter of where (a
// statement of n parameters, args its arguments) as f >= ? AND f <= ?, the
// new parameters last, and returns the arguments of the result.
func eqToRange(where lang.Expr, args []types.Value, n int) (lang.Expr, []types.Value) {
	out := slices.Clone(args)
	var rewrite func(e lang.Expr) lang.Expr
	rewrite = func(e lang.Expr) lang.Expr {
		b, ok := e.(*lang.Binary)
		if !ok {
			return e
		}
		if b.Op == lang.OpAnd {
			return &lang.Binary{At: b.At, Op: b.Op, L: rewrite(b.L), R: rewrite(b.R)}
		}
		p, ok := b.R.(*lang.Param)
		if b.Op != lang.OpEq || !ok {
			return e
		}
		hi := &lang.Param{At: p.At, Index: n + len(out) - len(args)}
		out = append(out, args[p.Index])
		return &lang.Binary{At: b.At, Op: lang.OpAnd,
			L: &lang.Binary{At: b.At, Op: lang.OpGe, L: b.L, R: p},
			R: &lang.Binary{At: b.At, Op: lang.OpLe, L: b.L, R: hi}}
	}
	return rewrite(where), out
}

// scans counts the queries checkScan found answered by a full scan;
// mergedUnions the IN lists checkUnions found answered by one program.
var scans, mergedUnions int

// renumber copies e with each parameter's index moved by by.
func renumber(e lang.Expr, by int) lang.Expr {
	switch x := e.(type) {
	case *lang.Param:
		return &lang.Param{At: x.At, Index: x.Index + by}
	case *lang.Binary:
		return &lang.Binary{At: x.At, Op: x.Op, L: renumber(x.L, by), R: renumber(x.R, by)}
	case *lang.Not:
		return &lang.Not{At: x.At, X: renumber(x.X, by)}
	case *lang.Contains:
		return &lang.Contains{At: x.At, X: x.X, Elem: renumber(x.Elem, by), Key: x.Key}
	}
	return e
}

// replaceFirst returns e with its first top-level conjunct for which repl
// returns non-nil replaced, or nil if there is none.
func replaceFirst(e lang.Expr, repl func(lang.Expr) lang.Expr) lang.Expr {
	if b, ok := e.(*lang.Binary); ok && b.Op == lang.OpAnd {
		if l := replaceFirst(b.L, repl); l != nil {
			return &lang.Binary{At: b.At, Op: b.Op, L: l, R: b.R}
		}
		if r := replaceFirst(b.R, repl); r != nil {
			return &lang.Binary{At: b.At, Op: b.Op, L: b.L, R: r}
		}
		return nil
	}
	return repl(e)
}

// runWrites runs every write of w times times with random arguments on the
// engine and the oracle, refreshing the data after each (deleted tuples
// must not be drawn as keys again).
func runWrites(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, w *workload.Workload, d *gen.Data, r *rand.Rand, next map[*catalog.Entity]int, times int) {
	t.Helper()
	for _, s := range w.Statements {
		if s.Write == nil {
			continue
		}
		st, err := en.PrepareAST(s.AST)
		if err != nil {
			t.Fatalf("%s: %v", s.Tag, err)
		}
		for i := 0; i < times; i++ {
			if anyEmpty(d, s.Write) {
				continue
			}
			args := writeArgs(r, d, s.Write, next)
			if _, err := st.Exec(ctx, args...); err != nil {
				t.Fatalf("%s %v: %v", st.Text, args, err)
			}
			if err := or.Write(s.Write, args); err != nil {
				t.Fatal(err)
			}
			refresh(t, d, or)
			// A write that reads the one tuple it names has no range or
			// OR form.
			if (s.Write.Kind == catalog.Update || s.Write.Kind == catalog.Delete) && !s.Write.ReadsTuple() && !anyEmpty(d, s.Write) {
				rangeWrite(t, ctx, en, or, s.AST, writeArgs(r, d, s.Write, next))
				refresh(t, d, or)
				if !anyEmpty(d, s.Write) {
					orWrite(t, ctx, en, or, s.AST, writeArgs(r, d, s.Write, next), writeArgs(r, d, s.Write, next))
					refresh(t, d, or)
				}
			}
		}
	}
}

// rangeWrite runs an UPDATE or DELETE with each equality on a parameter
// turned into a range (f >= ? AND f <= ?, the same value twice): its
// support queries start with no key lookup, so they scan.
func rangeWrite(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, st lang.Statement, args []types.Value) {
	t.Helper()
	var sargs []types.Value
	var ast lang.Statement
	switch w := st.(type) {
	case *lang.Update:
		c := *w
		c.Where, sargs = eqToRange(w.Where, args, lang.CountParams(st))
		ast = &c
	case *lang.Delete:
		c := *w
		c.Where, sargs = eqToRange(w.Where, args, lang.CountParams(st))
		ast = &c
	default:
		return
	}
	ws, err := en.PrepareAST(ast)
	if err != nil {
		if strings.Contains(err.Error(), "no column family holds") {
			return // a support query needs a secondary index the rewrite cannot use
		}
		t.Fatalf("%s: %v", lang.Print(ast), err)
	}
	if _, err := ws.Exec(ctx, sargs...); err != nil {
		t.Fatalf("%s %v: %v", ws.Text, sargs, err)
	}
	if err := or.Write(ws.Write, sargs); err != nil {
		t.Fatal(err)
	}
	rangeWrites++
}

// orWrite runs an UPDATE or DELETE whose WHERE is its own OR'ed with
// itself (the second with other arguments): the writes of both
// alternatives in one batch, a tuple both match written once.
func orWrite(t testing.TB, ctx context.Context, en *exec.Engine, or *oracle.Oracle, st lang.Statement, a1, a2 []types.Value) {
	t.Helper()
	n := lang.CountParams(st)
	var ast lang.Statement
	switch w := st.(type) {
	case *lang.Update:
		c := *w
		c.Where = &lang.Binary{Op: lang.OpOr, L: w.Where, R: renumber(w.Where, n)}
		ast = &c
	case *lang.Delete:
		c := *w
		c.Where = &lang.Binary{Op: lang.OpOr, L: w.Where, R: renumber(w.Where, n)}
		ast = &c
	}
	ws, err := en.PrepareAST(ast)
	if err != nil {
		t.Fatalf("%s: %v", lang.Print(ast), err)
	}
	args := slices.Concat(a1, a2)
	got, err := ws.Exec(ctx, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", ws.Text, args, err)
	}
	if err := or.WriteOr(ws.Write, [][]types.Value{a1, a2}); err != nil {
		t.Fatal(err)
	}
	if types.EqualTuples(a1, a2) && got > 1 && ws.Write.Kind == catalog.Delete {
		t.Fatalf("%s %v: %d tuples written", ws.Text, args, got)
	}
	orWrites++
}

// orWrites counts the writes orWrite ran.
var orWrites int

// rangeWrites counts the writes rangeWrite ran.
var rangeWrites int
