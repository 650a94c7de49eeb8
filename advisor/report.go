package advisor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
)

// WriteText writes the recommendation for people: the schema, every
// statement's plan, the write plans, the totals and the solver's figures.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.Evaluated {
		fmt.Fprintf(&b, "-- kvschema cost: mix %s, profile %s\n\n", r.Mix, r.Profile.Name)
	} else {
		fmt.Fprintf(&b, "-- kvschema advise: mode %s, mix %s, budget %s, profile %s\n\n", r.Mode, r.Mix, units.Format(r.Budget), r.Profile.Name)
	}
	b.WriteString("Schema\n")
	for _, x := range r.Indexes {
		each := "each"
		if x.PartitionBuckets > 0 {
			each = fmt.Sprintf("in each of %d buckets", x.PartitionBuckets)
		}
		fmt.Fprintf(&b, "  %s %s\n      %s rows × %.0f B = %s in %s partitions (%s %s)", x.Name, x.Describe(), fmtCount(x.Entries), x.EntrySize, units.Format(x.Size), fmtCount(x.Partitions), units.Format(x.PartitionBytes()), each)
		if base := r.Schema.Base[x]; base != nil {
			fmt.Fprintf(&b, ", on %s", base.Name)
		}
		b.WriteByte('\n')
		if w := x.PartitionWarning(); w != "" {
			fmt.Fprintf(&b, "      warning: %s\n", w)
		}
	}
	b.WriteString("\nQuery plans\n")
	for _, q := range r.Queries {
		fmt.Fprintf(&b, "  [%s] %s\n      weight %g, cost %.6g (weighted %.6g), rows %.4g\n", q.Statement.Tag, q.Statement.Text(), q.Weight, q.Plan.Cost, q.Weight*q.Plan.Cost, q.Plan.Rows)
		b.WriteString(q.Plan.Describe("      "))
	}
	b.WriteString("\nWrite plans\n")
	for _, wp := range r.Writes {
		fmt.Fprintf(&b, "  [%s] %s\n      weight %g, cost %.6g (weighted %.6g)\n", wp.Statement.Tag, wp.Statement.Text(), wp.Weight, wp.Cost, wp.Weight*wp.Cost)
		if len(wp.Indexes) == 0 {
			b.WriteString("      changes no recommended structure\n")
		}
		for _, u := range wp.Indexes {
			fmt.Fprintf(&b, "      %s: put %.4g, delete %.4g rows, cost %.6g\n", u.Index.Name, u.Puts, u.Deletes, u.WriteCost)
			for _, pl := range u.Support {
				fmt.Fprintf(&b, "        support query %s\n", pl.Query.Describe())
				b.WriteString(pl.Describe("          "))
			}
		}
		if wp.Check > 0 {
			fmt.Fprintf(&b, "      existence check: a lookup of an entity it connects to that no upkeep reads, cost %.6g\n", wp.Check)
		}
	}
	st := r.Stats
	fmt.Fprintf(&b, "\nTotal cost %.6g, total size %s (%.0f bytes)\n", r.TotalCost, units.Format(r.TotalSize), r.TotalSize)
	if st.Solver != "" {
		gap := "optimal"
		switch {
		case !st.Optimal:
			gap = fmt.Sprintf("stopped with gap %.3g%%", 100*st.Gap)
		case st.Smallest:
			gap = "optimal, the smallest of that cost"
		}
		program := "integer program"
		if st.Components > 1 {
			program = fmt.Sprintf("%d independent integer programs,", st.Components)
		}
		fmt.Fprintf(&b, "Search: %d candidates (%d SIs), %d query and %d support-query plan steps; %s %d variables, %d constraints; %s in %v (%s); total %v\n",
			st.Candidates, st.CandidateSIs, st.QuerySteps, st.SupportSteps, program, st.Variables, st.Constraints, st.Solver,
			st.SolveTime.Round(1e6), gap, st.TotalTime.Round(1e6))
	}
	if n := st.LargePartitions; n > 0 {
		fmt.Fprintf(&b, "Refused %d candidates whose average partition exceeds %s (--max-partition)\n", n, units.Format(r.MaxPartition))
	}
	if n := st.Bucketed; n > 0 {
		fmt.Fprintf(&b, "Spread %d candidates whose average partition exceeds %s over partition buckets (--bucket-partitions)\n", n, units.Format(r.MaxPartition))
	}
	if r.Migration != nil {
		r.Migration.WriteText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtCount(n float64) string {
	if n == float64(int64(n)) {
		return fmt.Sprintf("%d", int64(n))
	}
	return fmt.Sprintf("%.4g", n)
}

// JSON shapes.
type jsonIndex struct {
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Path       []string `json:"graph"`
	Partition  []string `json:"partition_key"`
	Clustering []string `json:"clustering_key"`
	Values     []string `json:"values"`
	Base       string   `json:"base,omitempty"`
	Entries    float64  `json:"entries"`
	EntrySize  float64  `json:"entry_size"`
	Size       float64  `json:"size"`
	Partitions float64  `json:"partitions"`
	// PartitionSize is the average partition's bytes.
	PartitionSize float64 `json:"partition_size"`
	Warning       string  `json:"warning,omitempty"`
}

type jsonStep struct {
	Index      string   `json:"index"`
	Kind       string   `json:"kind"`
	Key        []string `json:"key"`
	Filter     []string `json:"filter,omitempty"`
	Partitions float64  `json:"partitions"`
	Rows       float64  `json:"rows"`
	Cost       float64  `json:"cost"`
}

type jsonPlan struct {
	Statement string     `json:"statement"`
	Group     string     `json:"group,omitempty"`
	Weight    float64    `json:"weight,omitempty"`
	Cost      float64    `json:"cost"`
	Rows      float64    `json:"rows"`
	Steps     []jsonStep `json:"steps"`
	Sort      bool       `json:"sort,omitempty"`
	Limit     int64      `json:"limit,omitempty"`
}

type jsonUpkeep struct {
	Index     string     `json:"index"`
	Puts      float64    `json:"puts"`
	Deletes   float64    `json:"deletes"`
	WriteCost float64    `json:"write_cost"`
	Support   []jsonPlan `json:"support_queries,omitempty"`
}

type jsonWrite struct {
	Statement string       `json:"statement"`
	Group     string       `json:"group"`
	Weight    float64      `json:"weight"`
	Cost      float64      `json:"cost"`
	Check     float64      `json:"check_cost,omitempty"`
	Indexes   []jsonUpkeep `json:"indexes"`
}

type jsonResult struct {
	Mode        string               `json:"mode"`
	Mix         string               `json:"mix"`
	Budget      *float64             `json:"budget"`
	Profile     any                  `json:"profile"`
	TotalCost   float64              `json:"total_cost"`
	TotalSize   float64              `json:"total_size"`
	Indexes     []jsonIndex          `json:"indexes"`
	Plans       map[string]jsonPlan  `json:"plans"`
	UpdatePlans map[string]jsonWrite `json:"update_plans"`
	Solver      map[string]any       `json:"solver"`
}

func planJSON(p *plan.Query) jsonPlan {
	g := p.Query.Graph
	out := jsonPlan{Cost: p.Cost, Rows: p.Rows, Sort: p.Sort, Limit: p.Limit, Steps: []jsonStep{}}
	for _, s := range p.Steps {
		js := jsonStep{Index: s.Index.Name, Kind: s.Index.Kind.String(), Partitions: s.Partitions, Rows: s.Rows, Cost: s.Cost, Key: []string{}}
		if s.Link >= 0 {
			js.Key = append(js.Key, g.DescribeRef(catalog.FieldRef{Node: s.Link, Field: g.Nodes[s.Link].Entity.ID()})+" = (previous step)")
		}
		for _, k := range s.KeyPreds {
			pr := p.Query.Preds[k]
			js.Key = append(js.Key, g.DescribeRef(pr.Ref)+" "+pr.Op.String()+" "+lang.PrintExpr(pr.Value))
		}
		for _, k := range s.Filters {
			pr := p.Query.Preds[k]
			js.Filter = append(js.Filter, g.DescribeRef(pr.Ref)+" "+pr.Op.String()+" "+lang.PrintExpr(pr.Value))
		}
		out.Steps = append(out.Steps, js)
	}
	return out
}

// indexJSON describes an index of schema s.
func indexJSON(x *catalog.Index, s *catalog.Schema) jsonIndex {
	ji := jsonIndex{Name: x.Name, Kind: x.Kind.String(), Entries: x.Entries, EntrySize: x.EntrySize, Size: x.Size,
		Partitions: x.Partitions, PartitionSize: x.PartitionBytes(), Warning: x.PartitionWarning()}
	for n := range x.Graph.Nodes {
		ji.Path = append(ji.Path, x.Graph.Describe(n))
	}
	names := func(as []catalog.Attr) []string {
		s := []string{}
		for _, a := range as {
			s = append(s, x.AttrName(a))
		}
		return s
	}
	ji.Partition, ji.Clustering, ji.Values = names(x.Hash), names(x.Order), names(x.Extra)
	if s != nil {
		if b := s.Base[x]; b != nil {
			ji.Base = b.Name
		}
	}
	return ji
}

// WriteJSON writes the recommendation as JSON: total_cost, total_size,
// indexes, plans (keyed by statement tag) and update_plans.
func (r *Result) WriteJSON(w io.Writer) error {
	out := jsonResult{Mode: r.Mode.String(), Mix: r.Mix, Profile: r.Profile, TotalCost: r.TotalCost, TotalSize: r.TotalSize,
		Indexes: []jsonIndex{}, Plans: map[string]jsonPlan{}, UpdatePlans: map[string]jsonWrite{}}
	if r.Budget > 0 && r.Budget < 1e300 {
		b := r.Budget
		out.Budget = &b
	}
	for _, x := range r.Indexes {
		out.Indexes = append(out.Indexes, indexJSON(x, r.Schema))
	}
	for _, q := range r.Queries {
		jp := planJSON(q.Plan)
		jp.Statement, jp.Group, jp.Weight = q.Statement.Text(), q.Statement.Group, q.Weight
		out.Plans[q.Statement.Tag] = jp
	}
	for _, wp := range r.Writes {
		jw := jsonWrite{Statement: wp.Statement.Text(), Group: wp.Statement.Group, Weight: wp.Weight, Cost: wp.Cost, Check: wp.Check, Indexes: []jsonUpkeep{}}
		for _, u := range wp.Indexes {
			ju := jsonUpkeep{Index: u.Index.Name, Puts: u.Puts, Deletes: u.Deletes, WriteCost: u.WriteCost}
			for _, pl := range u.Support {
				jp := planJSON(pl)
				jp.Statement = pl.Query.Describe()
				ju.Support = append(ju.Support, jp)
			}
			jw.Indexes = append(jw.Indexes, ju)
		}
		out.UpdatePlans[wp.Statement.Tag] = jw
	}
	st := r.Stats
	out.Solver = map[string]any{
		"name": st.Solver, "optimal": st.Optimal, "smallest": st.Smallest, "gap": st.Gap, "variables": st.Variables, "constraints": st.Constraints, "components": st.Components,
		"candidates": st.Candidates, "candidate_sis": st.CandidateSIs, "solves": st.Solves, "reused": st.Reused,
		"large_partitions_refused": st.LargePartitions, "large_partitions_bucketed": st.Bucketed, "max_partition": r.MaxPartition,
		"enumerate_seconds": st.EnumerateTime.Seconds(), "plan_seconds": st.PlanTime.Seconds(),
		"solve_seconds": st.SolveTime.Seconds(), "total_seconds": st.TotalTime.Seconds(),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteDDL writes the recommended schema in the kvschema language: the
// model's relations (so that the file stands alone), then one DEFINE COLUMN
// FAMILY per CF and one DEFINE SECONDARY INDEX per SI. Its header records
// the target and the profile the schema was advised with (directives that
// catalog.AdvisedFor reads back).
func (r *Result) WriteDDL(w io.Writer, modelStmts []lang.Statement) error {
	var b strings.Builder
	target := r.Profile.Engine
	if target == "" {
		target = "unknown (the profile names no engine)"
	}
	fmt.Fprintf(&b, "-- Schema recommended by kvschema advise (mode %s, mix %s, budget %s, target %s, profile %s):\n-- total cost %.6g, total size %s.\n",
		r.Mode, r.Mix, units.Format(r.Budget), target, r.Profile.Name, r.TotalCost, units.Format(r.TotalSize))
	dirs, err := catalog.Directives(r.Profile)
	if err != nil {
		return err
	}
	b.WriteString(dirs + "\n")
	var rels []lang.Statement
	for _, st := range modelStmts {
		if _, ok := st.(*lang.DefineRelation); ok {
			rels = append(rels, st)
		}
	}
	b.WriteString(lang.PrintScript(rels))
	for _, st := range r.Schema.Statements() {
		b.WriteByte('\n')
		if cf, ok := st.(*lang.DefineColumnFamily); ok {
			if x := r.Schema.Index(cf.Name); x != nil {
				fmt.Fprintf(&b, "-- %s: %s rows, %s\n", x.Describe(), fmtCount(x.Entries), units.Format(x.Size))
			}
		}
		b.WriteString(lang.Print(st) + ";\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteDOT writes the schema and every statement's plan as a Graphviz
// graph: each query plan a chain of lookups (as seed 000 Fig. 3 draws one
// path of the plan tree), each write the upkeep of every index it keeps
// with its support queries, each lookup and upkeep linked to its index.
// With tag, only that statement is drawn, with the indexes it uses (a
// picture readable at 100%).
func (r *Result) WriteDOT(w io.Writer, tag string) error {
	// With a tag: that statement only, and the indexes it uses.
	var queries []*QueryPlan
	var writes []*WritePlan
	used := map[*catalog.Index]bool{}
	for _, q := range r.Queries {
		if tag == "" || q.Statement.Tag == tag {
			queries = append(queries, q)
			for _, s := range q.Plan.Steps {
				used[s.Index] = true
			}
		}
	}
	for _, wp := range r.Writes {
		if tag == "" || wp.Statement.Tag == tag {
			writes = append(writes, wp)
			for _, u := range wp.Indexes {
				used[u.Index] = true
				for _, sq := range u.Support {
					for _, s := range sq.Steps {
						used[s.Index] = true
					}
				}
			}
		}
	}
	if tag != "" && len(queries)+len(writes) == 0 {
		return fmt.Errorf("no statement of the workload is tagged %s", tag)
	}
	var b strings.Builder
	b.WriteString("digraph kvschema {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  subgraph cluster_schema {\n    label=\"schema\";\n")
	for _, x := range r.Indexes {
		if tag != "" && !used[x] {
			continue
		}
		shape := "box"
		if x.Kind == catalog.SI {
			shape = "ellipse"
		}
		fmt.Fprintf(&b, "    %q [shape=%s, label=%q];\n", "ix_"+x.Name, shape, x.Name+"\n"+x.Describe()+"\n"+units.Format(x.Size))
		if base := r.Schema.Base[x]; base != nil && (tag == "" || used[base]) {
			fmt.Fprintf(&b, "    %q -> %q [style=dashed, label=\"on\"];\n", "ix_"+x.Name, "ix_"+base.Name)
		}
	}
	b.WriteString("  }\n")
	steps := func(id string, p *plan.Query, first string) {
		prev := first
		for si, s := range p.Steps {
			node := fmt.Sprintf("%s_s%d", id, si)
			kind := "Index Lookup CF"
			if s.Index.Kind == catalog.SI {
				kind = "Index Lookup SI"
			}
			fmt.Fprintf(&b, "    %s [shape=box, style=rounded, label=%q];\n", node, fmt.Sprintf("%s %s\nP=%.3g R=%.3g cost %.4g", kind, s.Index.Name, s.Partitions, s.Rows, s.Cost))
			if prev != "" {
				fmt.Fprintf(&b, "    %s -> %s;\n", prev, node)
			}
			prev = node
		}
	}
	for qi, q := range queries {
		id := fmt.Sprintf("q%d", qi)
		fmt.Fprintf(&b, "  subgraph cluster_%s {\n    label=%q;\n", id, "["+q.Statement.Tag+"] "+q.Statement.Text())
		fmt.Fprintf(&b, "    %s_root [shape=plaintext, label=%q];\n", id, fmt.Sprintf("cost %.4g", q.Plan.Cost))
		steps(id, q.Plan, id+"_root")
		b.WriteString("  }\n")
		for si, s := range q.Plan.Steps {
			fmt.Fprintf(&b, "  %s_s%d -> %q [style=dotted, arrowhead=none];\n", id, si, "ix_"+s.Index.Name)
		}
	}
	for wi, wp := range writes {
		id := fmt.Sprintf("w%d", wi)
		fmt.Fprintf(&b, "  subgraph cluster_%s {\n    label=%q;\n", id, "["+wp.Statement.Tag+"] "+wp.Statement.Text())
		for ui, u := range wp.Indexes {
			node := fmt.Sprintf("%s_u%d", id, ui)
			fmt.Fprintf(&b, "    %s [shape=box, style=\"rounded,bold\", label=%q];\n", node, fmt.Sprintf("write %s\nput %.3g, delete %.3g, cost %.4g", u.Index.Name, u.Puts, u.Deletes, u.WriteCost))
			for si, sq := range u.Support {
				sid := fmt.Sprintf("%s_sup%d", node, si)
				steps(sid, sq, "")
				if len(sq.Steps) > 0 {
					fmt.Fprintf(&b, "    %s_s%d -> %s [label=\"support\"];\n", sid, len(sq.Steps)-1, node)
				}
			}
		}
		b.WriteString("  }\n")
		for ui, u := range wp.Indexes {
			fmt.Fprintf(&b, "  %s_u%d -> %q [style=dotted, arrowhead=none];\n", id, ui, "ix_"+u.Index.Name)
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
