package engine_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/engine"
	"github.com/kvschema/kvschema/engine/enginetest"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
)

// TestOneRoundTripPerStep: a query with an answer issues exactly one read
// per plan step, however many rows each step carries.
func TestOneRoundTripPerStep(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	for _, mode := range []advisor.Mode{advisor.WithSI, advisor.Normalized} {
		res := advise(t, m, w, mode, 161e6)
		cs := countstore.New(memstore.New())
		en := engine.New(cs, m, res.Schema, cost.Cassandra)
		if err := en.CreateTables(ctx); err != nil {
			t.Fatal(err)
		}
		d := enginetest.Generate(m, tinyRUBiS, 3, 0)
		if _, err := en.Load(ctx, source(d), engine.LoadOptions{Identity: "t"}); err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		multi := 0
		for _, s := range w.Statements {
			if s.Query == nil {
				continue
			}
			st, err := en.PrepareAST(s.AST)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				cs.Reset()
				got, err := st.Query(ctx, sampleArgs(r, d, st.Resolved)...)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Rows) == 0 {
					continue
				}
				stats := cs.Stats()
				if stats.RoundTrips != int64(len(st.Plan.Steps)) || stats.ReadRows != stats.RoundTrips {
					t.Fatalf("%s (%s): %d steps, store calls %v\n%s", s.Tag, mode, len(st.Plan.Steps), stats, st.Explain())
				}
				if len(st.Plan.Steps) > 1 && len(got.Rows) > 1 {
					multi++
				}
				break
			}
		}
		if mode == advisor.Normalized && multi == 0 {
			t.Fatal("no multi-step plan returned several rows: the test checks no batching")
		}
	}
}
