package catalog

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// Graph is a query graph: a tree of entity occurrences joined along
// relationships. Nodes[0] is the root (the FROM relation); every other node
// is reached from its Parent by Via. The same entity may occur at several
// nodes (comments.from_user and comments.to_user are two users).
type Graph struct {
	Nodes []Node
}

// Node is one entity occurrence of a graph.
type Node struct {
	Entity *Entity
	Parent int  // -1 for the root
	Via    *Nav // from the parent's entity to this one; nil for the root
	Alias  string
}

// Edge is a step from a node to a neighbour: down a Via, or up its reverse.
type Edge struct {
	To  int
	Nav *Nav // navigation from the node's entity to To's entity
}

// Neighbors lists the edges leaving node n.
func (g *Graph) Neighbors(n int) []Edge {
	var es []Edge
	if p := g.Nodes[n].Parent; p >= 0 {
		es = append(es, Edge{To: p, Nav: g.Nodes[n].Via.Reverse})
	}
	for i := range g.Nodes {
		if g.Nodes[i].Parent == n {
			es = append(es, Edge{To: i, Nav: g.Nodes[i].Via})
		}
	}
	return es
}

// Step returns the node reached from n by nav, or -1.
func (g *Graph) Step(n int, nav *Nav) int {
	if nd := g.Nodes[n]; nd.Parent >= 0 && nd.Via.Reverse == nav {
		return nd.Parent
	}
	for i := range g.Nodes {
		if g.Nodes[i].Parent == n && g.Nodes[i].Via == nav {
			return i
		}
	}
	return -1
}

// Describe names node n by its path from the root (items.bids.user).
func (g *Graph) Describe(n int) string {
	var parts []string
	for ; n > 0; n = g.Nodes[n].Parent {
		parts = append(parts, g.Nodes[n].Via.Name)
	}
	parts = append(parts, g.Nodes[0].Entity.Name)
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}

// FieldRef is a field of one node of a graph.
type FieldRef struct {
	Node  int
	Field *Field
}

// Op is a comparison of a predicate.
type Op uint8

// Comparison operators.
const (
	Eq Op = iota + 1
	Ne
	Lt
	Le
	Gt
	Ge
	// Contains is CONTAINS: a collection holds the value (a MAP as one of
	// its values); ContainsKey is a MAP's CONTAINS KEY. No index answers
	// them: they filter the rows that carry the collection.
	Contains
	ContainsKey
	// NotContains and NotContainsKey are their negations (NOT x CONTAINS
	// v): false, as theirs, for a NULL collection.
	NotContains
	NotContainsKey
)

var opNames = [...]string{Eq: "=", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">=", Contains: "CONTAINS", ContainsKey: "CONTAINS KEY",
	NotContains: "NOT CONTAINS", NotContainsKey: "NOT CONTAINS KEY"}

func (o Op) String() string { return opNames[o] }

var langOps = [...]lang.Op{Eq: lang.OpEq, Ne: lang.OpNe, Lt: lang.OpLt, Le: lang.OpLe, Gt: lang.OpGt, Ge: lang.OpGe}

// Holds reports whether a comparison whose result is cmp (as from
// types.Compare) satisfies o; false for Contains and ContainsKey.
func (o Op) Holds(cmp int) bool { return int(o) < len(langOps) && langOps[o].Holds(cmp) }

// Test reports whether stored value v (non-NULL) satisfies o with the
// predicate's value want (non-NULL).
func (o Op) Test(v, want types.Value) bool {
	switch o {
	case Contains, ContainsKey:
		return types.Contains(v, want, o == ContainsKey)
	case NotContains, NotContainsKey:
		return !types.Contains(v, want, o == NotContainsKey)
	}
	return o.Holds(types.Compare(v, want))
}

// IsContains reports whether o is CONTAINS or CONTAINS KEY, or a negation
// of one.
func (o Op) IsContains() bool { return o >= Contains && o <= NotContainsKey }

// OfKeys reports whether o is about a MAP's keys (CONTAINS KEY).
func (o Op) OfKeys() bool { return o == ContainsKey || o == NotContainsKey }

// Negated reports whether o is NOT CONTAINS (KEY).
func (o Op) Negated() bool { return o == NotContains || o == NotContainsKey }

// Lang is o as a lang operator.
func (o Op) Lang() lang.Op { return langOps[o] }

