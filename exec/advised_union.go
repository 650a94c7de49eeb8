package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

// A query whose WHERE has OR or IN runs as a union: its WHERE in
// disjunctive normal form (plan.DNF, with IN lists turned into ORs of
// equalities first, so that NOT IN becomes a conjunction of !=), each
// conjunct planned as a query of its own along the same path, their
// answers merged with the path instances that satisfy several conjuncts
// kept once (SQL's semantics for one SELECT with an OR), then sorted and
// limited. Each branch is planned by the planner the advisor costs; the
// union's cost is theirs summed. Branches that differ only in the values
// of the first step's key predicates (an IN list on the key it reads) run
// as one program whose first read is a skip scan of all their keys
// (mergeBranches).

// branch is one conjunct of a union query.
type branch struct {
	q    *catalog.Query
	plan *plan.Query
	prog *program
}

// maxBranches bounds a union: past it the WHERE is refused rather than
// run as that many queries.
const maxBranches = 64

// disjuncts returns sel as the SELECTs of the conjuncts of its WHERE in
// disjunctive normal form: one when the WHERE is a conjunction once IN
// lists and NOTs are rewritten, several for a union, none when the WHERE
// is a plain conjunction of comparisons already (sel runs as it is).
func disjuncts(sel *lang.Select) ([]*lang.Select, error) {
	if sel.Where == nil || !needsRewrite(sel.Where) {
		return nil, nil
	}
	cs, ok := plan.DNF(expandIn(sel.Where))
	if !ok || len(cs) > maxBranches {
		return nil, &lang.Error{Pos: sel.Where.Pos(), Msg: fmt.Sprintf("the WHERE has more than %d alternatives (ORs and IN list values, multiplied out): run it as several queries", maxBranches)}
	}
	var out []*lang.Select
	seen := map[string]bool{}
	for _, c := range cs {
		b := *sel
		b.Where = nil
		for _, atom := range c {
			if b.Where == nil {
				b.Where = atom
			} else {
				b.Where = &lang.Binary{At: atom.Pos(), Op: lang.OpAnd, L: b.Where, R: atom}
			}
		}
		// Parameters print as ?: equal texts are equal conjuncts only
		// when they have none.
		if text := lang.PrintExpr(b.Where); lang.CountParams(&b) == 0 {
			if seen[text] {
				continue // id = 1 OR id = 1
			}
			seen[text] = true
		}
		out = append(out, &b)
	}
	return out, nil
}

// writeDisjuncts is disjuncts for an UPDATE or DELETE: the statement once
// per conjunct of its WHERE (nil when it is a conjunction already).
func writeDisjuncts(st lang.Statement) ([]lang.Statement, error) {
	var where lang.Expr
	switch w := st.(type) {
	case *lang.Update:
		where = w.Where
	case *lang.Delete:
		where = w.Where
	}
	if where == nil || !needsRewrite(where) {
		return nil, nil
	}
	sels, err := disjuncts(&lang.Select{Where: where})
	if err != nil {
		return nil, err
	}
	out := make([]lang.Statement, len(sels))
	for i, sel := range sels {
		switch w := st.(type) {
		case *lang.Update:
			c := *w
			c.Where = sel.Where
			out[i] = &c
		case *lang.Delete:
			c := *w
			c.Where = sel.Where
			out[i] = &c
		}
	}
	return out, nil
}

// needsRewrite reports whether e is more than a conjunction of
// comparisons: it has an OR, a NOT or an IN list.
func needsRewrite(e lang.Expr) bool {
	switch x := e.(type) {
	case *lang.Not, *lang.In:
		return true
	case *lang.Binary:
		switch x.Op {
		case lang.OpOr:
			return true
		case lang.OpAnd:
			return needsRewrite(x.L) || needsRewrite(x.R)
		}
	case *lang.Between:
		return x.Not
	}
	return false
}

// expandIn rewrites each IN list as an OR of equalities (NOT IN as NOT of
// that), keeping every other node.
func expandIn(e lang.Expr) lang.Expr {
	switch x := e.(type) {
	case *lang.Not:
		return &lang.Not{At: x.At, X: expandIn(x.X)}
	case *lang.Binary:
		if x.Op == lang.OpAnd || x.Op == lang.OpOr {
			return &lang.Binary{At: x.At, Op: x.Op, L: expandIn(x.L), R: expandIn(x.R)}
		}
	case *lang.In:
		if len(x.List) == 0 {
			return e
		}
		var or lang.Expr
		for _, v := range x.List {
			eq := &lang.Binary{At: v.Pos(), Op: lang.OpEq, L: x.X, R: v}
			if or == nil {
				or = eq
			} else {
				or = &lang.Binary{At: x.At, Op: lang.OpOr, L: or, R: eq}
			}
		}
		if x.Not {
			return &lang.Not{At: x.At, X: or}
		}
		return or
	}
	return e
}

