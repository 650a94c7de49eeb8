package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/types"
)

// demoStatements run with EXPLAIN in the demo: a secondary-index plan, a
// join along a path in clustering order, a top-2, then a write that keeps
// every copy of the bid and the item correct, and the queries again.
var demoStatements = []string{
	"SELECT items.id, items.name, items.quantity FROM items WHERE items.quantity = 3",
	"SELECT users.id, users.nickname, bids.id, item.id, bids.qty, bids.bid, bids.date FROM users.bids.item WHERE item.id = 7 ORDER BY bids.date",
	"SELECT bids.qty, bids.bid, bids.date FROM bids.item WHERE item.id = 7 ORDER BY bids.bid LIMIT 2",
	"INSERT INTO bids SET id = 9000001, qty = 2, bid = 0.5, date = '2026-11-21 12:00:00' AND CONNECT TO item(7), user(3)",
	"UPDATE items SET nb_of_bids = 99, max_bid = 1234.5 WHERE items.id = 7",
	"SELECT bids.qty, bids.bid, bids.date FROM bids.item WHERE item.id = 7 ORDER BY bids.bid LIMIT 2",
	"SELECT items.nb_of_bids, items.max_bid FROM items WHERE items.id = 7",
}

// rubisDemo advises RUBiS, loads generated data into a Pebble store, runs
// statements with EXPLAIN, times every workload query and verifies.
func rubisDemo(ctx context.Context, dir string, scale float64, iterations int, out, progress io.Writer) error {
	start := time.Now()
	m, ms, w, err := rubis.Parse("workload_secondary.kvs")
	if err != nil {
		return err
	}
	if err := (&solver.CBC{}).Available(); err != nil {
		return err
	}
	fmt.Fprintf(out, "== 1. advise: RUBiS, %d statements, mix bidding, budget 161MB (the paper's setting), profile cassandra\n", len(w.Statements))
	res, err := advisor.Advise(ctx, m, w, advisor.Options{Mix: "bidding", Budget: 161e6, Profile: cost.Cassandra, Solver: &solver.CBC{},
		Progress: func(s string) { fmt.Fprintln(progress, "advise:", s) }})
	if err != nil {
		return err
	}
	nsi := 0
	for _, x := range res.Schema.Indexes {
		if x.Kind.String() == "SI" {
			nsi++
		}
		fmt.Fprintf(out, "  %-40s %s\n", x.Name, x.Describe())
	}
	fmt.Fprintf(out, "  %d structures (%d secondary indexes), predicted cost %.6g, size %s, advised in %v\n",
		len(res.Schema.Indexes), nsi, res.TotalCost, units.Format(res.TotalSize), res.Stats.TotalTime.Round(time.Millisecond))

	url := "pebble:" + filepath.Join(dir, "db")
	fmt.Fprintf(out, "\n== 2. load: generated RUBiS data, scale %g, into %s\n", scale, url)
	db, err := open(ctx, url, nil, true)
	if err != nil {
		return err
	}
	defer db.Close()
	var ddl bytes.Buffer
	if err := res.WriteDDL(&ddl, ms); err != nil {
		return err
	}
	notes, err := db.Deploy(ctx, "model.kvs", []byte(examples.RUBiSModel), "schema.kvs", ddl.Bytes(), cost.Cassandra)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(out, "  note: %s\n", n)
	}
	en, err := db.Advised(ctx)
	if err != nil {
		return err
	}
	m = en.Model()
	data := map[*catalog.Entity][][]types.Value{}
	if err := rubis.Generate(ctx, m, rubis.Config{Scale: scale, Seed: 1}, func(e *catalog.Entity, row []types.Value) error {
		data[e] = append(data[e], append([]types.Value(nil), row...))
		return nil
	}); err != nil {
		return err
	}
	loadStart := time.Now()
	ls, err := db.Load(ctx, func(yield func(exec.Row) error) error {
		for _, name := range rubis.Entities() {
			e := m.Entity(name)
			for i, row := range data[e] {
				if err := yield(exec.Row{Entity: e, Values: row, File: "generated " + name, Line: i + 1}); err != nil {
					return err
				}
			}
		}
		return nil
	}, exec.LoadOptions{Identity: fmt.Sprintf("rubis scale %g seed 1", scale)})
	if err != nil {
		return err
	}
	took := time.Since(loadStart)
	fmt.Fprintf(out, "  %d entity rows → %d index rows in %v: %.0f entity rows/s\n", ls.EntityRows, ls.IndexRows, took.Round(time.Millisecond), float64(ls.EntityRows)/took.Seconds())

	fmt.Fprintf(out, "\n== 3. statements, with their plans\n")
	r := &runner{db: db, out: out, explain: true, echo: true}
	if err := r.run(ctx, "demo", []byte(strings.Join(demoStatements, ";\n")+";")); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n== 4. every query of the workload, %d runs each with parameters drawn from the data\n", iterations)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tag\tsteps\tpredicted cost\tmean latency\trows/run\t")
	rnd := rand.New(rand.NewPCG(1, 2))
	var tags []string
	lat := map[string]time.Duration{}
	for _, s := range w.Statements {
		if s.Query == nil {
			continue
		}
		stmt, err := en.PrepareAST(s.AST)
		if err != nil {
			return err
		}
		var total time.Duration
		rows := 0
		for i := 0; i < iterations; i++ {
			args := stmt.Resolved.SampleArgs(rnd, data)
			t0 := time.Now()
			res, err := stmt.Query(ctx, args...)
			if err != nil {
				return err
			}
			total += time.Since(t0)
			rows += len(res.Rows)
		}
		mean := total / time.Duration(iterations)
		tags = append(tags, s.Tag)
		lat[s.Tag] = mean
		fmt.Fprintf(tw, "%s\t%d\t%.5f\t%v\t%.1f\t\n", s.Tag, len(stmt.Plan.Steps), stmt.Plan.Cost, mean.Round(time.Microsecond), float64(rows)/float64(iterations))
	}
	tw.Flush()
	sort.Slice(tags, func(i, j int) bool { return lat[tags[i]] > lat[tags[j]] })

	fmt.Fprintf(out, "\n== 5. verify\n")
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		return err
	}
	n := 0
	for _, c := range rep.Rows {
		n += c
	}
	if !rep.Clean() {
		fmt.Fprint(out, rep)
		return fmt.Errorf("verify found %d differences", len(rep.Differences))
	}
	fmt.Fprintf(out, "  %d rows in %d structures: clean\n", n, len(rep.Rows))

	fmt.Fprintf(out, "\n== summary: advised %d structures (%d SIs), loaded %.0f entity rows/s, slowest query %s at %v, verify clean, %v in all\n",
		len(res.Schema.Indexes), nsi, float64(ls.EntityRows)/took.Seconds(), tags[0], lat[tags[0]].Round(time.Microsecond), time.Since(start).Round(time.Millisecond))
	return nil
}
