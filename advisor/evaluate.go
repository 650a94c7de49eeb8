package advisor

import (
	"fmt"
	"strings"
	"time"

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
	p := newPool(s.Indexes)
	for si, b := range s.Base {
		p.bases[si] = []*physical.Index{b}
	}
	res := &Result{Mix: opt.Mix, Budget: opt.Budget, Profile: opt.Profile, Indexes: s.Indexes, Schema: s}
	for _, x := range s.Indexes {
		res.TotalSize += x.Size
	}
	for _, st := range w.Statements {
		weight := st.Weight(opt.Mix)
		if weight <= 0 {
			continue
		}
		if st.Query != nil {
			pl := planDAG(st.Query, opt.Profile, p).cheapest()
			if pl == nil {
				return nil, fmt.Errorf("%s:%d:%d: statement %s: the schema cannot answer %s: %s", st.AST.Pos().File, st.AST.Pos().Line, st.AST.Pos().Col,
					st.Tag, st.Text(), missing(st.Query))
			}
			res.Queries = append(res.Queries, &QueryPlan{Statement: st, Weight: weight, Plan: pl})
			res.TotalCost += weight * pl.Cost
			continue
		}
		wp := &WritePlan{Statement: st, Weight: weight}
		seen := map[string]*physical.Plan{}
		for _, x := range s.Indexes {
			u, ok := maintain(st.Write, x)
			if !ok {
				continue
			}
			iu := &IndexUpkeep{Index: x, Puts: u.puts, Deletes: u.deletes, WriteCost: u.cost(opt.Profile)}
			for _, q := range u.support {
				k := queryKey(q)
				pl, done := seen[k]
				if !done {
					pl = planDAG(q, opt.Profile, p).cheapest()
					if pl == nil {
						return nil, fmt.Errorf("%s:%d:%d: statement %s: the schema cannot keep %s up to date: nothing answers its support query %s (%s)",
							st.AST.Pos().File, st.AST.Pos().Line, st.AST.Pos().Col, st.Tag, x.Name, describeQuery(q), missing(q))
					}
					seen[k] = pl
					wp.Cost += pl.Cost
				}
				iu.Support = append(iu.Support, pl)
			}
			wp.Indexes = append(wp.Indexes, iu)
			wp.Cost += iu.WriteCost
		}
		res.Writes = append(res.Writes, wp)
		res.TotalCost += weight * wp.Cost
	}
	res.Stats.TotalTime = time.Since(start)
	return res, nil
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
