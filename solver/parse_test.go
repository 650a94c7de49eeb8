package solver

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Solution files as written by cbc 2.10.8 (trimmed), one per status.
var observedSolutions = map[string]struct {
	text   string
	status Status
	obj    float64
	cols   []solCol
}{
	"optimal": {`Optimal - objective value -7.00000000
      0 x0                     1                      -3
      1 x1                     1                      -4
      2 x2                     0                      -5
      3 x3                   0.5                       0
`, Optimal, -7, []solCol{{0, "x0", 1}, {1, "x1", 1}, {2, "x2", 0}, {3, "x3", 0.5}}},
	"optimal within gap": {`Optimal (within gap tolerance) - objective value -6672.00000000
      1 x1                     1                     -82
`, Optimal, -6672, []solCol{{1, "x1", 1}}},
	"infeasible": {`Infeasible - objective value 3.00000000
      0 x0                     1                       0
**       1 x1                     2                       0
`, Infeasible, 3, []solCol{{0, "x0", 1}, {1, "x1", 2}}},
	"integer infeasible": {`Integer infeasible - objective value 1.50000000
      2 x2                   1.5                       0
`, Infeasible, 1.5, []solCol{{2, "x2", 1.5}}},
	"unbounded": {`Unbounded - objective value 0.00000000
      0 x0                     0                      -1
`, Unbounded, 0, []solCol{{0, "x0", 0}}},
	"stopped with incumbent": {`Stopped on time - objective value -6672.00000000
      1 x1                     1                     -82
      7 x7                     1                     -70
`, Feasible, -6672, []solCol{{1, "x1", 1}, {7, "x7", 1}}},
	"stopped without incumbent": {`Stopped on time (no integer solution - continuous used) - objective value 0.00000000
      1 x1            0.27883913                       0
`, NoSolution, 0, []solCol{{1, "x1", 0.27883913}}},
}

func TestParseSolution(t *testing.T) {
	for name, tc := range observedSolutions {
		t.Run(name, func(t *testing.T) {
			f, err := parseSolution([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if f.status != tc.status || f.objective != tc.obj || !slices.Equal(f.cols, tc.cols) {
				t.Errorf("got %v %v %v, want %v %v %v", f.status, f.objective, f.cols, tc.status, tc.obj, tc.cols)
			}
		})
	}
}

func TestParseSolutionRejects(t *testing.T) {
	for _, text := range []string{
		"",
		"Solved somehow - objective value 1\n",
		"Optimal - objective value one\n",
		"Optimal - objective value 1\n0 x0 1\n",
		"Optimal - objective value 1\n0 x0 NaN 0\n",
		"Optimal - objective value 1\n-1 x0 1 0\n",
	} {
		if _, err := parseSolution([]byte(text)); err == nil {
			t.Errorf("parseSolution(%q) succeeded", text)
		}
	}
}

func TestDecodeSolution(t *testing.T) {
	m, _ := knapsack() // 6 binaries
	sol, err := decodeSolution(m, []byte("Optimal - objective value -32\n 1 x1 0.9999999 -13\n 4 x4 1.0000002 -15\n 5 x5 1 -4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 0, 0, 1, 1}; sol.Status != Optimal || !slices.Equal(sol.Values, want) || sol.Objective != -32 {
		t.Errorf("got %v %v %v, want optimal -32 at %v (omitted columns zero, values rounded)", sol.Status, sol.Objective, sol.Values, want)
	}
	for _, bad := range []string{"x6", "x01", "y1", "x", "x+1", "x-1"} {
		if _, err := decodeSolution(m, []byte("Optimal - objective value 0\n 0 "+bad+" 1 0\n")); err == nil {
			t.Errorf("column %q accepted", bad)
		}
	}
	if _, err := decodeSolution(m, []byte("Optimal - objective value 0\n 0 x1 1 0\n 1 x1 1 0\n")); err == nil {
		t.Error("duplicate column accepted")
	}
	sol, err = decodeSolution(m, []byte(observedSolutions["stopped without incumbent"].text))
	if err != nil || sol.Status != NoSolution || sol.Values != nil {
		t.Errorf("relaxation returned as a solution: %+v, %v", sol, err)
	}
}

const stoppedLog = `Welcome to the CBC MILP Solver 
Version: 2.10.8 
Build Date: May  9 2022 

command line - cbc model.lp timeMode elapsed sec 2 ratioGap 0 solve solu solution.txt (default strategy 1)
Result - Stopped on time limit

Objective value:                -6672.00000000
Lower bound:                    -6703.399
Gap:                            0.00
Enumerated nodes:               38113
`

func TestParseLog(t *testing.T) {
	l := parseLog([]byte(stoppedLog))
	if l.version != "2.10.8" || !l.hasBound || l.bound != -6703.399 || l.nodes != 38113 {
		t.Errorf("parseLog = %+v", l)
	}
	if got, want := l.gap(-6672, 0), (6703.399-6672)/6672; math.Abs(got-want) > 1e-12 {
		t.Errorf("gap = %v, want %v (from the bound, not the rounded Gap line)", got, want)
	}
	if l := parseLog([]byte(strings.ReplaceAll(stoppedLog, "Lower bound", "Lower"))); l.gap(-6672, 0) != 0 {
		t.Errorf("gap without bound = %v, want the Gap line's 0", l.gap(-6672, 0))
	}
	if l := parseLog(nil); l.version != "" || l.gap(1, 0) != 0 {
		t.Errorf("empty log: %+v", l)
	}
}

func TestHeadTail(t *testing.T) {
	var h headTail
	h.Write([]byte("Version: 2.10.8\n"))
	for range 10000 {
		h.Write([]byte(strings.Repeat("node log ", 10) + "\n"))
	}
	h.Write([]byte("Result - Stopped on time limit\n"))
	out := string(h.bytes())
	if !strings.HasPrefix(out, "Version: 2.10.8\n") || !strings.HasSuffix(out, "Result - Stopped on time limit\n") ||
		!strings.Contains(out, "[... output dropped ...]") || len(out) > headMax+tailMax+100 {
		t.Errorf("headTail kept %d bytes, head %q", len(out), out[:40])
	}
}

// FuzzParseSolution checks that the solution-file and log parsers never
// panic, and that decoded solutions are well formed.
func FuzzParseSolution(f *testing.F) {
	for _, tc := range observedSolutions {
		f.Add([]byte(tc.text))
	}
	f.Add([]byte(stoppedLog))
	f.Add([]byte("Optimal - objective value 1e400\n 3 x99999999999999999999 1 0\n"))
	m := goldenModel()
	f.Fuzz(func(t *testing.T, data []byte) {
		parseLog(data).gap(1, 0)
		sol, err := decodeSolution(m, data)
		if err != nil {
			return
		}
		hasValues := sol.Status == Optimal || sol.Status == Feasible
		if hasValues != (len(sol.Values) == m.NumVars()) {
			t.Fatalf("status %v with %d values", sol.Status, len(sol.Values))
		}
	})
}
