package advisor

import (
	"context"
	"os"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/model"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

func loadRUBiS(t testing.TB, wfile string) (*model.Model, *workload.Workload) {
	t.Helper()
	src, err := os.ReadFile("../examples/rubis/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := lang.ParseScript("model.kvs", src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	wsrc, err := os.ReadFile("../examples/rubis/" + wfile)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(m, wfile, wsrc)
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
