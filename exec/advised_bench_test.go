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
