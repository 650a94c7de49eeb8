package advisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// adviseBudgetBoth advises within budget decomposed and as one program and
// checks that they agree: both infeasible with the same least budget, or
// both valid within the budget at the same cost, with plans of the same
// statements in the same order. The decomposed result must be proven
// optimal. It returns the decomposed result (nil when infeasible).
func adviseBudgetBoth(t tb, m *catalog.Model, w *workload.Workload, mix string, budget float64, progress func(string)) *Result {
	t.Helper()
	opt := Options{Mix: mix, Budget: budget, Profile: cost.Cassandra, Mode: WithSI, Solver: &solver.CBC{}, Progress: progress}
	split, errSplit := Advise(context.Background(), m, w, opt)
	opt.oneProgram, opt.Progress = true, nil
	one, errOne := Advise(context.Background(), m, w, opt)
	var infSplit, infOne *InfeasibleError
	switch {
	case errors.As(errOne, &infOne):
		if !errors.As(errSplit, &infSplit) {
			t.Fatalf("one program: %v; decomposed: %v", errOne, errSplit)
		}
		if !close9(infSplit.MinBudget, infOne.MinBudget) {
			t.Fatalf("least budget: decomposed %v, one program %v", infSplit.MinBudget, infOne.MinBudget)
		}
		return nil
	case errOne != nil:
		t.Fatal(errOne)
	case errSplit != nil:
		t.Fatalf("decomposed: %v; one program: cost %v", errSplit, one.TotalCost)
	}
	checkResult(t, split)
	checkResult(t, one)
	if !split.Stats.Optimal || split.Stats.Gap != 0 {
		t.Fatalf("decomposed: optimal %v, gap %v", split.Stats.Optimal, split.Stats.Gap)
	}
	if !close9(split.TotalCost, one.TotalCost) {
		t.Fatalf("budget %v: decomposed cost %v (size %v), one program %v (size %v)", budget, split.TotalCost, split.TotalSize, one.TotalCost, one.TotalSize)
	}
	if len(split.Queries) != len(one.Queries) || len(split.Writes) != len(one.Writes) {
		t.Fatalf("decomposed: %d queries, %d writes; one program: %d, %d", len(split.Queries), len(split.Writes), len(one.Queries), len(one.Writes))
	}
	for i := range one.Queries {
		if split.Queries[i].Statement != one.Queries[i].Statement {
			t.Fatalf("query plan %d is of %s, one program's of %s", i, split.Queries[i].Statement.Tag, one.Queries[i].Statement.Tag)
		}
	}
	for i := range one.Writes {
		if split.Writes[i].Statement != one.Writes[i].Statement {
			t.Fatalf("write plan %d is of %s, one program's of %s", i, split.Writes[i].Statement.Tag, one.Writes[i].Statement.Tag)
		}
	}
	return split
}

