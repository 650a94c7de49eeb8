package plan_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

func mustCatalog(t testing.TB, src string) *catalog.Catalog {
	t.Helper()
	c, err := catalog.CatalogFromScript("defs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestKeyRebindMatchesPlanner: for any arguments, a rebound point-lookup
// or prefix-scan plan reads exactly the keys and ranges a fresh plan reads,
// through the same layout and in the same way — or declines, when the fresh
// plan would differ in shape (NULL, inexact numbers, values a layout cannot
// encode).
func TestKeyRebindMatchesPlanner(t *testing.T) {
	defsList := []string{
		// salted, ordered and descending elements
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW salt(4){ordered{k1}}:ordered{k1}:desc{k2}, VALUE ordered{v} };`,
		// seed 003 natural elements with a separator, and a second layout
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW suffix('-'){k1}:k2, VALUE ordered{v} };
		 DEFINE SCHEMA s2 FOR r { ROW ordered{k2}:ordered{v}:ordered{k1} };`,
		// a constant between the elements, a trailing natural string, size{}
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW 'p':k2:'/':k1, VALUE ordered{v} };
		 DEFINE SCHEMA s2 FOR r { ROW size{k1}:ordered{k2}, FAMILY 'g', VALUE v };`,
		// one layout: range scans rebind too (ordered, descending, a
		// trailing natural integer)
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW ordered{k1}:desc{k2}, VALUE ordered{v} };`,
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW salt(3){ordered{k1}}:ordered{k1}:ordered{k2}, VALUE ordered{v} };`,
		`DEFINE RELATION r { k1 STRING KEY, k2 BIGINT KEY, v STRING };
		 DEFINE PRIMARY SCHEMA s FOR r { ROW suffix('-'){k1}:k2, VALUE ordered{v} };`,
	}
	queries := []string{
		"SELECT v FROM r WHERE k2 = ? AND k1 = ?",
		"SELECT v FROM r WHERE k1 = ?",
		"SELECT k1, v FROM r WHERE k2 = ?",
		"SELECT * FROM r WHERE ? = k1 ORDER BY k2 DESC LIMIT 3",
		"SELECT v FROM r WHERE k2 = 7 AND k1 = ?",
		"SELECT v FROM r WHERE k1 = ? AND k2 >= ?",
		"SELECT * FROM r WHERE k2 < ? AND ? = k1 AND k2 > ? LIMIT 4",
		"SELECT k2 FROM r WHERE k1 = ? AND ? <= k2 ORDER BY k2 DESC",
		"SELECT v FROM r WHERE k1 = ? AND k2 <= 500 AND k2 > ?",
	}
	k1Gen := rapid.OneOf(rapid.Just[types.Value](nil), rapid.Map(rapid.SampledFrom([]string{"", "a", "a-", "-b", "/", "\x00", "\xff"}), func(s string) types.Value { return s }))
	k2Gen := rapid.OneOf(rapid.Just[types.Value](nil), rapid.Map(rapid.Int64(), func(i int64) types.Value { return i }),
		rapid.Map(rapid.Float64(), func(f float64) types.Value { return f }))
	rebound, ranged, rangeHits := 0, 0, 0
	for _, defs := range defsList {
		c := mustCatalog(t, defs)
		rel := c.Relation("r")
		for _, q := range queries {
			st, err := lang.ParseStatement("", q)
			if err != nil {
				t.Fatal(err)
			}
			sel := st.(*lang.Select)
			var gens []*rapid.Generator[types.Value]
			first := []types.Value{}
			nk2 := 0
			// The parameters' attributes, in order of appearance.
			for _, m := range paramAttr.FindAllStringSubmatch(q, -1) {
				if m[1] == "k1" || m[2] == "k1" {
					gens, first = append(gens, k1Gen), append(first, "a")
				} else {
					// 100, then 50: a first plan over a range that is not empty
					gens, first = append(gens, k2Gen), append(first, int64(100-50*nk2))
					nk2++
				}
			}
			p, err := plan.Select(sel, rel, first, nil)
			if err != nil {
				t.Fatal(err)
			}
			rb := plan.NewKeyRebind(sel, p, cost.Prefix{})
			if rb == nil {
				t.Logf("no rebinder for %s over\n%s", q, p.Explain())
				continue
			}
			rebound++
			if p.Accesses[0].RangeElem {
				ranged++
			}
			rapid.Check(t, func(rt *rapid.T) {
				args := make([]types.Value, len(gens))
				for i, g := range gens {
					args[i] = g.Draw(rt, fmt.Sprint("arg", i))
				}
				fresh, err := plan.Select(sel, rel, args, nil)
				if err != nil {
					return // the planner rejects it; the rebinder is not asked
				}
				got, ok := rb.Plan(args)
				if !ok {
					return // declining is always safe
				}
				if got.Accesses[0].RangeElem {
					rangeHits++
				}
				if len(fresh.Accesses) != 1 || fresh.Residual != nil || fresh.Sort || fresh.Merge || fresh.Dedupe {
					rt.Fatalf("%s: rebound %v, but the planner's plan differs in shape:\n%s", q, args, fresh.Explain())
				}
				fa, ga := fresh.Accesses[0], got.Accesses[0]
				if fa.Layout != ga.Layout || fa.Kind != ga.Kind || !sameReads(fa.Reads, ga.Reads) ||
					fresh.Reverse != got.Reverse || fresh.PerRead != got.PerRead || fresh.Limit != got.Limit ||
					!slices.Equal(fresh.Unneeded, got.Unneeded) || !slices.Equal(fresh.Project, got.Project) {
					rt.Fatalf("%s, args %v:\nfresh %s %+v\nrebound %s %+v", q, args, fresh.Explain(), fa.Reads, got.Explain(), ga.Reads)
				}
				got.Release() // the next rebind reuses its memory: stale state would show
			})
		}
	}
	if rebound < 8 || ranged < 6 || rangeHits < 100 {
		t.Errorf("only %d query plans could be rebound, %d of them range scans (rebound %d times)", rebound, ranged, rangeHits)
	}
}

// paramAttr finds "attr op ?" and "? op attr".
var paramAttr = regexp.MustCompile(`(\w+) (?:=|<|<=|>|>=) \?|\? (?:=|<|<=|>|>=) (\w+)`)

func sameReads(a, b []plan.Read) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ra, rb := a[i], b[i]
		if ra.Table != rb.Table || ra.Bucket != rb.Bucket || len(ra.Rows.Keys) != len(rb.Rows.Keys) || len(ra.Rows.Ranges) != len(rb.Rows.Ranges) {
			return false
		}
		for j := range ra.Rows.Keys {
			if !bytes.Equal(ra.Rows.Keys[j], rb.Rows.Keys[j]) {
				return false
			}
		}
		for j, r := range ra.Rows.Ranges {
			o := rb.Rows.Ranges[j]
			if !bytes.Equal(r.Start, o.Start) || !bytes.Equal(r.End, o.End) || (r.End == nil) != (o.End == nil) {
				return false
			}
		}
	}
	return true
}
