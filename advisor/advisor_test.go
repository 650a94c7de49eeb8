package advisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// tb is what both *testing.T and *rapid.T provide.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// needCBC skips a test when cbc is missing, except in CI, which installs it.
func needCBC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("cbc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cbc is not installed (CI installs coinor-cbc)")
		}
		t.Skip("cbc is not installed: apt-get install coinor-cbc")
	}
}

func parse(t tb, modelSrc, workloadSrc string) (*catalog.Model, *workload.Workload) {
	t.Helper()
	ss, err := lang.ParseScript("model.kvs", []byte(modelSrc))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(m, "workload.kvs", []byte(workloadSrc))
	if err != nil {
		t.Fatal(err)
	}
	return m, w
}

func advise(t tb, m *catalog.Model, w *workload.Workload, mix string, budget float64, mode Mode) (*Result, error) {
	t.Helper()
	return Advise(context.Background(), m, w, Options{Mix: mix, Budget: budget, Profile: cost.Cassandra, Mode: mode, Solver: &solver.CBC{}})
}

func readFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func describe(res *Result) []string {
	var out []string
	for _, x := range res.Indexes {
		out = append(out, x.Describe())
	}
	return out
}

// Seed 000 §3.7 (Source code 2–4): without a budget, a CF per query, one
// lookup each; with room for one copy of the users, the CF by id and an SI
// on firstname, the second query an SI lookup then a CF lookup.
func TestSeed37Golden(t *testing.T) {
	needCBC(t)
	m, w := parse(t, readFile(t, "testdata/seed37_model.kvs"), readFile(t, "testdata/seed37_workload.kvs"))

	res, err := advise(t, m, w, "default", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CF([user.firstname] [user.id] → [user.lastname, user.password])",
		"CF([user.id] [user.firstname] → [user.lastname, user.password])",
	}
	if got := describe(res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("unlimited budget: schema\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, q := range res.Queries {
		if len(q.Plan.Steps) != 1 || q.Plan.Steps[0].Index.Kind != catalog.CF {
			t.Errorf("unlimited budget: %s: want one CF lookup, got\n%s", q.Statement.Tag, q.Plan.Describe(""))
		}
	}

	// One copy of the users is 4.8MB; the SI adds 1.8MB; two copies 9.6MB.
	res, err = advise(t, m, w, "default", 7e6, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"CF([user.id] [user.firstname] → [user.lastname, user.password])",
		"SI([user.firstname] → [user.id])",
	}
	if got := describe(res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("7MB: schema\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, q := range res.Queries {
		var kinds []string
		for _, s := range q.Plan.Steps {
			kinds = append(kinds, s.Index.Kind.String())
		}
		want := map[string]string{"by_id": "CF", "by_firstname": "SI CF"}[q.Statement.Tag]
		if got := strings.Join(kinds, " "); got != want {
			t.Errorf("7MB: %s: steps %s, want %s", q.Statement.Tag, got, want)
		}
	}
	if si := res.Indexes[1]; res.Schema.Base[si] != res.Indexes[0] {
		t.Errorf("the SI's base is %v, want the CF by id", res.Schema.Base[si])
	}

	// Without SIs, a CF by firstname holding the ids alone does the SI's
	// work in the same room (the ids, then the CF by id; before issue 16's
	// wide enumeration, a CF of one entity always held its fields, and
	// CF-only mode needed two copies, 9.6MB), at a higher cost: the SI's
	// read is the cheaper. Below 6.6MB no schema fits: the error says what
	// does.
	cf, err := advise(t, m, w, "default", 7e6, NoSI)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"CF([user.firstname] [user.id] → [])",
		"CF([user.id] [user.firstname] → [user.lastname, user.password])",
	}
	if got := describe(cf); strings.Join(got, "\n") != strings.Join(want, "\n") || cf.TotalSize != res.TotalSize || !(cf.TotalCost > res.TotalCost) {
		t.Errorf("no SI at 7MB: schema\n%s\nsize %v, cost %v; want\n%s\nsize %v, cost above %v", strings.Join(got, "\n"), cf.TotalSize, cf.TotalCost, strings.Join(want, "\n"), res.TotalSize, res.TotalCost)
	}
	_, err = advise(t, m, w, "default", 6e6, NoSI)
	var inf *InfeasibleError
	if !errors.As(err, &inf) || inf.MinBudget != 6.6e6 {
		t.Fatalf("no SI at 6MB: got %v, want infeasible with minimum 6.6MB", err)
	}
	if _, err := advise(t, m, w, "default", inf.MinBudget, NoSI); err != nil {
		t.Errorf("advising at the reported minimum budget: %v", err)
	}
}

// checkResult verifies a result's invariants independently of the solver:
// plans read only recommended indexes and answer their statements, SIs have
// recommended bases, the budget holds and the totals are the sums.
func checkResult(t tb, res *Result) {
	t.Helper()
	chosen := map[*catalog.Index]bool{}
	size := 0.0
	for _, x := range res.Indexes {
		chosen[x] = true
		size += x.Size
	}
	if math.Abs(size-res.TotalSize) > 1e-6*size {
		t.Fatalf("total size %v, sum of indexes %v", res.TotalSize, size)
	}
	if size > res.Budget*(1+1e-9) {
		t.Fatalf("size %v over budget %v", size, res.Budget)
	}
	for _, x := range res.Indexes {
		if x.Kind == catalog.SI {
			b := res.Schema.Base[x]
			if b == nil || !chosen[b] || !planner.IsBase(x, b) {
				t.Fatalf("SI %s has no recommended base CF", x.Name)
			}
		}
	}
	total := 0.0
	checkPlan := func(p *plan.Query) float64 {
		covered := make([]bool, len(p.Query.Graph.Nodes))
		have := map[catalog.FieldRef]bool{}
		sum := 0.0
		for i, s := range p.Steps {
			if !chosen[s.Index] {
				t.Fatalf("plan of %s reads %s, which is not recommended", p.Query.Describe(), s.Index.Key)
			}
			if i > 0 && s.Link >= 0 && !covered[s.Link] {
				t.Fatalf("step %d is keyed by a node no earlier step joined", i+1)
			}
			for a, n := range s.Map {
				covered[n] = true
				_ = a
			}
			for _, a := range s.Index.Attrs() {
				have[catalog.FieldRef{Node: s.Map[a.Node], Field: a.Field}] = true
			}
			sum += s.Cost
		}
		for n, c := range covered {
			if !c {
				t.Fatalf("plan of %s never joins %s", p.Query.Describe(), p.Query.Graph.Describe(n))
			}
		}
		for _, r := range planner.NeededFields(p.Query) {
			fixed := false
			for _, pr := range p.Query.Preds {
				fixed = fixed || pr.Ref == r && pr.Op == catalog.Eq
			}
			if !have[r] && !fixed {
				t.Fatalf("plan of %s never fetches %s", p.Query.Describe(), p.Query.Graph.DescribeRef(r))
			}
		}
		if math.Abs(sum-p.Cost) > 1e-9*math.Max(1, sum) {
			t.Fatalf("plan cost %v, sum of steps %v", p.Cost, sum)
		}
		return sum
	}
	for _, q := range res.Queries {
		total += q.Weight * checkPlan(q.Plan)
	}
	for _, wp := range res.Writes {
		c := 0.0
		seen := map[*plan.Query]bool{}
		for _, u := range wp.Indexes {
			if !chosen[u.Index] {
				t.Fatalf("write plan maintains %s, which is not recommended", u.Index.Key)
			}
			c += u.WriteCost
			for _, pl := range u.Support {
				if !seen[pl] {
					seen[pl] = true
					c += checkPlan(pl)
				}
			}
		}
		if math.Abs(c-wp.Cost) > 1e-9*math.Max(1, c) {
			t.Fatalf("write %s: cost %v, recomputed %v", wp.Statement.Tag, wp.Cost, c)
		}
		total += wp.Weight * c
	}
	if math.Abs(total-res.TotalCost) > 1e-9*math.Max(1, total) {
		t.Fatalf("total cost %v, recomputed %v", res.TotalCost, total)
	}
}

// genInstance draws a small model and workload as kvschema source text.
func genInstance(t *rapid.T) (string, string) {
	var ms strings.Builder
	two := rapid.Bool().Draw(t, "two")
	parentRows := rapid.SampledFrom([]int{10, 100, 1000}).Draw(t, "prows")
	fmt.Fprintf(&ms, "DEFINE RELATION p ROWS %d {\n  id BIGINT KEY SIZE 8", parentRows)
	pf := rapid.IntRange(1, 3).Draw(t, "pfields")
	for i := 0; i < pf; i++ {
		fmt.Fprintf(&ms, ",\n  a%d STRING SIZE %d CARDINALITY %d", i, rapid.IntRange(4, 40).Draw(t, "size"), rapid.IntRange(1, parentRows).Draw(t, "card"))
	}
	ms.WriteString("\n};\n")
	cf := 0
	if two {
		childRows := parentRows * rapid.SampledFrom([]int{1, 5, 20}).Draw(t, "fan")
		fmt.Fprintf(&ms, "DEFINE RELATION c ROWS %d {\n  id BIGINT KEY SIZE 8", childRows)
		cf = rapid.IntRange(1, 2).Draw(t, "cfields")
		for i := 0; i < cf; i++ {
			fmt.Fprintf(&ms, ",\n  b%d BIGINT SIZE 8 CARDINALITY %d", i, rapid.IntRange(1, childRows).Draw(t, "card"))
		}
		ms.WriteString(",\n  parent BIGINT SIZE 8 REFERENCES p REVERSE kids\n};\n")
	}
	var ws strings.Builder
	ws.WriteString("DEFINE WORKLOAD w MIXES (m) {\n")
	nq := rapid.IntRange(1, 2).Draw(t, "queries")
	for i := 0; i < nq; i++ {
		fmt.Fprintf(&ws, "  GROUP g%d WEIGHTS (m %d) {\n    ", i, rapid.IntRange(1, 10).Draw(t, "weight"))
		pfield := func() string {
			if k := rapid.IntRange(-1, pf-1).Draw(t, "pf"); k >= 0 {
				return fmt.Sprintf("a%d", k)
			}
			return "id"
		}
		if i == 1 && !two && rapid.Bool().Draw(t, "byid") {
			// Seed 000 §3.7's shape: the same fields by key and by another
			// attribute, where an SI can replace a second copy.
			fmt.Fprintf(&ws, "SELECT p.* FROM p WHERE p.%s = ?", []string{"id", "a0"}[rapid.IntRange(0, 1).Draw(t, "by")])
		} else if two && rapid.Bool().Draw(t, "join") {
			sel := fmt.Sprintf("kids.b%d", rapid.IntRange(0, cf-1).Draw(t, "sel"))
			if rapid.Bool().Draw(t, "selp") {
				sel += ", p." + pfield()
			}
			fmt.Fprintf(&ws, "SELECT %s FROM p.kids WHERE p.%s = ?", sel, pfield())
		} else {
			fmt.Fprintf(&ws, "SELECT p.%s FROM p WHERE p.%s = ?", pfield(), pfield())
		}
		fmt.Fprintf(&ws, "; -- q%d\n  }\n", i)
	}
	nw := rapid.IntRange(0, 2).Draw(t, "writes")
	for i := 0; i < nw; i++ {
		fmt.Fprintf(&ws, "  GROUP u%d WEIGHTS (m %d) {\n    ", i, rapid.IntRange(1, 20).Draw(t, "weight"))
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			fmt.Fprintf(&ws, "UPDATE p SET a%d = ? WHERE p.id = ?", rapid.IntRange(0, pf-1).Draw(t, "set"))
		case 1:
			if two {
				ws.WriteString("INSERT INTO c SET id = ?, b0 = ? AND CONNECT TO parent(?)")
			} else {
				ws.WriteString("INSERT INTO p SET id = ?, a0 = ?")
			}
		default:
			ws.WriteString("DELETE FROM p WHERE p.id = ?")
		}
		fmt.Fprintf(&ws, "; -- w%d\n  }\n", i)
	}
	ws.WriteString("};\n")
	return ms.String(), ws.String()
}

