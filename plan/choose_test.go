package plan

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/layout"
)

// seed003Better is seed 003's rule as the client applied it before the
// cost-model seam (plan.PrefixChooser), kept as the oracle: the layout
// whose key has the most leading elements fixed wins; ties go to a
// range-bounded next element, then exact keys, then a layout whose key
// order yields the ORDER BY, then fewer store calls, then the earlier
// layout.
func seed003Better(a, b *Access) bool {
	if a.FixedElems != b.FixedElems {
		return a.FixedElems > b.FixedElems
	}
	if a.RangeElem != b.RangeElem {
		return a.RangeElem
	}
	if (a.Kind == PointLookup) != (b.Kind == PointLookup) {
		return a.Kind == PointLookup
	}
	if a.ProvidesOrder != b.ProvidesOrder {
		return a.ProvidesOrder
	}
	return len(a.Reads) < len(b.Reads)
}

// TestPrefixModelIsSeed003Rule: choosing by cost.Prefix picks the layout
// seed 003's rule picks, for any candidates.
func TestPrefixModelIsSeed003Rule(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(rt, "layouts")
		cands := make([]*Access, n)
		for i := range cands {
			a := &Access{
				Layout:        &layout.Layout{Name: "l"},
				FixedElems:    rapid.IntRange(0, 3).Draw(rt, "fixed"),
				RangeElem:     rapid.Bool().Draw(rt, "range"),
				Kind:          rapid.SampledFrom([]AccessKind{PointLookup, SkipScan, RangeScan, FullScan}).Draw(rt, "kind"),
				ProvidesOrder: rapid.Bool().Draw(rt, "ordered"),
				Reads:         make([]Read, rapid.IntRange(1, 300).Draw(rt, "reads")),
			}
			cands[i] = a
		}
		want := 0
		for i := 1; i < n; i++ {
			if seed003Better(cands[i], cands[want]) {
				want = i
			}
		}
		if got := choose(cost.Prefix{}, cands); got != want {
			rt.Fatalf("cost.Prefix chose candidate %d %+v, seed 003's rule %d %+v", got, CostAccess(cands[got]), want, CostAccess(cands[want]))
		}
	})
}

// TestDescribeShowsCost: EXPLAIN gives a candidate's cost under a model
// whose costs mean something, not under Prefix (whose costs only rank).
func TestDescribeShowsCost(t *testing.T) {
	a := &Access{Layout: &layout.Layout{Name: "l"}, FixedElems: 1, Reads: make([]Read, 2)}
	if got := describe(cost.Prefix{}, a); got != "1 leading key element(s) fixed" {
		t.Errorf("under Prefix: %q", got)
	}
	want := "1 leading key element(s) fixed, cost " + fmt.Sprintf("%.4g", cost.Cassandra.Read(cost.Access{Partitions: 2}))
	if got := describe(cost.Cassandra, a); got != want {
		t.Errorf("under the Cassandra profile: %q, want %q", got, want)
	}
}
