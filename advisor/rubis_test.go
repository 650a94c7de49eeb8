package advisor

import (
	"context"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

func loadRUBiS(t testing.TB, wfile string) (*catalog.Model, *workload.Workload) {
	t.Helper()
	m, _, w, err := rubis.Parse(wfile)
	if err != nil {
		t.Fatal(err)
	}
	return m, w
}

func BenchmarkAdviseRUBiSBidding(b *testing.B) {
	m, w := loadRUBiS(b, "workload.kvs")
	for b.Loop() {
		if _, err := Advise(context.Background(), m, w, Options{Mix: "bidding", Profile: cost.Cassandra, Solver: &solver.CBC{}}); err != nil {
			b.Fatal(err)
		}
	}
}
