package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/bench/chart"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/workload"
)

// SweepFactors are the budgets of the default sweep (Config.Sweep), as
// fractions of the paper's budget scaled to the data, the one-budget
// run's default. At the RUBiS model's statistics (kvschema advise on
// examples/rubis/model.kvs, workload_secondary.kvs, mix bidding) the
// smallest schema answering the workload takes 61.8MB (0.38 of the
// paper's 161MB; column families only) and the normalized baseline's
// 72.7MB (0.45), while the CF-only optimum stops growing at 175MB: so the
// sweep runs from just above where CF-only fits, where the budget binds
// hardest and SIs can pay, up to the paper's own budget.
var SweepFactors = []float64{0.4, 0.5, 0.6, 0.75, 1}

// SweepBudgets is the default sweep's budgets (SweepFactors) for data
// whose size is scale times the RUBiS model scale's.
func SweepBudgets(scale float64) []float64 {
	out := make([]float64, len(SweepFactors))
	for i, f := range SweepFactors {
		out[i] = f * PaperBudget * scale
	}
	return out
}

// sweepDefaults checks the sweep settings: Budgets holds sizes, each once
// (sorted here), and is given alone; one budget is Budget.
func (cfg *Config) sweepDefaults() error {
	switch {
	case cfg.Sweep && len(cfg.Budgets) > 0:
		return errors.New("give a list of budgets or the default sweep, not both")
	case cfg.Sweep && !cfg.isRUBiS():
		return errors.New("the default sweep scales the paper's budget to RUBiS's data; for another model give the budgets (--budget 10MB,20MB,40MB)")
	case len(cfg.Budgets) > 0 && cfg.Budget != 0:
		return errors.New("give one budget or a list of budgets, not both")
	}
	for _, b := range cfg.Budgets {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("sweep budget %v must be a positive size (for a budget that does not bind, give a large one)", b)
		}
	}
	slices.Sort(cfg.Budgets)
	for i := 1; i < len(cfg.Budgets); i++ {
		if cfg.Budgets[i] == cfg.Budgets[i-1] {
			return fmt.Errorf("sweep budget %s given twice", units.Format(cfg.Budgets[i]))
		}
	}
	if len(cfg.Budgets) == 1 {
		cfg.Budget, cfg.Budgets = cfg.Budgets[0], nil
	}
	return nil
}

// BudgetPoint is one budget of a sweep: the variants whose schema fits in
// it, advised and measured, and the variants none of whose schemas fit.
//
// The cf and si variants are advised at every budget. The baseline's
// optimum under a larger budget, when the advisor proved it optimal and
// the smallest schema of its cost, is reused at every smaller budget it
// fits in (VariantResult.AdvisedAt): no schema fits there that did not fit
// under the larger budget, so it is the optimum there too. It is advised
// again where it does not fit. A schema the same as one measured earlier
// in the sweep (SameSchema: cf and si identical, or a variant unchanged
// from a larger budget) is not loaded and measured again: it shares that
// measurement (VariantResult.MeasuredAs), with its own predicted costs,
// so identical schemas show one latency rather than two runs' noise.
type BudgetPoint struct {
	Budget     float64
	Variants   []*VariantResult // in Config.Variants order
	Infeasible []InfeasibleVariant
	// Dir is the point's report directory (REPORT.md, results.csv, …,
	// the schemas), relative to Config.Out; empty when no variant fits
	// and nothing was written.
	Dir  string
	took time.Duration
}

// InfeasibleVariant is a variant none of whose schemas fits a budget.
type InfeasibleVariant struct {
	Name      string
	MinBudget float64 // the smallest budget that works (advisor.InfeasibleError)
}