// prepareUnion plans each branch of a union query.
func (e *Engine) prepareUnion(s *Stmt, sels []*lang.Select) error {
	for i, sel := range sels {
		q, err := e.m.ResolveSelect(sel)
		if err != nil {
			return err
		}
		if i > 0 && !sameShape(q, s.union[0].q) {
			return fmt.Errorf("%s: the alternatives of the WHERE resolve to different paths", s.Text)
		}
		pl, err := e.planner.Query(q)
		if err != nil {
			return fmt.Errorf("%s (alternative %d, WHERE %s): %w", s.Text, i+1, lang.PrintExpr(sel.Where), err)
		}
		prog, err := e.compile(pl)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Text, err)
		}
		s.union = append(s.union, &branch{q: q, plan: pl, prog: prog})
	}
	b := s.union[0]
	s.Resolved, s.Plan = b.q, b.plan
	merged, err := e.mergeBranches(s.union)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Text, err)
	}
	s.union = merged
	return nil
}

// mergeBranches answers each group of branches whose plans differ only in
// the values of the first step's key predicates — an IN list, or an OR, on
// the key the first step reads — with one program: its first read is the
// OR of their key predicates, which the client's planner turns into one
// skip scan (several keys or ranges, one store call), de-duplicated; the
// later steps run once for all. Branches a later step would test against
// a first-step key value (an SI's base rows re-test the indexed value)
// stay apart.
func (e *Engine) mergeBranches(bs []*branch) ([]*branch, error) {
	var groups [][]*branch
next:
	for _, b := range bs {
		for i, g := range groups {
			if mergeable(g[0], b) {
				groups[i] = append(g, b)
				continue next
			}
		}
		groups = append(groups, []*branch{b})
	}
	if len(groups) == len(bs) {
		return bs, nil
	}
	out := make([]*branch, 0, len(groups))
	for _, g := range groups {
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		prog, err := e.compile(g[0].plan)
		if err != nil {
			return nil, err
		}
		n := len(g[0].q.Preds)
		f := prog.steps[0].read1
		var w lang.Expr
		for j, b := range g {
			prog.members = append(prog.members, b.q)
			if c := f.where(j * n); w == nil {
				w = c
			} else {
				w = &lang.Binary{Op: lang.OpOr, L: w, R: c}
			}
		}
		sel := *f.sel
		sel.Where = w
		f.sel = &sel
		prog.keyPreds = map[int]bool{}
		for _, k := range f.keys {
			prog.keyPreds[k.pred] = true
		}
		out = append(out, &branch{q: g[0].q, plan: g[0].plan, prog: prog})
	}
	return out, nil
}

// mergeable reports whether branch b can run in a's program: the same
// plan, the same predicates but for the values of the first step's key
// predicates, none of which a later step tests again.
func mergeable(a, b *branch) bool {
	pa, pb := a.plan, b.plan
	if a.prog.steps[0].read1 == nil || b.prog.steps[0].read1 == nil {
		return false // a read through a local index: its values are the key
	}
	if len(pa.Steps) != len(pb.Steps) || pa.Ordered != pb.Ordered || pa.Limited != pb.Limited || pa.Sort != pb.Sort || pa.Limit != pb.Limit ||
		len(a.q.Preds) != len(b.q.Preds) {
		return false
	}
	for i := range pa.Steps {
		x, y := &pa.Steps[i], &pb.Steps[i]
		if x.Index != y.Index || x.Link != y.Link || x.Role != y.Role || !slices.Equal(x.Map, y.Map) ||
			!slices.Equal(x.KeyPreds, y.KeyPreds) || !slices.Equal(x.Filters, y.Filters) {
			return false
		}
	}
	key := map[int]bool{}
	for _, k := range a.prog.steps[0].read1.keys {
		key[k.pred] = true
	}
	for _, sp := range a.prog.steps[1:] {
		for _, k := range sp.filters {
			if key[k] {
				return false
			}
		}
	}
	for k, p := range a.q.Preds {
		o := b.q.Preds[k]
		if p.Ref != o.Ref || p.Op != o.Op || !key[k] && !sameValue(p.Value, o.Value) {
			return false
		}
	}
	return true
}

// sameValue reports whether two predicate values are the same parameter
// or equal literals.
func sameValue(a, b lang.Expr) bool {
	switch x := a.(type) {
	case *lang.Param:
		y, ok := b.(*lang.Param)
		return ok && x.Index == y.Index
	case *lang.Literal:
		y, ok := b.(*lang.Literal)
		return ok && types.Compare(x.Value, y.Value) == 0
	}
	return false
}

