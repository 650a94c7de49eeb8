package plan_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

// TestFixedKeys: when FixedKeys says a WHERE fixes the keys, every tuple
// the WHERE selects has one of them (checked over a small domain by
// evaluating the WHERE on every tuple); and it does say so for WHEREs that
// pin every key attribute in every disjunct.
func TestFixedKeys(t *testing.T) {
	cat := mustCatalog(t, `DEFINE RELATION r { a BIGINT KEY, b STRING KEY, v BIGINT };
DEFINE PRIMARY SCHEMA r_p FOR r { TABLE 'r', ROW ordered{a}:ordered{b}, VALUE ordered{v} };`)
	rel := cat.Relation("r")
	bs := []string{"x", "y", "z"}
	atom := func(rt *rapid.T) string {
		switch rapid.IntRange(0, 5).Draw(rt, "atom") {
		case 0:
			return fmt.Sprintf("a = %d", rapid.IntRange(0, 3).Draw(rt, "a"))
		case 1:
			return fmt.Sprintf("b = '%s'", rapid.SampledFrom(bs).Draw(rt, "b"))
		case 2:
			return fmt.Sprintf("a IN (%d, %d)", rapid.IntRange(0, 3).Draw(rt, "a1"), rapid.IntRange(0, 3).Draw(rt, "a2"))
		case 3:
			return fmt.Sprintf("a < %d", rapid.IntRange(0, 3).Draw(rt, "lt"))
		case 4:
			return fmt.Sprintf("v = %d", rapid.IntRange(0, 3).Draw(rt, "v"))
		default:
			return fmt.Sprintf("b IN ('%s', '%s')", rapid.SampledFrom(bs).Draw(rt, "b1"), rapid.SampledFrom(bs).Draw(rt, "b2"))
		}
	}
	var expr func(rt *rapid.T, depth int) string
	expr = func(rt *rapid.T, depth int) string {
		if depth == 0 || rapid.Bool().Draw(rt, "leaf") {
			return atom(rt)
		}
		op := rapid.SampledFrom([]string{"AND", "OR"}).Draw(rt, "op")
		return "(" + expr(rt, depth-1) + " " + op + " " + expr(rt, depth-1) + ")"
	}
	fixedSeen := 0
	rapid.Check(t, func(rt *rapid.T) {
		text := expr(rt, 3)
		st, err := lang.ParseStatement("w", "SELECT * FROM r WHERE "+text)
		if err != nil {
			rt.Fatal(err)
		}
		where, err := plan.Bind(st.(*lang.Select).Where, rel, nil)
		if err != nil {
			rt.Fatal(err)
		}
		keys, ok := plan.FixedKeys(where, rel)
		if !ok {
			return
		}
		fixedSeen++
		listed := map[string]bool{}
		for _, k := range keys {
			listed[types.Format(k[0])+"|"+types.Format(k[1])] = true
		}
		for a := int64(-1); a <= 4; a++ {
			for _, b := range append(bs, "w") {
				for v := int64(-1); v <= 4; v++ {
					tuple := []types.Datum{datum(a), datum(b), datum(v)}
					if plan.Eval(where, rel, tuple) && !listed[types.Format(a)+"|"+types.Format(b)] {
						rt.Fatalf("%s selects (%d, %q, %d), whose key FixedKeys does not list: %v", text, a, b, v, keys)
					}
				}
			}
		}
	})
	if fixedSeen == 0 {
		t.Error("no generated WHERE fixed the keys: the test checked nothing")
	}
	for _, tc := range []struct {
		where string
		want  int // keys listed; -1: not fixed
	}{
		{"a = 1 AND b = 'x'", 1},
		{"a IN (1, 2) AND b IN ('x', 'y', 'z')", 6},
		{"(a = 1 AND b = 'x') OR (a = 2 AND b = 'y' AND v > 3)", 2},
		{"a = 1", -1},
		{"a = 1 AND b = 'x' OR v = 2", -1},
		{"a = 1 AND b > 'x'", -1},
	} {
		st, _ := lang.ParseStatement("w", "SELECT * FROM r WHERE "+tc.where)
		where, err := plan.Bind(st.(*lang.Select).Where, rel, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys, ok := plan.FixedKeys(where, rel)
		if got := len(keys); !ok {
			got = -1
			if tc.want != got {
				t.Errorf("%s: not fixed, want %d keys", tc.where, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("%s: %d keys %v, want %d", tc.where, got, keys, tc.want)
		}
	}
}

func datum(v types.Value) types.Datum {
	d, _ := types.DatumOf(v)
	return d
}
