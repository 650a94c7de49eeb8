package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// requireCBC returns a CBC, skipping the test when the binary is missing,
// except on CI (CI=true), which installs cbc and must not skip silently.
func requireCBC(t *testing.T) *CBC {
	t.Helper()
	c := &CBC{}
	if err := c.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cbc is required on CI: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	return c
}

// tb is what the helpers need from *testing.T and *rapid.T (which does not
// implement testing.TB).
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

func solve(t tb, s Solver, m *Model) *Solution {
	t.Helper()
	sol, err := s.Solve(context.Background(), m)
	if err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
	return sol
}

// checkSolution asserts that sol's values are a feasible point of m with the
// reported objective and integral integer variables.
func checkSolution(t tb, m *Model, sol *Solution) {
	t.Helper()
	if len(sol.Values) != m.NumVars() {
		t.Fatalf("%d values for %d variables", len(sol.Values), m.NumVars())
	}
	obj, violated := m.Evaluate(sol.Values)
	if len(violated) > 0 {
		t.Errorf("solution violates constraints %v", violated)
	}
	if obj != sol.Objective {
		t.Errorf("Objective = %v, Evaluate gives %v", sol.Objective, obj)
	}
	for i, v := range m.vars {
		x := sol.Values[i]
		if x < v.lo-1e-6 || x > v.hi+1e-6 {
			t.Errorf("%s = %v outside [%v, %v]", v.name, x, v.lo, v.hi)
		}
		if v.kind != Continuous && x != math.Trunc(x) {
			t.Errorf("%s = %v is not integral", v.name, x)
		}
	}
}

// mkp is a multi-dimensional knapsack that CBC cannot prove optimal within
// half a second (mkp(300, 15) ends at a gap of ~0.5%), but where it finds incumbents at once (all-zero is feasible).
func mkp(n, rows int) *Model {
	r := rand.New(rand.NewPCG(1, 2))
	m := NewModel()
	var obj []Term
	for j := range n {
		v := m.AddVar(fmt.Sprint("item ", j), Binary, 0, 1)
		obj = append(obj, Term{v, -float64(10 + r.IntN(91))})
	}
	m.SetObjective(obj)
	for i := range rows {
		var terms []Term
		total := 0.0
		for j := range n {
			w := float64(5 + r.IntN(56))
			terms = append(terms, Term{Var(j), w})
			total += w
		}
		m.AddConstraint(fmt.Sprint("dim ", i), terms, LE, math.Floor(total/4))
	}
	return m
}

// marketSplit is a Cornuéjols–Dawande market-split instance: equality rows
// with random weights and half the row sum as rhs. CBC finds no solution (and
// cannot prove there is none) for many seconds.
func marketSplit(rows, n int) *Model {
	r := rand.New(rand.NewPCG(3, 4))
	m := NewModel()
	for j := range n {
		m.AddVar(fmt.Sprint("split ", j), Binary, 0, 1)
	}
	for i := range rows {
		var terms []Term
		total := 0.0
		for j := range n {
			w := float64(r.IntN(100))
			terms = append(terms, Term{Var(j), w})
			total += w
		}
		m.AddConstraint(fmt.Sprint("market ", i), terms, EQ, math.Floor(total/2))
	}
	return m
}

func TestCBCKnownOptima(t *testing.T) {
	c := requireCBC(t)
	m, want := knapsack()
	sol := solve(t, c, m)
	if sol.Status != Optimal || sol.Objective != want || sol.Gap != 0 {
		t.Errorf("knapsack: status %v objective %v gap %v, want optimal %v", sol.Status, sol.Objective, sol.Gap, want)
	}
	checkSolution(t, m, sol)
	if !strings.HasPrefix(sol.Solver, "cbc 2.") {
		t.Errorf("Solver = %q, want the cbc version", sol.Solver)
	}

	m, want, chosen := setCover()
	sol = solve(t, c, m)
	if sol.Status != Optimal || sol.Objective != want || !slices.Equal(sol.Values, chosen) {
		t.Errorf("set cover: %v objective %v at %v, want optimal %v at %v", sol.Status, sol.Objective, sol.Values, want, chosen)
	}
	checkSolution(t, m, sol)
}

