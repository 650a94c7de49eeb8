package advisor

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
	"pgregory.net/rapid"
)

// On kvschema's engine a store keeps an SI as a local index only on a base
// holding its value as a value cell (catalog.CanKeepLocal). Wherever a
// recommended plan reads such a base after an SI (priced as one request),
// the schema defines the SI on that base, so that the store keeps it and
// the engine reads both in one request; and the step after an SI on a base
// that cannot keep it is priced as a request of its own. Checked on RUBiS,
// both mixes, unconstrained and under a budget, for a kvschema target
// whose constants favour SIs (Cassandra's, with a price for rows read
// through an index and for cells: the built-in Pebble profile chooses
// none on RUBiS).
func TestSIsOnBasesTheStoreKeeps(t *testing.T) {
	needCBC(t)
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	prof := engineProfile(true)
	pairs := 0
	for _, mix := range []string{"bidding", "browsing"} {
		for _, budget := range []float64{0, 70e6} {
			res, err := Advise(context.Background(), m, w, Options{Mix: mix, Budget: budget, Profile: prof, Solver: &solver.CBC{}})
			if err != nil {
				t.Fatal(err)
			}
			// The schema costed as it will run (Evaluate keeps the SIs
			// the store can on their bases, the others as tables) costs
			// what the advisor said.
			ev, err := Evaluate(m, w, res.Schema, Options{Mix: mix, Budget: budget, Profile: prof})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ev.TotalCost-res.TotalCost) > 1e-9*res.TotalCost {
				t.Errorf("%s, budget %v: the schema costs %v as it runs, the advisor said %v", mix, budget, ev.TotalCost, res.TotalCost)
			}
			res.Schema.KeepLocal(true)
			for _, q := range res.Queries {
				steps := q.Plan.Steps
				for i := 1; i < len(steps); i++ {
					si, b := steps[i-1].Index, steps[i].Index
					if si.Kind != catalog.SI {
						continue
					}
					pairs++
					want := prof.Read(cost.Access{Role: cost.AfterSI, Partitions: steps[i].Partitions, Rows: steps[i].Rows, Cells: float64(max(len(b.Extra), 1)),
						ClientIndex: !catalog.CanKeepLocal(si, b)})
					if catalog.CanKeepLocal(si, b) && res.Schema.Local[si] != b {
						t.Errorf("%s, budget %v, %s: the plan reads %s after %s as one request, but the store keeps %s on %v", mix, budget, q.Statement.Tag, b.Name, si.Name, si.Name, res.Schema.Local[si])
					}
					if got := steps[i].Cost; math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
						t.Errorf("%s, budget %v, %s: the step after %s on %s costs %v, want %v", mix, budget, q.Statement.Tag, si.Name, b.Name, got, want)
					}
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no plan reads through an SI: nothing checked")
	}
	t.Logf("%d SI steps checked", pairs)
}

// Property: on kvschema's engine, where the store keeps an SI as a local
// index only on a base that can keep it and a write checks that the
// entities it connects to exist, a recommendation costs as it will run:
// Evaluate (which keeps the SIs it can on their bases, the others as
// tables with their own upkeep, and prices a check where no upkeep reads
// the entity) prices the recommended schema at the advisor's cost, on
// random small instances and budgets.
func TestLocalSIPricedAsItRunsProperty(t *testing.T) {
	needCBC(t)
	prof := engineProfile(true)
	withSI, checked, unchecked := 0, 0, 0
	defer func() {
		t.Logf("%d recommendations held an SI; %d priced an existence check, %d had connecting writes that need none", withSI, checked, unchecked)
		if checked == 0 {
			t.Error("no recommendation priced an existence check: the generator stopped exercising them")
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		ms, ws := genInstance(t)
		m, w := parse(t, ms, ws)
		budget := 0.0
		if frac := rapid.SampledFrom([]float64{0, 0.5, 0.7, 0.9}).Draw(t, "budget"); frac > 0 {
			free, err := Advise(context.Background(), m, w, Options{Mix: "m", Profile: prof, Solver: &solver.CBC{}})
			if err != nil {
				t.Fatal(err)
			}
			budget = math.Floor(frac * free.TotalSize)
		}
		res, err := Advise(context.Background(), m, w, Options{Mix: "m", Budget: budget, Profile: prof, Solver: &solver.CBC{}})
		var inf *InfeasibleError
		if errors.As(err, &inf) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		for _, x := range res.Indexes {
			if x.Kind == catalog.SI {
				withSI++
				break
			}
		}
		for _, wp := range res.Writes {
			if wp.Check > 0 {
				checked++
			} else if wp.Statement.Write.Kind == catalog.Insert && len(wp.Statement.Write.Links) > 0 {
				unchecked++
			}
		}
		ev, err := Evaluate(m, w, res.Schema, Options{Mix: "m", Budget: budget, Profile: prof})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(ev.TotalCost-res.TotalCost) > 1e-9*res.TotalCost {
			t.Fatalf("the schema costs %v as it runs, the advisor said %v\n%s\n%s", ev.TotalCost, res.TotalCost, ms, ws)
		}
	})
}

// Property: with existence checks priced (kvschema's engine), the
// recommendation costs the least an exhaustive search over the same
// candidates finds, each schema costed by Evaluate: the program's check
// rows (ilp.addChecks) price a schema as the engine will run it.
func TestAdviseOptimalWithChecksProperty(t *testing.T) {
	needCBC(t)
	prof := engineProfile(false)
	checked := 0
	defer func() {
		t.Logf("%d optima priced an existence check", checked)
		if checked == 0 {
			t.Error("no optimum priced an existence check: nothing checked")
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		ms, ws := genInstance(t)
		m, w := parse(t, ms, ws)
		pb, _, err := prepare(m, w, Options{Mix: "m", Budget: math.Inf(1), Profile: prof, Mode: WithSI})
		if err != nil {
			t.Fatal(err)
		}
		if len(pb.pool.Indexes()) > 12 {
			t.Skip("too many candidates for exhaustive search")
		}
		found := searchAllWith(t, m, w, pb, math.Inf(1), prof)
		res, err := Advise(context.Background(), m, w, Options{Mix: "m", Profile: prof, Solver: &solver.CBC{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, wp := range res.Writes {
			if wp.Check > 0 {
				checked++
				break
			}
		}
		if math.Abs(res.TotalCost-found.best) > 1e-6*found.best {
			t.Fatalf("advisor cost %v, exhaustive search %v\n%s\n%s", res.TotalCost, found.best, ms, ws)
		}
	})
}

// engineProfile is a profile of kvschema's engine (Pebble: it makes
// existence checks) with Cassandra's constants, whose SI discount makes
// SIs worth choosing, and a price for rows read through an index and for
// cells; with or without the store's local indexes.
func engineProfile(localIndexes bool) cost.Profile {
	p := cost.Cassandra
	p.Name, p.Engine, p.LocalIndexes = "cassandra constants, kvschema engine", cost.EnginePebble, localIndexes
	p.IndexRowCost, p.CellCost = 2*p.RowCost, p.RowCost/4
	return p
}
