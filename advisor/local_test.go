package advisor

import (
	"context"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
)

// TestLocalIndexUpkeep: on an engine that keeps secondary indexes itself
// (Profile.LocalIndexes), an SI's upkeep is its writes, no support query
// (seed 000 §3.4); where the client keeps them, an UPDATE of an indexed
// attribute first reads the old value. The same schema is costed both
// ways, so the difference is the support reads alone, and the advisor
// never prices a local SI's upkeep higher.
func TestLocalIndexUpkeep(t *testing.T) {
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	tables := cost.Cassandra
	tables.LocalIndexes = false // as the client keeps SI tables on Bigtable
	local := cost.Cassandra
	res, err := Advise(context.Background(), m, w, Options{Mix: "bidding", Profile: tables, Solver: &solver.CBC{}, Budget: 161e6})
	if err != nil {
		t.Fatal(err)
	}
	supports := func(r *Result) (si, all int) {
		for _, wp := range r.Writes {
			for _, u := range wp.Indexes {
				all += len(u.Support)
				if u.Index.Kind == catalog.SI {
					si += len(u.Support)
				}
			}
		}
		return si, all
	}
	si, _ := supports(res)
	if si == 0 {
		t.Fatal("no SI upkeep reads anything where the client keeps SIs: the test checks nothing")
	}
	// The same schema priced for an engine that keeps its SIs: the SI
	// upkeeps read nothing, the CFs' read what they did.
	ev, err := Evaluate(m, w, res.Schema, Options{Mix: "bidding", Profile: local, Budget: 161e6})
	if err != nil {
		t.Fatal(err)
	}
	evSI, evAll := supports(ev)
	_, all := supports(res)
	if evSI != 0 || evAll >= all {
		t.Errorf("priced with local SIs: %d SI support reads (want 0), %d in all (want fewer than %d)", evSI, evAll, all)
	}
	if !(ev.TotalCost < res.TotalCost) {
		t.Errorf("the schema costs %v with local SIs, %v with SI tables: dropping reads must lower it", ev.TotalCost, res.TotalCost)
	}
	// The optimum for local SIs is no dearer than that schema, priced so.
	opt, err := Advise(context.Background(), m, w, Options{Mix: "bidding", Profile: local, Solver: &solver.CBC{}, Budget: 161e6})
	if err != nil {
		t.Fatal(err)
	}
	if optSI, _ := supports(opt); optSI != 0 {
		t.Errorf("the local-SI optimum's SI upkeeps read %d times", optSI)
	}
	if opt.TotalCost > ev.TotalCost*(1+1e-9) {
		t.Errorf("optimum with local SIs %v > %v, the cost of the SI-table optimum priced with local SIs", opt.TotalCost, ev.TotalCost)
	}
	t.Logf("SI tables: cost %.6g, %d support reads (%d for SIs); local SIs: that schema %.6g, the optimum %.6g", res.TotalCost, all, si, ev.TotalCost, opt.TotalCost)
}
