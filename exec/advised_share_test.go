//go:build !race

package exec_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// TestSharedSupportRead: an UPDATE of p.a3 must learn p.a1 (for the CF by
// a1) and p.a3, p.a0 (to move the row of the CF by a3); neither support
// query covers the other, but the CF by id holds every field, so one read
// of it answers both (planner.SharedReads), as the advisor costs it. The
// write then makes exactly one read, and the data stays right against
// SQLite across random writes.
func TestSharedSupportRead(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `
DEFINE RELATION p ROWS 40 { id BIGINT KEY, a0 STRING CARDINALITY 5, a1 STRING CARDINALITY 3, a3 STRING CARDINALITY 8 };`
	const schemaSrc = `
DEFINE COLUMN FAMILY cf_p_by_a1 FOR p { PARTITION KEY (p.a1), CLUSTERING KEY (p.id), VALUES (p.a3) };
DEFINE COLUMN FAMILY cf_p_by_a3 FOR p { PARTITION KEY (p.a3), CLUSTERING KEY (p.id), VALUES (p.a0) };
DEFINE COLUMN FAMILY cf_p_by_id FOR p { PARTITION KEY (p.id), VALUES (p.a0, p.a1, p.a3) };`
	const workloadSrc = `
DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) {
    SELECT p.a0 FROM p WHERE p.a3 = ?;
    SELECT p.id, p.a3 FROM p WHERE p.a1 = ?;
    SELECT p.a0, p.a1, p.a3 FROM p WHERE p.id = ?;
    UPDATE p SET a3 = ? WHERE p.id = ?;
    INSERT INTO p SET id = ?, a0 = ?, a1 = ?, a3 = ?;
    DELETE p WHERE p.id = ?;
} }`
	m, s, w := parseSchema(t, modelSrc, schemaSrc, workloadSrc)
	cs := countstore.New(memstore.New())
	en := exec.New(cs, m, s, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, func(*catalog.Entity) int { return 40 }, 5, 0)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}

	st, err := en.Prepare("UPDATE p SET a3 = ? WHERE p.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	queries, plans := map[string]bool{}, map[*plan.Query]bool{}
	for _, u := range st.Upkeeps {
		for _, sp := range u.AllSupports() {
			queries[sp.Query.Describe()] = true
			plans[sp.Plan] = true
			if len(sp.Plan.Steps) != 1 || sp.Plan.Steps[0].Index.Name != "cf_p_by_id" {
				t.Fatalf("support query %s is planned as\n%s", sp.Query.Describe(), st.Explain())
			}
		}
	}
	if len(queries) < 2 || len(plans) != 1 {
		t.Fatalf("%d support queries with %d plans, want at least 2 sharing one\n%s", len(queries), len(plans), st.Explain())
	}
	cs.Reset()
	if _, err := st.Exec(ctx, "moved", int64(3)); err != nil {
		t.Fatal(err)
	}
	if got := cs.Stats().ReadRows + cs.Stats().ReadRow; got != 1 {
		t.Fatalf("%d reads, want 1\n%s", got, st.Explain())
	}

	// The shared read fills each upkeep's rows right: the oracle agrees
	// (the update above made on it too), and verify is clean, across
	// random writes.
	or := oracleOf(t, m, d)
	if err := or.Write(st.Write, []types.Value{"moved", int64(3)}); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, ctx, en, or)
	r := rand.New(rand.NewPCG(5, 5))
	next := map[*catalog.Entity]int{m.Entities[0]: 41}
	nonEmpty := runQueries(t, ctx, en, or, w, d, r, 6)
	for round := 0; round < 4; round++ {
		runWrites(t, ctx, en, or, w, d, r, next, 5)
		checkVerify(t, ctx, en, or)
		nonEmpty += runQueries(t, ctx, en, or, w, d, r, 6)
	}
	if nonEmpty < 10 {
		t.Fatalf("only %d queries had an answer: the comparison checks little", nonEmpty)
	}
}