// RUBiS twice under budgets around its optimum's size: the decomposition
// finds the one program's optimum, through every phase at 0.9; 0.6 is
// below the least size, which both report alike. The budgets run in
// parallel (cbc is one process per solve), each on its own model.
func TestBudgetRUBiSCopies(t *testing.T) {
	needCBC(t)
	m, w := rubisCopies(t, 2)
	free, err := advise(t, m, w, "bidding", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	for _, frac := range []float64{0.6, 0.9, 0.95} {
		t.Run(fmt.Sprint(frac), func(t *testing.T) {
			t.Parallel()
			m, w := rubisCopies(t, 2)
			var lines []string
			res := adviseBudgetBoth(t, m, w, "bidding", math.Floor(frac*free.TotalSize), func(s string) { lines = append(lines, s) })
			if frac == 0.6 {
				if res != nil {
					t.Fatal("0.6 of the optimum's size is below the least size RUBiS needs, twice")
				}
				return
			}
			tr := res.trace
			if tr == nil || res.Stats.Components != 2 || res.Stats.Reused == 0 {
				t.Fatalf("not decomposed under the budget: trace %v, %d components, %d programs reused", tr, res.Stats.Components, res.Stats.Reused)
			}
			if frac == 0.9 {
				// The Lagrangian leaves a gap that the windows close.
				if tr.lambda <= 0 || tr.window[0] == 0 || tr.window[1] == 0 {
					t.Fatalf("λ = %v, windows %v: the phases did not all run", tr.lambda, tr.window)
				}
				text := strings.Join(lines, "\n")
				for _, want := range []string{"budget: λ iteration 1:", "component 2/2: window", "budget: chose"} {
					if !strings.Contains(text, want) {
						t.Errorf("progress says nothing like %q:\n%s", want, text)
					}
				}
			}
		})
	}
}

// Two parts: A has three schemas on its frontier of sizes and costs, the
// middle one above the line between the others; B has one schema.
const nonHullModelA = `
DEFINE RELATION p ROWS 100 {
  id BIGINT KEY SIZE 8,
  a0 STRING SIZE 4 CARDINALITY 43
};
DEFINE RELATION c ROWS 2000 {
  id BIGINT KEY SIZE 8,
  b0 BIGINT SIZE 8 CARDINALITY 157,
  parent BIGINT SIZE 8 REFERENCES p REVERSE kids
};
`
const nonHullQueriesA = `
  GROUP g0 WEIGHTS (m 8) {
    SELECT p.a0 FROM p WHERE p.id = ? AND p.a0 > ? ORDER BY p.a0; -- q0
  }
  GROUP g1 WEIGHTS (m 4) {
    SELECT kids.b0 FROM p.kids WHERE kids.b0 = ? AND p.a0 < ?; -- q1
  }
  GROUP g2 WEIGHTS (m 3) {
    SELECT kids.b0 FROM p.kids WHERE p.a0 = ? AND kids.b0 >= ? ORDER BY kids.b0; -- q2
  }
`
const nonHullModelB = `
DEFINE RELATION r ROWS 10 { id BIGINT KEY SIZE 8, v STRING SIZE 8 };
`
const nonHullQueriesB = `
  GROUP g3 WEIGHTS (m 1) {
    SELECT r.v FROM r WHERE r.id = ?; -- q3
  }
`

func nonHullWorkload(groups string) string { return "DEFINE WORKLOAD w MIXES (m) {" + groups + "};\n" }

// The knapsack must take, for one part, a schema of its frontier that no
// Lagrangian solve gives (above the lower convex hull of its sizes and
// costs): part A's frontier has three schemas, the middle one costs more
// than the line between the others; part B has one schema; the budget
// leaves A exactly the middle one's size. The frontier of A is found
// independently, by the one program at decreasing budgets.
func TestBudgetNonHull(t *testing.T) {
	needCBC(t)
	mA, wA := parse(t, nonHullModelA, nonHullWorkload(nonHullQueriesA))
	front := frontier(t, mA, wA, "m")
	mid := nonHull(front)
	if mid < 0 {
		t.Fatalf("part A's frontier %v: want a schema above the hull", front)
	}
	mB, wB := parse(t, nonHullModelB, nonHullWorkload(nonHullQueriesB))
	if fb := frontier(t, mB, wB, "m"); len(fb) != 1 {
		t.Fatalf("part B's frontier %v: want one schema", fb)
	}
	onlyB, err := advise(t, mB, wB, "m", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	m, w := parse(t, nonHullModelA+nonHullModelB, nonHullWorkload(nonHullQueriesA+nonHullQueriesB))
	budget := front[mid].size + onlyB.TotalSize
	res := adviseBudgetBoth(t, m, w, "m", budget, nil)
	tr := res.trace
	if tr == nil || len(tr.chosen) != 2 {
		t.Fatalf("not decomposed under the budget: %+v", tr)
	}
	// Part B has one schema, so part A alone trades size for cost: it is
	// solved within the room B leaves (oneOpen), which finds the point no
	// Lagrangian solve would (the sweep's case is TestBudgetRUBiSCopies).
	if got := tr.chosen[0]; got.size != front[mid].size || !aboveHull(front, frontPoint{got.size, res.TotalCost - onlyB.TotalCost}) || !tr.single {
		t.Fatalf("part A's schema: size %v, cost %v, single %v; want the frontier's %v, solved alone", got.size, res.TotalCost-onlyB.TotalCost, tr.single, front[mid])
	}
	if !res.Stats.Smallest {
		t.Fatal("the size tie-break did not prove the schema smallest of its cost")
	}
}

// frontPoint is a schema's size and cost.
type frontPoint struct{ size, cost float64 }

// frontier is the Pareto frontier of sizes and costs of a problem, as the
// one program finds it at decreasing budgets: the optimum without a
// budget, then the optimum within a byte less than each schema found,
// until no schema fits.
func frontier(t testing.TB, m *catalog.Model, w *workload.Workload, mix string) []frontPoint {
	t.Helper()
	var out []frontPoint
	for budget := 0.0; ; {
		res, err := Advise(context.Background(), m, w, Options{Mix: mix, Budget: budget, Profile: cost.Cassandra, Solver: &solver.CBC{}, oneProgram: true})
		var inf *InfeasibleError
		if errors.As(err, &inf) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, frontPoint{res.TotalSize, res.TotalCost})
		budget = res.TotalSize - 1
	}
}

// nonHull is the index of the frontier schema furthest above the lower
// convex hull (relative to the hull's cost at its size), -1 if none is.
func nonHull(front []frontPoint) int {
	best, bestGap := -1, 0.0
	for i, p := range front {
		for _, a := range front {
			for _, b := range front {
				if a.size > p.size && p.size > b.size {
					line := a.cost + (b.cost-a.cost)*(a.size-p.size)/(a.size-b.size)
					if gap := p.cost/line - 1; gap > 1e-9 && gap > bestGap {
						best, bestGap = i, gap
					}
				}
			}
		}
	}
	return best
}

// aboveHull reports whether p costs more than some segment between two
// frontier schemas, one larger and one smaller, at p's size: then no
// λ makes it the least in cost + λ·size.
func aboveHull(front []frontPoint, p frontPoint) bool {
	for _, a := range front {
		for _, b := range front {
			if a.size > p.size && p.size > b.size {
				line := a.cost + (b.cost-a.cost)*(a.size-p.size)/(a.size-b.size)
				if p.cost > line*(1+1e-9) {
					return true
				}
			}
		}
	}
	return false
}

// Property: the knapsack finds the least-cost combination within the
// budget that trying every combination finds, also when it prunes by the
// reduced costs at some λ against an upper bound (the optimum, or more).
func TestKnapsackProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "components")
		d := &decomposition{}
		minSum, maxSum := 0.0, 0.0
		for range n {
			c := &component{}
			k := rapid.IntRange(1, 5).Draw(t, "points")
			lo, hi := math.Inf(1), 0.0
			for range k {
				p := point{size: float64(rapid.IntRange(1, 20).Draw(t, "size")), f: float64(rapid.IntRange(0, 50).Draw(t, "cost"))}
				c.points = append(c.points, p)
				lo, hi = math.Min(lo, p.size), math.Max(hi, p.size)
			}
			minSum += lo
			maxSum += hi
			d.comps = append(d.comps, c)
		}
		d.opt.Budget = float64(rapid.IntRange(int(minSum), int(maxSum)).Draw(t, "budget"))
		// Every combination.
		best := math.Inf(1)
		var try func(i int, s, f float64)
		try = func(i int, s, f float64) {
			if i == n {
				if s <= d.opt.Budget {
					best = math.Min(best, f)
				}
				return
			}
			for _, p := range d.comps[i].points {
				try(i+1, s+p.size, f+p.f)
			}
		}
		try(0, 0, 0)
		check := func(what string, got []point, cost float64, ok bool) {
			s, f := 0.0, 0.0
			for _, p := range got {
				s, f = s+p.size, f+p.f
			}
			if !ok || cost != best || f != best || s > d.opt.Budget {
				t.Fatalf("%s: cost %v (ok %v, size %v of %v), every combination: %v", what, cost, ok, s, d.opt.Budget, best)
			}
		}
		got, cost, ok := d.knapsack(0, math.Inf(1), math.Inf(1))
		check("no window", got, cost, ok)
		// Floors at λ: each component's least f + λ s; the dual bound L.
		lambda := float64(rapid.IntRange(0, 10).Draw(t, "lambda")) / 4
		lower := -lambda * d.opt.Budget
		for _, c := range d.comps {
			c.floor = math.Inf(1)
			for _, p := range c.points {
				c.floor = math.Min(c.floor, p.f+lambda*p.size)
			}
			lower += c.floor
		}
		upper := best + float64(rapid.IntRange(0, 5).Draw(t, "slack"))
		got, cost, ok = d.knapsack(lambda, upper-lower, upper)
		check(fmt.Sprintf("window at λ = %v, upper bound %v", lambda, upper), got, cost, ok)
	})
}

