package bench_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/bench"
	"github.com/kvschema/kvschema/exec"
)

// sweepSummary is what the test reads of a sweep's summary.json.
type sweepSummary struct {
	Executor string `json:"executor"`
	Budgets  []struct {
		Budget   float64 `json:"budget_bytes"`
		Dir      string  `json:"dir"`
		Variants map[string]struct {
			Infeasible    bool     `json:"infeasible"`
			MinBudget     *float64 `json:"min_budget_bytes"`
			PredictedMean *float64 `json:"predicted_mean_s"`
			WeightedMean  *float64 `json:"weighted_mean_s"`
			Size          *float64 `json:"size_bytes"`
			Structures    *int     `json:"structures"`
			SIs           *int     `json:"secondary_indexes"`
			MeasuredAs    string   `json:"measured_as"`
		} `json:"variants"`
		CFSIIdentical *bool `json:"cf_si_identical"`
		SIvsCF        struct {
			Predicted *float64 `json:"predicted"`
			Measured  *float64 `json:"measured"`
		} `json:"si_vs_cf"`
	} `json:"budgets"`
	Fig4 struct {
		Executor string `json:"executor"`
		Rows     []struct {
			Budget float64  `json:"budget_bytes"`
			SIvsCF *float64 `json:"si_vs_cf"`
		} `json:"rows"`
		Paper struct {
			SIvsCF       float64 `json:"si_vs_cf"`
			SIvsBaseline float64 `json:"si_vs_baseline"`
		} `json:"paper"`
	} `json:"fig4"`
}

// schemaFile reads a variant's schema from a budget's directory: its DDL
// without comment lines, and how many column families and secondary
// indexes it defines.
func schemaFile(t *testing.T, dir, variant string) (ddl string, cfs, sis int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "schema-"+variant+".kvs"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			keep = append(keep, l)
		}
	}
	ddl = strings.TrimSpace(strings.Join(keep, "\n"))
	return ddl, strings.Count(ddl, "DEFINE COLUMN FAMILY"), strings.Count(ddl, "DEFINE SECONDARY INDEX")
}

