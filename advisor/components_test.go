package advisor

import (
	"context"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// adviseBoth advises without a budget decomposed and as one program, and
// checks both results and that they agree: equal cost, plans of the same
// statements in the same order.
func adviseBoth(t tb, m *catalog.Model, w *workload.Workload, mix string) (split, one *Result) {
	t.Helper()
	opt := Options{Mix: mix, Profile: cost.Cassandra, Mode: WithSI, Solver: &solver.CBC{}}
	split, err := Advise(context.Background(), m, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.oneProgram = true
	one, err = Advise(context.Background(), m, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, split)
	checkResult(t, one)
	if !close9(split.TotalCost, one.TotalCost) {
		t.Fatalf("decomposed cost %v, one program %v", split.TotalCost, one.TotalCost)
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
	if !split.Stats.Optimal || split.Stats.Gap != 0 || one.Stats.Components != 1 {
		t.Fatalf("decomposed: optimal %v gap %v; one program: %d components", split.Stats.Optimal, split.Stats.Gap, one.Stats.Components)
	}
	return split, one
}

func close9(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// k renamed copies of a workload are k independent programs: decomposed,
// the cost is k times one copy's and that of the whole as one program.
func TestComponentsCopies(t *testing.T) {
	needCBC(t)
	for _, c := range []struct {
		name, model, workload, mix string
		relations                  []string
		k                          int
	}{
		{"seed37", readFile(t, "testdata/seed37_model.kvs"), readFile(t, "testdata/seed37_workload.kvs"), "default", []string{"user"}, 3},
		{"rubis", examples.RUBiSModel, examples.RUBiSWorkload, "bidding", rubisRelations, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			m1, w1 := copies(t, c.model, c.workload, c.relations, 1)
			single, err := advise(t, m1, w1, c.mix, 0, WithSI)
			if err != nil {
				t.Fatal(err)
			}
			m, w := copies(t, c.model, c.workload, c.relations, c.k)
			split, _ := adviseBoth(t, m, w, c.mix)
			if split.Stats.Components != c.k {
				t.Fatalf("%d components, want %d", split.Stats.Components, c.k)
			}
			if want := float64(c.k) * single.TotalCost; !close9(split.TotalCost, want) {
				t.Fatalf("decomposed cost %v, want %d × %v = %v", split.TotalCost, c.k, single.TotalCost, want)
			}
			// The copies' programs are identical: one is solved, the
			// others reuse its solution.
			if split.Stats.Variables != c.k*single.Stats.Variables || split.Stats.Solves != single.Stats.Solves ||
				split.Stats.Reused != (c.k-1)*single.Stats.Solves {
				t.Fatalf("decomposed: %d variables in %d solver runs (%d reused), want %d × %d variables in %d runs (%d reused)",
					split.Stats.Variables, split.Stats.Solves, split.Stats.Reused, c.k, single.Stats.Variables, single.Stats.Solves, (c.k-1)*single.Stats.Solves)
			}
			// Each copy's schema is the single one's, renamed: the names
			// are unique and the same whatever the copy.
			if len(split.Indexes) != c.k*len(single.Indexes) {
				t.Fatalf("%d indexes, want %d × %d", len(split.Indexes), c.k, len(single.Indexes))
			}
			names := map[string]bool{}
			for _, x := range split.Indexes {
				if names[x.Name] {
					t.Fatalf("index name %s used twice", x.Name)
				}
				names[x.Name] = true
			}
		})
	}
}

// The split keeps statements that can share a candidate together: the
// two queries on one entity, a write with the queries of the entity it
// changes; a write that maintains no candidate any query reads is alone,
// after the parts with queries.
func TestSplit(t *testing.T) {
	m, w := parse(t, `
DEFINE RELATION p ROWS 100 { id BIGINT KEY SIZE 8, a STRING SIZE 10 CARDINALITY 10 };
DEFINE RELATION q ROWS 100 { id BIGINT KEY SIZE 8, b STRING SIZE 10 CARDINALITY 10 };
DEFINE RELATION r ROWS 100 { id BIGINT KEY SIZE 8, c STRING SIZE 10 CARDINALITY 10 };
`, `
DEFINE WORKLOAD w MIXES (m) {
  GROUP g WEIGHTS (m 1) {
    INSERT INTO r SET id = ?, c = ?; -- ins_r
    SELECT q.b FROM q WHERE q.id = ?; -- q_by_id
    SELECT p.a FROM p WHERE p.id = ?; -- p_by_id
    UPDATE p SET a = ? WHERE p.id = ?; -- upd_p
    SELECT p.id FROM p WHERE p.a = ?; -- p_by_a
  }
};
`)
	pb, _, err := prepare(m, w, Options{Mix: "m", Budget: math.Inf(1), Profile: cost.Cassandra, Mode: WithSI})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pt := range pb.split() {
		var tags []string
		for _, s := range pt.queries {
			tags = append(tags, s.Tag)
		}
		for _, s := range pt.writes {
			tags = append(tags, s.Tag)
		}
		got = append(got, strings.Join(tags, " "))
	}
	want := []string{"q_by_id", "p_by_id p_by_a upd_p", "ins_r"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("parts %q, want %q", got, want)
	}
	needCBC(t)
	split, _ := adviseBoth(t, m, w, "m")
	if split.Stats.Components != 2 {
		t.Fatalf("%d programs solved, want 2 (the write alone needs none)", split.Stats.Components)
	}
}

// Property: two random instances side by side cost, decomposed, what the
// whole costs as one program and what the two cost apart; under a budget
// (a byte below the optimum's size, or a fraction of it), what the whole
// costs as one program within it, or both are infeasible alike (most
// random pairs have no smaller schema than their optimum).
func TestSplitProperty(t *testing.T) {
	needCBC(t)
	var binding, infeasible, windows, swept int
	defer func() {
		t.Logf("budgets: %d binding, %d infeasible; %d closed by a window sweep, %d chose a schema only the sweep found", binding, infeasible, windows, swept)
	}()
	rapid.Check(t, func(t *rapid.T) {
		ma, wa := genInstance(t)
		mb, wb := genInstance(t)
		m, w := combine(t, []string{"p", "c"}, []string{ma, mb}, []string{wa, wb})
		split, _ := adviseBoth(t, m, w, "m")
		if split.Stats.Components < 2 {
			t.Fatalf("%d components, want at least 2", split.Stats.Components)
		}
		sum := 0.0
		for _, src := range [][2]string{{ma, wa}, {mb, wb}} {
			m, w := parse(t, src[0], src[1])
			res, err := advise(t, m, w, "m", 0, WithSI)
			if err != nil {
				t.Fatal(err)
			}
			sum += res.TotalCost
		}
		if !close9(split.TotalCost, sum) {
			t.Fatalf("decomposed cost %v, the instances apart %v", split.TotalCost, sum)
		}
		// Budgets a byte below the optimum's size, or a fraction of it,
		// in half the cases (the test stays short).
		if rapid.Bool().Draw(t, "no budget") {
			return
		}
		budget := split.TotalSize - 1
		if frac := rapid.SampledFrom([]float64{1, 0.95, 0.85, 0.7}).Draw(t, "budget"); frac < 1 {
			budget = math.Floor(frac * split.TotalSize)
		}
		res := adviseBudgetBoth(t, m, w, "m", budget, nil)
		switch {
		case res == nil:
			infeasible++
		case res.trace != nil:
			binding++
			if res.trace.window[0]+res.trace.window[1] > 0 {
				windows++
			}
			if res.trace.swept > 0 {
				swept++
			}
		}
	})
}
