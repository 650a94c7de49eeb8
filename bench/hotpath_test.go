package bench

import (
	"context"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/workload"
)

// hotTags are the statements whose plans dominate the report: key
// lookups, secondary-index lookups, joins, top-k and the writes with the
// most upkeep.
var hotTags = []string{"5", "5_secondary", "4", "4_secondary", "6_secondary", "7", "19", "35", "20", "22", "28"}

// BenchmarkStatements runs the report's hot statements on the paper's
// 61-statement bidding schemas (si and cf variants) over RUBiS at scale
// 0.002 on Pebble, without a simulated round trip, with parameters drawn
// as the bench draws them, with the paper's Cassandra profile (no
// calibration, so runs are comparable across machines). ns/op is one
// statement.
//
//	go test -run x -bench Statements ./bench
func BenchmarkStatements(b *testing.B) {
	if err := (&solver.CBC{}).Available(); err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	cfg := Config{Scale: 0.002, Seed: 1, Mix: "bidding", Workload: "workload_secondary.kvs", Variants: []string{"si", "cf"}, Store: "pebble", Iterations: 1, Out: b.TempDir()}
	if err := cfg.defaults(); err != nil {
		b.Fatal(err)
	}
	root, cleanup, err := cfg.storeRoot()
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	in, err := cfg.resolve(nil)
	if err != nil {
		b.Fatal(err)
	}
	d, err := analyze(ctx, in, &cfg, 1000, nil)
	if err != nil {
		b.Fatal(err)
	}
	w, err := in.parseWorkload(d.model, nil)
	if err != nil {
		b.Fatal(err)
	}
	bind := &binder{data: d}
	for _, name := range cfg.Variants {
		v, err := cfg.setupVariant(ctx, name, root, d, w, PaperBudget*d.budgetScale, cost.Cassandra, func(string, ...any) {})
		if err != nil {
			b.Fatal(err)
		}
		snap, err := v.st.(store.Snapshotter).Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, tag := range hotTags {
			s := statement(w, tag)
			if s == nil {
				b.Fatalf("no statement %s", tag)
			}
			b.Run(name+"/"+tag, func(b *testing.B) {
				stmt, err := v.en.PrepareAST(s.AST)
				if err != nil {
					b.Fatal(err)
				}
				params, err := bind.stream(s, 1)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					args, err := params.next()
					if err != nil {
						b.Fatal(err)
					}
					if s.Query != nil {
						_, err = stmt.Query(ctx, args...)
					} else {
						_, err = stmt.Exec(ctx, args...)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if s.Write != nil {
					b.StopTimer()
					if err := snap.Restore(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		snap.Release()
		v.st.Close()
	}
}

func statement(w *workload.Workload, tag string) *workload.Statement {
	for _, s := range w.Statements {
		if s.Tag == tag {
			return s
		}
	}
	return nil
}
