package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/plan"
)

// Planner plans queries and writes over a deployed schema with the
// advisor's planner and cost model: each query on its cheapest plan, each
// write with the upkeep of every index it changes. The runtime executes what
// it returns, so measured latency compares with the cost it predicts. It is
// safe for concurrent use.
type Planner struct {
	schema *catalog.Schema
	cost   cost.Model
	pool   *Pool
	// Scans lets Query, and the support queries of Write, fall back on a
	// full scan (see Query): the runtime sets it; the advisor, which
	// prices only the plans NoSE considers, does not. Set it before the
	// Planner is shared.
	Scans bool
	// LocalSIs: the engine keeps every secondary index itself (a profile's
	// LocalIndexes, when costing a schema for it), so Write plans none, as
	// it plans none of the schema's local indexes (Schema.Local) that a
	// store keeps. Set it before the Planner is shared.
	LocalSIs bool
}

// New plans over schema s, pricing plans with m.
func New(s *catalog.Schema, m cost.Model) *Planner {
	// An SI's entries name base rows by entity keys, so any CF of the same
	// graph partitioned by the SI's value can follow it, as in the
	// advisor's plans (not only the CF the DDL defines it on).
	//
	// A write-only index (a migration builds or drops it) is kept by Write
	// but read by no plan: the pool holds only the readable ones.
	readable := s.Indexes
	if len(s.WriteOnly) > 0 {
		readable = nil
		for _, x := range s.Indexes {
			if s.Readable(x) {
				readable = append(readable, x)
			}
		}
	}
	p := NewPool(readable)
	p.Local = s.Local
	for si, b := range s.Base {
		if !s.Readable(si) || !s.Readable(b) {
			continue
		}
		if !containsIndex(p.Bases[si], b) {
			p.Bases[si] = append(p.Bases[si], b)
		}
	}
	// A local index (Schema.Local) lives in its base's table: one read
	// through it returns that base's rows, so only that base follows it.
	for si, b := range s.Local {
		if !s.Readable(si) || !s.Readable(b) {
			continue
		}
		p.Bases[si] = []*catalog.Index{b}
	}
	return &Planner{schema: s, cost: m, pool: p}
}

// Query returns the cheapest plan of q, or an error saying which structure
// the schema lacks. With Scans, a query that no plan starting with a key
// lookup answers (no equality binds a partition key: a range, or no
// WHERE) is answered by a full scan of a column family, the predicates
// filtered at the client, as Phoenix's FULL SCAN and Cassandra's ALLOW
// FILTERING do; its cost counts every row.
func (p *Planner) Query(q *catalog.Query) (*plan.Query, error) {
	return p.query(q, true)
}

// query is Query; with partners, a query no scan answers is tried over
// its graph extended with the partners every index joins its entities
// with (partnerGraph): the plan's query then has nodes q lacks.
func (p *Planner) query(q *catalog.Query, partners bool) (*plan.Query, error) {
	if pl := Build(q, p.cost, p.pool).Cheapest(); pl != nil {
		return pl, nil
	}
	if !p.Scans {
		return nil, fmt.Errorf("the schema cannot answer it: %s", missing(q))
	}
	if pl := build(q, p.cost, p.pool, true).Cheapest(); pl != nil {
		return pl, nil
	}
	// A scan of the tuples joined with a partner every index keeps them
	// with (partnered): the same tuples, each once.
	if partners && q.CondOf == nil {
		if g, ok := p.partnerGraph(q.Graph); ok {
			w := *q
			w.Graph = g
			if pl := build(&w, p.cost, p.pool, true).Cheapest(); pl != nil {
				return pl, nil
			}
		}
	}
	return nil, fmt.Errorf("the schema cannot answer it: %s", missing(q))
}

