package advisor

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/workload"
)

// Comparison sets a given schema (a user's own, costed by Evaluate)
// beside a recommendation for the same model, workload, mix and profile:
// statement by statement, in totals and in size, and, when the given
// schema is the cheaper within the recommendation's budget, which of its
// structures the enumeration never offered — the holes that let it win.
type Comparison struct {
	// Name names the given schema (its file) in the reports.
	Name           string
	Advised, Given *Result
	Rows           []CompareRow
	// Fits: the given schema is within the recommendation's budget.
	Fits bool
	// Cheaper: the given schema fits and costs less (by more than a
	// relative 1e-9, below which costs are equal).
	Cheaper bool
	// Missed lists, when Cheaper, the given schema's indexes that are not
	// among the candidates the enumeration offered (Result.Enumerated), in
	// the given schema's order.
	Missed []*catalog.Index
}

// CompareRow is one statement of the mix: its cost per run and plan in
// each schema.
type CompareRow struct {
	Statement              *workload.Statement
	Weight                 float64
	Advised, Given         float64 // cost per run
	AdvisedPlan, GivenPlan string
}

// costTie is the relative difference below which two totals are equal.
const costTie = 1e-9

// Compare compares the given schema's costs (from Evaluate) with the
// recommendation's (from Advise), both for the statements of w in the
// same mix. Rows come in the workload's order.
func Compare(w *workload.Workload, advised, given *Result, name string) (*Comparison, error) {
	if advised.Mix != given.Mix {
		return nil, fmt.Errorf("compare: the recommendation is for mix %s, the given schema was costed for %s", advised.Mix, given.Mix)
	}
	c := &Comparison{Name: name, Advised: advised, Given: given}
	type costs struct {
		weight, cost float64
		plan         string
	}
	index := func(r *Result) map[*workload.Statement]costs {
		out := map[*workload.Statement]costs{}
		for _, q := range r.Queries {
			out[q.Statement] = costs{q.Weight, q.Plan.Cost, queryPlan(q.Plan)}
		}
		for _, wp := range r.Writes {
			out[wp.Statement] = costs{wp.Weight, wp.Cost, writePlan(wp)}
		}
		return out
	}
	a, g := index(advised), index(given)
	for _, st := range w.Statements {
		ac, aok := a[st]
		gc, gok := g[st]
		if !aok && !gok {
			continue
		}
		if aok != gok {
			return nil, fmt.Errorf("compare: statement %s is costed in one schema only", st.Tag)
		}
		c.Rows = append(c.Rows, CompareRow{Statement: st, Weight: ac.weight, Advised: ac.cost, Given: gc.cost, AdvisedPlan: ac.plan, GivenPlan: gc.plan})
	}
	budget := advised.Budget
	if !(budget > 0) {
		budget = math.Inf(1)
	}
	c.Fits = given.TotalSize <= budget
	c.Cheaper = c.Fits && given.TotalCost < advised.TotalCost*(1-costTie)
	if c.Cheaper {
		for _, x := range given.Indexes {
			if !advised.Enumerated(x) {
				c.Missed = append(c.Missed, x)
			}
		}
	}
	return c, nil
}

// queryPlan summarizes a query plan: the indexes its steps read, in order.
func queryPlan(p *plan.Query) string {
	names := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		names[i] = s.Index.Name
	}
	out := strings.Join(names, " → ")
	if p.Sort {
		out += ", sort"
	}
	return out
}

// writePlan summarizes a write plan: how many indexes it changes and how
// many support queries it runs.
func writePlan(wp *WritePlan) string {
	seen := map[*plan.Query]bool{}
	for _, u := range wp.Indexes {
		for _, p := range u.Support {
			seen[p] = true
		}
	}
	out := "changes " + plural(float64(len(wp.Indexes)), "structure")
	if n := len(seen); n > 0 {
		if n == 1 {
			out += ", 1 support query"
		} else {
			out += fmt.Sprintf(", %d support queries", n)
		}
	}
	return out
}

