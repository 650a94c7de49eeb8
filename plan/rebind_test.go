package plan_test

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/schema"
	"github.com/kvschema/kvschema/types"
)

func catalog(t testing.TB, src string) *schema.Catalog {
	t.Helper()
	c, err := schema.CatalogFromScript("defs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPointRebindMatchesPlanner: for any arguments, a rebound point-lookup
// plan reads exactly the key a fresh plan reads, through the same layout —
// or declines, when the fresh plan would differ in shape (NULL, inexact
// numbers, values a layout cannot encode).
func TestPointRebindMatchesPlanner(t *testing.T) {
	for _, defs := range []string{
		// salted, ordered and descending elements
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW salt(4){ordered{k1}}:ordered{k1}:desc{k2}, VALUE ordered{v} };`,
		// seed 003 natural elements with a separator, and a second layout
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW suffix('-'){k1}:k2, VALUE ordered{v} };
		 DEFINE SCHEMA s2 FOR r { ROW ordered{k2}:ordered{v}:ordered{k1} };`,
	} {
		c := catalog(t, defs)
		rel := c.Relation("r")
		st, err := lang.ParseStatement("", "SELECT v FROM r WHERE k2 = ? AND k1 = ?")
		if err != nil {
			t.Fatal(err)
		}
		sel := st.(*lang.Select)
		first, err := plan.Select(sel, rel, []types.Value{int64(1), "a"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rb := plan.NewPointRebind(sel, first, plan.PrefixChooser{})
		if rb == nil {
			t.Fatalf("no rebinder for\n%s", first.Explain())
		}
		rapid.Check(t, func(rt *rapid.T) {
			args := []types.Value{
				rapid.OneOf(rapid.Just[types.Value](nil), rapid.Map(rapid.Int64(), func(i int64) types.Value { return i }),
					rapid.Map(rapid.Float64(), func(f float64) types.Value { return f })).Draw(rt, "k2"),
				rapid.OneOf(rapid.Just[types.Value](nil), rapid.Map(rapid.SampledFrom([]string{"", "a", "a-", "-b", "\x00", "\xff"}), func(s string) types.Value { return s })).Draw(rt, "k1"),
			}
			fresh, err := plan.Select(sel, rel, args, nil)
			if err != nil {
				return // the planner rejects it; the rebinder is not asked
			}
			got, ok := rb.Plan(args)
			if !ok {
				return // declining is always safe
			}
			if len(fresh.Accesses) != 1 || fresh.Residual != nil {
				rt.Fatalf("rebound %v, but the planner's plan differs in shape:\n%s", args, fresh.Explain())
			}
			fa, ga := fresh.Accesses[0], got.Accesses[0]
			if fa.Layout != ga.Layout || fa.Kind != ga.Kind || len(fa.Reads) != 1 || len(ga.Reads) != 1 ||
				fa.Reads[0].Table != ga.Reads[0].Table || len(fa.Reads[0].Rows.Keys) != 1 ||
				!bytes.Equal(fa.Reads[0].Rows.Keys[0], ga.Reads[0].Rows.Keys[0]) {
				rt.Fatalf("args %v: fresh %+v vs rebound %+v", args, fa.Reads, ga.Reads)
			}
		})
	}
}