// smallInstance draws a random instance with few enough candidates for
// bestBySearch, and prepares it.
func smallInstance(t *rapid.T) (ms, ws string, m *catalog.Model, w *workload.Workload, pb *problem) {
	ms, ws = genInstance(t)
	m, w = parse(t, ms, ws)
	pb, _, err := prepare(m, w, Options{Mix: "m", Budget: math.Inf(1), Profile: cost.Cassandra, Mode: WithSI})
	if err != nil {
		t.Fatal(err)
	}
	if len(pb.pool.Indexes()) > 12 {
		t.Skip("too many candidates for exhaustive search")
	}
	return ms, ws, m, w, pb
}

// bestBySearch tries every set of candidate indexes and returns the least
// cost of a schema within budget (and the least size of any schema).
func bestBySearch(t *rapid.T, m *catalog.Model, w *workload.Workload, pb *problem, budget float64) (best, minSize float64) {
	s := searchAll(t, m, w, pb, budget)
	return s.best, s.minSize
}

// search is what trying every set of candidates finds: the least cost
// within the budget; of the schemas of that cost (within 1e-9, relative),
// the least and the greatest size; the least size of any schema.
type search struct {
	best, smallest, largest, minSize float64
}

// searchAll tries every set of candidate indexes (cost first, then size).
func searchAll(t *rapid.T, m *catalog.Model, w *workload.Workload, pb *problem, budget float64) search {
	return searchAllWith(t, m, w, pb, budget, cost.Cassandra)
}

