package advisor

import (
	"math"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/solver"
)

// checkStart asserts that the start solution satisfies every constraint of
// the program and keeps the budget, and returns its cost.
func checkStart(t tb, pr *ilp, budget float64) (cost float64, ok bool) {
	v := pr.start(budget)
	if v == nil {
		return 0, false
	}
	pr.m.SetObjective(pr.cost)
	obj, violated := pr.m.Evaluate(v)
	for _, c := range violated {
		t.Fatalf("start violates %s", pr.m.ConstraintName(c))
	}
	size := 0.0
	for _, x := range pr.indexes {
		if v[pr.x[x]] > 0.5 {
			size += x.Size
		}
	}
	if size > budget {
		t.Fatalf("start schema has %v bytes, budget %v", size, budget)
	}
	return obj, true
}

// Property: the start solution is a feasible point of the program, and no
// cheaper than the optimum an exhaustive search finds.
func TestStartFeasibleProperty(t *testing.T) {
	found := 0
	defer func() { t.Logf("%d instances had a start solution", found) }()
	rapid.Check(t, func(t *rapid.T) {
		_, _, m, w, pb := smallInstance(t)
		opt := Options{Mix: "m", Profile: cost.Cassandra, Mode: WithSI}
		budget := math.Inf(1)
		if frac := rapid.SampledFrom([]float64{0, 0.3, 0.6, 0.9}).Draw(t, "budget"); frac > 0 {
			_, minSize := bestBySearch(t, m, w, pb, math.Inf(1))
			budget = math.Floor(minSize / frac)
		}
		opt.Budget = budget
		pr := buildILP(opt, pb.queries, pb.qdags, pb.writes, pb.upkeeps, pb.supports, pb.pool)
		got, ok := checkStart(t, pr, budget)
		if !ok {
			return
		}
		found++
		best, _ := bestBySearch(t, m, w, pb, budget)
		if got < best*(1-1e-9) {
			t.Fatalf("start costs %v, below the optimum %v", got, best)
		}
	})
}

// On RUBiS the start fits the paper's budget in every mode and workload.
func TestStartRUBiS(t *testing.T) {
	for _, wf := range []string{"workload.kvs", "workload_secondary.kvs"} {
		for _, mode := range []Mode{WithSI, NoSI, Normalized} {
			m, _, w, err := rubis.Parse(wf)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Mix: "bidding", Budget: 161e6, Profile: cost.Cassandra, Mode: mode}
			pb, _, err := prepare(m, w, opt)
			if err != nil {
				t.Fatal(err)
			}
			pr := buildILP(opt, pb.queries, pb.qdags, pb.writes, pb.upkeeps, pb.supports, pb.pool)
			c, ok := checkStart(t, pr, opt.Budget)
			if !ok {
				t.Fatalf("%s %v: no start solution within 161MB", wf, mode)
			}
			t.Logf("%s %v: start cost %.4f", wf, mode, c)
		}
	}
}

// The program is built the same way every time (Go randomizes map order):
// CBC's path, and so its time and which of several equal-cost schemas it
// returns, depend on the order of variables and constraints.
func TestProgramDeterministic(t *testing.T) {
	var first []string
	for run := 0; run < 3; run++ {
		m, _, w, err := rubis.Parse("workload_secondary.kvs")
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Mix: "bidding", Budget: 161e6, Profile: cost.Cassandra}
		pb, _, err := prepare(m, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		pr := buildILP(opt, pb.queries, pb.qdags, pb.writes, pb.upkeeps, pb.supports, pb.pool)
		var got []string
		for v := 0; v < pr.m.NumVars(); v++ {
			got = append(got, pr.m.VarName(solver.Var(v)))
		}
		for c := 0; c < pr.m.NumConstraints(); c++ {
			got = append(got, pr.m.ConstraintName(c))
		}
		for _, v := range pr.start(opt.Budget) {
			got = append(got, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if run == 0 {
			first = got
			continue
		}
		if len(got) != len(first) {
			t.Fatalf("run %d: %d names and values, first run %d", run, len(got), len(first))
		}
		for i := range got {
			if got[i] != first[i] {
				t.Fatalf("run %d differs at %d: %q, first run %q", run, i, got[i], first[i])
			}
		}
	}
}

// Property: the local search's total is the program's objective at the
// values it hands the solver (a shared read charged once, existence
// checks included), after its construction and after each move, so that
// of its schemas it keeps the cheapest as the program prices them.
func TestLocalSearchTotalProperty(t *testing.T) {
	local := engineProfile(false)
	moves := 0
	defer func() { t.Logf("%d moves checked", moves) }()
	rapid.Check(t, func(t *rapid.T) {
		ms, ws := genInstance(t)
		m, w := parse(t, ms, ws)
		prof := rapid.SampledFrom([]cost.Profile{cost.Cassandra, local}).Draw(t, "profile")
		opt := Options{Mix: "m", Budget: math.Inf(1), Profile: prof, Mode: WithSI}
		pb, _, err := prepare(m, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		pr := buildILP(opt, pb.queries, pb.qdags, pb.writes, pb.upkeeps, pb.supports, pb.pool)
		ls := newLocalSearch(pr, math.Inf(1))
		if !ls.construct(0) {
			return
		}
		for n := 0; ; n++ {
			if got, want := ls.total(), termsOf(pr.cost, ls.values()); math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("%s: the local search prices its schema at %v, the program at %v\n%s\n%s", prof.Name, got, want, ms, ws)
			}
			if n == 3 || !ls.step(false) {
				break
			}
			moves++
		}
	})
}
