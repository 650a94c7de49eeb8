package plan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

const writeDefs = `DEFINE RELATION r { k1 STRING KEY, k2 STRING KEY, v1 STRING, v2 BIGINT };
DEFINE PRIMARY SCHEMA s1 FOR r { TABLE 's1', ROW ordered{k1}:ordered{k2}, QUALIFIER attr_name['k1','k2'], VALUE attr_value['k1','k2'] };
DEFINE SCHEMA s2 FOR r { TABLE 's2', ROW ordered{v2}:ordered{k1}:ordered{k2}, VALUE ordered{v1} };`

// TestWritePlans: a write statement becomes data (its tuples or its read,
// the keys locked first, the assignments), and EXPLAIN prints that data.
func TestWritePlans(t *testing.T) {
	rel := mustCatalog(t, writeDefs).Relation("r")
	plan1 := func(src string, args ...types.Value) (*plan.Write, error) {
		t.Helper()
		st, err := lang.ParseStatement("w.kvs", src)
		if err != nil {
			t.Fatal(err)
		}
		switch x := st.(type) {
		case *lang.Insert:
			return plan.Insert(x, rel, args)
		case *lang.Update:
			return plan.Update(x, rel, args, cost.Prefix{})
		case *lang.Delete:
			return plan.Delete(x, rel, args, cost.Prefix{})
		}
		t.Fatalf("not a write: %s", src)
		return nil, nil
	}
	for _, tc := range []struct {
		src  string
		args []types.Value
		want []string // EXPLAIN lines, in order (each a prefix of its line)
	}{
		{"INSERT INTO r (k2, k1, v2) VALUES ('b', 'a', ?), ('c', 'a', 2)", []types.Value{int64(1)}, []string{
			"CLIENT READ OLD VALUES OF 2 KEYS (an index-like layout is addressed by a non-key attribute)",
			// s1: v2's cell and v1's absence (NULL); s2: one row.
			"UPSERT 2 ROWS INTO r: 6 MUTATIONS OVER s1, s2 IN 1 ATOMIC BATCH",
		}},
		{"UPDATE r SET v1 = 'x' WHERE k1 = ? AND k2 IN ('b', 'c')", []types.Value{"a"}, []string{
			"CLIENT PARALLEL 1-WAY POINT LOOKUP ON 2 KEYS OVER s1",
			"CLIENT LOCK 2 KEYS FIXED BY THE WHERE, THEN READ",
			"UPDATE MATCHING ROWS OF r: DELETE OLD CELLS, PUT NEW CELLS OVER s1, s2 IN 1 ATOMIC BATCH",
		}},
		{"DELETE FROM r WHERE v2 > 10", nil, []string{
			"CLIENT PARALLEL 1-WAY RANGE SCAN OVER s2",
			"CLIENT LOCK THE KEYS READ, THEN READ THEM AGAIN",
			"DELETE MATCHING ROWS OF r: DELETE OLD CELLS OVER s1, s2 IN 1 ATOMIC BATCH",
		}},
	} {
		w, err := plan1(tc.src, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		text, err := w.Explain()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(text), "\n")
		i := 0
		for _, l := range lines {
			if i < len(tc.want) && strings.HasPrefix(strings.TrimSpace(l), tc.want[i]) {
				i++
			}
		}
		if i < len(tc.want) {
			t.Errorf("%s: EXPLAIN lacks %q (in order):\n%s", tc.src, tc.want[i], text)
		}
	}

	w, err := plan1("INSERT INTO r (k2, k1, v2) VALUES ('b', 'a', 7)")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]types.Value{{"a", "b", nil, int64(7)}}, w.Tuples); diff != "" {
		t.Errorf("INSERT tuples (-want +got):\n%s", diff)
	}
	u, err := plan1("UPDATE r SET v2 = ?, v1 = 'z' WHERE v1 = 'q'", int64(3))
	if err != nil {
		t.Fatal(err)
	}
	old := []types.Value{"a", "b", "q", int64(1)}
	if diff := cmp.Diff([]types.Value{"a", "b", "z", int64(3)}, u.New(old)); diff != "" || old[3] != int64(1) {
		t.Errorf("UPDATE's new tuple (-want +got):\n%s (old now %v)", diff, old)
	}
	if u.Keys != nil {
		t.Errorf("a WHERE on a non-key attribute fixed keys %v", u.Keys)
	}
	d, err := plan1("DELETE FROM r WHERE k1 = 'a' AND k2 = 'b'")
	if err != nil {
		t.Fatal(err)
	}
	if d.New(old) != nil || len(d.Keys) != 1 {
		t.Errorf("DELETE: new %v, keys %v", d.New(old), d.Keys)
	}

	for _, tc := range []struct{ src, want string }{
		{"INSERT INTO r (k1, v1) VALUES ('a', 'x')", "w.kvs:1:32: INSERT INTO r: key attribute k2 needs a value"},
		{"INSERT INTO r (k1, k9) VALUES ('a', 'x')", "w.kvs:1:1: relation r has no attribute k9"},
		{"INSERT INTO r (k1, k1) VALUES ('a', 'x')", "w.kvs:1:1: attribute k1 is listed twice"},
		{"INSERT INTO r VALUES ('a', 'b', 'c')", "w.kvs:1:23: INSERT INTO r: 3 values for 4 attributes"},
		{"INSERT INTO r VALUES ('a', 'b', 'c', 'NaN')", "w.kvs:1:38: attribute v2:"},
		{"INSERT INTO r VALUES ('a', 'b', 'c', ?)", "missing value for parameter 1"},
		{"UPDATE r SET k1 = 'x' WHERE k1 = 'a'", "w.kvs:1:14: cannot UPDATE key attribute k1"},
		{"UPDATE r SET nope = 1 WHERE k1 = 'a'", "w.kvs:1:14: relation r has no attribute nope"},
	} {
		if _, err := plan1(tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.src, err, tc.want)
		}
	}
}