func TestCBCGoldenModel(t *testing.T) {
	// The golden LP file must be readable by the real binary. Optimum by
	// hand: x0 = 1 would force x3 >= 999999.5 at cost 0.5 each, so x0 = 0,
	// x1 = 1 (cap: 2.5 - x2 <= 4 holds), x7 = 0: objective -1.
	c := requireCBC(t)
	m := goldenModel()
	sol := solve(t, c, m)
	if sol.Status != Optimal || sol.Objective != -1 {
		t.Fatalf("status %v objective %v, want optimal -1", sol.Status, sol.Objective)
	}
	checkSolution(t, m, sol)
	if sol.Values[0] != 0 || sol.Values[1] != 1 || sol.Values[6] != 2.5 || sol.Values[7] != 0 {
		t.Errorf("values %v", sol.Values)
	}
}

func TestCBCMixed(t *testing.T) {
	// min 2w - z + y - 2x + -u
	//   w - z >= -1      (w free: w = z - 1 at the optimum, so 2w - z = z - 2)
	//   y + x >= 1.5     (y integer: x = 1, y = 1 costs -1; x = 0, y = 2 costs 2)
	//   z in [-3.5, 2.25], u in [0, 2.25], y in [0, 10]
	// so z = -3.5, w = -4.5, x = 1, y = 1, u = 2.25: objective -5.5 - 1 - 2.25.
	c := requireCBC(t)
	m := NewModel()
	x := m.AddVar("x", Binary, 0, 1)
	y := m.AddVar("y", Integer, 0, 10)
	z := m.AddVar("z", Continuous, -3.5, 2.25)
	w := m.AddVar("w", Continuous, math.Inf(-1), math.Inf(1))
	u := m.AddVar("u", Continuous, 0, 2.25)
	m.SetObjective([]Term{{w, 2}, {z, -1}, {y, 1}, {x, -2}, {u, -1}})
	m.AddConstraint("w >= z - 1", []Term{{w, 1}, {z, -1}}, GE, -1)
	m.AddConstraint("y + x >= 1.5", []Term{{y, 1}, {x, 1}}, GE, 1.5)
	sol := solve(t, c, m)
	want := []float64{1, 1, -3.5, -4.5, 2.25}
	if sol.Status != Optimal || math.Abs(sol.Objective+8.75) > 1e-6 {
		t.Fatalf("status %v objective %v, want optimal -8.75", sol.Status, sol.Objective)
	}
	for i := range want {
		if math.Abs(sol.Values[i]-want[i]) > 1e-6 {
			t.Errorf("%s = %v, want %v", m.VarName(Var(i)), sol.Values[i], want[i])
		}
	}
	checkSolution(t, m, sol)
}

func TestCBCInfeasible(t *testing.T) {
	c := requireCBC(t)
	for name, build := range map[string]func(m *Model){
		"binary sum": func(m *Model) {
			a, b := m.AddVar("a", Binary, 0, 1), m.AddVar("b", Binary, 0, 1)
			m.AddConstraint("a + b >= 3", []Term{{a, 1}, {b, 1}}, GE, 3)
		},
		"integer parity": func(m *Model) { // LP-feasible, integer-infeasible
			var terms []Term
			for i := range 3 {
				terms = append(terms, Term{m.AddVar(fmt.Sprint("i", i), Integer, 0, 5), 2})
			}
			m.AddConstraint("2(a+b+c) = 3", terms, EQ, 3)
		},
		"empty violated row": func(m *Model) {
			a := m.AddVar("a", Binary, 0, 1)
			m.SetObjective([]Term{{a, 1}})
			m.AddConstraint("0 >= 1", nil, GE, 1)
		},
		"no variables": func(m *Model) { m.AddConstraint("0 = 2", nil, EQ, 2) },
	} {
		t.Run(name, func(t *testing.T) {
			m := NewModel()
			build(m)
			sol := solve(t, c, m)
			if sol.Status != Infeasible || sol.Values != nil {
				t.Errorf("status %v values %v, want infeasible without values", sol.Status, sol.Values)
			}
		})
	}
}

