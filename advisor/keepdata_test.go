package advisor

import (
	"context"
	"testing"
	"time"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/solver"
)

// TestKeepData: with KeepData the schema keeps every attribute and
// relationship — every keep-data lookup has a plan over the schema as
// deployed, by the runtime's planner — at no cost for a mix that writes
// nothing (browsing) and at no less than the cost without it otherwise
// (bidding); bidding's advice can be built from the browsing schema that
// keeps the data, which it cannot from browsing's plain optimum
// (TestCurrentBuildable).
func TestKeepData(t *testing.T) {
	needCBC(t)
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	keep, err := keepDataQueries(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(keep) != len(m.Entities)+10 { // RUBiS's 10 references
		t.Fatalf("%d keep-data lookups for %d entities", len(keep), len(m.Entities))
	}
	answered := func(r *Result) int {
		p := planner.New(deployed(t, m, r), cost.Cassandra)
		n := 0
		for _, s := range keep {
			if _, err := p.Query(s.Query); err == nil {
				n++
			}
		}
		return n
	}
	var browsingKept *Result
	for _, mix := range []string{"browsing", "bidding"} {
		plain, err := Advise(context.Background(), m, w, Options{Mix: mix, Profile: cost.Cassandra, Solver: &solver.CBC{}})
		if err != nil {
			t.Fatal(err)
		}
		kept, err := Advise(context.Background(), m, w, Options{Mix: mix, Profile: cost.Cassandra, Solver: &solver.CBC{}, KeepData: true})
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, kept)
		if n := answered(kept); n != len(keep) {
			t.Errorf("%s: the schema that keeps the data answers %d of %d keep-data lookups", mix, n, len(keep))
		}
		if kept.TotalCost < plain.TotalCost*(1-1e-9) {
			t.Errorf("%s: keeping the data costs less (%v) than not (%v)", mix, kept.TotalCost, plain.TotalCost)
		}
		if mix == "browsing" {
			browsingKept = kept
			if n := answered(plain); n == len(keep) {
				t.Error("browsing's plain optimum keeps all the data: the test checks nothing")
			}
			if !close9(kept.TotalCost, plain.TotalCost) {
				t.Errorf("browsing writes nothing, yet keeping the data costs %v against %v", kept.TotalCost, plain.TotalCost)
			}
		}
		t.Logf("%s: cost %v → %v, size %.4gMB → %.4gMB", mix, plain.TotalCost, kept.TotalCost, plain.TotalSize/1e6, kept.TotalSize/1e6)
	}
	res, err := Advise(context.Background(), m, w, Options{Mix: "bidding", Profile: cost.Cassandra, Solver: &solver.CBC{},
		Current: deployed(t, m, browsingKept), Rate: 100, Amortize: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatalf("bidding from the browsing schema that keeps the data: %v", err)
	}
	t.Logf("bidding from browsing (keep-data): cost %v, %d candidates refused as unbuildable", res.TotalCost, res.Stats.Unbuildable)
}
