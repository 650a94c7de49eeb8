//go:build !race

package exec_test

import (
	"context"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"

	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/txnstore"
)

func init() {
	openBigtable = func(t testing.TB) txnstore.Inner { return bttestserver.Open(t) }
}

// A load's batches fit in one message of a gRPC server's default limit
// (4 MiB, as Bigtable's emulator has) where they go through the intent
// log (a store under decorators without store.RowWriter): the log records
// a batch as one cell, each mutation with its table and family, which the
// batch size once left out — loading many small cells of a long-named
// table sent 4.5 MB and was refused (found calibrating a column family of
// 8 values).
func TestLoadBatchesFitEmulatorMessages(t *testing.T) {
	ctx := context.Background()
	const model = `DEFINE RELATION measurements ROWS 16000 { id BIGINT KEY SIZE 8,
  d1 DOUBLE SIZE 8, d2 DOUBLE SIZE 8, d3 DOUBLE SIZE 8, d4 DOUBLE SIZE 8,
  d5 DOUBLE SIZE 8, d6 DOUBLE SIZE 8, d7 DOUBLE SIZE 8, d8 DOUBLE SIZE 8 };
`
	const schema = `DEFINE COLUMN FAMILY measurements_with_all_eight_values_by_id FOR measurements {
  PARTITION KEY (measurements.id), CLUSTERING KEY (),
  VALUES (measurements.d1, measurements.d2, measurements.d3, measurements.d4, measurements.d5, measurements.d6, measurements.d7, measurements.d8) };
`
	st := struct{ store.Store }{txnstore.New(openBigtable(t))} // Apply only
	defer st.Close()
	en, err := exec.Deploy(ctx, st, "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Bigtable)
	if err != nil {
		t.Fatal(err)
	}
	e := en.Model().Entity("measurements")
	const n = 16000 // 128,000 cells: 7 MB of intents as the batch size counted them before
	ls, err := en.Load(ctx, func(yield func(exec.Row) error) error {
		for i := range n {
			vals := make([]types.Value, len(e.Columns))
			for j, c := range e.Columns {
				if c.Name == "id" {
					vals[j] = int64(i)
				} else {
					vals[j] = float64(i) / float64(j+1)
				}
			}
			if err := yield(exec.Row{Entity: e, Values: vals}); err != nil {
				return err
			}
		}
		return nil
	}, exec.LoadOptions{Identity: "wide"})
	if err != nil {
		t.Fatal(err)
	}
	if ls.IndexRows != n {
		t.Errorf("loaded %d index rows, want %d", ls.IndexRows, n)
	}
}
