// Package plan owns plans: data the executor (package exec) runs exactly
// as written and EXPLAIN prints.
//
//   - Plan: a read over one client relation's layouts — binding
//     parameters, normalizing WHERE to disjunctive normal form, deriving for
//     each conjunct and layout the key reads (point lookups, range scans,
//     skip scans, salted fan-out), choosing a layout per conjunct through a
//     cost.Model, and the client-side steps (filter, merge, sort, limit,
//     projection).
//   - Write (write.go): a write on one client relation — its tuples or the
//     read that finds them, the keys it locks first, its assignments, and
//     the mutations it makes in every layout.
//   - Query, Step, Upkeep, Support (path.go, upkeep.go): a query of an
//     advised schema along a path of column families and secondary indexes,
//     and how a write keeps each index correct; package planner builds
//     them, the advisor costs them.
//
// Invariants:
//   - The reads of a Plan select a superset of the rows holding tuples that
//     satisfy the WHERE, and the plan's Residual (the predicates the key
//     ranges do not enforce exactly, or the whole WHERE) is applied to every
//     decoded tuple, so results are exact.
//   - A tuple is produced at most once: several accesses are de-duplicated
//     by primary key.
//   - A Write's mutations delete every cell of the old tuple (when known)
//     before putting the new tuple's, in every layout, so layouts hold the
//     same tuples after any sequence of writes.
//
// Stability: this package is a stage of kvschema's pipeline, not an API;
// it changes as the pipeline does. Programs use package kvschema (the
// root), its database/sql driver, and the store seam (package store).
package plan