// percent writes the given total relative to the advised one.
func (c *Comparison) percent() string {
	a, g := c.Advised.TotalCost, c.Given.TotalCost
	switch {
	case math.Abs(g-a) <= costTie*math.Max(a, g):
		return " (the same)"
	case a == 0:
		return ""
	}
	return fmt.Sprintf(" (%+.3g%%)", 100*(g-a)/a)
}

// verdict says which schema is the cheaper, and what the enumeration
// missed when the given one is.
func (c *Comparison) verdict() []string {
	a, g := c.Advised.TotalCost, c.Given.TotalCost
	var out []string
	switch {
	case !c.Fits && g < a*(1-costTie):
		out = append(out, fmt.Sprintf("%s costs less, but takes %s, over the budget of %s.", c.Name, units.Format(c.Given.TotalSize), units.Format(c.Advised.Budget)))
	case math.Abs(g-a) <= costTie*math.Max(a, g):
		out = append(out, fmt.Sprintf("%s costs the same as the recommendation.", c.Name))
	case !c.Cheaper:
		out = append(out, fmt.Sprintf("%s costs %.3g%% more than the recommendation.", c.Name, 100*(g-a)/a))
	default:
		out = append(out, fmt.Sprintf("%s costs %.3g%% less than the recommendation, within the budget.", c.Name, 100*(a-g)/a))
		for _, x := range c.Missed {
			out = append(out, fmt.Sprintf("candidate missed by the enumeration (mode %s): %s %s", c.Advised.Mode, x.Name, x.Describe()))
		}
		if len(c.Missed) == 0 {
			if !c.Advised.Stats.Optimal {
				out = append(out, fmt.Sprintf("Every structure of %s is a candidate: the recommendation is not proven optimal (the search stopped with gap %.3g%%).", c.Name, 100*c.Advised.Stats.Gap))
			} else {
				out = append(out, fmt.Sprintf("Every structure of %s is a candidate, yet the advisor proved a costlier schema optimal: a bug in the advisor, please report it with the inputs.", c.Name))
			}
		}
	}
	return out
}

