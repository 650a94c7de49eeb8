//go:build !race

package exec_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/workload"
)

// TestLocalIndexAgainstSQLite runs queries whose plans read a local index
// in each of its shapes — alone (the SI answers the query), with its base
// rows (the SI's step and the base's, one read), and followed by a join —
// with random parameters against SQLite, across random writes that move
// indexed values and base rows, and verify clean after each round.
func TestLocalIndexAgainstSQLite(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `
DEFINE RELATION users ROWS 100 { id BIGINT KEY, region BIGINT CARDINALITY 4, name STRING CARDINALITY 100 };
DEFINE RELATION items ROWS 1000 { id BIGINT KEY, quantity BIGINT CARDINALITY 6, name STRING CARDINALITY 1000, seller BIGINT REFERENCES users REVERSE items_sold };`
	const schemaSrc = `
DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.region, users.name) };
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.quantity, items.name) };
DEFINE COLUMN FAMILY items_sellers FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items.seller.id) };
DEFINE SECONDARY INDEX users_by_region ON users_by_id (users.region);
DEFINE SECONDARY INDEX items_by_quantity ON items_by_id (items.quantity);`
	const workloadSrc = `DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) {
    SELECT items.id FROM items WHERE items.quantity = ?; -- alone
    SELECT items.id, items.name FROM items WHERE items.quantity = ?; -- with base
    SELECT items.id, items.name, items.seller.name FROM items.seller WHERE items.quantity = ? AND items.seller.region = ?; -- join
    SELECT users.id FROM users WHERE users.region = ? ORDER BY users.id DESC; -- reverse
    SELECT users.id, users.name FROM users WHERE users.region = ? AND users.name >= ?; -- filtered
    INSERT INTO items SET id = ?, quantity = ?, name = ? AND CONNECT TO seller(?);
    UPDATE items SET quantity = ? WHERE items.id = ?;
    UPDATE users SET region = ? WHERE users.id = ?;
    CONNECT items(?) TO seller(?);
    DELETE items WHERE items.id = ?;
} }`
	m, s, w := parseSchema(t, modelSrc, schemaSrc, workloadSrc)
	s.KeepLocal(true)
	if len(s.Local) != 2 {
		t.Fatalf("%d local indexes, want 2", len(s.Local))
	}
	en := exec.New(memstore.New(), m, s, cost.Pebble)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{"users": 12, "items": 60}
	d := gen.Generate(m, func(e *catalog.Entity) int { return counts[e.Name] }, 7, 0.1)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]string{
		"alone":     "RETURNS ITS BASE ROWS",
		"with base": "RETURNS THE BASE ROWS OF THE NEXT PLAN STEP",
		"join":      "LOCAL INDEX items_by_quantity",
		"filtered":  "LOCAL INDEX users_by_region",
	} {
		var st *workload.Statement
		for _, s := range w.Statements {
			if s.Tag == tag {
				st = s
			}
		}
		p, err := en.PrepareAST(st.AST)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Explain(), want) {
			t.Errorf("%s: the plan reads no local index so (%q):\n%s", tag, want, p.Explain())
		}
	}
	or := oracleOf(t, m, d)
	checkVerify(t, ctx, en, or)
	r := rand.New(rand.NewPCG(3, 3))
	next := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		next[e] = counts[e.Name] + 1
	}
	nonEmpty := runQueries(t, ctx, en, or, w, d, r, 6)
	for round := 0; round < 4; round++ {
		runWrites(t, ctx, en, or, w, d, r, next, 3)
		checkVerify(t, ctx, en, or)
		nonEmpty += runQueries(t, ctx, en, or, w, d, r, 6)
	}
	if nonEmpty < 20 {
		t.Fatalf("only %d queries had an answer: the comparison checks little", nonEmpty)
	}
}
