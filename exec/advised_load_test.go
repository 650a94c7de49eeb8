//go:build !race

package exec_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
)

func TestLoadMatchesInserts(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload.kvs")
	res := advise(t, m, w, advisor.WithSI, 0)
	en := exec.New(memstore.New(), m, res.Schema, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, tinyRUBiS, 5, 0.1)
	tmp := t.TempDir()
	st, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t", TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	noScratchLeft(t, tmp)
	if st.EntityRows != 307 || st.IndexRows == 0 {
		t.Fatalf("stats %+v", st)
	}
	or := oracleOf(t, m, d)
	checkVerify(t, ctx, en, or)
	// A second run of the same load finds every index done.
	st2, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Skipped != len(res.Schema.Indexes) || st2.IndexRows != 0 {
		t.Fatalf("rerun: %+v", st2)
	}
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "other"}); err == nil || !strings.Contains(err.Error(), "another data set") {
		t.Fatalf("different data set: %v", err)
	}
}

// noScratchLeft checks that a load removed its staging area.
func noScratchLeft(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("the load left %d entries in its temporary directory, e.g. %s", len(ents), ents[0].Name())
	}
}

func TestLoadBadInput(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload.kvs")
	res := advise(t, m, w, advisor.WithSI, 0)
	items := m.Entity("items")
	col := func(e *catalog.Entity, name string) int {
		for i, c := range e.Columns {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	cases := []struct {
		name   string
		break_ func(d *gen.Data)
		want   string
	}{
		{"wrong type", func(d *gen.Data) { d.Rows[items][3][col(items, "quantity")] = "many" }, "items.csv:5: field quantity: "},
		{"missing key", func(d *gen.Data) { d.Rows[items][2][col(items, "id")] = nil }, "items.csv:4: field id: missing key"},
		{"duplicate key", func(d *gen.Data) { d.Rows[items][4][col(items, "id")] = int64(1) }, "items.csv:6: field id: duplicate key 1 (first at items.csv:2)"},
		{"dangling foreign key", func(d *gen.Data) { d.Rows[items][6][col(items, "seller")] = int64(999) }, "items.csv:8: field seller: no users has id = 999 (dangling foreign key)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := memstore.New()
			en := exec.New(st, m, res.Schema, cost.Cassandra)
			if err := en.CreateTables(ctx); err != nil {
				t.Fatal(err)
			}
			d := gen.Generate(m, tinyRUBiS, 5, 0)
			c.break_(d)
			tmp := t.TempDir()
			_, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t", TempDir: tmp})
			var le *exec.LoadError
			if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want prefix %q", err, c.want)
			}
			noScratchLeft(t, tmp)
			for _, x := range res.Schema.Indexes {
				n := 0
				if err := st.ReadRows(ctx, x.Name, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Fatalf("%s holds %d rows after a failed load", x.Name, n)
				}
			}
		})
	}
}

// TestLegacyDeployment: a store deployed when the advised schema lived in
// the engine's own table opens as it is; deploying the same schema again
// records it in the catalog, and a different one is refused.
func TestLegacyDeployment(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	const model = `DEFINE RELATION items ROWS 100 { id BIGINT KEY, name STRING CARDINALITY 100 };`
	const schema = `DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.name) };`
	pj, _ := json.Marshal(cost.Cassandra)
	if err := st.CreateTable(ctx, store.TableSpec{Name: "__kvschema_engine", Families: []string{"v"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "items_by_id", Families: []string{"v"}}); err != nil {
		t.Fatal(err)
	}
	row := func(q, v string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: "__kvschema_engine", Row: []byte("schema"), Family: "v", Qualifier: []byte(q), Value: []byte(v)}
	}
	loadRow := func(q string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: "__kvschema_engine", Row: []byte("load"), Family: "v", Qualifier: []byte(q), Value: []byte("old data")}
	}
	if err := st.Apply(ctx, []store.Mutation{row("model", model), row("schema", schema), row("profile", string(pj)), loadRow("data"), loadRow("done:items_by_id")}); err != nil {
		t.Fatal(err)
	}
	en, err := exec.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	// The load it recorded resumes: its one index is done.
	none := func(yield func(exec.Row) error) error { return nil }
	if ls, err := en.Load(ctx, none, exec.LoadOptions{Identity: "old data"}); err != nil || ls.Skipped != 1 {
		t.Fatalf("resuming the recorded load: %+v %v", ls, err)
	}
	if _, err := en.Load(ctx, none, exec.LoadOptions{Identity: "new data"}); err == nil || !strings.Contains(err.Error(), "already holds another data set (old data)") {
		t.Fatalf("another data set: %v", err)
	}
	if id, done, ok, err := catalog.LoadProgress(ctx, st); err != nil || !ok || id != "old data" || !done["items_by_id"] {
		t.Fatalf("load progress: %q %v %v %v", id, done, ok, err)
	}
	if r, ok, err := st.ReadRow(ctx, catalog.Table, []byte("load")); err != nil || !ok || len(r.Cells) != 2 {
		t.Fatalf("load progress not moved to the catalog's table: %v %v %v", r, ok, err)
	}
	ins, err := en.Prepare("INSERT INTO items SET id = 1, name = 'a'")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Deploy(ctx, st, "m", []byte(model), "s", []byte(model+"\n"+schema+"\n-- other"), cost.Cassandra); err == nil {
		t.Fatal("a different schema was deployed over the legacy one")
	}
	if _, err := exec.Deploy(ctx, st, "m", []byte(model), "s", []byte(schema), cost.Cassandra); err != nil {
		t.Fatal(err)
	}
	if _, cat, err := catalog.Load(ctx, st); err != nil || cat.Model != model || cat.Schema != schema || cat.Legacy {
		t.Fatalf("catalog after redeploying: %+v %v", cat, err)
	}
	en, err = exec.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	q, err := en.Prepare("SELECT items.name FROM items WHERE items.id = 1")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := q.Query(ctx); err != nil || len(res.Rows) != 1 || res.Values()[0][0] != "a" {
		t.Fatalf("query after reopening: %v %v", res, err)
	}
}
