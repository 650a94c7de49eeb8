package solver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// goldenModel exercises every section of the LP format: all kinds of
// bounds, merged and cancelled terms, awkward names, and two rows left out:
// one empty, one its variables' bounds imply.
func goldenModel() *Model {
	m := NewModel()
	a := m.AddVar("use index (a, b)", Binary, -5, 5) // bounds ignored
	b := m.AddVar("x0", Binary, 0, 1)                // a human name that looks like a column name
	y := m.AddVar("count\nof rows", Integer, -2, 5)
	z := m.AddVar(`z "cost" \ 2`, Continuous, 0, math.Inf(1))
	w := m.AddVar("free", Continuous, math.Inf(-1), math.Inf(1))
	u := m.AddVar("capped", Continuous, math.Inf(-1), 3)
	f := m.AddVar("fixed", Continuous, 2.5, 2.5)
	g := m.AddVar("big", Integer, 0, 1e6)
	m.SetObjective([]Term{{a, -1}, {b, -1}, {z, 0.5}, {g, 1e-7}, {a, -1}})
	m.AddConstraint("cap", []Term{{a, 1}, {b, 2.5}, {y, -1}, {a, 2}}, LE, 4)
	m.AddConstraint("link", []Term{{z, 1}, {a, -1e6}, {w, 0}}, GE, -0.5)
	m.AddConstraint("balance", []Term{{w, 1}, {u, 1}, {f, -1}, {y, 3}, {y, -3}}, EQ, 0)
	m.AddConstraint("empty", nil, LE, 0)
	m.AddConstraint("big", []Term{{g, 1}}, LE, 123456789.125) // g <= 1e6 already
	return m
}

const goldenLP = `\ kvschema model: 8 variables, 5 constraints
\ x0 binary "use index (a, b)"
\ x1 binary "x0"
\ x2 integer "count\nof rows"
\ x3 continuous "z \"cost\" \\ 2"
\ x4 continuous "free"
\ x5 continuous "capped"
\ x6 continuous "fixed"
\ x7 integer "big"
\ c0 "cap"
\ c1 "link"
\ c2 "balance"
\ c3 "empty"
\ c4 "big"
Minimize
 obj: - 2 x0 - 1 x1 + 0 x2 + 0.5 x3 + 0 x4 + 0 x5 + 0 x6 + 1e-07 x7
Subject To
 c0: 3 x0 + 2.5 x1 - 1 x2 <= 4
 c1: - 1e+06 x0 + 1 x3 >= -0.5
 c2: 1 x4 + 1 x5 - 1 x6 = 0
Bounds
 -2 <= x2 <= 5
 x3 >= 0
 x4 free
 -inf <= x5 <= 3
 x6 = 2.5
 0 <= x7 <= 1e+06
Binaries
 x0 x1
Generals
 x2 x7
End
`

func TestWriteLPGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenModel().WriteLP(&buf); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != goldenLP {
		t.Errorf("WriteLP mismatch\n--- got\n%s--- want\n%s", got, goldenLP)
	}
	// Determinism: a second model built the same way gives the same bytes.
	var again bytes.Buffer
	if err := goldenModel().WriteLP(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("WriteLP is not deterministic")
	}
}

func TestWriteLPWrapsLongLines(t *testing.T) {
	m := NewModel()
	var terms []Term
	for range 2000 {
		v := m.AddVar(strings.Repeat("long name ", 100), Integer, -1e300, 1.2345678901234567e300)
		terms = append(terms, Term{v, -1.2345678901234567e-300})
	}
	m.SetObjective(terms)
	m.AddConstraint(strings.Repeat("n", 1000), terms, GE, -9.87654321e-300)
	var buf bytes.Buffer
	if err := m.WriteLP(&buf); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(buf.String(), "\n") {
		if len(line) >= 255 {
			t.Fatalf("line %d has %d chars: %.60q...", i+1, len(line), line)
		}
	}
}

