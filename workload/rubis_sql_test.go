package workload_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// rubisFromSQL reads RUBiS's relational schema (pg_dump style, statistics
// in annotation comments) and its mix bidding as a statement log.
func rubisFromSQL(t *testing.T) (*catalog.Model, []lang.Note, *workload.Workload, *workload.LogReport) {
	t.Helper()
	const schema, log = "testdata/rubis_schema.sql", "testdata/rubis_bidding.log"
	src, err := os.ReadFile(schema)
	if err != nil {
		t.Fatal(err)
	}
	ss, notes, err := lang.ParseModel(schema, src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	lsrc, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	w, rep, err := workload.ParseLog(m, log, lsrc)
	if err != nil {
		t.Fatal(err)
	}
	return m, notes, w, rep
}

// describeStatement writes what a resolved statement means, independent
// of how it was written (path notation or joins, tags, constants or
// parameters): a
// query's graph, fields, predicates, order and limit; a write's kind,
// entity, fields, links and predicates.
func describeStatement(s *workload.Statement) string {
	if q := s.Query; q != nil {
		var sel, preds, order []string
		for _, r := range q.Select {
			sel = append(sel, q.Graph.DescribeRef(r))
		}
		for _, p := range q.Preds {
			preds = append(preds, q.Graph.DescribeRef(p.Ref)+" "+p.Op.String())
		}
		for _, o := range q.OrderBy {
			order = append(order, fmt.Sprintf("%s desc=%v", q.Graph.DescribeRef(o.Ref), o.Desc))
		}
		return fmt.Sprintf("SELECT %v WHERE %v ORDER %v LIMIT %d", sel, preds, order, q.Limit)
	}
	w := s.Write
	var set, links, preds []string
	for _, a := range w.Set {
		set = append(set, a.Field.String())
	}
	for _, l := range w.Links {
		links = append(links, l.Nav.String())
	}
	for _, p := range w.Preds {
		preds = append(preds, w.Graph.DescribeRef(p.Ref)+" "+p.Op.String())
	}
	return fmt.Sprintf("%s %s SET %v LINK %v WHERE %v", w.Kind, w.Entity.Name, set, links, preds)
}

// TestRUBiSFromSQL: RUBiS written as an application has it — its
// relational schema as SQL DDL and its statements in a log with counts —
// gives the catalog model of examples/rubis/model.kvs, the statements of
// workload.kvs with their bidding weights (×100, as counts), and, advised,
// the same schema at the same cost (×100).
func TestRUBiSFromSQL(t *testing.T) {
	m, notes, w, rep := rubisFromSQL(t)
	native, _, nw, err := rubis.Parse("workload.kvs")
	if err != nil {
		t.Fatal(err)
	}

	// The model: the same definitions, hence the same entities, fields,
	// statistics and relationships both ways.
	if got, want := lang.PrintScript(m.Defs), lang.PrintScript(native.Defs); got != want {
		t.Errorf("model differs:\n%s\nwant\n%s", got, want)
	}
	if len(notes) != 19 {
		t.Errorf("%d notes on the dump, want 19 (its SET, OWNER TO, sequence, index … statements): %v", len(notes), notes)
	}
	for _, e := range native.Entities {
		d := m.Entity(e.Name)
		for _, n := range e.Navs {
			if dn := d.Nav(n.Name); dn == nil || dn.To.Name != n.To.Name || dn.Many != n.Many || dn.Reverse.Name != n.Reverse.Name {
				t.Errorf("%s: navigation %s is %v in the SQL model", e.Name, n, dn)
			}
		}
	}

	// The workload: every native statement, at its weight, once the
	// statements that differ only in constants are added up.
	merged, stars := 0, 0
	for _, n := range rep.Notes {
		switch {
		case strings.HasPrefix(n.Reason, "the statement L"):
			merged++
		case strings.HasPrefix(n.Reason, "* returns each relation's own attributes"):
			stars++
		}
	}
	// 7 statements (12 lines of the log) select a relation with foreign keys by *.
	if len(rep.Unusable) != 0 || len(rep.Ignored) != 0 || merged != 7 || stars != 7 || len(rep.Notes) != merged+stars {
		var b strings.Builder
		_ = rep.WriteText(&b)
		t.Errorf("report: %d unusable, %d ignored, %d notes: %d merged, %d on stars (want 0, 0, 7 lines added to an earlier statement, 7 stars over foreign keys)\n%s", len(rep.Unusable), len(rep.Ignored), len(rep.Notes), merged, stars, b.String())
	}
	want := map[string]float64{}
	for _, s := range nw.Statements {
		want[describeStatement(s)] += 100 * s.Weight("bidding")
	}
	got := map[string]float64{}
	for _, s := range w.Statements {
		got[describeStatement(s)] += s.Weight(workload.LogMix)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(a)) })); diff != "" {
		t.Errorf("statements and weights (-native ×100 +log):\n%s", diff)
	}
	if rep.Statements != 36 || len(w.Statements) != 29 || math.Abs(rep.Total-100*totalWeight(nw, "bidding")) > 1e-6 {
		t.Errorf("%d statements of weight %g read, %d in the workload; want 36 of weight %g, 29", rep.Statements, rep.Total, len(w.Statements), 100*totalWeight(nw, "bidding"))
	}

	// Advised: the same schema, at the same cost.
	if _, err := exec.LookPath("cbc"); err != nil {
		t.Skip("cbc is not installed: apt-get install coinor-cbc")
	}
	ctx := context.Background()
	// Of the schemas of optimal cost, the smallest (the advisor's
	// default), so that ties break the same way with the log's weights
	// (×100) as with the native ones.
	opt := advisor.Options{Mix: "bidding", Profile: cost.Cassandra, Solver: &solver.CBC{}}
	nres, err := advisor.Advise(ctx, native, nw, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Mix = workload.LogMix
	res, err := advisor.Advise(ctx, m, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.TotalCost-100*nres.TotalCost) > 1e-9*res.TotalCost || res.TotalSize != nres.TotalSize {
		t.Errorf("cost %g and size %g, want 100 × %g and %g", res.TotalCost, res.TotalSize, nres.TotalCost, nres.TotalSize)
	}
	if got, want := schemaText(res), schemaText(nres); got != want {
		// Schemas of equal cost and size can differ (a CF partitioned
		// by category or by region serves the region-and-category query
		// alike): then each must be optimal for the other's workload too.
		swap := func(s *advisor.Result, to *catalog.Model, tw *workload.Workload, mix string, wantCost float64) {
			t.Helper()
			x, err := catalog.ParseSchema(to, s.Schema.Statements())
			if err != nil {
				t.Fatal(err)
			}
			o := opt
			o.Mix = mix
			ev, err := advisor.Evaluate(to, tw, x, o)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ev.TotalCost-wantCost) > 1e-9*wantCost || ev.TotalSize != s.TotalSize {
				t.Errorf("advised schemas differ, and one costs %g (size %g) on the other's workload, want %g:\n%s\nwant\n%s", ev.TotalCost, ev.TotalSize, wantCost, got, want)
			}
		}
		swap(res, native, nw, "bidding", nres.TotalCost)
		swap(nres, m, w, workload.LogMix, res.TotalCost)
	}
}

func totalWeight(w *workload.Workload, mix string) float64 {
	t := 0.0
	for _, s := range w.Statements {
		t += s.Weight(mix)
	}
	return t
}

// schemaText is an advised schema's definitions, in name order.
func schemaText(res *advisor.Result) string {
	var out []string
	for _, st := range res.Schema.Statements() {
		out = append(out, lang.Print(st))
	}
	sort.Strings(out)
	return strings.Join(out, ";\n")
}