// Variant returns the point's variant called name, or nil.
func (pt *BudgetPoint) Variant(name string) *VariantResult {
	for _, v := range pt.Variants {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// infeasible returns why the variant called name has no schema at the
// point, or nil.
func (pt *BudgetPoint) infeasible(name string) *InfeasibleVariant {
	for i := range pt.Infeasible {
		if pt.Infeasible[i].Name == name {
			return &pt.Infeasible[i]
		}
	}
	return nil
}

// Identical reports whether both variants have a schema at the point and
// it is the same one (SameSchema); ok is false when either has none.
func (pt *BudgetPoint) Identical(a, b string) (same, ok bool) {
	va, vb := pt.Variant(a), pt.Variant(b)
	if va == nil || vb == nil {
		return false, false
	}
	return SameSchema(va, vb), true
}

// Ratio is the si variant's measured weighted mean over the other
// variant's at rtt (NaN when either is missing).
func (pt *BudgetPoint) Ratio(other string, rtt time.Duration) float64 {
	return ratioOf(pt.Variants, other, rtt, func(p *Pass) float64 { return p.WeightedMean })
}

// PredictedRatio is the si variant's predicted weighted cost over the
// other variant's (NaN when either is missing).
func (pt *BudgetPoint) PredictedRatio(other string) float64 {
	return ratioOf(pt.Variants, other, -1, func(p *Pass) float64 { return p.PredictedMean })
}

// ratioOf is f of the si variant's pass at rtt over the other variant's
// (rtt < 0: their first passes), NaN when either is missing.
func ratioOf(vs []*VariantResult, other string, rtt time.Duration, f func(*Pass) float64) float64 {
	var si, o *VariantResult
	for _, v := range vs {
		switch v.Name {
		case "si":
			si = v
		case other:
			o = v
		}
	}
	if si == nil || o == nil || len(si.Passes) == 0 || len(o.Passes) == 0 {
		return math.NaN()
	}
	ps, po := si.Passes[0], o.Passes[0]
	if rtt >= 0 {
		ps, po = si.Pass(rtt), o.Pass(rtt)
	}
	if ps == nil || po == nil {
		return math.NaN()
	}
	return f(ps) / f(po)
}

// budgetDirs names each budget's report directory: budget-64.4MB, or by
// the exact byte count where two budgets print alike.
func budgetDirs(budgets []float64) []string {
	out := make([]string, len(budgets))
	seen := map[string]int{}
	for i, b := range budgets {
		out[i] = "budget-" + units.Format(b)
		seen[out[i]]++
	}
	for i, b := range budgets {
		if seen[out[i]] > 1 {
			out[i] = fmt.Sprintf("budget-%.0fB", b)
		}
	}
	return out
}

// runSweep advises and measures every variant at every budget (see
// BudgetPoint), then writes each budget's report into its directory and
// the sweep's into cfg.Out.
func (cfg *Config) runSweep(ctx context.Context, budgets []float64, root string, d *dataSet, w *workload.Workload, b *binder, rep *Report, start time.Time, logf func(string, ...any)) error {
	dirs := budgetDirs(budgets)
	rep.Sweep = make([]*BudgetPoint, len(budgets))
	for i, bud := range budgets {
		rep.Sweep[i] = &BudgetPoint{Budget: bud, Dir: dirs[i]}
	}
	// The first measurement of each schema, by its DDL without comments.
	type measured struct {
		result *VariantResult
		label  string
	}
	runs := map[string]measured{}
	// Per variant, from the largest budget down: the baseline's proven
	// optimum at a larger budget and the budget it was advised under
	// (the recommendation for any smaller budget it fits in), and the
	// least budget of any schema (> 0 once one did not fit).
	type state struct {
		larger   *variant
		largerAt float64
		least    float64
	}
	states := map[string]*state{}
	for _, name := range cfg.Variants {
		states[name] = &state{}
	}
	for i := len(rep.Sweep) - 1; i >= 0; i-- {
		pt := rep.Sweep[i]
		t0 := time.Now()
		dir := filepath.Join(cfg.Out, pt.Dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// The budget's variants are advised and deployed first, then
		// measured together (measure interleaves them statement by
		// statement); a schema measured before is measured once.
		var deploy []*variant
		var shared []struct {
			v     *variant
			key   string
			label string
		}
		for _, name := range cfg.Variants {
			st := states[name]
			label := name + " at " + units.Format(pt.Budget)
			if st.least > pt.Budget {
				pt.Infeasible = append(pt.Infeasible, InfeasibleVariant{Name: name, MinBudget: st.least})
				continue
			}
			var v *variant
			if name == "baseline" && st.larger != nil && st.larger.result.Size <= pt.Budget {
				r := *st.larger.result
				r.Passes, r.MeasuredAs, r.AdviseTime, r.AdvisedAt = nil, "", 0, st.largerAt
				v = &variant{result: &r, predicted: st.larger.predicted}
				logf("bench %s: the schema advised at %s fits (%s): the same optimum", label, units.Format(st.largerAt), units.Format(r.Size))
			} else {
				var proven bool
				var err error
				v, proven, err = cfg.adviseVariant(ctx, name, d, w, pt.Budget, rep.Profile, logf)
				var inf *advisor.InfeasibleError
				if errors.As(err, &inf) {
					logf("bench %s: %v", label, err)
					st.least = inf.MinBudget
					pt.Infeasible = append(pt.Infeasible, InfeasibleVariant{Name: name, MinBudget: st.least})
					st.larger = nil
					continue
				}
				if err != nil {
					closeAll(deploy)
					return fmt.Errorf("variant %s: %w", label, err)
				}
				st.larger = nil
				if proven {
					st.larger, st.largerAt = v, pt.Budget
				}
			}
			key := schemaKey(v.result.Schema)
			if j := slices.IndexFunc(deploy, func(u *variant) bool { return schemaKey(u.result.Schema) == key }); j >= 0 {
				// Measured with this budget's others, below.
				shared = append(shared, struct {
					v     *variant
					key   string
					label string
				}{v, key, label})
			} else if m, ok := runs[key]; ok {
				v.result.share(m.result, v.predicted, m.label)
				logf("bench %s: the same schema as %s, measured once", label, m.label)
			} else {
				if err := cfg.deployVariant(ctx, v, root, d, rep.Profile, logf); err != nil {
					closeAll(deploy)
					return fmt.Errorf("variant %s: %w", label, err)
				}
				deploy = append(deploy, v)
				runs[key] = measured{v.result, label}
			}
			if err := os.WriteFile(filepath.Join(dir, "schema-"+name+".kvs"), []byte(v.result.Schema), 0o644); err != nil {
				closeAll(deploy)
				return err
			}
			pt.Variants = append(pt.Variants, v.result)
		}
		if len(deploy) > 0 {
			if err := cfg.measure(ctx, deploy, w, b, rep.Profile, logf); err != nil {
				return fmt.Errorf("budget %s: %w", units.Format(pt.Budget), err)
			}
		}
		for _, sh := range shared {
			m := runs[sh.key]
			sh.v.result.share(m.result, sh.v.predicted, m.label)
			logf("bench %s: the same schema as %s, measured once", sh.label, m.label)
		}
		pt.took += time.Since(t0)
	}
	for _, pt := range rep.Sweep {
		if len(pt.Variants) == 0 {
			pt.Dir = ""
			continue
		}
		sub := *rep
		sub.Config.Budget, sub.Config.Budgets, sub.Config.Sweep = pt.Budget, nil, false
		sub.Config.Out = filepath.Join(cfg.Out, pt.Dir)
		sub.Budget, sub.Variants, sub.Sweep, sub.Took, sub.point = pt.Budget, pt.Variants, nil, pt.took, pt
		// Each budget's directory holds what its report names.
		if err := os.WriteFile(filepath.Join(sub.Config.Out, "model.kvs"), d.modelSrc, 0o644); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(sub.Config.Out, "profile.json"), rep.Profile); err != nil {
			return err
		}
		if err := sub.write(sub.Config.Out); err != nil {
			return err
		}
	}
	rep.Took = time.Since(start)
	return rep.write(cfg.Out)
}

// closeAll closes the stores of deployed variants not measured (measure
// closes those it measures).
func closeAll(vs []*variant) {
	for _, v := range vs {
		v.st.Close()
	}
}

// schemaKey is a schema's DDL without its comment lines, as SameSchema
// compares them.
func schemaKey(ddl string) string {
	var keep []string
	for _, l := range strings.Split(ddl, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// share gives v the measurement of m, a run of the same schema: its passes
// with v's own predicted costs (and so its own Spearman), its load.
func (v *VariantResult) share(m *VariantResult, predicted map[*workload.Statement]float64, label string) {
	byTag := map[string]float64{}
	for s, c := range predicted {
		byTag[s.Tag] = c
	}
	v.MeasuredAs, v.IndexRows, v.LoadTime = label, m.IndexRows, m.LoadTime
	v.Passes = nil
	for _, p := range m.Passes {
		q := *p
		q.Statements = make([]*StatementResult, len(p.Statements))
		var wsum, wpred float64
		var pred, meas []float64
		for i, s := range p.Statements {
			c := *s
			c.Predicted = byTag[s.Tag]
			q.Statements[i] = &c
			wsum += c.Weight
			wpred += c.Weight * c.Predicted
			pred, meas = append(pred, c.Predicted), append(meas, c.Mean)
		}
		q.PredictedMean, q.Spearman = wpred/wsum, spearman(pred, meas)
		v.Passes = append(v.Passes, &q)
	}
}

// sweepRealized is the least and the greatest mean delay a round trip
// waited at rtt over the sweep's measured runs (0, 0 for one budget).
func (r *Report) sweepRealized(rtt time.Duration) (lo, hi time.Duration) {
	for _, pt := range r.Sweep {
		for _, v := range pt.Variants {
			if p := v.Pass(rtt); p != nil && v.MeasuredAs == "" && p.RealizedRTT > 0 {
				if lo == 0 || p.RealizedRTT < lo {
					lo = p.RealizedRTT
				}
				hi = max(hi, p.RealizedRTT)
			}
		}
	}
	return lo, hi
}

// writeSweep writes a sweep's REPORT.md, results.csv, summary.json and
// one chart per rtt (sweep-rtt1ms.png).
func (r *Report) writeSweep(dir string) error {
	var charts []string
	for _, rtt := range r.Config.RTTs {
		f, err := r.sweepChart(dir, rtt)
		if err != nil {
			return err
		}
		if f != "" {
			charts = append(charts, f)
		}
	}
	if err := r.writeSweepCSV(filepath.Join(dir, "results.csv")); err != nil {
		return err
	}
	if err := r.writeSweepSummary(filepath.Join(dir, "summary.json")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(r.SweepMarkdown(charts)), 0o644)
}

// sweepChart draws the predicted and measured weighted means against the
// budget at rtt; it names the file, or nothing when no variant fits any
// budget.
func (r *Report) sweepChart(dir string, rtt time.Duration) (string, error) {
	var budgets []float64
	for _, pt := range r.Sweep {
		budgets = append(budgets, pt.Budget)
	}
	var series []chart.SweepSeries
	drawn := false
	for _, name := range r.Config.Variants {
		s := chart.SweepSeries{Name: name}
		for _, pt := range r.Sweep {
			pred, meas := math.NaN(), math.NaN()
			if v := pt.Variant(name); v != nil {
				if p := v.Pass(rtt); p != nil {
					pred, meas, drawn = p.PredictedMean, p.WeightedMean, true
				}
			}
			s.Predicted, s.Measured = append(s.Predicted, pred), append(s.Measured, meas)
		}
		series = append(series, s)
	}
	if !drawn {
		return "", nil
	}
	mix := "RUBiS " + r.Config.Mix
	if !r.RUBiS {
		mix = filepath.Base(r.WorkloadFile) + " " + r.Config.Mix
	}
	f := "sweep-" + rttLabel(rtt) + ".png"
	title := fmt.Sprintf("%s: weighted mean against the budget (rtt %v, %s executor)", mix, rtt, r.Config.Executor)
	return f, chart.Sweep(filepath.Join(dir, f), title, budgets, series)
}

// writeSweepCSV writes every measured statement of every budget: the
// columns of a one-budget run's results.csv after the budget's.
func (r *Report) writeSweepCSV(path string) error {
	return writeResultsCSV(path, []string{"budget_bytes"}, func(row func(lead []string, s *StatementResult)) {
		for _, pt := range r.Sweep {
			for _, v := range pt.Variants {
				for _, p := range v.Passes {
					for _, st := range p.Statements {
						row([]string{fmtFloat(pt.Budget), v.Name, fmtFloat(p.RTT.Seconds())}, st)
					}
				}
			}
		}
	})
}

// sweepSummary is a sweep's summary.json: per budget, each variant's
// numbers at the realistic rtt (the last) and in every pass, and the SI
// schema's ratios to the others.
type sweepSummary struct {
	Executor string               `json:"executor"`
	RTT      float64              `json:"rtt_s"` // the realistic pass's, which the top-level numbers are
	Budgets  []sweepBudgetSummary `json:"budgets"`
	Fig4     *fig4Summary         `json:"fig4,omitempty"`
}

type sweepBudgetSummary struct {
	Budget   float64                        `json:"budget_bytes"`
	Dir      string                         `json:"dir,omitempty"`
	Variants map[string]sweepVariantSummary `json:"variants"`
	// CFSIIdentical: the cf and si variants chose the same schema; null
	// when either has none.
	CFSIIdentical *bool        `json:"cf_si_identical"`
	SIvsCF        ratioSummary `json:"si_vs_cf"`
	SIvsBaseline  ratioSummary `json:"si_vs_baseline"`
}

type sweepVariantSummary struct {
	Infeasible bool     `json:"infeasible,omitempty"`
	MinBudget  *float64 `json:"min_budget_bytes,omitempty"`
	// The rest is set when the variant has a schema within the budget.
	PredictedMean *float64      `json:"predicted_mean_s,omitempty"`
	WeightedMean  *float64      `json:"weighted_mean_s,omitempty"`
	ModelCost     *float64      `json:"model_cost,omitempty"`
	Size          *float64      `json:"size_bytes,omitempty"`
	Spearman      *float64      `json:"spearman,omitempty"`
	Structures    *int          `json:"structures,omitempty"`
	SIs           *int          `json:"secondary_indexes,omitempty"`
	AdvisedAt     *float64      `json:"advised_at_bytes,omitempty"`
	MeasuredAs    string        `json:"measured_as,omitempty"`
	Passes        []summaryPass `json:"passes,omitempty"`
}

type ratioSummary struct {
	Predicted *float64 `json:"predicted"`
	Measured  *float64 `json:"measured"` // at the realistic rtt
}

func (r *Report) writeSweepSummary(path string) error {
	realistic := r.Config.RTTs[len(r.Config.RTTs)-1]
	out := sweepSummary{Executor: r.Config.Executor.String(), RTT: realistic.Seconds()}
	var rows []fig4Row
	for _, pt := range r.Sweep {
		bs := sweepBudgetSummary{Budget: pt.Budget, Dir: pt.Dir, Variants: map[string]sweepVariantSummary{},
			SIvsCF:       ratioSummary{Predicted: finite(pt.PredictedRatio("cf")), Measured: finite(pt.Ratio("cf", realistic))},
			SIvsBaseline: ratioSummary{Predicted: finite(pt.PredictedRatio("baseline")), Measured: finite(pt.Ratio("baseline", realistic))}}
		if same, ok := pt.Identical("cf", "si"); ok {
			bs.CFSIIdentical = &same
		}
		for _, inf := range pt.Infeasible {
			bs.Variants[inf.Name] = sweepVariantSummary{Infeasible: true, MinBudget: finite(inf.MinBudget)}
		}
		for _, v := range pt.Variants {
			last := v.Passes[len(v.Passes)-1]
			structures, sis := v.Structures, v.SIs
			e := sweepVariantSummary{PredictedMean: finite(last.PredictedMean), WeightedMean: finite(last.WeightedMean), ModelCost: finite(v.ModelCost),
				Size: finite(v.Size), Spearman: finite(last.Spearman), Structures: &structures, SIs: &sis, MeasuredAs: v.MeasuredAs}
			if v.AdvisedAt > 0 {
				e.AdvisedAt = finite(v.AdvisedAt)
			}
			for _, p := range v.Passes {
				e.Passes = append(e.Passes, summaryPass{RTT: p.RTT.Seconds(), WeightedMean: p.WeightedMean, Spearman: finite(p.Spearman)})
			}
			bs.Variants[v.Name] = e
		}
		out.Budgets = append(out.Budgets, bs)
		rows = append(rows, fig4Rows(pt.Budget, pt.Variants, r.Config.RTTs)...)
	}
	if r.RUBiS {
		out.Fig4 = r.fig4Summary(rows)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// SweepMarkdown renders a sweep's report.
func (r *Report) SweepMarkdown(charts []string) string {
	var b strings.Builder
	c := r.Config
	if r.RUBiS {
		fmt.Fprintf(&b, "# RUBiS budget sweep: %s mix, %s\n\n", c.Mix, filepath.Base(r.WorkloadFile))
	} else {
		fmt.Fprintf(&b, "# Budget sweep: %s mix of %s on %s\n\n", c.Mix, r.WorkloadFile, r.ModelFile)
	}
	fmt.Fprintf(&b, "Command: `%s`  \nMachine: %s  \nExecutor: %s  \nTook %v.\n\n", c.Command(), r.Machine, c.Executor, r.Took.Round(time.Second))

	chartOf := map[string]bool{}
	for _, f := range charts {
		chartOf[f] = true
	}
	for _, rtt := range c.RTTs {
		fmt.Fprintf(&b, "## Budget sweep, rtt %v\n\n", rtt)
		b.WriteString("Per budget and variant: the schema's structures (secondary indexes among them) and size, the advisor's predicted weighted cost (Σ weight × predicted cost / Σ weight over the mix: the counterpart of the measured mean) and the measured weighted mean response time. Each budget's full report is linked from its size.\n\n")
		header(&b, "budget", "variant", "structures (SIs)", "size", "predicted", "measured", "Spearman", "note")
		for _, pt := range r.Sweep {
			budget := units.Format(pt.Budget)
			if pt.Dir != "" {
				budget = fmt.Sprintf("[%s](%s/REPORT.md)", budget, pt.Dir)
			}
			for _, name := range c.Variants {
				if inf := pt.infeasible(name); inf != nil {
					fmt.Fprintf(&b, "| %s | %s | – | – | – | – | – | infeasible: the smallest schema answering the workload takes %s |\n", budget, name, units.Format(inf.MinBudget))
					continue
				}
				v := pt.Variant(name)
				if v == nil {
					continue
				}
				p := v.Pass(rtt)
				var notes []string
				if v.AdvisedAt > 0 {
					notes = append(notes, fmt.Sprintf("the schema advised at %s, which fits: the same optimum", units.Format(v.AdvisedAt)))
				}
				if v.MeasuredAs != "" {
					notes = append(notes, fmt.Sprintf("same schema as %s: measured once", v.MeasuredAs))
				}
				fmt.Fprintf(&b, "| %s | %s | %d (%d) | %s | %s | %s | %s | %s |\n", budget, name, v.Structures, v.SIs, units.Format(v.Size),
					fmtSeconds(p.PredictedMean), fmtSeconds(p.WeightedMean), fmtRho(p.Spearman), strings.Join(notes, "; "))
			}
		}
		b.WriteString("\nThe SI schema against the others, per budget (predicted: the ratio of the advisor's weighted costs; measured: of the weighted means). Identical schemas are measured once, so their measured ratio is 1:\n\n")
		header(&b, "budget", "SIs (cf / si)", "cf and si schemas", "si / cf predicted", "si / cf measured", "si / baseline predicted", "si / baseline measured")
		for _, pt := range r.Sweep {
			sis := func(name string) string {
				if v := pt.Variant(name); v != nil {
					return fmt.Sprint(v.SIs)
				}
				if pt.infeasible(name) != nil {
					return "infeasible"
				}
				return "–"
			}
			same := "–"
			if s, ok := pt.Identical("cf", "si"); ok {
				switch {
				case s:
					same = "identical"
				case math.Abs(pt.PredictedRatio("cf")-1) < 1e-9:
					same = "differ (a tie: the same predicted cost)"
				default:
					same = "differ"
				}
			}
			fmt.Fprintf(&b, "| %s | %s / %s | %s | %s | %s | %s | %s |\n", units.Format(pt.Budget), sis("cf"), sis("si"), same,
				fmtRatio(pt.PredictedRatio("cf")), fmtRatio(pt.Ratio("cf", rtt)), fmtRatio(pt.PredictedRatio("baseline")), fmtRatio(pt.Ratio("baseline", rtt)))
		}
		if f := "sweep-" + rttLabel(rtt) + ".png"; chartOf[f] {
			fmt.Fprintf(&b, "\n![%s](%s)\n", f, f)
		}
		b.WriteString("\n")
	}
	if r.RUBiS {
		var rows []fig4Row
		for _, pt := range r.Sweep {
			rows = append(rows, fig4Rows(pt.Budget, pt.Variants, c.RTTs)...)
		}
		r.writeFig4(&b, rows)
	}
	r.writeSetup(&b)
	return b.String()
}