func TestWriteLPNoVariables(t *testing.T) {
	if err := NewModel().WriteLP(io.Discard); err == nil {
		t.Error("WriteLP of a model without variables succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteLPReportsWriteErrors(t *testing.T) {
	if err := goldenModel().WriteLP(failWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteLP error = %v, want the writer's error", err)
	}
}

func TestCanonicalTerms(t *testing.T) {
	m := NewModel()
	a := m.AddVar("a", Binary, 0, 1)
	b := m.AddVar("b", Binary, 0, 1)
	c := m.AddVar("c", Binary, 0, 1)
	in := []Term{{c, 1}, {a, 2}, {b, 0}, {c, -1}, {a, 3}}
	m.AddConstraint("r", in, LE, 1)
	if got, want := m.cons[0].terms, []Term{{a, 5}}; !slices.Equal(got, want) {
		t.Errorf("terms = %v, want %v", got, want)
	}
	if in[0] != (Term{c, 1}) {
		t.Error("AddConstraint modified the caller's slice")
	}
	if m.NumVars() != 3 || m.NumConstraints() != 1 || m.VarName(b) != "b" {
		t.Error("NumVars/NumConstraints/VarName disagree with the model")
	}
}

func TestBinaryBoundsForced(t *testing.T) {
	m := NewModel()
	v := m.AddVar("v", Binary, -3, math.Inf(1))
	if got := m.vars[v]; got.lo != 0 || got.hi != 1 {
		t.Errorf("binary bounds = [%v, %v], want [0, 1]", got.lo, got.hi)
	}
}

func TestModelPanicsOnMisuse(t *testing.T) {
	for name, f := range map[string]func(m *Model){
		"lo > hi":       func(m *Model) { m.AddVar("v", Continuous, 2, 1) },
		"NaN bound":     func(m *Model) { m.AddVar("v", Integer, math.NaN(), 1) },
		"unknown kind":  func(m *Model) { m.AddVar("v", VarKind(9), 0, 1) },
		"unknown var":   func(m *Model) { m.AddConstraint("r", []Term{{Var(7), 1}}, LE, 1) },
		"NaN coef":      func(m *Model) { m.SetObjective([]Term{{Var(0), math.NaN()}}) },
		"infinite rhs":  func(m *Model) { m.AddConstraint("r", nil, LE, math.Inf(1)) },
		"unknown sense": func(m *Model) { m.AddConstraint("r", nil, Sense(5), 1) },
		"short values":  func(m *Model) { m.Evaluate(nil) },
		"unknown row":   func(m *Model) { m.SetRHS(0, 1) },
		"NaN rhs":       func(m *Model) { m.AddConstraint("r", nil, LE, 1); m.SetRHS(0, math.NaN()) },
	} {
		t.Run(name, func(t *testing.T) {
			m := NewModel()
			m.AddVar("x", Binary, 0, 1)
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f(m)
		})
	}
}

func TestEvaluate(t *testing.T) {
	m := NewModel()
	x := m.AddVar("x", Continuous, 0, math.Inf(1))
	y := m.AddVar("y", Continuous, 0, math.Inf(1))
	m.SetObjective([]Term{{x, 2}, {y, -1}})
	m.AddConstraint("le", []Term{{x, 1}, {y, 1}}, LE, 10) // 0
	m.AddConstraint("ge", []Term{{x, 1}}, GE, 3)          // 1
	m.AddConstraint("eq", []Term{{x, 1}, {y, -1}}, EQ, 0) // 2
	m.AddConstraint("empty ok", nil, GE, -1)              // 3
	m.AddConstraint("empty violated", nil, GE, 1)         // 4
	m.AddConstraint("big", []Term{{x, 1e6}}, LE, 4e6)     // 5
	obj, violated := m.Evaluate([]float64{4, 4.0000005})
	if want := 8 - 4.0000005; math.Abs(obj-want) > 1e-12 {
		t.Errorf("objective = %v, want %v", obj, want)
	}
	if want := []int{4}; !slices.Equal(violated, want) {
		t.Errorf("violated = %v, want %v (within tolerance)", violated, want)
	}
	_, violated = m.Evaluate([]float64{5, 6})
	if want := []int{0, 2, 4, 5}; !slices.Equal(violated, want) {
		t.Errorf("violated = %v, want %v", violated, want)
	}
}

// SetRHS changes what a constraint allows, in the LP file too.
func TestSetRHS(t *testing.T) {
	m := goldenModel()
	values := []float64{1, 0, 0, 1e6, 2.5, 0, 2.5, 0} // 3 on the cap row
	if _, violated := m.Evaluate(values); len(violated) > 0 {
		t.Fatalf("violated = %v before SetRHS", violated)
	}
	m.SetRHS(0, 2)
	if _, violated := m.Evaluate(values); !slices.Equal(violated, []int{0}) {
		t.Errorf("violated = %v, want [0] after lowering the cap to 2", violated)
	}
	var buf bytes.Buffer
	if err := m.WriteLP(&buf); err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(goldenLP, "- 1 x2 <= 4", "- 1 x2 <= 2", 1); buf.String() != want {
		t.Errorf("LP after SetRHS:\n%s", buf.String())
	}
}

// A fingerprint sees the problem and nothing else: names and the start do
// not change it; a kind, a bound, a coefficient, a sense, a right-hand
// side or one constraint more do.
func TestFingerprint(t *testing.T) {
	base := goldenModel().Fingerprint()
	renamed := goldenModel()
	for i := range renamed.vars {
		renamed.vars[i].name = fmt.Sprint("v", i)
	}
	for i := range renamed.cons {
		renamed.cons[i].name = fmt.Sprint("r", i)
	}
	renamed.SetStart([]float64{1, 1})
	if renamed.Fingerprint() != base {
		t.Error("names or the start change the fingerprint")
	}
	for name, change := range map[string]func(m *Model){
		"kind":        func(m *Model) { m.vars[2].kind = Continuous },
		"bound":       func(m *Model) { m.vars[5].hi = 4 },
		"objective":   func(m *Model) { m.SetObjective([]Term{{0, -2}, {1, -1}, {3, 0.5}}) },
		"coefficient": func(m *Model) { m.cons[0].terms[1].Coef = 2 },
		"sense":       func(m *Model) { m.cons[1].sense = LE },
		"rhs":         func(m *Model) { m.SetRHS(4, 1) },
		"row":         func(m *Model) { m.AddConstraint("more", nil, LE, 0) },
		"variable":    func(m *Model) { m.AddVar("more", Binary, 0, 1) },
	} {
		m := goldenModel()
		change(m)
		if m.Fingerprint() == base {
			t.Errorf("changing the %s keeps the fingerprint", name)
		}
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{
		Optimal: "optimal", Infeasible: "infeasible", Unbounded: "unbounded",
		Feasible: "feasible", NoSolution: "no solution", Status(42): "Status(42)",
	} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", s, got, want)
		}
	}
}

// knapsack: values 10 13 7 8 15 4, weights 5 6 3 4 7 2, capacity 15. By
// hand: the optimum is 32, e.g. {0,2,4}. Every item is worth at least twice
// its weight and the total is 57 for weight 27, so a subset within capacity
// leaves out weight >= 12 and value >= 24: at most 33. 33 would need the
// left-out items all at ratio exactly 2 (items 0, 3, 5), but they weigh only
// 11.
func knapsack() (*Model, float64) {
	m := NewModel()
	values := []float64{10, 13, 7, 8, 15, 4}
	weights := []float64{5, 6, 3, 4, 7, 2}
	var obj, cap []Term
	for i := range values {
		v := m.AddVar(fmt.Sprintf("item %d", i), Binary, 0, 1)
		obj = append(obj, Term{v, -values[i]})
		cap = append(cap, Term{v, weights[i]})
	}
	m.SetObjective(obj)
	m.AddConstraint("capacity", cap, LE, 15)
	return m, -32
}

// setCover: elements 1..6; S0={1,2,3} cost 3, S1={2,4} 2, S2={3,4,5} 3,
// S3={5,6} 2, S4={1,6} 2, S5={4,5,6} 3. By hand the unique optimum is
// S0+S5 at cost 6: two cost-2 sets cover at most 4 elements, the only three
// cost-2 sets miss 3, S0+S2 misses 6, S2+S5 misses 1, and every cost-5 pair
// misses an element.
func setCover() (m *Model, optimum float64, chosen []float64) {
	m = NewModel()
	sets := [][]int{{1, 2, 3}, {2, 4}, {3, 4, 5}, {5, 6}, {1, 6}, {4, 5, 6}}
	costs := []float64{3, 2, 3, 2, 2, 3}
	var obj []Term
	cover := map[int][]Term{}
	for i, s := range sets {
		v := m.AddVar(fmt.Sprintf("S%d", i), Binary, 0, 1)
		obj = append(obj, Term{v, costs[i]})
		for _, e := range s {
			cover[e] = append(cover[e], Term{v, 1})
		}
	}
	m.SetObjective(obj)
	for e := 1; e <= 6; e++ {
		m.AddConstraint(fmt.Sprintf("cover %d", e), cover[e], GE, 1)
	}
	return m, 6, []float64{1, 0, 0, 0, 0, 1}
}

func TestExhaustiveKnownOptima(t *testing.T) {
	ctx := context.Background()
	m, want := knapsack()
	sol, err := Exhaustive{}.Solve(ctx, m)
	if err != nil || sol.Status != Optimal || sol.Objective != want {
		t.Fatalf("knapsack: %+v, %v; want optimal %v", sol, err, want)
	}
	m, want, chosen := setCover()
	sol, err = Exhaustive{}.Solve(ctx, m)
	if err != nil || sol.Status != Optimal || sol.Objective != want || !slices.Equal(sol.Values, chosen) {
		t.Fatalf("set cover: %+v, %v; want optimal %v at %v", sol, err, want, chosen)
	}
	if sol.Solver != "exhaustive" {
		t.Errorf("Solver = %q", sol.Solver)
	}
}

func TestExhaustiveEdgeCases(t *testing.T) {
	ctx := context.Background()
	m := NewModel()
	sol, err := Exhaustive{}.Solve(ctx, m)
	if err != nil || sol.Status != Optimal || len(sol.Values) != 0 {
		t.Errorf("empty model: %+v, %v", sol, err)
	}
	m.AddConstraint("0 >= 1", nil, GE, 1)
	sol, err = Exhaustive{}.Solve(ctx, m)
	if err != nil || sol.Status != Infeasible || sol.Values != nil {
		t.Errorf("violated empty row: %+v, %v", sol, err)
	}

	m = NewModel()
	m.AddVar("i", Integer, 0, 1)
	if _, err := (Exhaustive{}).Solve(ctx, m); err == nil {
		t.Error("integer variable accepted")
	}
	m = NewModel()
	for range 25 {
		m.AddVar("b", Binary, 0, 1)
	}
	if _, err := (Exhaustive{}).Solve(ctx, m); err == nil {
		t.Error("25 variables accepted")
	}
	m = NewModel()
	for range 20 {
		m.AddVar("b", Binary, 0, 1)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (Exhaustive{}).Solve(cctx, m); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}
