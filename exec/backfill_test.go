package exec_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
	"github.com/kvschema/kvschema/types"
)

// TestBackfillCatchUpDeletes: writes during the bulk copy move every row of
// the index being built (an UPDATE of its partition key) and delete a
// tuple; the copy, reading its snapshot, writes the old rows after them,
// and the catch-up must delete those: the index then holds exactly the
// rows the data implies.
func TestBackfillCatchUpDeletes(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	en, _ := buildingByA3(t, st)
	update, err := en.Prepare("UPDATE p SET a3 = ? WHERE p.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	del, err := en.Prepare("DELETE p WHERE p.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	wrote := false
	stats, err := en.Backfill(ctx, "cf_p_by_a3", exec.BackfillOptions{Batch: 1, Progress: func(ev exec.BackfillEvent) {
		if ev.Step != "copy" || ev.Rows == 0 || wrote {
			return
		}
		wrote = true
		for id := int64(1); id <= 30; id++ {
			if _, err := update.Exec(ctx, "moved", id); err != nil {
				t.Error(err)
			}
		}
		if _, err := del.Exec(ctx, int64(7)); err != nil {
			t.Error(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !wrote || stats.Recounted == 0 {
		t.Fatalf("no write during the copy (%v) or no row recomputed (%+v): the test checks nothing", wrote, stats)
	}
	rep, err := en.VerifyBuilt(ctx, []string{"cf_p_by_a3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Fatalf("after the catch-up:\n%s", rep)
	}
	if n := storetest.CountRows(t, st, "cf_p_by_a3"); n != 29 {
		t.Fatalf("cf_p_by_a3 holds %d rows, want 29 (every tuple but the deleted one, each once, under a3 = moved)", n)
	}
}

// TestVerifyBuiltFindsEachDifference: after a clean backfill, the first
// and the last row deleted, a value changed and a row no data implies
// added to the built table are each reported, once, as missing, stale and
// extra.
func TestVerifyBuiltFindsEachDifference(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	en, x := buildingByA3(t, st)
	if _, err := en.Backfill(ctx, x.Name, exec.BackfillOptions{}); err != nil {
		t.Fatal(err)
	}
	if rep, err := en.VerifyBuilt(ctx, []string{x.Name}, nil); err != nil || !rep.Clean() {
		t.Fatalf("after the backfill (%v):\n%s", err, rep)
	}
	var rows []store.Row
	if err := st.ReadRows(ctx, x.Name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		rows = append(rows, store.Row{Key: bytes.Clone(r.Key), Cells: slices.Clone(r.Cells)})
		return true
	}); err != nil || len(rows) < 3 {
		t.Fatalf("%d rows (%v)", len(rows), err)
	}
	muts := []store.Mutation{{Kind: store.DeleteRow, Table: x.Name, Row: rows[0].Key}, {Kind: store.DeleteRow, Table: x.Name, Row: rows[len(rows)-1].Key}}
	changed := false
	for _, c := range rows[1].Cells {
		if len(c.Value) > 0 {
			muts = append(muts, store.Mutation{Kind: store.SetCell, Table: x.Name, Row: rows[1].Key, Family: c.Family, Qualifier: c.Qualifier, Value: []byte("changed")})
			changed = true
			break
		}
	}
	if !changed {
		t.Fatal("no value cell to change")
	}
	puts, _, err := x.Layout().PutCells([]types.Value{"nowhere", int64(999), "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range puts {
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: x.Name, Row: c.Row, Family: c.Family, Qualifier: c.Qualifier, Value: c.Value})
	}
	if err := st.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	rep, err := en.VerifyBuilt(ctx, []string{x.Name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, d := range rep.Differences {
		kinds[d.Kind]++
	}
	if len(rep.Differences) != 4 || kinds["missing"] != 2 || kinds["stale"] != 1 || kinds["extra"] != 1 {
		t.Fatalf("want two missing, one stale and one extra row:\n%s", rep)
	}
	if n := rep.Rows[x.Name]; n != len(rows)-1 {
		t.Fatalf("%d rows read, want %d (two deleted, one added)", n, len(rows)-1)
	}
}

// buildingByA3 loads 30 tuples of p into st under a schema of
// cf_p_by_id, and returns the engine of that schema with cf_p_by_a3
// added write-only (to be backfilled), and cf_p_by_a3.
func buildingByA3(t *testing.T, st *memstore.Store) (*exec.Engine, *catalog.Index) {
	t.Helper()
	ctx := context.Background()
	const modelSrc = `DEFINE RELATION p ROWS 30 { id BIGINT KEY, a0 STRING CARDINALITY 5, a3 STRING CARDINALITY 4 };`
	const byID = `DEFINE COLUMN FAMILY cf_p_by_id FOR p { PARTITION KEY (p.id), VALUES (p.a0, p.a3) };`
	const byA3 = `
DEFINE COLUMN FAMILY cf_p_by_a3 FOR p { PARTITION KEY (p.a3), CLUSTERING KEY (p.id), VALUES (p.a0) };`
	const workloadSrc = `DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) { SELECT p.a0 FROM p WHERE p.id = ?; } }`
	m, deployed, _ := parseSchema(t, modelSrc, byID, workloadSrc)
	en := exec.New(st, m, deployed, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, func(*catalog.Entity) int { return 30 }, 9, 0)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	ss, err := lang.ParseScript("target.kvs", []byte(byID+byA3))
	if err != nil {
		t.Fatal(err)
	}
	target, err := catalog.ParseSchema(m, ss)
	if err != nil {
		t.Fatal(err)
	}
	x := target.Index("cf_p_by_a3")
	target.WriteOnly = map[*catalog.Index]bool{x: true}
	en = exec.New(st, m, target, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	return en, x
}