func TestCBCUnbounded(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	v := m.AddVar("v", Integer, math.Inf(-1), math.Inf(1))
	w := m.AddVar("w", Binary, 0, 1)
	m.SetObjective([]Term{{v, 1}, {w, 1}})
	m.AddConstraint("v <= w", []Term{{v, 1}, {w, -1}}, LE, 0)
	if sol := solve(t, c, m); sol.Status != Unbounded {
		t.Errorf("status %v, want unbounded", sol.Status)
	}
}

func TestCBCNoVariables(t *testing.T) {
	c := requireCBC(t)
	m := NewModel()
	m.AddConstraint("0 <= 1", nil, LE, 1)
	sol := solve(t, c, m)
	if sol.Status != Optimal || sol.Objective != 0 || len(sol.Values) != 0 {
		t.Errorf("%+v, want optimal 0", sol)
	}
}

func TestCBCTimeLimit(t *testing.T) {
	c := requireCBC(t)
	c.TimeLimit = time.Second / 2
	c.Threads = 2

	m := mkp(300, 15)
	sol := solve(t, c, m)
	if sol.Status != Feasible || !(sol.Gap > 0 && sol.Gap < 0.5) {
		t.Errorf("mkp: status %v gap %v, want feasible with a small positive gap", sol.Status, sol.Gap)
	}
	checkSolution(t, m, sol)

	sol = solve(t, c, marketSplit(6, 50))
	if sol.Status != NoSolution || sol.Values != nil || sol.Objective != 0 {
		t.Errorf("market split: status %v objective %v, want no solution", sol.Status, sol.Objective)
	}
	// cbc overruns its limit a little; a generous bound still catches a
	// limit that was not passed at all.
	if sol.Time > 10*time.Second {
		t.Errorf("time-limited solve took %v", sol.Time)
	}
}

// A node limit stops the search with the best solution found and its gap,
// deterministically; the other settings change the search, not the
// optimum; a Tuning is part of the fingerprint.
func TestCBCTuning(t *testing.T) {
	c := requireCBC(t)
	m := mkp(50, 5) // 100 nodes, about a second
	free := solve(t, c, m)
	if free.Status != Optimal || free.Nodes <= 5 {
		t.Fatalf("mkp: status %v after %d nodes; want optimal after more than 5", free.Status, free.Nodes)
	}
	before := m.Fingerprint()
	m.SetTuning(Tuning{NodeLimit: 5})
	if m.Fingerprint() == before {
		t.Error("a node limit leaves the fingerprint as it was")
	}
	for range 2 {
		sol := solve(t, c, m)
		if sol.Status != Feasible || sol.Nodes > 5 || !(sol.Gap > 0) {
			t.Errorf("5 nodes: status %v after %d nodes, gap %v; want feasible after at most 5, with a gap", sol.Status, sol.Nodes, sol.Gap)
		}
		checkSolution(t, m, sol)
	}
	m.SetTuning(Tuning{NoHeuristics: true, NoGomory: true})
	if sol := solve(t, c, m); sol.Status != Optimal || math.Abs(sol.Objective-free.Objective) > 1e-9*math.Abs(free.Objective) {
		t.Errorf("without heuristics and Gomory cuts: status %v objective %v; want optimal %v", sol.Status, sol.Objective, free.Objective)
	}
	m.SetTuning(Tuning{NoZeroHalf: true})
	if m.Fingerprint() == before {
		t.Error("skipping zero-half cuts leaves the fingerprint as it was")
	}
	if sol := solve(t, c, m); sol.Status != Optimal || math.Abs(sol.Objective-free.Objective) > 1e-9*math.Abs(free.Objective) {
		t.Errorf("without zero-half cuts: status %v objective %v; want optimal %v", sol.Status, sol.Objective, free.Objective)
	}
	if got := strings.Join(c.args("", Tuning{NodeLimit: 7, NoHeuristics: true, NoGomory: true}), " "); got != "model.lp preprocess off maxNodes 7 heuristicsOnOff off gomoryCuts off ratioGap 0 solve solu solution.txt" {
		t.Errorf("args: %s", got)
	}
}

