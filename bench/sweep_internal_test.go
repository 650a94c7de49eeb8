package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/workload"
)

// A shared measurement keeps the measured numbers and takes the sharing
// variant's own predictions, and so its own predicted mean and Spearman.
func TestShareMeasurement(t *testing.T) {
	a, b := &workload.Statement{Tag: "a"}, &workload.Statement{Tag: "b"}
	m := &VariantResult{Name: "cf", IndexRows: 7, Passes: []*Pass{{RTT: time.Millisecond, WeightedMean: 0.002,
		Statements: []*StatementResult{{Tag: "a", Weight: 1, Predicted: 1, Mean: 0.001}, {Tag: "b", Weight: 3, Predicted: 2, Mean: 0.003}}}}}
	v := &VariantResult{Name: "si"}
	v.share(m, map[*workload.Statement]float64{a: 4, b: 0.5}, "cf at 80MB")
	p := v.Passes[0]
	if v.MeasuredAs != "cf at 80MB" || v.IndexRows != 7 || p.WeightedMean != 0.002 || p.RTT != time.Millisecond {
		t.Fatalf("shared %+v, pass %+v", v, p)
	}
	if p.Statements[0].Predicted != 4 || p.Statements[1].Predicted != 0.5 || m.Passes[0].Statements[0].Predicted != 1 {
		t.Errorf("predictions %v, %v; the measured variant's now %v", p.Statements[0].Predicted, p.Statements[1].Predicted, m.Passes[0].Statements[0].Predicted)
	}
	if want := (4 + 3*0.5) / 4.0; math.Abs(p.PredictedMean-want) > 1e-12 {
		t.Errorf("predicted mean %v, want %v", p.PredictedMean, want)
	}
	if p.Spearman != -1 { // predictions now rank the two statements backwards
		t.Errorf("Spearman %v, want -1", p.Spearman)
	}
}

// The sweep's report says what each budget's variants are: identical
// schemas measured once, a baseline reused from a larger budget, and a
// variant with no schema, each in its own words.
func TestSweepMarkdown(t *testing.T) {
	pass := func(meas, pred float64) []*Pass {
		return []*Pass{{RTT: 0, WeightedMean: meas, PredictedMean: pred, Spearman: 1}}
	}
	const ddl = "DEFINE COLUMN FAMILY x FOR users { PARTITION KEY (users.id) };"
	baseline := &VariantResult{Name: "baseline", Structures: 3, Size: 5e6, Schema: "-- baseline\n" + ddl + "\nDEFINE COLUMN FAMILY y FOR items { PARTITION KEY (items.id) };", Passes: pass(0.03, 0.04)}
	small := &BudgetPoint{Budget: 6e6, Dir: "budget-6MB", Variants: []*VariantResult{
		{Name: "baseline", Structures: 3, Size: 5e6, Schema: baseline.Schema, Passes: pass(0.03, 0.04), AdvisedAt: 8e6, MeasuredAs: "baseline at 8MB"},
		{Name: "cf", Structures: 1, Size: 4e6, Schema: "-- mode cf\n" + ddl, Passes: pass(0.01, 0.012)},
		{Name: "si", Structures: 1, Size: 4e6, Schema: "-- mode cf+si\n" + ddl, Passes: pass(0.01, 0.012), MeasuredAs: "cf at 6MB"},
	}}
	tight := &BudgetPoint{Budget: 4.5e6, Dir: "budget-4.5MB",
		Infeasible: []InfeasibleVariant{{Name: "baseline", MinBudget: 5e6}},
		Variants: []*VariantResult{
			{Name: "cf", Structures: 1, Size: 4e6, Schema: "-- cf\n" + ddl, Passes: pass(0.01, 0.012)},
			{Name: "si", Structures: 2, SIs: 1, Size: 4.4e6, Schema: "-- si\n" + ddl + "\nDEFINE SECONDARY INDEX s ON x (users.nick);", Passes: pass(0.005, 0.006)},
		}}
	r := &Report{RUBiS: true, WorkloadFile: "examples/rubis/workload.kvs", Machine: "m",
		Config: Config{Mix: "bidding", Variants: []string{"baseline", "cf", "si"}, RTTs: []time.Duration{0}, Budgets: []float64{4.5e6, 6e6}, Executor: exec.PerPartition, Store: "mem:", Out: "o"},
		Sweep:  []*BudgetPoint{tight, small}}
	if same, ok := small.Identical("cf", "si"); !same || !ok {
		t.Errorf("cf and si at 6MB: identical %v, %v", same, ok)
	}
	if same, ok := tight.Identical("cf", "si"); same || !ok {
		t.Errorf("cf and si at 4.5MB: identical %v, %v", same, ok)
	}
	if _, ok := tight.Identical("baseline", "si"); ok {
		t.Error("the infeasible baseline compared")
	}
	md := r.SweepMarkdown(nil)
	for _, want := range []string{
		"Executor: per-partition",
		"| [4.5MB](budget-4.5MB/REPORT.md) | baseline | – | – | – | – | – | infeasible: the smallest schema answering the workload takes 5MB |",
		"| [4.5MB](budget-4.5MB/REPORT.md) | si | 2 (1) | 4.4MB | 6ms | 5ms | 1.000 |  |",
		"| [6MB](budget-6MB/REPORT.md) | baseline | 3 (0) | 5MB | 40ms | 30ms | 1.000 | the schema advised at 8MB, which fits: the same optimum; same schema as baseline at 8MB: measured once |",
		"| [6MB](budget-6MB/REPORT.md) | si | 1 (0) | 4MB | 12ms | 10ms | 1.000 | same schema as cf at 6MB: measured once |",
		"| 4.5MB | 0 / 1 | differ | 0.500× | 0.500× | – | – |",
		"| 6MB | 0 / 0 | identical | 1.000× | 1.000× | 0.300× | 0.333× |",
		"| 4.5MB | 0s | – | 10ms | 5ms | 0.500× | – | −50.0% | – |",
		"| 6MB | 0s | 30ms | 10ms | 10ms | 1.000× | 0.333× | +0.0% | −66.7% |",
		"- Budgets: 4.5MB, 6MB (given).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the sweep's report lacks %q:\n%s", want, md)
		}
	}
}

func TestBudgetDirs(t *testing.T) {
	got := budgetDirs([]float64{6.44e7, 80_500_000, 80_500_001, 1.61e8})
	want := []string{"budget-64.4MB", "budget-80500000B", "budget-80500001B", "budget-161MB"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("budgetDirs = %v, want %v", got, want)
	}
}
