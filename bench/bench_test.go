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
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
)

func needCBC(t testing.TB) {
	if err := (&solver.CBC{}).Available(); err != nil {
		t.Skipf("COIN-OR CBC is not installed (apt-get install coinor-cbc): %v", err)
	}
}

// A tiny run goes through the whole pipeline and writes a consistent
// report: every variant answers every statement with the same number of
// rows (same data, same parameters, correct engines), every run lasts at
// least its round trips × rtt, and the summary agrees with the raw numbers.
func TestTinyRunWritesAConsistentReport(t *testing.T) {
	needCBC(t)
	t.Run("pebble", func(t *testing.T) { tinyRun(t, "pebble") })
	t.Run("bigtable", func(t *testing.T) {
		addr, err := bttestserver.Addr()
		if err != nil {
			t.Fatal(err)
		}
		tinyRun(t, fmt.Sprintf("bigtable://test/%s?emulator=%s", bttestserver.Instance(), addr))
	})
}

func tinyRun(t *testing.T, url string) {
	out := t.TempDir()
	rtt := 200 * time.Microsecond
	cfg := bench.Config{Scale: 0.0005, Seed: 3, Mix: "bidding", Workload: "workload.kvs", Store: url,
		RTTs: []time.Duration{0, rtt}, Iterations: 4, Warmup: 1, Out: out}
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calibration == nil {
		t.Fatal("no calibration although no profile was given")
	}
	if err := rep.Profile.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := cost.Load(filepath.Join(out, "profile.json")); err != nil {
		t.Fatalf("profile.json is not a loadable profile: %v", err)
	}

	// results.csv: one row per variant × pass × statement of the mix.
	f, err := os.Open(filepath.Join(out, "results.csv"))
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
	nstmts := len(rep.Variants[0].Passes[0].Statements)
	if want := 1 + 3*2*nstmts; len(recs) != want {
		t.Fatalf("results.csv has %d lines, want %d", len(recs), want)
	}
	num := func(r []string, col string) float64 {
		v, err := strconv.ParseFloat(r[head[col]], 64)
		if err != nil {
			t.Fatalf("%s = %q: %v", col, r[head[col]], err)
		}
		return v
	}
	rowsOf := map[string]float64{} // rtt/tag → rows per run
	type acc struct{ w, wl float64 }
	means := map[string]*acc{} // variant/rtt
	for _, r := range recs[1:] {
		v, rttS, tag := r[head["variant"]], r[head["rtt_s"]], r[head["tag"]]
		key := rttS + "/" + tag
		rows := num(r, "rows")
		if prev, ok := rowsOf[key]; ok && prev != rows {
			t.Errorf("statement %s at rtt %s: %v rows per run in %s, %v in an earlier variant", tag, rttS, rows, v, prev)
		}
		rowsOf[key] = rows
		if d := num(r, "rtt_s"); d > 0 {
			if lb := num(r, "round_trips") * d; num(r, "mean_s") < lb {
				t.Errorf("%s %s: mean %v s below its round trips × rtt = %v s", v, tag, num(r, "mean_s"), lb)
			}
		}
		if num(r, "round_trips") < 1 {
			t.Errorf("%s %s: %v round trips per run", v, tag, num(r, "round_trips"))
		}
		if !(num(r, "p50_s") <= num(r, "p95_s") && num(r, "p95_s") <= num(r, "p99_s")) {
			t.Errorf("%s %s: percentiles out of order: %v", v, tag, r)
		}
		a := means[v+"/"+rttS]
		if a == nil {
			a = &acc{}
			means[v+"/"+rttS] = a
		}
		a.w += num(r, "weight")
		a.wl += num(r, "weight") * num(r, "mean_s")
	}

	// summary.json: keyed by variant, the last pass's weighted mean.
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]struct {
		WeightedMean float64 `json:"weighted_mean_s"`
		ModelCost    float64 `json:"model_cost"`
		Size         float64 `json:"size_bytes"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"baseline", "cf", "si"} {
		s, ok := sum[v]
		if !ok {
			t.Fatalf("summary.json has no %s", v)
		}
		a := means[v+"/"+strconv.FormatFloat(rtt.Seconds(), 'g', -1, 64)]
		if want := a.wl / a.w; math.Abs(s.WeightedMean-want) > 1e-9*want {
			t.Errorf("%s: weighted_mean_s %v, recomputed from results.csv %v", v, s.WeightedMean, want)
		}
		if !(s.ModelCost > 0 && s.Size > 0) {
			t.Errorf("%s: model_cost %v, size_bytes %v", v, s.ModelCost, s.Size)
		}
		if s.Size > rep.Budget {
			t.Errorf("%s: size %v over the budget %v", v, s.Size, rep.Budget)
		}
	}
	for _, v := range rep.Variants {
		for _, p := range v.Passes {
			var total float64
			for _, g := range p.Groups {
				total += g.Mean
			}
			var stmts float64
			for _, s := range p.Statements {
				stmts += s.Mean
			}
			if math.Abs(total-stmts) > 1e-9*stmts {
				t.Errorf("%s rtt %v: transaction means sum to %v, statement means to %v", v.Name, p.RTT, total, stmts)
			}
		}
	}

	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kvschema bench rubis --scale 0.0005", "si / cf", "si / baseline", "## Transactions, rtt 200µs", "fig4-rtt200us.png",
		"| predicted | paper (Cassandra) |", fmt.Sprintf("| %.3f× | 0.265× |", rep.PredictedRatio("cf")),
		"- Executor: batched", "## Fig. 4: baseline vs CF-only vs CF+SI", "| paper (Cassandra, NoSE's executor) | | | | | 0.265× | 0.019× | −73.5% | −98.1% |",
		fmt.Sprintf("| %s | 200µs | %s | %s | %s | %.3f× |", units.Format(rep.Budget), fmtMean(rep, "baseline", rtt), fmtMean(rep, "cf", rtt), fmtMean(rep, "si", rtt), rep.Ratio("cf", rtt))} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
	for _, name := range []string{"fig4-rtt0s.png", "fig5-rtt0s.png", "cost-rtt0s.png", "fig4-rtt200us.png", "fig5-rtt200us.png", "cost-rtt200us.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	for _, name := range []string{"model.kvs", "schema-baseline.kvs", "schema-cf.kvs", "schema-si.kvs"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  bench.Config
		want string
	}{
		{bench.Config{Scale: 0, Out: "x"}, "scale"},
		{bench.Config{Scale: 0.001, Variants: []string{"nosql"}, Out: "x"}, "unknown variant"},
		{bench.Config{Scale: 0.001, Variants: []string{"si", "si"}, Out: "x"}, "twice"},
		{bench.Config{Scale: 0.001, RTTs: []time.Duration{-1}, Out: "x"}, "negative"},
		{bench.Config{Scale: 0.001, Store: "redis://h", Out: t.TempDir()}, "pebble"},
		{bench.Config{Scale: 0.001, Mix: "nomix", Store: "mem:", Out: t.TempDir(), Profile: "cassandra"}, "no mix"},
		{bench.Config{Scale: 0.001, Data: "d", Generator: "model", Out: "x"}, "give one"},
		{bench.Config{Scale: 0.001, Skew: 1, Out: "x"}, "skew 1 is for the model generator"},
		{bench.Config{Scale: 0.001, Generator: "model", Skew: -1, Out: "x"}, "skew -1"},
		{bench.Config{Scale: 0.001, ModelFiles: []string{"testdata/none.kvs"}, Workload: "w.kvs", Out: "x"}, "testdata/none.kvs"},
		{bench.Config{Scale: 0.001, ModelFiles: []string{"../examples/rubis/model.kvs"}, Out: "x"}, "give the workload"},
		{bench.Config{Scale: 0.001, ModelFiles: []string{"../examples/rubis/model.kvs"}, Workload: "../examples/rubis/workload.kvs", Mix: "nomix", Out: "x"}, `workload ../examples/rubis/workload.kvs has no mix "nomix"`},
	} {
		_, err := bench.Run(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
}

// fmtMean is how the report prints a variant's weighted mean at rtt.
func fmtMean(rep *bench.Report, variant string, rtt time.Duration) string {
	return time.Duration(rep.Variant(variant).Pass(rtt).WeightedMean * 1e9).Round(time.Microsecond).String()
}