// A sweep of two budgets on tiny RUBiS data: at 3.2MB the normalized
// baseline has no schema (the smallest takes 3.55MB) and is reported so (the workload with secondary twins: with the plain one no variant takes an SI once SI rows hold their base's whole key);
// each budget's rows give each variant's structures and secondary indexes
// as its schema file defines them, the cf and si schemas are called
// identical exactly when their files are, the ratios are those of the
// means, and the per-partition executor shows in the report and in the
// round trips of the baseline's joins.
func TestTwoBudgetSweep(t *testing.T) {
	needCBC(t)
	out := t.TempDir()
	const low, high = 3.2e6, 7.9e6
	// The Cassandra profile: its SI discount makes the si variant take
	// secondary indexes at these budgets, so that their counts are checked
	// on something (Pebble's calibrated profile, which prices a row read
	// through an index as the seek it is, takes none).
	cfg := bench.Config{Scale: 0.0005, Seed: 1, Mix: "bidding", Workload: "workload_secondary.kvs", Store: "mem:", Profile: "cassandra",
		RTTs: []time.Duration{0}, Iterations: 2, Warmup: 0, Budgets: []float64{high, low}, Executor: exec.PerPartition, Out: out}
	start := time.Now()
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep took %v", time.Since(start))
	if len(rep.Variants) != 0 || len(rep.Sweep) != 2 || rep.Sweep[0].Budget != low || rep.Sweep[1].Budget != high {
		t.Fatalf("report: %d variants, sweep %+v", len(rep.Variants), rep.Sweep)
	}

	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum sweepSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	mdb, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(mdb)
	if sum.Executor != "per-partition" || sum.Fig4.Executor != "per-partition" || !strings.Contains(md, "Executor: per-partition") ||
		!strings.Contains(md, "--budget 3200000,7900000") || !strings.Contains(md, "--executor per-partition") {
		t.Errorf("the report does not say which executor and budgets ran: summary %q, REPORT.md:\n%s", sum.Executor, md)
	}
	if len(sum.Budgets) != 2 {
		t.Fatalf("summary.json has %d budgets, want 2", len(sum.Budgets))
	}
	sis := 0
	for i, bs := range sum.Budgets {
		label := []string{"3.2MB", "7.9MB"}[i]
		if bs.Budget != rep.Sweep[i].Budget || bs.Dir != "budget-"+label {
			t.Errorf("budget %d: %v in %q", i, bs.Budget, bs.Dir)
		}
		dir := filepath.Join(out, bs.Dir)
		ddls := map[string]string{}
		for _, name := range []string{"baseline", "cf", "si"} {
			v, ok := bs.Variants[name]
			if !ok {
				t.Fatalf("%s: summary.json has no %s", label, name)
			}
			if v.Infeasible {
				if v.MinBudget == nil || !(*v.MinBudget > bs.Budget) {
					t.Errorf("%s: %s infeasible, yet its smallest schema takes %v", label, name, v.MinBudget)
				}
				if _, err := os.Stat(filepath.Join(dir, "schema-"+name+".kvs")); err == nil {
					t.Errorf("%s: a schema file for the infeasible %s", label, name)
				}
				row := fmt.Sprintf("| [%s](budget-%s/REPORT.md) | %s | – | – | – | – | – | infeasible: the smallest schema answering the workload takes ", label, label, name)
				if !strings.Contains(md, row) {
					t.Errorf("REPORT.md lacks the row %q", row)
				}
				continue
			}
			ddl, cfs, nsi := schemaFile(t, dir, name)
			ddls[name] = ddl
			sis += nsi
			if v.SIs == nil || *v.SIs != nsi || v.Structures == nil || *v.Structures != cfs+nsi {
				t.Errorf("%s %s: summary says %v structures, %v SIs; its schema defines %d CFs and %d SIs", label, name, v.Structures, v.SIs, cfs, nsi)
			}
			if v.Size == nil || *v.Size > bs.Budget {
				t.Errorf("%s %s: size %v over the budget", label, name, v.Size)
			}
			if v.WeightedMean == nil || !(*v.WeightedMean > 0) || v.PredictedMean == nil || !(*v.PredictedMean > 0) {
				t.Errorf("%s %s: weighted mean %v, predicted %v", label, name, v.WeightedMean, v.PredictedMean)
			}
			row := fmt.Sprintf("| [%s](budget-%s/REPORT.md) | %s | %d (%d) | ", label, label, name, cfs+nsi, nsi)
			if !strings.Contains(md, row) {
				t.Errorf("REPORT.md lacks the row %q", row)
			}
		}
		// The baseline is infeasible at 3.2MB only.
		if got := bs.Variants["baseline"].Infeasible; got != (i == 0) {
			t.Errorf("%s: baseline infeasible %v", label, got)
		}
		same := ddls["cf"] == ddls["si"]
		if bs.CFSIIdentical == nil || *bs.CFSIIdentical != same {
			got := "null"
			if bs.CFSIIdentical != nil {
				got = strconv.FormatBool(*bs.CFSIIdentical)
			}
			t.Errorf("%s: cf_si_identical %s, yet the schema files are the same: %v", label, got, same)
		}
		word := "differ"
		if same {
			word = "identical"
		}
		cf, si := bs.Variants["cf"], bs.Variants["si"]
		if !strings.Contains(md, fmt.Sprintf("| %s | %d / %d | %s", label, *cf.SIs, *si.SIs, word)) {
			t.Errorf("REPORT.md lacks %s's ratio row with %d / %d SIs and %q", label, *cf.SIs, *si.SIs, word)
		}
		if same && (si.MeasuredAs == "" || *bs.SIvsCF.Measured != 1) {
			t.Errorf("%s: identical schemas measured apart (%q, ratio %v)", label, si.MeasuredAs, *bs.SIvsCF.Measured)
		}
		if want := *si.WeightedMean / *cf.WeightedMean; bs.SIvsCF.Measured == nil || math.Abs(*bs.SIvsCF.Measured-want) > 1e-9*want {
			t.Errorf("%s: si_vs_cf measured %v, the means give %v", label, bs.SIvsCF.Measured, want)
		}
		if want := *si.PredictedMean / *cf.PredictedMean; bs.SIvsCF.Predicted == nil || math.Abs(*bs.SIvsCF.Predicted-want) > 1e-9*want {
			t.Errorf("%s: si_vs_cf predicted %v, the predicted means give %v", label, bs.SIvsCF.Predicted, want)
		}
		sub, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(sub), "Budget: "+label+", one point of a budget sweep") {
			t.Errorf("%s/REPORT.md does not say it is a point of the sweep", bs.Dir)
		}
	}
	if sis == 0 {
		t.Fatal("no variant chose a secondary index: the SI counts are checked on zeros only")
	}

	// Fig. 4: one row per budget (one rtt), beside the paper's.
	if len(sum.Fig4.Rows) != 2 || sum.Fig4.Paper.SIvsCF != 1-0.735 || sum.Fig4.Paper.SIvsBaseline != 1-0.981 {
		t.Errorf("fig4: %+v", sum.Fig4)
	}
	for _, want := range []string{"## Fig. 4: baseline vs CF-only vs CF+SI", "| paper (Cassandra, NoSE's executor) | | | | | 0.265× | 0.019× | −73.5% | −98.1% |",
		"| 3.2MB | 0s | – | ", "![sweep-rtt0s.png](sweep-rtt0s.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
	f, err := os.Open(filepath.Join(out, "sweep-rtt0s.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(f); err != nil {
		t.Error(err)
	}
	f.Close()

	// results.csv: every measured statement of every budget; per
	// partition, some join of the baseline takes more round trips than
	// its plan has steps.
	f, err = os.Open(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	head := map[string]int{}
	for i, h := range recs[0] {
		head[h] = i
	}
	want := 0
	for _, pt := range rep.Sweep {
		for _, v := range pt.Variants {
			want += len(v.Passes[0].Statements)
		}
	}
	if len(recs)-1 != want || want == 0 {
		t.Fatalf("results.csv has %d rows, want %d", len(recs)-1, want)
	}
	perPartition := false
	for _, r := range recs[1:] {
		steps, _ := strconv.Atoi(r[head["steps"]])
		rt, _ := strconv.ParseFloat(r[head["round_trips"]], 64)
		if r[head["variant"]] == "baseline" && r[head["kind"]] == "query" && rt > float64(steps) {
			perPartition = true
		}
		if b := r[head["budget_bytes"]]; b != "3.2e+06" && b != "7.9e+06" {
			t.Errorf("results.csv: budget %q", b)
		}
	}
	if !perPartition {
		t.Error("no baseline query took more round trips than plan steps: the per-partition executor did not run")
	}
}

func TestSweepConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  bench.Config
		want string
	}{
		{bench.Config{Scale: 0.001, Sweep: true, Budgets: []float64{1e6, 2e6}, Out: "x"}, "not both"},
		{bench.Config{Scale: 0.001, Budget: 1e6, Budgets: []float64{1e6, 2e6}, Out: "x"}, "not both"},
		{bench.Config{Scale: 0.001, Budgets: []float64{2e6, 1e6, 2e6}, Out: "x"}, "2MB given twice"},
		{bench.Config{Scale: 0.001, Budgets: []float64{1e6, math.Inf(1)}, Out: "x"}, "positive size"},
		{bench.Config{Scale: 0.001, Budgets: []float64{-1, 1e6}, Out: "x"}, "positive size"},
		{bench.Config{Scale: 0.001, Sweep: true, ModelFiles: []string{"../examples/rubis/model.kvs"}, Workload: "../examples/rubis/workload.kvs", Out: "x"}, "give the budgets"},
		{bench.Config{Scale: 0.001, Executor: exec.Executor(7), Out: "x"}, "unknown executor"},
	} {
		_, err := bench.Run(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
}

// The default sweep is SweepFactors of the paper's budget, scaled, in
// increasing order, up to the paper's own.
func TestSweepBudgets(t *testing.T) {
	got := bench.SweepBudgets(0.5)
	if len(got) != len(bench.SweepFactors) || len(got) < 2 {
		t.Fatalf("SweepBudgets = %v", got)
	}
	for i, b := range got {
		if want := bench.SweepFactors[i] * bench.PaperBudget * 0.5; b != want {
			t.Errorf("budget %d: %v, want %v", i, b, want)
		}
		if i > 0 && !(b > got[i-1]) {
			t.Errorf("budgets not increasing: %v", got)
		}
	}
	if last := got[len(got)-1]; last != bench.PaperBudget*0.5 {
		t.Errorf("the sweep ends at %v, not the paper's budget scaled (%v)", last, bench.PaperBudget*0.5)
	}
}

// Command reproduces a sweep and its executor.
func TestSweepCommand(t *testing.T) {
	c := bench.Config{Scale: 0.01, Seed: 1, Mix: "bidding", Workload: "workload_secondary.kvs", Generator: bench.GenerateRUBiS, Variants: []string{"cf", "si"},
		Store: "pebble", RTTs: []time.Duration{time.Millisecond}, Iterations: 10, Budgets: []float64{6e7, 8e7}, Executor: exec.PerPartition, Out: "o"}
	if got := c.Command(); !strings.Contains(got, " --budget 60000000,80000000 --executor per-partition --out o") {
		t.Errorf("Command() = %s", got)
	}
	c.Budgets, c.Sweep, c.Executor = nil, true, exec.Batched
	if got := c.Command(); !strings.Contains(got, " --sweep --out o") || strings.Contains(got, "--executor") {
		t.Errorf("Command() = %s", got)
	}
}

// A sweep whose cf and si variants choose the same schema at a budget
// (Pebble's profile takes no SI on tiny RUBiS's 36 statements; the 61
// statements have CFs of equal cost and size, which the two modes' runs
// may choose apart) measures it once, with the budget's others, and
// reports the si variant as measured as the cf one.
func TestSweepSameSchemaInABudget(t *testing.T) {
	needCBC(t)
	cfg := bench.Config{Scale: 0.0005, Seed: 1, Mix: "bidding", Workload: "workload.kvs", Store: "mem:", Profile: "pebble",
		Variants: []string{"cf", "si"}, RTTs: []time.Duration{0}, Iterations: 1, Warmup: 0, Budgets: []float64{7.9e6, 5e6}, Out: t.TempDir()}
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, pt := range rep.Sweep {
		cf, si := pt.Variant("cf"), pt.Variant("si")
		if cf == nil || si == nil {
			t.Fatalf("budget %v: variants %v", pt.Budget, pt.Variants)
		}
		if bench.SameSchema(cf, si) {
			same++
			if si.MeasuredAs == "" || len(si.Passes) != len(cf.Passes) || si.Passes[0].WeightedMean != cf.Passes[0].WeightedMean {
				t.Errorf("budget %v: the same schema measured apart (si measured as %q, %d passes)", pt.Budget, si.MeasuredAs, len(si.Passes))
			}
		}
	}
	if same == 0 {
		t.Fatal("no budget where cf and si chose the same schema: nothing checked")
	}
}
