package planner

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/plan"
)

// A write runs each support query its upkeeps need, but one read may
// answer several (a DBA reads the row once): support queries with the same
// graph and predicates (one group, GroupKey) share a read when
//
//   - one covers the others (Covers): its plan's answer, projected, is
//     theirs; or
//   - one index answers each of them in one step (oneStep): a lookup of it
//     by the group's predicates, reading the fields all of them select.
//
// Planner.Write picks, per group, the reads of least total cost that
// answer every support query of the group (sharePlans); the advisor's
// program offers the same choices (a covering query's plan, or a shared
// one-step read of an index), so both cost a schema alike.

// GroupKey identifies the support queries one read may answer together:
// those with the same graph (canonical, so the same node numbers) and
// predicates.
func GroupKey(q *catalog.Query) string {
	return catalog.GraphKey(q.Graph) + predKey(q)
}

// oneStep returns, per index, the least cost of a plan of d that is one
// step reading it.
func (d *DAG) oneStep() map[*catalog.Index]float64 {
	out := map[*catalog.Index]float64{}
	if len(d.States) == 0 || !d.States[0].Live {
		return out
	}
	for _, a := range d.States[0].Out {
		arc := d.Arcs[a]
		if arc.cut || !d.States[arc.To].End {
			continue
		}
		if c, ok := out[arc.Step.Index]; !ok || arc.Step.Cost < c {
			out[arc.Step.Index] = arc.Step.Cost
		}
	}
	return out
}

// oneStepPlan is the plan of d that is one step reading x at cost c, or
// nil.
func (d *DAG) oneStepPlan(x *catalog.Index, c float64) *plan.Query {
	for _, a := range d.States[0].Out {
		arc := d.Arcs[a]
		if !arc.cut && d.States[arc.To].End && arc.Step.Index == x && arc.Step.Cost == c {
			return d.Plan([]int{a})
		}
	}
	return nil
}

// SharedRead is a one-step read of Index, at Cost, that answers each of the
// support queries in Answers (positions in the group).
type SharedRead struct {
	Index   *catalog.Index
	Cost    float64
	Answers []int
}

// SharedReads lists the one-step reads answering at least two of a
// group's support queries, given each one's plan DAG: an index read in
// one step at the same cost by each of them.
func SharedReads(dags []*DAG) []SharedRead {
	var out []SharedRead
	at := map[*catalog.Index]int{}
	for i, d := range dags {
		for x, c := range d.oneStep() {
			k, ok := at[x]
			if !ok {
				at[x] = len(out)
				out = append(out, SharedRead{Index: x, Cost: c, Answers: []int{i}})
				continue
			}
			if out[k].Cost == c {
				out[k].Answers = append(out[k].Answers, i)
			}
		}
	}
	kept := out[:0]
	for _, r := range out {
		if len(r.Answers) > 1 {
			kept = append(kept, r)
		}
	}
	// Map order made the list: sort for a deterministic program.
	slices.SortFunc(kept, func(a, b SharedRead) int { return strings.Compare(a.Index.Key, b.Index.Key) })
	return kept
}

// SharedPlan is the plan of shared read r of support queries qs (those it
// answers): one step reading r.Index (a key lookup, or a full scan where
// only one answers them), selecting every field of qs; nil if there is
// none.
func SharedPlan(qs []*catalog.Query, r SharedRead, m cost.Model, p *Pool) *plan.Query {
	u := &catalog.Query{Graph: qs[0].Graph, Preds: qs[0].Preds}
	for _, q := range qs {
		for _, f := range q.Select {
			if !slices.Contains(u.Select, f) {
				u.Select = append(u.Select, f)
			}
		}
	}
	if pl := Build(u, m, p).oneStepPlan(r.Index, r.Cost); pl != nil {
		return pl
	}
	// The runtime's full-scan fallback (Planner.Scans) plans the queries
	// nothing else answers: a shared scan, then.
	return build(u, m, p, true).oneStepPlan(r.Index, r.Cost)
}

// maxShareGroup bounds the support queries of one group sharePlans
// searches exactly (2^n subsets). A larger group (none in RUBiS: over
// planner/testdata/rubis_pool.kvs, 115 structures, a group has at most 3
// support queries) only shares covering plans, so there
// the runtime may read more than the advisor's program costs.
const maxShareGroup = 16

// sharePlans plans the support queries qs of one write's group (GroupKey,
// distinct): it returns one plan per query, the same plan for queries one
// read answers, of least total cost over the distinct plans.
func (p *Planner) sharePlans(qs []*catalog.Query) ([]*plan.Query, error) {
	n := len(qs)
	dags := make([]*DAG, n)
	own := make([]*plan.Query, n)
	for i, q := range qs {
		dags[i] = Build(q, p.cost, p.pool)
		if own[i] = dags[i].Cheapest(); own[i] == nil && p.Scans {
			dags[i] = build(q, p.cost, p.pool, true)
			own[i] = dags[i].Cheapest()
		}
		if own[i] == nil {
			return nil, fmt.Errorf("nothing answers its support query %s (%s)", q.Describe(), missing(q))
		}
	}
	out := make([]*plan.Query, n)
	if n > maxShareGroup {
		// Too many to search: each query takes the plan of the widest
		// query covering it (itself if none), which runs anyway.
		for i := range qs {
			w := i
			for j := range qs {
				if len(qs[j].Select) > len(qs[w].Select) && Covers(qs[j], qs[i]) {
					w = j
				}
			}
			out[i] = own[w]
		}
		return out, nil
	}
	// The choices: a query's own cheapest plan, answering those it
	// covers; a shared one-step read.
	type choice struct {
		mask uint32
		cost float64
		pl   *plan.Query // nil: a shared read, planned once chosen
		read SharedRead
	}
	var cs []choice
	for i := range qs {
		var m uint32
		for j := range qs {
			if Covers(qs[i], qs[j]) {
				m |= 1 << j
			}
		}
		cs = append(cs, choice{mask: m, cost: own[i].Cost, pl: own[i]})
	}
	for _, r := range SharedReads(dags) {
		var m uint32
		for _, j := range r.Answers {
			m |= 1 << j
		}
		cs = append(cs, choice{mask: m, cost: r.Cost, read: r})
	}
	// Least-cost cover of all n queries, by subsets.
	full := uint32(1)<<n - 1
	best := make([]float64, full+1)
	via := make([]int, full+1)
	for s := uint32(1); s <= full; s++ {
		best[s] = math.Inf(1)
		low := uint32(1) << bits.TrailingZeros32(s)
		for k, c := range cs {
			if c.mask&low == 0 {
				continue
			}
			if v := best[s&^c.mask] + c.cost; v < best[s] {
				best[s], via[s] = v, k
			}
		}
	}
	var pick []int
	for s := full; s != 0; s &^= cs[via[s]].mask {
		pick = append(pick, via[s])
	}
	for _, k := range pick {
		c := cs[k]
		pl := c.pl
		if pl == nil {
			var answers []*catalog.Query
			for _, j := range c.read.Answers {
				answers = append(answers, qs[j])
			}
			if pl = SharedPlan(answers, c.read, p.cost, p.pool); pl == nil {
				return nil, fmt.Errorf("internal error: no one-step read of %s answers the support queries %s", c.read.Index.Name, answers[0].Describe())
			}
		}
		for j := 0; j < n; j++ {
			if c.mask&(1<<j) != 0 && out[j] == nil {
				out[j] = pl
			}
		}
	}
	return out, nil
}
