package advisor

import (
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/workload"
)

// part is one independent component of a problem: its statements share no
// candidate index with those of any other part, so its integer program
// shares no variable and no constraint with theirs (except a budget row).
type part struct {
	*problem
	// qpos and wpos place the part's queries and writes in the whole
	// problem's queries and writes.
	qpos, wpos []int
}

// split divides the problem into its independent components. Two
// statements are in one component when they can read or charge a common
// candidate index: a query with every index a step of its plan DAG reads;
// a write with every index it maintains (its upkeep, charged to that
// index) and every index a step of its support queries' DAGs reads; an SI
// with each of its possible base CFs. That covers every constraint of the
// program without a budget (see buildILP), so the program is the sum of
// the components' programs and its optimum the sum of their optima.
//
// Parts come in the order of their first query (parts with none, whose
// writes maintain nothing a query reads, after them by first write) and
// keep the whole problem's order within, whatever the order of maps. A
// problem of one component comes back as is.
func (pb *problem) split() []*part {
	nq, nw := len(pb.queries), len(pb.writes)
	// Union-find over statements (queries, then writes) and indexes.
	parent := make([]int, nq+nw)
	for i := range parent {
		parent[i] = i
	}
	id := map[*catalog.Index]int{}
	node := func(x *catalog.Index) int {
		if i, ok := id[x]; ok {
			return i
		}
		id[x] = len(parent)
		parent = append(parent, len(parent))
		return id[x]
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	union := func(a, b int) { parent[find(a)] = find(b) }
	for qi, d := range pb.qdags {
		for _, a := range d.LiveArcs() {
			union(qi, node(d.Arcs[a].Step.Index))
		}
	}
	wi := map[*workload.Statement]int{}
	for i, s := range pb.writes {
		wi[s] = nq + i
		for _, x := range pb.pool.Indexes() {
			if _, ok := pb.upkeeps[s][x]; ok {
				union(nq+i, node(x))
			}
		}
	}
	for _, sp := range pb.supports {
		w := wi[sp.write]
		for _, x := range sp.needBy {
			union(w, node(x))
		}
		for _, a := range sp.dag.LiveArcs() {
			union(w, node(sp.dag.Arcs[a].Step.Index))
		}
	}
	// A write's existence checks (ilp.addChecks), where priced, tie it to
	// every index that can answer one.
	for i, s := range pb.writes {
		if !pb.checks {
			break
		}
		for _, ch := range planner.Checks(s.Write) {
			for _, x := range pb.pool.Indexes() {
				if planner.CanCheck(x, ch.Entity) {
					union(nq+i, node(x))
				}
			}
		}
	}
	for _, x := range pb.pool.Indexes() {
		for _, b := range pb.pool.Bases[x] {
			union(node(x), node(b))
		}
	}

	// Statements in order: each part is made at its first statement.
	byRoot := map[int]*part{}
	var parts []*part
	at := func(i int) *part {
		r := find(i)
		p := byRoot[r]
		if p == nil {
			p = &part{problem: &problem{upkeeps: pb.upkeeps, pool: pb.pool, checks: pb.checks}}
			byRoot[r] = p
			parts = append(parts, p)
		}
		return p
	}
	for qi, s := range pb.queries {
		p := at(qi)
		p.queries = append(p.queries, s)
		p.qdags = append(p.qdags, pb.qdags[qi])
		p.qpos = append(p.qpos, qi)
	}
	for i, s := range pb.writes {
		p := at(nq + i)
		p.writes = append(p.writes, s)
		p.wpos = append(p.wpos, i)
	}
	for _, sp := range pb.supports {
		p := at(wi[sp.write])
		p.supports = append(p.supports, sp)
	}
	if len(parts) == 1 {
		return []*part{{problem: pb, qpos: parts[0].qpos, wpos: parts[0].wpos}}
	}
	return parts
}