// Interrupted once the parts are solved without a budget, the
// decomposition stops and returns the best combination it has (here the
// least schemas), valid within the budget, not optimal, with its gap to
// the lower bound.
func TestBudgetInterrupted(t *testing.T) {
	needCBC(t)
	m, w := parse(t, nonHullModelA+nonHullModelB, nonHullWorkload(nonHullQueriesA+nonHullQueriesB))
	free, err := advise(t, m, w, "m", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var lines []string
	opt := Options{Mix: "m", Budget: free.TotalSize - 1, Profile: cost.Cassandra, Solver: &solver.CBC{Interrupt: stop},
		Progress: func(s string) {
			lines = append(lines, s)
			if strings.HasPrefix(s, "component 2/2: least size:") {
				close(stop)
			}
		}}
	res, err := Advise(context.Background(), m, w, opt)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	checkResult(t, res)
	if res.Stats.Optimal || res.Stats.Gap <= 0 || res.trace == nil || res.trace.iterations != 0 {
		t.Fatalf("optimal %v, gap %v, trace %+v:\n%s", res.Stats.Optimal, res.Stats.Gap, res.trace, strings.Join(lines, "\n"))
	}
}

// The size tie-break holds through the decomposition: tieModel (two
// schemas of least cost, of 1.181 MB and 521 kB) beside a copy of
// nonHullModelA, without a budget (each part's smallest of least cost)
// and under a budget that leaves the copy its frontier's middle schema
// (met by decomposition; the tie part keeps its smallest).
func TestSmallestDecomposed(t *testing.T) {
	needCBC(t)
	rename := func(s string) string {
		s = regexp.MustCompile(`\b(p|c)\b`).ReplaceAllString(s, "${1}a")
		return strings.NewReplacer("GROUP g", "GROUP ga", "-- q", "-- qa").Replace(s)
	}
	modelA, queriesA := rename(nonHullModelA), rename(nonHullQueriesA)
	mA, wA := parse(t, modelA, nonHullWorkload(queriesA))
	front := frontier(t, mA, wA, "m")
	mid := nonHull(front)
	if mid < 0 {
		t.Fatalf("the copy's frontier %v: want a schema above the hull", front)
	}
	mt, wt := parse(t, tieModel, nonHullWorkload(tieQueries))
	smaller := evaluateDDL(t, mt, wt, "m", tieSmaller)
	m, w := parse(t, tieModel+modelA, nonHullWorkload(tieQueries+queriesA))
	free, err := advise(t, m, w, "m", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, free)
	if free.Stats.Components != 2 || free.TotalSize != smaller.TotalSize+front[0].size || !close9(free.TotalCost, smaller.TotalCost+front[0].cost) || !free.Stats.Smallest {
		t.Fatalf("without a budget: %d components, size %v, cost %v, smallest %v; want 2, %v, %v, true",
			free.Stats.Components, free.TotalSize, free.TotalCost, free.Stats.Smallest, smaller.TotalSize+front[0].size, smaller.TotalCost+front[0].cost)
	}
	budget := smaller.TotalSize + front[mid].size
	res := adviseBudgetBoth(t, m, w, "m", budget, nil)
	if res.trace == nil || res.TotalSize != budget || !close9(res.TotalCost, smaller.TotalCost+front[mid].cost) || !res.Stats.Smallest {
		t.Fatalf("budget %v: trace %+v, size %v, cost %v, smallest %v; want %v, %v, true", budget, res.trace, res.TotalSize, res.TotalCost, res.Stats.Smallest, budget, smaller.TotalCost+front[mid].cost)
	}
}