// WriteText writes the comparison as a table: a row per statement with
// each schema's cost per run and plan and the weighted difference, then
// the totals, the sizes and the verdict.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "-- kvschema advise --compare %s: mode %s, mix %s, budget %s, profile %s\n\n", c.Name, c.Advised.Mode, c.Advised.Mix, units.Format(c.Advised.Budget), c.Advised.Profile.Name)
	fmt.Fprintf(&b, "Statements: cost per run and plan in each schema, and how much more the given one costs (× weight)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  tag\tweight\tschema\tcost\tplan\tgiven − advised\n")
	for _, r := range c.Rows {
		diff := "0"
		if d := r.Weight * (r.Given - r.Advised); d != 0 {
			diff = fmt.Sprintf("%+.4g", d)
		}
		fmt.Fprintf(tw, "  %s\t%g\tadvised\t%.6g\t%s\t\n", r.Statement.Tag, r.Weight, r.Advised, r.AdvisedPlan)
		fmt.Fprintf(tw, "  \t\tgiven\t%.6g\t%s\t%s\n", r.Given, r.GivenPlan, diff)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nTotals\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  weighted cost\tadvised %.6g\tgiven %.6g%s\n", c.Advised.TotalCost, c.Given.TotalCost, c.percent())
	fmt.Fprintf(tw, "  size\tadvised %s\tgiven %s\t(budget %s)\n", units.Format(c.Advised.TotalSize), units.Format(c.Given.TotalSize), units.Format(c.Advised.Budget))
	fmt.Fprintf(tw, "  structures\tadvised %d\tgiven %d\n", len(c.Advised.Indexes), len(c.Given.Indexes))
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteByte('\n')
	for _, l := range c.verdict() {
		b.WriteString(l + "\n")
	}
	// tabwriter pads the cells before an empty last one.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

type jsonTotals struct {
	TotalCost  float64 `json:"total_cost"`
	TotalSize  float64 `json:"total_size"`
	Structures int     `json:"structures"`
}

type jsonCompareRow struct {
	Tag         string  `json:"tag"`
	Kind        string  `json:"kind"`
	Weight      float64 `json:"weight"`
	Advised     float64 `json:"advised_cost"`
	AdvisedPlan string  `json:"advised_plan"`
	Given       float64 `json:"given_cost"`
	GivenPlan   string  `json:"given_plan"`
}

type jsonComparison struct {
	Schema     string           `json:"schema"`
	Mode       string           `json:"mode"`
	Mix        string           `json:"mix"`
	Budget     *float64         `json:"budget"`
	Profile    string           `json:"profile"`
	Advised    jsonTotals       `json:"advised"`
	Given      jsonTotals       `json:"given"`
	Fits       bool             `json:"given_fits"`
	Cheaper    bool             `json:"given_cheaper"`
	Statements []jsonCompareRow `json:"statements"`
	Missed     []jsonIndex      `json:"missed_candidates"`
	Verdict    []string         `json:"verdict"`
}

// WriteJSON writes the comparison as JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	out := jsonComparison{Schema: c.Name, Mode: c.Advised.Mode.String(), Mix: c.Advised.Mix, Profile: c.Advised.Profile.Name,
		Advised: jsonTotals{c.Advised.TotalCost, c.Advised.TotalSize, len(c.Advised.Indexes)},
		Given:   jsonTotals{c.Given.TotalCost, c.Given.TotalSize, len(c.Given.Indexes)},
		Fits:    c.Fits, Cheaper: c.Cheaper, Statements: []jsonCompareRow{}, Missed: []jsonIndex{}, Verdict: c.verdict()}
	if b := c.Advised.Budget; b > 0 && b < 1e300 {
		out.Budget = &b
	}
	for _, r := range c.Rows {
		kind := "query"
		if r.Statement.Query == nil {
			kind = "write"
		}
		out.Statements = append(out.Statements, jsonCompareRow{Tag: r.Statement.Tag, Kind: kind, Weight: r.Weight,
			Advised: r.Advised, AdvisedPlan: r.AdvisedPlan, Given: r.Given, GivenPlan: r.GivenPlan})
	}
	for _, x := range c.Missed {
		out.Missed = append(out.Missed, indexJSON(x, c.Given.Schema))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteSVG draws the comparison: per statement, its weighted cost in
// each schema as two bars on one scale, then the totals.
func (c *Comparison) WriteSVG(w io.Writer) error {
	var d drawing
	d.title(fmt.Sprintf("kvschema advise --compare %s: weighted cost per statement (mix %s)", c.Name, c.Advised.Mix))
	d.subtitle(fmt.Sprintf("advised: total %.4g, %s    given: total %.4g, %s", c.Advised.TotalCost, units.Format(c.Advised.TotalSize), c.Given.TotalCost, units.Format(c.Given.TotalSize)))
	const (
		labelW = 90.0
		barW   = 420.0
		barH   = 13.0
	)
	colors := [2]string{"#4a78c2", "#e0923a"}
	top := d.y + margin
	for i, name := range []string{"advised", "given"} {
		x := margin + labelW + float64(i)*120
		fmt.Fprintf(&d.body, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, top, barH, barH, colors[i])
		d.text(x+barH+6, top+barH, name, false)
	}
	d.y = top + barH + 4
	most := 0.0
	for _, r := range c.Rows {
		most = math.Max(most, r.Weight*math.Max(r.Advised, r.Given))
	}
	if most == 0 {
		most = 1
	}
	for _, r := range c.Rows {
		top := d.y + 10
		d.text(margin, top+barH+4, "["+r.Statement.Tag+"]", false)
		for i, v := range []float64{r.Weight * r.Advised, r.Weight * r.Given} {
			y := top + float64(i)*(barH+2)
			wd := barW * v / most
			fmt.Fprintf(&d.body, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", margin+labelW, y, wd, barH, colors[i])
			d.text(margin+labelW+wd+6, y+barH, fmt.Sprintf("%.4g", v), false)
		}
		d.y = top + 2*barH + 2
	}
	d.width = math.Max(d.width, margin+labelW+barW+90+margin)
	d.y += 8
	for _, v := range c.verdict() {
		for _, l := range wrap(v, 110) {
			d.subtitle(l)
		}
	}
	return d.write(w)
}
