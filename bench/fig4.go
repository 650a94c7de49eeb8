package bench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvschema/kvschema/internal/units"
)

// fig4Row is one line of the report's Fig. 4 table: the measured weighted
// means of the three variants at one budget and rtt, and the SI schema's
// ratios to the others.
type fig4Row struct {
	Budget float64
	RTT    time.Duration
	// Means are the measured weighted means by variant: absent when the
	// variant was not run or has no schema within the budget.
	Means                map[string]float64
	SIvsCF, SIvsBaseline float64 // NaN when a side is missing
}

// fig4Rows is the Fig. 4 table's lines for the variants run at one budget,
// one per rtt.
func fig4Rows(budget float64, vs []*VariantResult, rtts []time.Duration) []fig4Row {
	var out []fig4Row
	for _, rtt := range rtts {
		row := fig4Row{Budget: budget, RTT: rtt, Means: map[string]float64{}}
		for _, v := range vs {
			if p := v.Pass(rtt); p != nil {
				row.Means[v.Name] = p.WeightedMean
			}
		}
		ratio := func(other string) float64 {
			si, okSI := row.Means["si"]
			o, ok := row.Means[other]
			if !okSI || !ok {
				return math.NaN()
			}
			return si / o
		}
		row.SIvsCF, row.SIvsBaseline = ratio("cf"), ratio("baseline")
		out = append(out, row)
	}
	return out
}

// fmtChange writes a ratio as the paper writes its results, a change in
// percent: 0.265 is −73.5%.
func fmtChange(ratio float64) string {
	if math.IsNaN(ratio) {
		return "–"
	}
	d := 100 * (ratio - 1)
	if d < 0 {
		return fmt.Sprintf("−%.1f%%", -d)
	}
	return fmt.Sprintf("+%.1f%%", d)
}

// writeFig4 writes the Fig. 4 section: the rows beside the paper's
// result (PaperVsCF, PaperVsBaseline).
func (r *Report) writeFig4(b *strings.Builder, rows []fig4Row) {
	b.WriteString("## Fig. 4: baseline vs CF-only vs CF+SI\n\n")
	fmt.Fprintf(b, "The paper's Fig. 4 (seed 000 §4.2.1) is the mean response time of the three schemas on Cassandra 3.11 with one node, run by NoSE's executor (one request per partition a join probes): the CF+SI schema took %.1f%% less than the normalized baseline and %.1f%% less than NoSE's CF-only schema, si/baseline %.3f× and si/cf %.3f×. The same comparison here, measured weighted means of the mix with the %s executor:\n\n",
		100*PaperReductionVsBaseline, 100*PaperReductionVsCF, PaperVsBaseline, PaperVsCF, r.Config.Executor)
	header(b, "budget", "rtt", "baseline", "cf", "si", "si / cf", "si / baseline", "si vs cf", "si vs baseline")
	mean := func(row fig4Row, v string) string {
		if m, ok := row.Means[v]; ok {
			return fmtSeconds(m)
		}
		return "–"
	}
	for _, row := range rows {
		fmt.Fprintf(b, "| %s | %v | %s | %s | %s | %s | %s | %s | %s |\n", units.Format(row.Budget), row.RTT, mean(row, "baseline"), mean(row, "cf"), mean(row, "si"),
			fmtRatio(row.SIvsCF), fmtRatio(row.SIvsBaseline), fmtChange(row.SIvsCF), fmtChange(row.SIvsBaseline))
	}
	fmt.Fprintf(b, "| paper (Cassandra, NoSE's executor) | | | | | %s | %s | %s | %s |\n",
		fmtRatio(PaperVsCF), fmtRatio(PaperVsBaseline), fmtChange(PaperVsCF), fmtChange(PaperVsBaseline))
}

// fig4Summary is the Fig. 4 table in summary.json.
type fig4Summary struct {
	Executor string           `json:"executor"`
	Rows     []fig4SummaryRow `json:"rows"`
	Paper    fig4Paper        `json:"paper"`
}

type fig4SummaryRow struct {
	Budget       float64  `json:"budget_bytes"`
	RTT          float64  `json:"rtt_s"`
	Baseline     *float64 `json:"baseline_s"`
	CF           *float64 `json:"cf_s"`
	SI           *float64 `json:"si_s"`
	SIvsCF       *float64 `json:"si_vs_cf"`
	SIvsBaseline *float64 `json:"si_vs_baseline"`
}

type fig4Paper struct {
	SIvsCF       float64 `json:"si_vs_cf"`
	SIvsBaseline float64 `json:"si_vs_baseline"`
	Source       string  `json:"source"`
}

func (r *Report) fig4Summary(rows []fig4Row) *fig4Summary {
	out := &fig4Summary{Executor: r.Config.Executor.String(), Rows: []fig4SummaryRow{},
		Paper: fig4Paper{SIvsCF: PaperVsCF, SIvsBaseline: PaperVsBaseline,
			Source: "seed 000 §4.2.1, Fig. 4: mean response time 98.1% below the baseline's and 73.5% below NoSE's (Cassandra 3.11, one node)"}}
	for _, row := range rows {
		mean := func(v string) *float64 {
			if m, ok := row.Means[v]; ok {
				return finite(m)
			}
			return nil
		}
		out.Rows = append(out.Rows, fig4SummaryRow{Budget: row.Budget, RTT: row.RTT.Seconds(), Baseline: mean("baseline"), CF: mean("cf"), SI: mean("si"),
			SIvsCF: finite(row.SIvsCF), SIvsBaseline: finite(row.SIvsBaseline)})
	}
	return out
}