import (
	"fmt"
	"sort"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// OrderKey is one ORDER BY term resolved to an attribute.
type OrderKey struct {
	Attr int
	Desc bool
}

// Plan is an executable read plan over one relation.
type Plan struct {
	Relation *catalog.Relation
	// Residual is the part of the bound WHERE the key reads do not enforce
	// exactly: the executor applies it to every decoded tuple.
	Residual lang.Expr
	Accesses []*Access
	// Chosen records the layout decision of every satisfiable conjunct.
	Chosen  []Choice
	Project []int // attribute indexes in output order
	OrderBy []OrderKey
	Sort    bool // client-side sort needed
	Merge   bool // k-way merge of parallel ordered reads
	Reverse bool // scan backwards to produce the order
	Limit   int  // -1: none
	// Unneeded marks attributes no step uses (not projected, filtered,
	// sorted or de-duplicated on): decoding may skip them. nil: all used.
	Unneeded []bool
	PerRead  int // row limit pushed to each store read; 0: none
	Dedupe   bool
	Notes    []string // remarks for EXPLAIN
	rebound  *rebound // the memory KeyRebind made the plan in; see Release
}

// Choice records the layout decision for one conjunct.
type Choice struct {
	Conjunct int
	Winner   *Access
	Losers   []*Access
	Model    cost.Model // what chose
}

// CostAccess describes a candidate access to a cost model.
func CostAccess(a *Access) cost.Access {
	return cost.Access{
		Role:       cost.Plain,
		Partitions: float64(len(a.Reads)),
		Index:      a.Layout.Name,
		Key:        cost.Key{Fixed: a.FixedElems, Range: a.RangeElem, Exact: a.Kind == PointLookup},
		Ordered:    a.ProvidesOrder,
	}
}

// choose returns the index of the cheapest candidate under m, the first
// (the primary layout's) among equals.
func choose(m cost.Model, cands []*Access) int {
	best, bestCost := 0, m.Read(CostAccess(cands[0]))
	for i := 1; i < len(cands); i++ {
		if c := m.Read(CostAccess(cands[i])); c < bestCost {
			best, bestCost = i, c
		}
	}
	return best
}

// describe explains what a candidate binds, for EXPLAIN, with its cost
// under a model other than Prefix (whose costs only rank).
func describe(m cost.Model, a *Access) string {
	s := fmt.Sprintf("%d leading key element(s) fixed", a.FixedElems)
	if a.RangeElem {
		s += " + 1 range-bounded"
	}
	if a.FanOut > 0 {
		s += fmt.Sprintf(", %d-way salted fan-out", a.FanOut)
	}
	if a.ProvidesOrder {
		s += ", key order gives the ORDER BY"
	}
	if _, ok := m.(cost.Prefix); !ok {
		s += fmt.Sprintf(", cost %.4g", m.Read(CostAccess(a)))
	}
	return s
}

// Select plans a SELECT over rel with bound arguments.
func Select(st *lang.Select, rel *catalog.Relation, args []types.Value, m cost.Model) (*Plan, error) {
	p := &Plan{Relation: rel, Limit: -1}
	if len(st.Path) > 0 || len(st.Joins) > 0 {
		return nil, errAt(st.At, "a SELECT over a foreign-key path or JOIN needs a conceptual model: run it on a schema from kvschema advise")
	}
	if st.Star {
		for i := range rel.Attrs {
			p.Project = append(p.Project, i)
		}
	}
	for _, c := range st.Columns {
		if err := checkQual(c.At, c.Qual, rel, st.Alias); err != nil {
			return nil, err
		}
		if c.Star {
			for i := range rel.Attrs {
				p.Project = append(p.Project, i)
			}
			continue
		}
		a := rel.AttrIndex(c.Name)
		if a < 0 {
			return nil, lang.UnknownAt(c.At, "relation %s has no attribute %s", rel.Name, c.Name)
		}
		p.Project = append(p.Project, a)
	}
	for _, o := range st.OrderBy {
		if err := checkQual(o.At, o.Qual, rel, st.Alias); err != nil {
			return nil, err
		}
		a := rel.AttrIndex(o.Column)
		if a < 0 {
			return nil, lang.UnknownAt(o.At, "ORDER BY: relation %s has no attribute %s", rel.Name, o.Column)
		}
		p.OrderBy = append(p.OrderBy, OrderKey{Attr: a, Desc: o.Desc})
	}
	if st.Limit != nil {
		n, err := limitValue(st.Limit, args)
		if err != nil {
			return nil, err
		}
		p.Limit = n
	}
	where, err := bind(st.Where, rel, st.Alias, args)
	if err != nil {
		return nil, err
	}
	if err := p.reads(where, m); err != nil {
		return nil, err
	}
	p.unneeded()
	p.readPartitions()
	return p, nil
}

// unneeded computes Unneeded from the projection, residual filter, order
// and de-duplication.
func (p *Plan) unneeded() {
	rel := p.Relation
	need := make([]bool, len(rel.Attrs))
	for _, a := range p.Project {
		need[a] = true
	}
	for _, o := range p.OrderBy {
		need[o.Attr] = true
	}
	if p.Dedupe {
		for _, k := range rel.KeyIdx {
			need[k] = true
		}
	}
	var walk func(lang.Expr)
	walk = func(e lang.Expr) {
		switch x := e.(type) {
		case *lang.ColumnRef:
			need[rel.AttrIndex(x.Name)] = true
		case *lang.Binary:
			walk(x.L)
			walk(x.R)
		case *lang.Not:
			walk(x.X)
		case *lang.In:
			walk(x.X)
			for _, i := range x.List {
				walk(i)
			}
		case *lang.Between:
			walk(x.X)
			walk(x.Lo)
			walk(x.Hi)
		case *lang.IsNull:
			walk(x.X)
		case *lang.Contains:
			walk(x.X)
			walk(x.Elem)
		}
	}
	walk(p.Residual)
	for i, n := range need {
		if !n {
			if p.Unneeded == nil {
				p.Unneeded = make([]bool, len(need))
			}
			p.Unneeded[i] = true
		}
	}
}

// Reads plans the reads of the tuples matching a bound WHERE, for UPDATE
// and DELETE (no projection, order or limit).
func Reads(where lang.Expr, rel *catalog.Relation, m cost.Model) (*Plan, error) {
	p := &Plan{Relation: rel, Limit: -1}
	for i := range rel.Attrs {
		p.Project = append(p.Project, i)
	}
	if err := p.reads(where, m); err != nil {
		return nil, err
	}
	p.readPartitions() // the tuples' static columns, which writes compare
	return p, nil
}

func limitValue(e lang.Expr, args []types.Value) (int, error) {
	v := types.Value(nil)
	switch x := e.(type) {
	case *lang.Literal:
		v = x.Value
	case *lang.Param:
		a, err := Arg(args, x)
		if err != nil {
			return 0, err
		}
		v = a
	}
	n, err := types.Coerce(v, types.BigInt)
	if err != nil || n == nil || n.(int64) < 0 {
		return 0, errAt(e.Pos(), "LIMIT must be a non-negative integer, got %s", types.Format(v))
	}
	if n.(int64) > 1<<31 {
		return 1 << 31, nil
	}
	return int(n.(int64)), nil
}

func (p *Plan) reads(where lang.Expr, m cost.Model) error {
	rel := p.Relation
	if m == nil {
		m = cost.Prefix{}
	}
	if len(rel.Indexes) == 0 {
		return fmt.Errorf("relation %s has no schema (DEFINE SCHEMA … FOR %s)", rel.Name, rel.Name)
	}
	readable := rel.ReadIndexes()
	for _, x := range rel.Indexes {
		if x.WriteOnly {
			p.Notes = append(p.Notes, fmt.Sprintf("LAYOUT %s IS WRITE-ONLY (BEING ADDED OR DROPPED ONLINE): NOT READ", x.Name))
		}
	}
	if len(readable) == 0 {
		return fmt.Errorf("relation %s has no readable schema: %s is being added or dropped online (run its DEFINE SCHEMA or DROP SCHEMA again to finish)", rel.Name, layoutNames(rel))
	}
	conjs, ok := DNF(where)
	if !ok {
		p.Notes = append(p.Notes, fmt.Sprintf("WHERE has more than %d conjuncts in disjunctive normal form: filtered over a full read", maxConjuncts))
	}
	type chosen struct {
		idx  int
		cons Constraints
		acc  *Access
	}
	var picks []chosen
	for i, c := range conjs {
		cons, unsat := ConstraintsOf(c, rel)
		if unsat {
			continue
		}
		cands := make([]*Access, len(readable))
		for j, x := range readable {
			cands[j] = Derive(x.Layout(), cons)
			cands[j].Conjuncts = []int{i}
			if len(p.OrderBy) > 0 && len(conjs) == 1 {
				cands[j].ProvidesOrder, _ = p.provides(cands[j], singleIn([]Constraints{cons}))
			}
		}
		w := choose(m, cands)
		ch := Choice{Conjunct: i, Winner: cands[w], Model: m}
		for j, c := range cands {
			if j != w {
				ch.Losers = append(ch.Losers, c)
			}
		}
		p.Chosen = append(p.Chosen, ch)
		picks = append(picks, chosen{idx: i, cons: cons, acc: cands[w]})
	}
	// Conjuncts served by the same layout share one pass over it.
	var consOf [][]Constraints // per access
	for _, pk := range picks {
		merged := false
		for i, prev := range p.Accesses {
			if prev.Layout == pk.acc.Layout {
				mergeInto(prev, pk.acc)
				consOf[i] = append(consOf[i], pk.cons)
				merged = true
				break
			}
		}
		if !merged {
			p.Accesses = append(p.Accesses, pk.acc)
			consOf = append(consOf, []Constraints{pk.cons})
		}
	}
	p.Dedupe = len(p.Accesses) > 1
	for _, acc := range p.Accesses {
		// Merged conjuncts may read a row through two reads (e.g. a salted
		// fan-out and a fixed bucket).
		if len(acc.Conjuncts) > 1 && len(acc.Reads) > 1 {
			p.Dedupe = true
		}
	}
	p.Residual = residual(conjs, p.Chosen, where)
	if !ok {
		p.Residual = where // the empty fallback conjunct enforces nothing
	}
	if len(conjs) > 1 && allEnforced(conjs, p.Chosen) {
		// The union of reads that each enforce their conjunct exactly
		// returns only tuples satisfying one of them.
		p.Residual = nil
	}
	p.order(consOf)
	return nil
}

// mergeInto adds b's reads to a (same layout): the store serves the union of
// their keys and ranges in one pass per table and bucket.
func mergeInto(a, b *Access) {
	for _, rb := range b.Reads {
		found := false
		for i := range a.Reads {
			ra := &a.Reads[i]
			if ra.Table == rb.Table && ra.Bucket == rb.Bucket {
				ra.Rows.Keys = append(ra.Rows.Keys, rb.Rows.Keys...)
				ra.Rows.Ranges = append(ra.Rows.Ranges, rb.Rows.Ranges...)
				found = true
				break
			}
		}
		if !found {
			a.Reads = append(a.Reads, rb)
		}
	}
	a.Conjuncts = append(a.Conjuncts, b.Conjuncts...)
	a.parts = append(a.parts, b.parts...)
	if b.FanOut > a.FanOut {
		a.FanOut = b.FanOut
	}
	if b.Kind > a.Kind {
		a.Kind = b.Kind
	}
	if a.Kind == PointLookup && !b.Complete {
		a.Complete = false
	}
	if a.Kind != FullScan && a.NumKeys()+a.NumRanges() > len(a.Reads) {
		a.Kind = SkipScan
	}
	// Bounds of a merged access span both; EXPLAIN shows the first.
	exact := map[int]bool{}
	for k := range a.Exact {
		if b.Exact[k] {
			exact[k] = true
		}
	}
	a.Exact = exact
}

// residual is the part of the WHERE not enforced by the reads: with one
// conjunct, its atoms on attributes the key does not pin exactly; with
// several, the whole WHERE.
func residual(conjs []Conjunct, chosen []Choice, where lang.Expr) lang.Expr {
	if len(conjs) != 1 || where == nil {
		return where
	}
	if len(chosen) == 0 {
		return nil // unsatisfiable: nothing is read
	}
	acc := chosen[0].Winner
	var out lang.Expr
	for _, atom := range conjs[0] {
		if enforced(atom, acc) {
			continue
		}
		if out == nil {
			out = atom
		} else {
			out = &lang.Binary{At: atom.Pos(), Op: lang.OpAnd, L: out, R: atom}
		}
	}
	return out
}

func allEnforced(conjs []Conjunct, chosen []Choice) bool {
	if len(chosen) == 0 {
		return false
	}
	for _, ch := range chosen {
		for _, atom := range conjs[ch.Conjunct] {
			if !enforced(atom, ch.Winner) {
				return false
			}
		}
	}
	return true
}

func enforced(atom lang.Expr, acc *Access) bool {
	rel := acc.Layout
	switch x := atom.(type) {
	case *lang.Binary:
		col, lit, op, ok := colLit(x)
		if !ok || op == lang.OpNe || lit.Value == nil {
			return false
		}
		a := rel.AttrIndex(col.Name)
		return acc.Exact[a] && exactType(lit.Value, rel.Attrs[a].Type)
	case *lang.In:
		col, ok := x.X.(*lang.ColumnRef)
		if !ok || x.Not {
			return false
		}
		a := rel.AttrIndex(col.Name)
		if !acc.Exact[a] {
			return false
		}
		for _, item := range x.List {
			if lit, ok := item.(*lang.Literal); !ok || (lit.Value != nil && !exactType(lit.Value, rel.Attrs[a].Type)) {
				return false
			}
		}
		return true
	}
	return false
}

// singleIn reports, for the constraints of the conjuncts an access serves,
// whether an attribute is pinned to one and the same value in all of them.
func singleIn(consList []Constraints) func(int) bool {
	return func(a int) bool {
		var v types.Value
		for i, cons := range consList {
			c := cons[a]
			if !c.Fixed() || len(c.Points) != 1 {
				return false
			}
			if i > 0 && types.Compare(v, c.Points[0]) != 0 {
				return false
			}
			v = c.Points[0]
		}
		return true
	}
}

// provides reports whether an access yields the ORDER BY by itself, scanning
// forward or (reverse) backward.
func (p *Plan) provides(acc *Access, single func(int) bool) (ok, reverse bool) {
	if len(p.OrderBy) == 0 {
		return true, false
	}
	for _, r := range acc.Reads {
		if r.Table == "" {
			// Every table of the layout, read one after the other: key
			// order holds within each table only.
			return false, false
		}
	}
	attrs, desc := orderKeys(acc, single)
	if len(attrs) < len(p.OrderBy) {
		return false, false
	}
	fwd, rev := true, true
	for i, o := range p.OrderBy {
		if attrs[i] != o.Attr {
			return false, false
		}
		if desc[i] != o.Desc {
			fwd = false
		} else {
			rev = false
		}
	}
	return fwd || rev, rev && !fwd
}

// order decides how the ORDER BY and LIMIT are met.
func (p *Plan) order(consOf [][]Constraints) {
	if len(p.Accesses) == 0 {
		return
	}
	if len(p.Accesses) > 1 {
		p.Sort = len(p.OrderBy) > 0
		return
	}
	acc := p.Accesses[0]
	provided, reverse := p.provides(acc, singleIn(consOf[0]))
	p.Reverse = reverse
	p.Sort = !provided
	p.Merge = provided && len(p.OrderBy) > 0 && len(acc.Reads) > 1
	if p.Limit >= 0 && !p.Sort && p.Residual == nil && !acc.Layout.WideRows() {
		p.PerRead = p.Limit
	}
}

// SortTuples orders tuples by the plan's ORDER BY (stable).
func (p *Plan) SortTuples(ts [][]types.Datum) {
	sort.SliceStable(ts, func(i, j int) bool { return p.Less(ts[i], ts[j]) })
}

// Less compares two tuples by the ORDER BY.
func (p *Plan) Less(a, b []types.Datum) bool {
	for _, o := range p.OrderBy {
		c := types.CompareDatums(a[o.Attr], b[o.Attr])
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
	}
	return false
}
