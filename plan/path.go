package plan

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
)

// Step is one step of a plan: a read of Index whose graph is mapped onto
// the query graph by Map. The first step binds its partition key from the
// query's equality predicates; every later step is keyed by the key of
// query node Link, fetched by an earlier step, and is executed as one
// batched read for all the keys the previous step produced.
type Step struct {
	Index *catalog.Index
	Map   []int // index node → query node
	Link  int   // query node whose key is the partition key; -1 for the first step
	// KeyPreds are the query predicates the key answers (indexes into
	// Query.Preds): equalities on the partition key and a clustering-key
	// prefix, then range predicates on the next clustering attribute.
	KeyPreds []int
	// Filters are predicates applied at the client after this step.
	Filters []int
	// Role says how the step relates to secondary indexes.
	Role cost.Role
	// Estimates: partitions probed, rows read, rows kept after filters and
	// the step's cost.
	Partitions, Rows, Kept, Cost float64
	// SortCost is the part of Cost that is the client sort of the query's
	// result after this step (its plan's last, when no step delivers the
	// ORDER BY: cost.Model.Sort of the rows kept), else 0.
	SortCost float64
	// Read, when not 0, is the share of Partitions and Rows Cost prices:
	// a plan with a LIMIT the runtime pipelines stops reading once the
	// LIMIT is met (planner.DAG's pipeline).
	Read float64
}

// Query answers one query (or a write's support query): lookups, then a
// client-side sort when no step delivers the ORDER BY, then the limit.
type Query struct {
	Query *catalog.Query
	Steps []Step
	// Ordered: the first lookup delivers the ORDER BY (scanning backwards
	// when it is descending) and later steps keep that order.
	Ordered bool
	// Limited: the first lookup stops after Limit rows (nothing after it
	// drops rows).
	Limited bool
	Sort    bool
	Limit   int64
	Cost    float64
	Rows    float64
}

// Scans reports whether a step of p reads a whole column family
// (cost.Scan: nothing binds its partition key).
func (p *Query) Scans() bool {
	for _, s := range p.Steps {
		if s.Role == cost.Scan {
			return true
		}
	}
	return false
}

// Indexes lists the distinct indexes the plan reads.
func (p *Query) Indexes() []*catalog.Index {
	var out []*catalog.Index
	seen := map[*catalog.Index]bool{}
	for _, s := range p.Steps {
		if !seen[s.Index] {
			seen[s.Index] = true
			out = append(out, s.Index)
		}
	}
	return out
}

// Describe writes the plan one step per line, in the seed's vocabulary.
func (p *Query) Describe(indent string) string {
	var b strings.Builder
	g := p.Query.Graph
	for i, s := range p.Steps {
		what := "Index Lookup Column Family"
		switch {
		case s.Role == cost.Scan && len(s.KeyPreds) > 0:
			what = "Range Scan Column Family"
		case s.Role == cost.Scan:
			what = "Full Scan Column Family"
		case s.Index.Kind == catalog.SI:
			what = "Index Lookup Secondary Index"
		}
		fmt.Fprintf(&b, "%s%d. %s %s %s\n", indent, i+1, what, s.Index.Name, s.Index.Describe())
		var key []string
		for _, k := range s.KeyPreds {
			key = append(key, predText(g, p.Query.Preds[k]))
		}
		if s.Link >= 0 {
			key = append([]string{fmt.Sprintf("%s.%s = (from step %d)", g.Describe(s.Link), g.Nodes[s.Link].Entity.ID().Name, i)}, key...)
		}
		keyText := strings.Join(key, " AND ")
		if len(key) == 0 {
			keyText = "none (every partition)"
		}
		read := ""
		if s.Read > 0 {
			read = fmt.Sprintf(" (%.2g%% read before the LIMIT is met)", 100*s.Read)
		}
		fmt.Fprintf(&b, "%s   key: %s; partitions %.4g, rows %.4g%s, cost %.6g\n", indent, keyText, s.Partitions, s.Rows, read, s.Cost)
		if len(s.Filters) > 0 {
			var fs []string
			for _, f := range s.Filters {
				fs = append(fs, predText(g, p.Query.Preds[f]))
			}
			fmt.Fprintf(&b, "%s   client filter: %s → %.4g rows\n", indent, strings.Join(fs, " AND "), s.Kept)
		}
	}
	if p.Sort {
		var os []string
		for _, o := range p.Query.OrderBy {
			t := g.DescribeRef(o.Ref)
			if o.Desc {
				t += " DESC"
			}
			os = append(os, t)
		}
		sortCost := ""
		if n := len(p.Steps); n > 0 && p.Steps[n-1].SortCost > 0 {
			sortCost = fmt.Sprintf(" (%.4g rows, cost %.6g, in step %d's)", p.Steps[n-1].Kept, p.Steps[n-1].SortCost, n)
		}
		fmt.Fprintf(&b, "%s   client sort by %s%s\n", indent, strings.Join(os, ", "), sortCost)
	}
	if p.Limit > 0 {
		fmt.Fprintf(&b, "%s   limit %d\n", indent, p.Limit)
	}
	return b.String()
}

func predText(g *catalog.Graph, p catalog.Pred) string {
	return fmt.Sprintf("%s %s %s", g.DescribeRef(p.Ref), p.Op, lang.PrintExpr(p.Value))
}