// searchAllWith is searchAll, each schema costed with prof.
func searchAllWith(t *rapid.T, m *catalog.Model, w *workload.Workload, pb *problem, budget float64, prof cost.Profile) search {
	cands := pb.pool.Indexes()
	type found struct{ cost, size float64 }
	var within []found
	minSize := math.Inf(1)
	for mask := 1; mask < 1<<len(cands); mask++ {
		var set []*catalog.Index
		size := 0.0
		for i, x := range cands {
			if mask&(1<<i) != 0 {
				set = append(set, x)
				size += x.Size
			}
		}
		if size >= minSize && size > budget {
			continue
		}
		p := planner.NewPool(set)
		ok := true
		for _, x := range set {
			if x.Kind == catalog.SI && len(p.Bases[x]) == 0 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		res, err := Evaluate(m, w, &catalog.Schema{Indexes: set, Base: map[*catalog.Index]*catalog.Index{}}, Options{Mix: "m", Profile: prof})
		if err != nil {
			continue
		}
		minSize = math.Min(minSize, size)
		if size <= budget {
			within = append(within, found{res.TotalCost, size})
		}
	}
	s := search{best: math.Inf(1), smallest: math.Inf(1), largest: math.Inf(-1), minSize: minSize}
	for _, f := range within {
		s.best = math.Min(s.best, f.cost)
	}
	for _, f := range within {
		if f.cost <= s.best*(1+1e-9) {
			s.smallest, s.largest = math.Min(s.smallest, f.size), math.Max(s.largest, f.size)
		}
	}
	return s
}

// Property: on random small instances the recommendation is valid, its
// cost equals the least cost an exhaustive search over the same candidates
// finds, and its size the least of the schemas of that cost; SIs never
// make it worse than CFs alone; an infeasible budget reports the least
// size any schema needs.
// Coverage of the property test, logged so that a generator change that
// stops exercising SIs or tight budgets shows.
var exhaustiveRuns, withSI, infeasible, joins, sizeTies int

func TestAdviseOptimalProperty(t *testing.T) {
	defer func() {
		t.Logf("%d instances searched exhaustively: %d recommended an SI, %d had a join plan, %d had too small a budget, %d had optima of different sizes", exhaustiveRuns, withSI, joins, infeasible, sizeTies)
	}()
	needCBC(t)
	rapid.Check(t, func(t *rapid.T) {
		ms, ws, m, w, pb := smallInstance(t)
		// Budgets around the unconstrained schema's size make the trade-offs
		// between copies, joins and SIs bind.
		budget := math.Inf(1)
		if frac := rapid.SampledFrom([]float64{0, 0.3, 0.5, 0.7, 0.9}).Draw(t, "budget"); frac > 0 {
			free, err := advise(t, m, w, "m", 0, WithSI)
			if err != nil {
				t.Fatal(err)
			}
			budget = math.Floor(frac * free.TotalSize)
		}
		exhaustiveRuns++
		found := searchAll(t, m, w, pb, budget)
		best, minSize := found.best, found.minSize
		res, err := advise(t, m, w, "m", budget, WithSI)
		var inf *InfeasibleError
		switch {
		case errors.As(err, &inf):
			infeasible++
			if !math.IsInf(best, 1) {
				t.Fatalf("advisor says infeasible, search found cost %v within %v\n%s\n%s", best, budget, ms, ws)
			}
			if math.Abs(inf.MinBudget-minSize) > 1e-6*minSize {
				t.Fatalf("minimum budget %v, search says %v", inf.MinBudget, minSize)
			}
			return
		case err != nil:
			t.Fatal(err)
		}
		checkResult(t, res)
		for _, x := range res.Indexes {
			if x.Kind == catalog.SI {
				withSI++
				break
			}
		}
		for _, q := range res.Queries {
			if len(q.Plan.Steps) > 1 {
				joins++
				break
			}
		}
		if math.Abs(res.TotalCost-best) > 1e-6*best {
			t.Fatalf("advisor cost %v, exhaustive search %v\n%s\n%s", res.TotalCost, best, ms, ws)
		}
		// Of the schemas of least cost, one of least size (or smaller
		// still, within the cost's tolerance).
		if found.largest > found.smallest {
			sizeTies++
		}
		if res.TotalSize > found.smallest*(1+1e-12) || !res.Stats.Smallest {
			t.Fatalf("advisor size %v (proven smallest: %v); the schemas of least cost %v are %v to %v in size\n%s\n%s", res.TotalSize, res.Stats.Smallest, best, found.smallest, found.largest, ms, ws)
		}
		cf, err := advise(t, m, w, "m", budget, NoSI)
		if err == nil && cf.TotalCost < res.TotalCost*(1-1e-6) {
			t.Fatalf("CF-only cost %v below CF+SI cost %v", cf.TotalCost, res.TotalCost)
		}
	})
}

func TestRUBiSValid(t *testing.T) {
	needCBC(t)
	m, w := loadRUBiS(t, "workload.kvs")
	for _, mode := range []Mode{WithSI, NoSI, Normalized} {
		res, err := advise(t, m, w, "bidding", 0, mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		checkResult(t, res)
		if len(res.Queries) != 28 || len(res.Writes) != 8 {
			t.Fatalf("%v: %d query plans and %d write plans, want 28 and 8", mode, len(res.Queries), len(res.Writes))
		}
		// The DDL reads back and costs the same.
		var b strings.Builder
		if err := res.WriteDDL(&b, nil); err != nil {
			t.Fatal(err)
		}
		stmts, err := lang.ParseScript("ddl", []byte(b.String()))
		if err != nil {
			t.Fatalf("%v: DDL does not parse: %v\n%s", mode, err, b.String())
		}
		s, err := catalog.ParseSchema(m, stmts)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Evaluate(m, w, s, Options{Mix: "bidding", Profile: cost.Cassandra})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(again.TotalCost-res.TotalCost) > 1e-9*res.TotalCost || again.TotalSize != res.TotalSize {
			t.Errorf("%v: the DDL costs %v (size %v), the advisor said %v (size %v)", mode, again.TotalCost, again.TotalSize, res.TotalCost, res.TotalSize)
		}
	}
}

// Of the RUBiS schemas of least cost, the smallest (issue 16: the first
// solver run alone gives 77.63 MB; before the enumeration's value
// variants, 83.07 MB against 75.87 MB, a CF keyed by users.id carrying
// values no plan reads from it where its keys-only twin costs the same).
// Support queries that share a read (planner.SharedReads) took the cost
// from 1.99921312 to 1.98907051 at the same size.
func TestSmallestOfLeastCostRUBiS(t *testing.T) {
	needCBC(t)
	m, w := loadRUBiS(t, "workload.kvs")
	res, err := advise(t, m, w, "bidding", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res)
	// Two solver runs: the least cost, the least size of that cost. (The
	// local search's start is 2.7% above the LP relaxation's bound; the
	// search guided by the relaxation finds one within subStartGap, so no
	// start is sought from the relaxation's support: narrow.)
	if math.Abs(res.TotalCost-1.98907051) > 1e-7 || res.TotalSize != 72832445 || !res.Stats.Smallest || res.Stats.Solves != 2 {
		t.Errorf("cost %.9g, size %.0f bytes, proven smallest %v, %d solver runs; want 1.98907051, 72832445, true, 2", res.TotalCost, res.TotalSize, res.Stats.Smallest, res.Stats.Solves)
	}
}

// tieModel and tieQueries have two schemas of least cost that differ in
// size (found by TestAdviseOptimalProperty, whose first instance it was
// before the size tie-break): t1 either reads the CF of p's children that
// also carries p.a0, which then costs every insert of a child a support
// query on p, or reads p.a0 from p's own CF in a step of its own — the
// same lookup, as often (t1's weight is the inserts' 9 + 1).
const tieModel = `
DEFINE RELATION p ROWS 1000 {
  id BIGINT KEY SIZE 8,
  a0 STRING SIZE 33 CARDINALITY 941
};
DEFINE RELATION c ROWS 20000 {
  id BIGINT KEY SIZE 8,
  b0 BIGINT SIZE 8 CARDINALITY 4628,
  parent BIGINT SIZE 8 REFERENCES p REVERSE kids
};
`

const tieQueries = `
  GROUP tg0 WEIGHTS (m 5) {
    SELECT kids.b0 FROM p.kids WHERE p.id = ?; -- t0
  }
  GROUP tg1 WEIGHTS (m 10) {
    SELECT kids.b0, p.a0 FROM p.kids WHERE p.id = ?; -- t1
  }
  GROUP tu0 WEIGHTS (m 9) {
    INSERT INTO c SET id = ?, b0 = ? AND CONNECT TO parent(?); -- tw0
  }
  GROUP tu1 WEIGHTS (m 1) {
    INSERT INTO c SET id = ?, b0 = ? AND CONNECT TO parent(?); -- tw1
  }
`

// The two schemas of least cost of tieModel, as DDL: the larger, and the
// smaller the advisor must return.
const (
	tieLarger = `
DEFINE COLUMN FAMILY by_id FOR p { PARTITION KEY (p.id), VALUES (p.a0) };
DEFINE COLUMN FAMILY kids FOR p { PARTITION KEY (p.id), CLUSTERING KEY (p.kids.id), VALUES (p.a0, p.kids.b0) };
`
	tieSmaller = `
DEFINE COLUMN FAMILY by_id FOR p { PARTITION KEY (p.id), VALUES (p.a0) };
DEFINE COLUMN FAMILY kids FOR p { PARTITION KEY (p.id), CLUSTERING KEY (p.kids.id), VALUES (p.kids.b0) };
`
)

// evaluateDDL costs a schema written as DDL.
func evaluateDDL(t tb, m *catalog.Model, w *workload.Workload, mix, ddl string) *Result {
	t.Helper()
	stmts, err := lang.ParseScript("schema.kvs", []byte(ddl))
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(m, w, s, Options{Mix: mix, Profile: cost.Cassandra})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Of two schemas of equal, least cost, the advisor returns the smaller.
func TestSmallestOfEqualCost(t *testing.T) {
	needCBC(t)
	m, w := parse(t, tieModel, nonHullWorkload(tieQueries))
	larger, smaller := evaluateDDL(t, m, w, "m", tieLarger), evaluateDDL(t, m, w, "m", tieSmaller)
	if math.Abs(larger.TotalCost-smaller.TotalCost) > 1e-12*smaller.TotalCost || larger.TotalSize != 1181000 || smaller.TotalSize != 521000 {
		t.Fatalf("not a tie: costs %v and %v, sizes %v and %v", larger.TotalCost, smaller.TotalCost, larger.TotalSize, smaller.TotalSize)
	}
	for _, budget := range []float64{0, 600e3} {
		res, err := advise(t, m, w, "m", budget, WithSI)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, res)
		if math.Abs(res.TotalCost-smaller.TotalCost) > 1e-9*smaller.TotalCost || res.TotalSize != smaller.TotalSize || !res.Stats.Smallest {
			t.Errorf("budget %v: cost %v, size %v (proven smallest %v); want %v, %v", budget, res.TotalCost, res.TotalSize, res.Stats.Smallest, smaller.TotalCost, smaller.TotalSize)
		}
	}
}