// Write returns the upkeep of every index w changes, support queries
// planned: one plan shared by the support queries one read answers
// (sharePlans), as the advisor costs them. The store's local indexes
// (Schema.Local) need none.
func (p *Planner) Write(w *catalog.Write) ([]*plan.Upkeep, error) {
	var out []*plan.Upkeep
	var sups []*plan.Support
	owner := map[*plan.Support]*catalog.Index{}
	for _, x := range p.schema.Indexes {
		if p.schema.Local[x] != nil || p.LocalSIs && x.Kind == catalog.SI {
			continue // the engine keeps it, in the base's write path
		}
		u, ok := Maintain(w, x)
		if !ok {
			continue
		}
		for _, part := range u.Parts {
			part.WriteCost = p.cost.Write(part.Puts, part.Deletes)
			for _, sp := range part.AllSupports() {
				sups = append(sups, sp)
				owner[sp] = x
			}
			out = append(out, part)
		}
	}
	// Equal support queries are one; a group (GroupKey) shares reads.
	var groups [][]*catalog.Query
	byGroup := map[string]int{}
	pos := map[string][2]int{} // QueryKey → group, position
	at := make([][2]int, len(sups))
	for i, sp := range sups {
		k := QueryKey(sp.Query)
		at1, ok := pos[k]
		if !ok {
			gk := GroupKey(sp.Query)
			g, ok := byGroup[gk]
			if !ok {
				g = len(groups)
				byGroup[gk] = g
				groups = append(groups, nil)
			}
			at1 = [2]int{g, len(groups[g])}
			pos[k] = at1
			groups[g] = append(groups[g], sp.Query)
		}
		at[i] = at1
	}
	plans := make([][]*plan.Query, len(groups))
	for i, sp := range sups {
		g := at[i][0]
		if plans[g] == nil {
			var err error
			if plans[g], err = p.sharePlans(groups[g]); err != nil {
				return nil, fmt.Errorf("the schema cannot keep %s up to date: %v", owner[sp].Name, err)
			}
		}
		sp.Plan = plans[g][at[i][1]]
	}
	return out, nil
}

// Rows plans the query whose answer is the rows of x — an index the
// planner's schema need not hold: a migration builds it from the others —
// over x's whole graph, selecting every attribute a row holds but its
// static columns, with one equality per attribute of eq (parameter i for
// eq[i]). The graph is rooted at the node whose query has the cheapest
// plan, one that scans no table if any does (the same join from every
// root; the indexes may answer it from some roots only, or better). The
// plan is sp.Plan.
func (p *Planner) Rows(x *catalog.Index, eq []catalog.Attr) (*plan.Support, error) {
	var first error
	var best *plan.Support
	for root := range x.Graph.Nodes {
		sp := rowsQuery(x, eq, root)
		pl, err := p.query(sp.Query, false)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		sp.Plan = pl
		if best == nil || better(pl, best.Plan) {
			best = sp
		}
	}
	if best == nil {
		if x, ok := p.partnered(x); ok {
			if sp, err := p.Rows(x, eq); err == nil {
				return sp, nil
			}
		}
		return nil, first
	}
	return best, nil
}

// partnered returns x with its graph extended by the partners its
// entities have in every readable index: for a node of entity E and a
// to-one relationship of E that x's graph lacks there, the other entity,
// when every readable index holding E joins it with that relationship.
// The schema then keeps no tuple of E without its partner (a row joins
// tuples that exist), and each has one: the extended graph's rows are x's,
// one each, with the partner's key besides. So a migration builds a
// column family of E alone from one of E with its partner — messages by
// id from messages with their room, where every index holding messages
// holds their room. ok is false when no relationship qualifies.
func (p *Planner) partnered(x *catalog.Index) (*catalog.Index, bool) {
	g, ok := p.partnerGraph(x.Graph)
	if !ok {
		return nil, false
	}
	w := *x
	w.Graph = g
	return &w, true
}

// partnerGraph is g with, after its own nodes (numbered as in g), a node
// for each to-one partner that every readable index holding a node's
// entity joins it with (see partnered); ok is false when there is none.
func (p *Planner) partnerGraph(g *catalog.Graph) (*catalog.Graph, bool) {
	w := &catalog.Graph{Nodes: slices.Clone(g.Nodes)}
	for n, nd := range g.Nodes {
		for _, nav := range nd.Entity.Navs {
			if nav.Many || w.Step(n, nav) >= 0 || !p.alwaysJoined(nd.Entity, nav) {
				continue
			}
			w.Nodes = append(w.Nodes, catalog.Node{Entity: nav.To, Parent: n, Via: nav, Alias: nd.Alias + "." + nav.Name})
		}
	}
	return w, len(w.Nodes) > len(g.Nodes)
}

