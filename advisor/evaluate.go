package advisor

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/workload"
)

// Evaluate costs a given schema (hand-written, or an older recommendation)
// for the statements of a mix: each query on its cheapest plan over the
// schema, each write with the upkeep of every index it changes and the
// cheapest plans of its support queries. A statement the schema cannot
// answer, or an index whose support query it cannot answer, is an error
// naming the statement.
func Evaluate(m *catalog.Model, w *workload.Workload, s *catalog.Schema, opt Options) (*Result, error) {
	start := time.Now()
	if !w.HasMix(opt.Mix) {
		return nil, fmt.Errorf("workload %s has no mix %q (its mixes: %s)", w.Name, opt.Mix, strings.Join(w.Mixes, ", "))
	}
	if err := opt.Profile.Validate(); err != nil {
		return nil, err
	}
	if opt.Profile.LocalIndexes && !opt.Profile.KeepsSI(false) && s.Local == nil {
		// kvschema's engine keeps an SI as a local index on its base when
		// the base can keep it (Schema.Local), the others as tables: cost
		// the schema as it will run.
		kept := *s
		kept.KeepLocal(true)
		s = &kept
	}
	pl := planner.New(s, opt.Profile)
	// An engine that keeps every SI itself (Cassandra) writes their
	// entries with their bases': each costs its writes, no support query,
	// as Advise prices it; on kvschema's, those of Schema.Local.
	pl.LocalSIs = opt.Profile.KeepsSI(false)
	res := &Result{Mix: opt.Mix, Evaluated: true, Budget: opt.Budget, Profile: opt.Profile, Indexes: s.Indexes, Schema: s}
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
		wp := &WritePlan{Statement: st, Weight: weight, Cost: opt.Profile.ApplyCost}
		seen := map[*plan.Query]bool{}
		byIndex := map[*catalog.Index]*IndexUpkeep{}
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
		// The SIs the engine keeps cost their writes, planned by no
		// upkeep (Planner.Write).
		for _, x := range s.Indexes {
			if x.Kind == catalog.SI && (pl.LocalSIs || s.Local[x] != nil) {
				if u, ok := planner.Maintain(st.Write, x); ok {
					c := u.Local().Cost(opt.Profile)
					wp.Indexes = append(wp.Indexes, &IndexUpkeep{Index: x, Puts: u.Puts, Deletes: u.Deletes, WriteCost: c})
					wp.Cost += c
				}
			}
		}
		if c := checkCost(opt.Profile); c > 0 && planner.NeedsCheck(st.Write, ups, s.Indexes) {
			wp.Check = c
			wp.Cost += c
		}
		res.Writes = append(res.Writes, wp)
		res.TotalCost += weight * wp.Cost
	}
	res.Stats.TotalTime = time.Since(start)
	return res, nil
}
