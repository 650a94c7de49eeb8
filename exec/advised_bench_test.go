package exec_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	_ "github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/types"
)

// BenchmarkLoadRUBiS loads RUBiS at scale 0.002 into the bidding schema on
// Pebble and reports entity rows/s (issue target: ≥ 50,000).
func BenchmarkLoadRUBiS(b *testing.B) {
	ctx := context.Background()
	m, w := loadRUBiS(b, "workload.kvs")
	res := advise(b, m, w, advisor.WithSI, 0)
	var rows int64
	for i := 0; b.Loop(); i++ {
		st, err := store.Open(ctx, "pebble:"+filepath.Join(b.TempDir(), "db"))
		if err != nil {
			b.Fatal(err)
		}
		en := exec.New(st, m, res.Schema, cost.Cassandra)
		if err := en.CreateTables(ctx); err != nil {
			b.Fatal(err)
		}
		ls, err := en.Load(ctx, func(yield func(exec.Row) error) error {
			return rubis.Generate(ctx, m, rubis.Config{Scale: 0.002, Seed: 1}, func(e *catalog.Entity, row []types.Value) error {
				return yield(exec.Row{Entity: e, Values: row})
			})
		}, exec.LoadOptions{Identity: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		rows += ls.EntityRows
		st.Close()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "entity-rows/s")
}

// BenchmarkAdvisedUpdate runs a prepared UPDATE by key of one column
// family on memstore: the write path's own cost and allocations (28 per
// update on 2026-11-26).
func BenchmarkAdvisedUpdate(b *testing.B) {
	ctx := context.Background()
	const model = `DEFINE RELATION users ROWS 100 { id BIGINT KEY, nick STRING CARDINALITY 100, karma BIGINT CARDINALITY 10 };`
	const schema = `DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nick, users.karma) };`
	en, err := exec.Deploy(ctx, memstore.New(), "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Cassandra)
	if err != nil {
		b.Fatal(err)
	}
	ins, err := en.Prepare("INSERT INTO users SET id = ?, nick = ?, karma = 0")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ins.Exec(ctx, int64(1), "a"); err != nil {
		b.Fatal(err)
	}
	up, err := en.Prepare("UPDATE users SET karma = ? WHERE users.id = ?")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := up.Exec(ctx, int64(i), int64(1)); err != nil {
			b.Fatal(err)
		}
	}
}