func TestCBCRelGap(t *testing.T) {
	c := requireCBC(t)
	c.RelGap = 0.05
	m := mkp(300, 15)
	sol := solve(t, c, m)
	if sol.Status != Optimal || sol.Gap > 0.05 {
		t.Errorf("status %v gap %v, want optimal within 5%%", sol.Status, sol.Gap)
	}
	checkSolution(t, m, sol)
}

func TestCBCContext(t *testing.T) {
	c := requireCBC(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := c.Solve(ctx, marketSplit(6, 50)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancelled Solve took %v", d)
	}

	// Cancelled while cbc runs (this instance would run for minutes).
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := c.Solve(ctx, marketSplit(6, 50)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline during solve: err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Solve returned %v after its deadline", d)
	}
}

func TestCBCKeepFiles(t *testing.T) {
	c := requireCBC(t)
	c.KeepFiles = filepath.Join(t.TempDir(), "debug")
	m, _ := knapsack()
	solve(t, c, m)
	for _, f := range []string{cbcModelFile, cbcSolFile, cbcLogFile} {
		if _, err := os.Stat(filepath.Join(c.KeepFiles, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestCBCMissingBinary(t *testing.T) {
	c := &CBC{Path: filepath.Join(t.TempDir(), "no-such-cbc")}
	for _, err := range []error{c.Available(), func() error { _, err := c.Solve(context.Background(), NewModel()); return err }()} {
		if err == nil || !strings.Contains(err.Error(), "apt-get install coinor-cbc") {
			t.Errorf("err = %v, want an install hint", err)
		}
	}
}

func TestCBCBadBinary(t *testing.T) {
	// A program that exits 0 without writing a solution, like cbc does
	// when it cannot read the model.
	path, err := exec.LookPath("true")
	if err != nil {
		t.Skip("skipping: no true(1) binary")
	}
	c := &CBC{Path: path}
	m, _ := knapsack()
	if _, err := c.Solve(context.Background(), m); err == nil || !strings.Contains(err.Error(), "no solution") {
		t.Errorf("err = %v, want a missing-solution error", err)
	}
	if err := c.Available(); err == nil {
		t.Error("Available accepted /bin/true")
	}
}

// TestCBCMatchesExhaustive checks CBC against the exhaustive oracle on random
// small pure-binary models.
func TestCBCMatchesExhaustive(t *testing.T) {
	c := requireCBC(t)
	rapid.Check(t, func(t *rapid.T) {
		m := randomModel(t)
		want := solve(t, Exhaustive{}, m)
		got := solve(t, c, m)
		if got.Status != want.Status {
			t.Fatalf("cbc status %v, exhaustive %v", got.Status, want.Status)
		}
		if got.Status != Optimal {
			return
		}
		if math.Abs(got.Objective-want.Objective) > 1e-6 {
			t.Fatalf("cbc objective %v, exhaustive %v", got.Objective, want.Objective)
		}
		checkSolution(t, m, got)
	})
}

// randomModel is a small pure-binary model: up to 12 variables, 8 rows of
// small integer coefficients, half of them satisfied by a planted point.
func randomModel(t *rapid.T) *Model {
	m := NewModel()
	n := rapid.IntRange(1, 12).Draw(t, "vars")
	for i := range n {
		m.AddVar(fmt.Sprint("b", i), Binary, 0, 1)
	}
	coef := rapid.IntRange(-4, 4)
	expr := func(label string) []Term {
		// Up to n+2 terms, so duplicates (merged) and zeros (dropped) occur.
		k := rapid.IntRange(0, n+2).Draw(t, label+" len")
		terms := make([]Term, k)
		for j := range terms {
			terms[j] = Term{
				Var:  Var(rapid.IntRange(0, n-1).Draw(t, label+" var")),
				Coef: float64(coef.Draw(t, label+" coef")),
			}
		}
		return terms
	}
	m.SetObjective(expr("obj"))
	// Random right-hand sides make most models infeasible, so half the
	// models get rows that a planted point satisfies (plus slack).
	var planted []float64
	if rapid.Bool().Draw(t, "planted") {
		planted = rapid.SliceOfN(rapid.SampledFrom([]float64{0, 1}), n, n).Draw(t, "point")
	}
	rows := rapid.IntRange(0, 8).Draw(t, "rows")
	for i := range rows {
		label := fmt.Sprint("row ", i)
		sense := rapid.SampledFrom([]Sense{LE, GE, EQ}).Draw(t, label+" sense")
		terms := expr(label)
		rhs := float64(rapid.IntRange(-6, 6).Draw(t, label+" rhs"))
		if planted != nil {
			slack := float64(rapid.IntRange(0, 3).Draw(t, label+" slack"))
			rhs = 0
			for _, tm := range terms {
				rhs += tm.Coef * planted[tm.Var]
			}
			switch sense {
			case LE:
				rhs += slack
			case GE:
				rhs -= slack
			}
		}
		m.AddConstraint(label, terms, sense, rhs)
	}
	return m
}

// TestReporterLines: cbc's own log lines (captured from a RUBiS run) become
// reports; incumbents that do not improve and other lines do not.
func TestReporterLines(t *testing.T) {
	log := `Cbc0038I Pass   1: (0.53 seconds) suminf.   13.33397 (63) obj. 12.7561 iterations 961
Cbc0012I Integer solution of 16.098806 found by Reduced search after 0 iterations and 0 nodes (0.46 seconds)
Cbc0012I Integer solution of 10.536427 found by DiveCoefficient after 730 iterations and 0 nodes (1.15 seconds)
Cbc0010I After 0 nodes, 1 on tree, 10.536427 best solution, best possible 10.400596 (1.31 seconds)
Cbc0004I Integer solution of 10.532808 found after 2598 iterations and 24 nodes (3.26 seconds)
Cbc0012I Integer solution of 10.532808 found by Previous solution after 0 iterations and 0 nodes (3.76 seconds)
Cbc0016I Integer solution of 10.460562 found by strong branching after 1971 iterations and 23 nodes (5.93 seconds)
Cbc0010I After 100 nodes, 3 on tree, 1e+50 best solution, best possible 9.5 (6.00 seconds)
Cbc0001I Search completed - best objective 10.46056201622812, took 8767 iterations and 148 nodes (7.41 seconds)
`
	var got []string
	r := &reporter{report: func(s string) { got = append(got, s) }}
	// Written in odd pieces, as a pipe delivers it.
	for i := 0; i < len(log); i += 37 {
		r.Write([]byte(log[i:min(i+37, len(log))]))
	}
	want := []string{
		"0 nodes, best 16.0988, 0.46s",
		"0 nodes, best 10.5364, 1.15s",
		"0 nodes, best 10.5364, bound 10.4006 (gap 1.29%), 1.31s",
		"24 nodes, best 10.5328, bound 10.4006 (gap 1.26%), 3.26s",
		"23 nodes, best 10.4606, bound 10.4006 (gap 0.57%), 5.93s",
		"100 nodes, best 10.4606, bound 9.5 (gap 9.18%), 6.00s",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The reports of a model with fixed variables add the fixed part of the
// objective, which the LP file leaves out, to cbc's numbers.
func TestReporterOffset(t *testing.T) {
	var got []string
	r := &reporter{report: func(s string) { got = append(got, s) }, offset: 100}
	r.Write([]byte("Cbc0012I Integer solution of 10.5 found by DiveCoefficient after 730 iterations and 0 nodes (1.15 seconds)\n" +
		"Cbc0010I After 0 nodes, 1 on tree, 10.5 best solution, best possible 10 (1.31 seconds)\n"))
	want := []string{"0 nodes, best 110.5, 1.15s", "0 nodes, best 110.5, bound 110 (gap 0.45%), 1.31s"}
	if !slices.Equal(got, want) {
		t.Errorf("reports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCBCProgress: a search long enough to branch reports its incumbents
// while it runs, and the answer is the same as without reports.
func TestCBCProgress(t *testing.T) {
	c := requireCBC(t)
	m := mkp(300, 15)
	c.RelGap = 0.05
	var reports []string
	c.Progress = func(s string) { reports = append(reports, s) }
	sol := solve(t, c, m)
	if sol.Status != Optimal {
		t.Fatalf("status %v", sol.Status)
	}
	checkSolution(t, m, sol)
	if len(reports) == 0 {
		t.Fatal("no progress reports")
	}
	for _, r := range reports {
		if !strings.Contains(r, " nodes, best ") {
			t.Errorf("report %q", r)
		}
	}
}

// TestCBCInterruptedBeforeSolve: an Interrupt that fired before the solve
// gives ErrInterrupted without running cbc (the end-to-end case, Ctrl-C
// during a search keeping its incumbent, is cmd/kvschema's
// TestAdviseCtrlC).
func TestCBCInterruptedBeforeSolve(t *testing.T) {
	c := requireCBC(t)
	stop := make(chan struct{})
	close(stop)
	c.Interrupt = stop
	m := NewModel()
	a := m.AddVar("a", Binary, 0, 1)
	m.SetObjective([]Term{{a, 1}})
	if _, err := c.Solve(context.Background(), m); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Solve after Interrupt: %v, want ErrInterrupted", err)
	}
}

// crashingCBC writes a cbc wrapper that aborts (as cbc does on a failed
// internal assertion) when its command line contains any of crashOn, and
// runs the real cbc otherwise; every command line is logged to the
// returned file.
func crashingCBC(t *testing.T, crashOn ...string) (*CBC, string) {
	t.Helper()
	real := requireCBC(t)
	path, err := real.binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n"
	for _, s := range crashOn {
		script += "case \"$*\" in *'" + s + "'*) kill -ABRT $$ ;; esac\n"
	}
	script += "exec " + path + " \"$@\"\n"
	bin := filepath.Join(dir, "cbc")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &CBC{Path: bin}, log
}

// A cbc that crashes under the model's search settings is run again with
// its own, then with Dantzig pricing; the answer is the model's optimum.
// A cbc that crashes under every setting is reported, after three runs.
func TestCBCCrashRetried(t *testing.T) {
	m := mkp(12, 3)
	free := solve(t, requireCBC(t), m)
	m.SetTuning(Tuning{NoZeroHalf: true, Increment: 1e-9})
	for _, tc := range []struct {
		crashOn []string
		runs    int
	}{
		{nil, 1},
		{[]string{"zeroHalfCuts off"}, 2},
		{[]string{"zeroHalfCuts off", "increment 1e-09 ratioGap"}, 3},
	} {
		c, log := crashingCBC(t, tc.crashOn...)
		sol, err := c.Solve(context.Background(), m)
		if err != nil {
			calls, _ := os.ReadFile(log)
			t.Fatalf("crashing on %q: %v\n%s", tc.crashOn, err, calls)
		}
		if sol.Status != Optimal || sol.Objective != free.Objective {
			t.Errorf("crashing on %q: status %v objective %v; want optimal %v", tc.crashOn, sol.Status, sol.Objective, free.Objective)
		}
		calls, _ := os.ReadFile(log)
		lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
		if len(lines) != tc.runs {
			t.Errorf("crashing on %q: %d runs, want %d:\n%s", tc.crashOn, len(lines), tc.runs, calls)
		}
		if last := lines[len(lines)-1]; !strings.Contains(last, "increment 1e-09") {
			t.Errorf("crashing on %q: the last run drops the increment: %s", tc.crashOn, last)
		}
	}
	c, log := crashingCBC(t, "solve")
	_, err := c.Solve(context.Background(), m)
	calls, _ := os.ReadFile(log)
	if err == nil || !strings.Contains(err.Error(), "signal: aborted") || strings.Count(string(calls), "\n") != 3 {
		t.Errorf("crashing always: error %v after runs\n%s", err, calls)
	}
}

// cbc 2.10.8's preprocessing turns this model into one without rows or
// columns and answers "optimal" with objective 2 (x1 = x4 = 1); x0 = x2 =
// 1 costs 1. The solver never runs it (CBC.args). Found by
// TestCBCFixedMatchesExhaustive (seed 12265355868224512239).
func TestCBCEquationInstance(t *testing.T) {
	m := NewModel()
	x := make([]Var, 5)
	for i := range x {
		x[i] = m.AddVar(fmt.Sprint("x", i), Binary, 0, 1)
	}
	m.SetObjective([]Term{{x[0], 1}, {x[1], 2}})
	m.AddConstraint("r", []Term{{x[0], 3}, {x[1], 1}, {x[2], -1}, {x[3], -1}, {x[4], 1}}, EQ, 1)
	m.Fix(x[3], 1)
	sol := solve(t, requireCBC(t), m)
	if sol.Status != Optimal || sol.Objective != 1 {
		t.Fatalf("status %v objective %v, want optimal 1", sol.Status, sol.Objective)
	}
	checkSolution(t, m, sol)
}

// cbc 2.10.8 without preprocessing finds -2 x = -1 infeasible for a binary
// x from its bounds, then dies of a segmentation fault writing the
// solution: the model is infeasible, not the solver broken. Found by
// TestCBCMatchesExhaustive. (Without stdbuf the log, and so the proof,
// dies with cbc's buffer.)
func TestCBCBoundsInfeasible(t *testing.T) {
	if _, err := exec.LookPath("stdbuf"); err != nil {
		t.Skip("no stdbuf")
	}
	m := NewModel()
	x := m.AddVar("x", Binary, 0, 1)
	m.AddVar("y", Binary, 0, 1)
	m.AddConstraint("half", []Term{{x, -2}}, EQ, -1)
	if sol := solve(t, requireCBC(t), m); sol.Status != Infeasible {
		t.Fatalf("status %v, want infeasible", sol.Status)
	}
}

// cbc 2.10.8 without preprocessing aborts (an assertion in
// OsiClpSolverInterface::crunch) on a model with a row 0 x0 <= 0 beside an
// equation; the LP file leaves out rows that always hold. Found by
// TestCBCFixedMatchesExhaustive.
func TestCBCEmptyRow(t *testing.T) {
	m := NewModel()
	x := m.AddVar("x", Binary, 0, 1)
	y := m.AddVar("y", Binary, 0, 1)
	m.SetObjective([]Term{{x, 1}})
	m.AddConstraint("empty", nil, LE, 0)
	m.AddConstraint("same", []Term{{x, 3}, {y, -3}}, EQ, 0)
	sol := solve(t, requireCBC(t), m)
	if sol.Status != Optimal || sol.Objective != 0 {
		t.Fatalf("status %v objective %v, want optimal 0", sol.Status, sol.Objective)
	}
	checkSolution(t, m, sol)
}
