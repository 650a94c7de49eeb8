package advisor

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/model"
	"github.com/kvschema/kvschema/physical"
	"github.com/kvschema/kvschema/workload"
)

// Evaluate costs a given schema (hand-written, or an older recommendation)
// for the statements of a mix: each query on its cheapest plan over the
// schema, each write with the upkeep of every index it changes and the
// cheapest plans of its support queries. A statement the schema cannot
// answer, or an index whose support query it cannot answer, is an error
// naming the statement.
func Evaluate(m *model.Model, w *workload.Workload, s *physical.Schema, opt Options) (*Result, error) {
	start := time.Now()
	if !w.HasMix(opt.Mix) {
		return nil, fmt.Errorf("workload %s has no mix %q (its mixes: %s)", w.Name, opt.Mix, strings.Join(w.Mixes, ", "))
	}
	if err := opt.Profile.Validate(); err != nil {
		return nil, err
	}
	pl := NewPlanner(s, opt.Profile)
	res := &Result{Mix: opt.Mix, Budget: opt.Budget, Profile: opt.Profile, Indexes: s.Indexes, Schema: s}
	for _, x := range s.Indexes {
		res.TotalSize += x.Size
	}
	for _, st := range w.Statements {
		weight := st.Weight(opt.Mix)
		if weight <= 0 {
			continue
		}
		pos := st.AST.Pos()
		if st.Query != nil {
			plan, err := pl.Query(st.Query)
			if err != nil {
				return nil, fmt.Errorf("%s:%d:%d: statement %s: %s: %v", pos.File, pos.Line, pos.Col, st.Tag, st.Text(), err)
			}
			res.Queries = append(res.Queries, &QueryPlan{Statement: st, Weight: weight, Plan: plan})
			res.TotalCost += weight * plan.Cost
			continue
		}
		ups, err := pl.Write(st.Write)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: statement %s: %v", pos.File, pos.Line, pos.Col, st.Tag, err)
		}
		wp := &WritePlan{Statement: st, Weight: weight}
		seen := map[*physical.Plan]bool{}
		byIndex := map[*physical.Index]*IndexUpkeep{}
		for _, u := range ups {
			iu := byIndex[u.Index]
			if iu == nil {
				iu = &IndexUpkeep{Index: u.Index}
				byIndex[u.Index] = iu
				wp.Indexes = append(wp.Indexes, iu)
			}
			iu.Puts += u.Puts
			iu.Deletes += u.Deletes
			iu.WriteCost += u.WriteCost
			wp.Cost += u.WriteCost
			for _, sp := range u.AllSupports() {
				iu.Support = append(iu.Support, sp.Plan)
				if !seen[sp.Plan] {
					seen[sp.Plan] = true
					wp.Cost += sp.Plan.Cost
				}
			}
		}
		res.Writes = append(res.Writes, wp)
		res.TotalCost += weight * wp.Cost
	}
	res.Stats.TotalTime = time.Since(start)
	return res, nil
}

// Planner plans queries and writes over a deployed schema with the
// advisor's planner and cost model: each query on its cheapest plan, each
// write with the upkeep of every index it changes. The runtime executes what
// it returns, so measured latency compares with the cost it predicts. It is
// safe for concurrent use.
type Planner struct {
	schema *physical.Schema
	prof   cost.Profile
	pool   *pool
}

// NewPlanner plans over schema s with cost profile prof.
func NewPlanner(s *physical.Schema, prof cost.Profile) *Planner {
	// An SI's entries name base rows by entity keys, so any CF of the same
	// graph partitioned by the SI's value can follow it, as in the
	// advisor's plans (not only the CF the DDL defines it on).
	p := newPool(s.Indexes)
	for si, b := range s.Base {
		if !containsIndex(p.bases[si], b) {
			p.bases[si] = append(p.bases[si], b)
		}
	}
	return &Planner{schema: s, prof: prof, pool: p}
}

// Query returns the cheapest plan of q, or an error saying which structure
// the schema lacks.
func (p *Planner) Query(q *model.Query) (*physical.Plan, error) {
	if pl := planDAG(q, p.prof, p.pool).cheapest(); pl != nil {
		return pl, nil
	}
	return nil, fmt.Errorf("the schema cannot answer it: %s", missing(q))
}

// Write returns the upkeep of every index w changes, support queries
// planned (one plan shared by equal support queries).
func (p *Planner) Write(w *model.Write) ([]*physical.Upkeep, error) {
	var out []*physical.Upkeep
	plans := map[string]*physical.Plan{}
	for _, x := range p.schema.Indexes {
		u, ok := maintain(w, x)
		if !ok {
			continue
		}
		for _, part := range u.parts {
			part.WriteCost = p.prof.Insert(part.Puts) + p.prof.Delete(part.Deletes)
			for _, sp := range part.AllSupports() {
				k := queryKey(sp.Query)
				pl, done := plans[k]
				if !done {
					if pl = planDAG(sp.Query, p.prof, p.pool).cheapest(); pl == nil {
						return nil, fmt.Errorf("the schema cannot keep %s up to date: nothing answers its support query %s (%s)",
							x.Name, describeQuery(sp.Query), missing(sp.Query))
					}
					plans[k] = pl
				}
				sp.Plan = pl
			}
			out = append(out, part)
		}
	}
	return out, nil
}

// missing says what a schema lacks to answer q.
func missing(q *model.Query) string {
	var eq []string
	for _, p := range q.Preds {
		if p.Op == model.Eq {
			eq = append(eq, q.Graph.DescribeRef(p.Ref))
		}
	}
	return fmt.Sprintf("add a column family (or a secondary index on one) whose partition key is among %s and that reaches %s",
		strings.Join(eq, ", "), describeNeeds(q))
}

func describeNeeds(q *model.Query) string {
	var fs []string
	for _, r := range neededFields(q) {
		fs = append(fs, q.Graph.DescribeRef(r))
	}
	return strings.Join(fs, ", ")
}

// describeQuery writes a support query in path notation.
func describeQuery(q *model.Query) string {
	var sel, where []string
	for _, r := range q.Select {
		sel = append(sel, q.Graph.DescribeRef(r))
	}
	for _, p := range q.Preds {
		where = append(where, q.Graph.DescribeRef(p.Ref)+" "+p.Op.String()+" ?")
	}
	return "SELECT " + strings.Join(sel, ", ") + " WHERE " + strings.Join(where, " AND ")
}

func containsIndex(xs []*physical.Index, x *physical.Index) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