// sameShape reports whether two branches select the same fields along the
// same path (they differ only in their predicates).
func sameShape(a, b *catalog.Query) bool {
	if len(a.Graph.Nodes) != len(b.Graph.Nodes) || len(a.Select) != len(b.Select) || len(a.OrderBy) != len(b.OrderBy) || a.Limit != b.Limit {
		return false
	}
	for i := range a.Graph.Nodes {
		if a.Graph.Nodes[i].Entity != b.Graph.Nodes[i].Entity {
			return false
		}
	}
	for i := range a.Select {
		if a.Select[i] != b.Select[i] {
			return false
		}
	}
	for i := range a.OrderBy {
		if a.OrderBy[i] != b.OrderBy[i] {
			return false
		}
	}
	return true
}

// queryUnion runs every branch, all at once (the store serves concurrent
// reads), and merges their answers in branch order: each path instance
// (the keys of every node of the path) once, sorted, limited.
func (s *Stmt) queryUnion(ctx context.Context, args []types.Value) (*Result, error) {
	q := s.Resolved
	nsel, nord := len(q.Select), len(q.OrderBy)
	type found struct {
		id  string
		row []types.Datum // the selected values, then the ORDER BY values
	}
	answers := make([][]found, len(s.union))
	errs := make([]error, len(s.union))
	var wg sync.WaitGroup
	for i, b := range s.union {
		wg.Go(func() {
			r := b.prog.getRun()
			defer b.prog.putRun(r) // after the rows are copied out
			if err := b.prog.bind(r, b.q, args); err != nil {
				errs[i] = err
				return
			}
			ts, err := b.prog.run(ctx, s.e.st, r)
			if err != nil {
				errs[i] = err
				return
			}
			var id []byte
			for _, t := range ts {
				id = id[:0]
				for n, nd := range q.Graph.Nodes {
					// Slot n holds node n's key (see compile).
					if id, err = keyenc.AppendOrdered(id, nd.Entity.ID().Type, t[n].Value(), true); err != nil {
						errs[i] = err
						return
					}
				}
				row := make([]types.Datum, 0, nsel+nord)
				for _, k := range b.prog.sel {
					row = append(row, t[k])
				}
				for _, k := range b.prog.order {
					row = append(row, t[k])
				}
				answers[i] = append(answers[i], found{string(id), row})
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Text, err)
		}
	}
	seen := map[string]bool{}
	var rows [][]types.Datum
	for _, a := range answers {
		for _, f := range a {
			if !seen[f.id] {
				seen[f.id] = true
				rows = append(rows, f.row)
			}
		}
	}
	if nord > 0 {
		order, desc := make([]int, nord), make([]bool, nord)
		for k, o := range q.OrderBy {
			order[k], desc[k] = nsel+k, o.Desc
		}
		SortRows(rows, order, desc)
	}
	if q.Limit > 0 && int64(len(rows)) > q.Limit {
		rows = rows[:q.Limit]
	}
	for i := range rows {
		rows[i] = rows[i][:nsel:nsel]
	}
	return &Result{Columns: s.columns, Types: s.types, Rows: rows}, nil
}

// explainUnion describes a union: how its answers merge, then each
// branch's plan.
func (s *Stmt) explainUnion() string {
	if len(s.union) == 1 {
		// Every alternative merged into one plan (mergeBranches).
		return fmt.Sprintf("%s\ncost %.6g\n%s", s.Text, s.Plan.Cost*float64(len(s.union[0].prog.members)), s.union[0].prog.explain())
	}
	var b strings.Builder
	total := 0.0
	for _, br := range s.union {
		total += br.plan.Cost * float64(max(len(br.prog.members), 1))
	}
	fmt.Fprintf(&b, "%s\ncost %.6g\n", s.Text, total)
	g := s.Resolved.Graph
	var nodes []string
	for n := range g.Nodes {
		nodes = append(nodes, g.Describe(n))
	}
	fmt.Fprintf(&b, "CLIENT UNION OF %d PLANS, DISTINCT ON THE KEYS OF [%s]\n", len(s.union), strings.Join(nodes, ", "))
	for i, br := range s.union {
		fmt.Fprintf(&b, "PLAN %d (cost %.6g):\n", i+1, br.plan.Cost*float64(max(len(br.prog.members), 1)))
		for _, line := range strings.SplitAfter(strings.TrimSuffix(br.prog.explain(), "\n"), "\n") {
			b.WriteString("    " + line)
		}
		b.WriteString("\n")
	}
	q := s.Resolved
	if len(q.OrderBy) > 0 {
		var keys []string
		for _, o := range q.OrderBy {
			k := g.DescribeRef(o.Ref)
			if o.Desc {
				k += " DESC"
			}
			keys = append(keys, k)
		}
		fmt.Fprintf(&b, "CLIENT MERGE SORT BY [%s]\n", strings.Join(keys, ", "))
	}
	if q.Limit > 0 {
		fmt.Fprintf(&b, "CLIENT %d ROW LIMIT\n", q.Limit)
	}
	return b.String()
}
