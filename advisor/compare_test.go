package advisor

import (
	"strings"
	"testing"
)

// Enumerated knows the candidates by structure, not by name; Compare of a
// recommendation with its own DDL finds every statement and total equal.
func TestCompareOwnSchema(t *testing.T) {
	needCBC(t)
	m, w := parse(t, readFile(t, "testdata/seed37_model.kvs"), readFile(t, "testdata/seed37_workload.kvs"))
	res, err := advise(t, m, w, "default", 0, WithSI)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res.Indexes {
		if !res.Enumerated(x) {
			t.Errorf("%s is recommended but not enumerated", x.Name)
		}
	}
	var ddl strings.Builder
	if err := res.WriteDDL(&ddl, nil); err != nil {
		t.Fatal(err)
	}
	// Renamed, the same structures.
	own := evaluateDDL(t, m, w, "default", strings.ReplaceAll(ddl.String(), "cf_user_by_", "mine_"))
	for _, x := range own.Indexes {
		if !res.Enumerated(x) || own.Enumerated(x) {
			t.Errorf("%s: enumerated by the advisor %v, by Evaluate %v; want true, false", x.Name, res.Enumerated(x), own.Enumerated(x))
		}
	}
	c, err := Compare(w, res, own, "mine.kvs")
	if err != nil {
		t.Fatal(err)
	}
	if c.Cheaper || !c.Fits || len(c.Missed) != 0 || len(c.Rows) != 2 || !close9(own.TotalCost, res.TotalCost) {
		t.Fatalf("own schema: cheaper %v, fits %v, missed %v, %d rows, costs %v and %v", c.Cheaper, c.Fits, c.Missed, len(c.Rows), res.TotalCost, own.TotalCost)
	}
	for _, r := range c.Rows {
		if r.Advised != r.Given || r.GivenPlan != strings.ReplaceAll(r.AdvisedPlan, "cf_user_by_", "mine_") {
			t.Errorf("%s: advised %v (%s), given %v (%s)", r.Statement.Tag, r.Advised, r.AdvisedPlan, r.Given, r.GivenPlan)
		}
	}
	// A CF keyed by lastname is no candidate of these queries.
	other := evaluateDDL(t, m, w, "default", ddl.String()+"DEFINE COLUMN FAMILY by_lastname FOR user { PARTITION KEY (user.lastname), CLUSTERING KEY (user.id) };\n")
	if x := other.Indexes[len(other.Indexes)-1]; x.Name != "by_lastname" || res.Enumerated(x) {
		t.Errorf("%s: enumerated %v", x.Name, res.Enumerated(x))
	}
}