// IsRange reports whether o bounds a range (<, <=, >, >=).
func (o Op) IsRange() bool { return o >= Lt && o <= Ge }

// Pred is `field op value` where value is a parameter or a literal.
type Pred struct {
	Ref   FieldRef
	Op    Op
	Value lang.Expr // *lang.Param or *lang.Literal
	At    lang.Pos
}

// ValueType is the type of the predicate's value: the field's, or for
// CONTAINS (KEY) its collection's element (key) type.
func (p Pred) ValueType() types.Type {
	if p.Op.IsContains() {
		t, _ := p.Ref.Field.Type.Contained(p.Op.OfKeys())
		return t
	}
	return p.Ref.Field.Type
}

// OrderRef is one ORDER BY term.
type OrderRef struct {
	Ref  FieldRef
	Desc bool
}

// Query is a SELECT resolved against a model: its graph, the fields it
// returns, its conjunctive predicates, its order and limit.
type Query struct {
	Graph   *Graph
	Select  []FieldRef
	Preds   []Pred
	OrderBy []OrderRef
	Limit   int64 // 0: none
	Stmt    *lang.Select
	// CondOf, when set, makes the query the read a conditional write
	// makes of the tuple it names (Model.CondQuery): its only plans are
	// one read of a column family CondOf.CondSource accepts, as the
	// runtime reads it.
	CondOf *Write
}

func opOf(o lang.Op) (Op, bool) {
	switch o {
	case lang.OpEq:
		return Eq, true
	case lang.OpNe:
		return Ne, true
	case lang.OpLt:
		return Lt, true
	case lang.OpLe:
		return Le, true
	case lang.OpGt:
		return Gt, true
	case lang.OpGe:
		return Ge, true
	}
	return 0, false
}