// alwaysJoined reports whether some readable index holds entity e and
// every readable index holding e joins each of its tuples with one of
// e's to-one relationship nav.
func (p *Planner) alwaysJoined(e *catalog.Entity, nav *catalog.Nav) bool {
	held := false
	for _, y := range p.schema.Indexes {
		if !p.schema.Readable(y) {
			continue
		}
		for m, nd := range y.Graph.Nodes {
			if nd.Entity != e {
				continue
			}
			if y.Graph.Step(m, nav) < 0 {
				return false
			}
			held = true
		}
	}
	return held
}

// better reports whether plan a is to be preferred to b: it scans no
// table where b does, or it costs less.
func better(a, b *plan.Query) bool {
	if a.Scans() != b.Scans() {
		return !a.Scans()
	}
	return a.Cost < b.Cost
}

// PartitionRows plans the query of the partition rows of x (which has
// static columns): its root's key and static columns; with keyed, for
// the root whose key is parameter 0.
func (p *Planner) PartitionRows(x *catalog.Index, keyed bool) (*plan.Support, error) {
	sp := partitionQuery(x, keyed)
	pl, err := p.query(sp.Query, false)
	if err != nil {
		return nil, err
	}
	sp.Plan = pl
	return sp, nil
}

// Unstored lists what x's rows need that no index of from stores: its
// attributes ("users.rating") and the relationships of its graph ("the
// relationship comments.from_user"). A migration cannot build x from
// indexes that lack them.
func Unstored(from []*catalog.Index, x *catalog.Index) []string {
	fields := map[*catalog.Field]bool{}
	navs := map[*catalog.Nav]bool{}
	for _, y := range from {
		for _, a := range y.Stored() {
			fields[a.Field] = true
		}
		for _, nd := range y.Graph.Nodes[1:] {
			navs[nd.Via], navs[nd.Via.Reverse] = true, true
		}
	}
	var out []string
	for _, a := range x.Stored() {
		if !fields[a.Field] && !slices.Contains(out, a.Field.String()) {
			out = append(out, a.Field.String())
		}
	}
	for _, nd := range x.Graph.Nodes[1:] {
		if !navs[nd.Via] {
			out = append(out, "the relationship "+nd.Via.String())
		}
	}
	return out
}

// missing says what a schema lacks to answer q.
func missing(q *catalog.Query) string {
	if w := q.CondOf; w != nil {
		e := w.Entity
		what := "its key"
		if fs := w.ReadFields(); len(fs) > 0 {
			var names []string
			for _, f := range fs {
				names = append(names, f.String())
			}
			what = strings.Join(names, ", ")
		}
		kind := "a conditional write"
		if w.Cond == catalog.Unconditional {
			kind = "a write changing a list's elements by position or value"
		}
		return fmt.Sprintf("%s reads the tuple it names from one column family of %s alone, partitioned by %s alone, holding %s: add one", kind, e.Name, e.ID(), what)
	}
	var eq []string
	for _, p := range q.Preds {
		if p.Op == catalog.Eq {
			eq = append(eq, q.Graph.DescribeRef(p.Ref))
		}
	}
	if len(eq) == 0 {
		return fmt.Sprintf("no equality binds a partition key, and no column family holds %s for a full scan to read", describeNeeds(q))
	}
	return fmt.Sprintf("add a column family (or a secondary index on one) whose partition key is among %s and that reaches %s",
		strings.Join(eq, ", "), describeNeeds(q))
}

func describeNeeds(q *catalog.Query) string {
	var fs []string
	for _, r := range NeededFields(q) {
		fs = append(fs, q.Graph.DescribeRef(r))
	}
	return strings.Join(fs, ", ")
}

func containsIndex(xs []*catalog.Index, x *catalog.Index) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