// flip mirrors an operator for `value op field`.
func flip(o Op) Op {
	switch o {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return o
}

// resolver builds a graph while resolving names.
type resolver struct {
	m *Model
	g *Graph
	// clause names what conjuncts reads in its errors ("" : a workload
	// query's WHERE).
	clause string
}

// aliasNode finds the node an alias names.
func (r *resolver) aliasNode(name string) int {
	for i, n := range r.g.Nodes {
		if strings.EqualFold(n.Alias, name) {
			return i
		}
	}
	return -1
}

// ref resolves q1.q2….name to a field of a node, adding nodes for chains of
// navigations (seller.region.id). A name that is a to-one navigation refers
// to the key of the entity it reaches (items.seller = seller.id).
func (r *resolver) ref(c *lang.ColumnRef) (FieldRef, error) {
	node := -1
	qual := c.Qual
	if len(qual) == 0 {
		if len(r.g.Nodes) == 1 {
			node = 0
		} else {
			for i, n := range r.g.Nodes {
				if n.Entity.Field(c.Name) != nil {
					if node >= 0 {
						return FieldRef{}, errAt(c.At, "%s is ambiguous: qualify it with one of the relations", c.Name)
					}
					node = i
				}
			}
			if node < 0 {
				return FieldRef{}, errAt(c.At, "no relation of the query has an attribute %s", c.Name)
			}
		}
	} else {
		if node = r.aliasNode(qual[0]); node < 0 {
			return FieldRef{}, errAt(c.At, "%s is not a relation or path step of the query (FROM names: %s)", qual[0], r.aliases())
		}
		for _, step := range qual[1:] {
			var err error
			if node, err = r.walk(node, step, c.At); err != nil {
				return FieldRef{}, err
			}
		}
	}
	if c.Star {
		return FieldRef{Node: node}, nil
	}
	e := r.g.Nodes[node].Entity
	if f := e.Field(c.Name); f != nil {
		return FieldRef{Node: node, Field: f}, nil
	}
	if nav := e.Nav(c.Name); nav != nil && !nav.Many {
		to, err := r.walk(node, c.Name, c.At)
		if err != nil {
			return FieldRef{}, err
		}
		return FieldRef{Node: to, Field: nav.To.ID()}, nil
	}
	return FieldRef{}, lang.UnknownAt(c.At, "relation %s has no attribute %s", e.Name, c.Name)
}

// walk follows navigation name from node, adding a node when the graph
// does not have that step yet.
func (r *resolver) walk(node int, name string, at lang.Pos) (int, error) {
	e := r.g.Nodes[node].Entity
	nav := e.Nav(name)
	if nav == nil {
		return -1, lang.UnknownAt(at, "relation %s has no relationship %s (its relationships: %s)", e.Name, name, navNames(e))
	}
	if to := r.g.Step(node, nav); to >= 0 {
		return to, nil
	}
	alias := name
	if r.aliasNode(alias) >= 0 {
		alias = ""
	}
	r.g.Nodes = append(r.g.Nodes, Node{Entity: nav.To, Parent: node, Via: nav, Alias: alias})
	return len(r.g.Nodes) - 1, nil
}

func (r *resolver) aliases() string {
	var names []string
	for _, n := range r.g.Nodes {
		if n.Alias != "" {
			names = append(names, n.Alias)
		}
	}
	return strings.Join(names, ", ")
}

func navNames(e *Entity) string {
	var names []string
	for _, n := range e.Navs {
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ResolveSelect resolves a SELECT written in path notation or with SQL joins
// along foreign keys.
func (m *Model) ResolveSelect(s *lang.Select) (*Query, error) {
	root := m.Entity(s.Relation)
	if root == nil {
		return nil, lang.UnknownAt(s.RelationAt.Or(s.At), "unknown relation %s", s.Relation)
	}
	alias := s.Alias
	if alias == "" {
		alias = s.Relation
	}
	r := &resolver{m: m, g: &Graph{Nodes: []Node{{Entity: root, Parent: -1, Alias: alias}}}}
	node := 0
	for _, step := range s.Path {
		var err error
		if node, err = r.walk(node, step, s.At); err != nil {
			return nil, err
		}
	}
	for _, j := range s.Joins {
		if err := r.join(j); err != nil {
			return nil, err
		}
	}
	q := &Query{Graph: r.g, Stmt: s}
	if s.Star {
		if len(r.g.Nodes) != 1 {
			return nil, errAt(s.At, "SELECT * over several relations: name the fields (or x.* for each relation x)")
		}
		for _, f := range root.Fields {
			q.Select = append(q.Select, FieldRef{Node: 0, Field: f})
		}
	}
	for i := range s.Columns {
		ref, err := r.ref(&s.Columns[i])
		if err != nil {
			return nil, err
		}
		if ref.Field == nil {
			for _, f := range r.g.Nodes[ref.Node].Entity.Fields {
				q.Select = appendRef(q.Select, FieldRef{Node: ref.Node, Field: f})
			}
			continue
		}
		q.Select = appendRef(q.Select, ref)
	}
	preds, err := r.conjuncts(s.Where)
	if err != nil {
		return nil, err
	}
	q.Preds = preds
	for _, o := range s.OrderBy {
		ref, err := r.ref(&lang.ColumnRef{At: o.At, Qual: o.Qual, Name: o.Column})
		if err != nil {
			return nil, err
		}
		if ref.Field != nil && perElement(ref.Field.Type) {
			return nil, errAt(o.At, "cannot order by %s, a %s stored one cell per element (a FROZEN<…> collection orders as a value)", ref.Field, ref.Field.Type)
		}
		q.OrderBy = append(q.OrderBy, OrderRef{Ref: ref, Desc: o.Desc})
	}
	if s.Limit != nil {
		lit, ok := s.Limit.(*lang.Literal)
		if !ok {
			return nil, errAt(s.Limit.Pos(), "LIMIT must be a constant in a workload query (the advisor costs it)")
		}
		q.Limit = lit.Value.(int64)
	}
	return q, nil
}

func appendRef(refs []FieldRef, r FieldRef) []FieldRef {
	for _, x := range refs {
		if x == r {
			return refs
		}
	}
	return append(refs, r)
}

// Params lists, by parameter index, the predicate each `?` of q stands in;
// nil where no predicate compares a field with that parameter.
func (q *Query) Params() []*Pred {
	var out []*Pred
	for i := range q.Preds {
		p := &q.Preds[i]
		par, ok := p.Value.(*lang.Param)
		if !ok {
			continue
		}
		for len(out) <= par.Index {
			out = append(out, nil)
		}
		out[par.Index] = p
	}
	return out
}

// SampleArgs draws an argument for each parameter of q from rows (tuples
// per entity in Entity.Columns order): the compared field in a random tuple
// of its entity, so that equalities match stored data. A parameter no
// predicate uses, or whose entity has no rows, gets NULL.
func (q *Query) SampleArgs(r *rand.Rand, rows map[*Entity][][]types.Value) []types.Value {
	params := q.Params()
	args := make([]types.Value, len(params))
	for i, p := range params {
		if p == nil {
			continue
		}
		e := q.Graph.Nodes[p.Ref.Node].Entity
		rs := rows[e]
		if len(rs) == 0 {
			continue
		}
		args[i] = rs[r.IntN(len(rs))][e.Column(p.Ref.Field)]
		if p.Op.IsContains() {
			// One of a stored collection's elements (keys).
			args[i] = sampleElem(r, args[i], p.Op.OfKeys())
		}
	}
	return args
}

// sampleElem is a random element of the collection c (a MAP's value, or
// with key its key); nil if c is NULL or empty.
func sampleElem(r *rand.Rand, c types.Value, key bool) types.Value {
	switch x := c.(type) {
	case types.Set:
		if len(x) > 0 {
			return x[r.IntN(len(x))]
		}
	case types.List:
		if len(x) > 0 {
			return x[r.IntN(len(x))]
		}
	case types.Map:
		if len(x) > 0 {
			e := x[r.IntN(len(x))]
			if key {
				return e.Key
			}
			return e.Val
		}
	}
	return nil
}

// HasEquality reports whether a predicate of q is an equality, or an
// element's test of a collection stored one cell per element (CONTAINS on
// a set, CONTAINS KEY on a map: an index on its elements looks it up): a
// plan of the advisor starts with a key lookup, which needs one.
func (q *Query) HasEquality() bool {
	for _, p := range q.Preds {
		if t := p.Ref.Field.Type; p.Op == Eq || perElement(t) && p.Op == ElementOp(t) {
			return true
		}
	}
	return false
}

// join adds the relation of `JOIN rel alias ON a.fk = b.key`.
func (r *resolver) join(j lang.Join) error {
	e := r.m.Entity(j.Relation)
	if e == nil {
		return lang.UnknownAt(j.At, "unknown relation %s", j.Relation)
	}
	alias := j.Alias
	if alias == "" {
		alias = j.Relation
	}
	if r.aliasNode(alias) >= 0 {
		return errAt(j.At, "%s is already a name in FROM: give the joined relation an alias", alias)
	}
	b, ok := j.On.(*lang.Binary)
	var l, rr *lang.ColumnRef
	if ok && b.Op == lang.OpEq {
		l, _ = b.L.(*lang.ColumnRef)
		rr, _ = b.R.(*lang.ColumnRef)
	}
	if l == nil || rr == nil || len(l.Qual) != 1 || len(rr.Qual) != 1 {
		return errAt(j.On.Pos(), "JOIN … ON must be one equality a.fk = b.key along a foreign key, with both sides qualified")
	}
	for _, side := range [2][2]*lang.ColumnRef{{l, rr}, {rr, l}} {
		fkSide, keySide := side[0], side[1]
		var fkEnt, keyEnt *Entity
		fkNode, keyNode := r.aliasNode(fkSide.Qual[0]), r.aliasNode(keySide.Qual[0])
		switch {
		case strings.EqualFold(fkSide.Qual[0], alias) && keyNode >= 0:
			fkEnt, keyEnt = e, r.g.Nodes[keyNode].Entity
		case strings.EqualFold(keySide.Qual[0], alias) && fkNode >= 0:
			fkEnt, keyEnt = r.g.Nodes[fkNode].Entity, e
		default:
			continue
		}
		nav := fkEnt.Nav(fkSide.Name)
		if nav == nil || nav.Many || nav.To != keyEnt || !strings.EqualFold(keySide.Name, keyEnt.ID().Name) {
			continue
		}
		if strings.EqualFold(fkSide.Qual[0], alias) {
			// The new relation references a known one: reach it by the
			// to-many reverse.
			r.g.Nodes = append(r.g.Nodes, Node{Entity: e, Parent: keyNode, Via: nav.Reverse, Alias: alias})
		} else {
			r.g.Nodes = append(r.g.Nodes, Node{Entity: e, Parent: fkNode, Via: nav, Alias: alias})
		}
		return nil
	}
	return errAt(j.On.Pos(), "JOIN %s ON %s does not follow a declared foreign key between %s and a relation already in FROM (write x.fk = y.key where x.fk REFERENCES y)", j.Relation, lang.PrintExpr(j.On), alias)
}

// conjuncts turns a WHERE clause into predicates.
func (r *resolver) conjuncts(e lang.Expr) ([]Pred, error) {
	if e == nil {
		return nil, nil
	}
	switch x := e.(type) {
	case *lang.Binary:
		if x.Op == lang.OpAnd {
			l, err := r.conjuncts(x.L)
			if err != nil {
				return nil, err
			}
			rr, err := r.conjuncts(x.R)
			return append(l, rr...), err
		}
		op, ok := opOf(x.Op)
		if !ok {
			break
		}
		col, cok := x.L.(*lang.ColumnRef)
		val := x.R
		if !cok {
			col, cok = x.R.(*lang.ColumnRef)
			val, op = x.L, flip(op)
		}
		if !cok {
			break
		}
		return r.pred(col, op, val, x.At)
	case *lang.Contains:
		if col, ok := x.X.(*lang.ColumnRef); ok {
			return r.pred(col, containsOp(x.Key, false), x.Elem, x.At)
		}
	case *lang.Not:
		if c, ok := x.X.(*lang.Contains); ok {
			if col, ok := c.X.(*lang.ColumnRef); ok {
				return r.pred(col, containsOp(c.Key, true), c.Elem, x.At)
			}
		}
	case *lang.Between:
		col, ok := x.X.(*lang.ColumnRef)
		if !ok || x.Not {
			break
		}
		lo, err := r.pred(col, Ge, x.Lo, x.At)
		if err != nil {
			return nil, err
		}
		hi, err := r.pred(col, Le, x.Hi, x.At)
		return append(lo, hi...), err
	}
	clause := r.clause
	if clause == "" {
		clause = "a workload query's WHERE"
	}
	return nil, errAt(e.Pos(), "%s must be a conjunction of comparisons between an attribute and a value or '?' (found %s)", clause, lang.PrintExpr(e))
}

// containsOp is the Op of CONTAINS (key: CONTAINS KEY), negated or not.
func containsOp(key, not bool) Op {
	switch {
	case not && key:
		return NotContainsKey
	case not:
		return NotContains
	case key:
		return ContainsKey
	}
	return Contains
}

func (r *resolver) pred(col *lang.ColumnRef, op Op, val lang.Expr, at lang.Pos) ([]Pred, error) {
	ref, err := r.ref(col)
	if err != nil {
		return nil, err
	}
	if ref.Field == nil {
		return nil, errAt(col.At, "cannot compare %s.*", strings.Join(col.Qual, "."))
	}
	pr := Pred{Ref: ref, Op: op, Value: val, At: at}
	if !op.IsContains() && perElement(ref.Field.Type) {
		return nil, errAt(at, "%s is a %s stored one cell per element: test its elements (CONTAINS, CONTAINS KEY), not its whole value (a FROZEN<…> collection compares as a value)", ref.Field, ref.Field.Type)
	}
	if op.IsContains() {
		if _, err := ref.Field.Type.Contained(op.OfKeys()); err != nil {
			return nil, errAt(at, "%s: %v", ref.Field, err)
		}
	}
	switch v := val.(type) {
	case *lang.Param:
	case *lang.Literal:
		if _, err := types.Coerce(v.Value, pr.ValueType()); err != nil {
			return nil, errAt(v.At, "%s: %v", ref.Field, err)
		}
	default:
		return nil, errAt(val.Pos(), "compare %s with a value or '?', not %s", ref.Field, lang.PrintExpr(val))
	}
	return []Pred{pr}, nil
}

// Describe writes a FieldRef as path.field.
func (g *Graph) DescribeRef(r FieldRef) string {
	if r.Field == nil {
		return g.Describe(r.Node) + ".*"
	}
	return g.Describe(r.Node) + "." + r.Field.Name
}

// Describe writes q in path notation: SELECT paths WHERE predicates (a
// support query of a write has no statement of its own to print).
func (q *Query) Describe() string {
	var sel, where []string
	for _, r := range q.Select {
		sel = append(sel, q.Graph.DescribeRef(r))
	}
	for _, p := range q.Preds {
		where = append(where, q.Graph.DescribeRef(p.Ref)+" "+p.Op.String()+" "+lang.PrintExpr(p.Value))
	}
	return "SELECT " + strings.Join(sel, ", ") + " WHERE " + strings.Join(where, " AND ")
}

func (q *Query) String() string {
	if q.Stmt != nil {
		return lang.Print(q.Stmt)
	}
	return fmt.Sprintf("query over %s", q.Graph.Describe(0))
}
