package cost

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The worked numbers of NoSE's Cassandra model and of the SI extension
// (shared/research/nose-algorithms.md §5.1, §8.4).
func TestCassandraFormulas(t *testing.T) {
	p := Cassandra
	for _, tc := range []struct {
		name      string
		got, want float64
		tolerance float64
	}{
		{"single-row lookup", p.Read(Access{Role: Plain, Partitions: 1, Rows: 1}), 0.0092205525, 1e-10},
		{"10 partitions, 10 rows", p.Read(Access{Role: Plain, Partitions: 10, Rows: 10}), 0.021649, 1e-6},
		{"SI step feeding its CF, 2000 rows", p.Read(Access{Role: SIFirst, Partitions: 1, Rows: 2000}), 0.0092142316, 1e-9},
		{"CF step after an SI, 2000 rows", p.Read(Access{Role: AfterSI, Partitions: 2000, Rows: 2000}), 0.0318884223, 1e-9},
		{"insert with one support lookup", p.Write(1, 0) + p.Read(Access{Role: Plain, Partitions: 1, Rows: 1}), 0.022550, 1e-6},
	} {
		if math.Abs(tc.got-tc.want) > tc.tolerance {
			t.Errorf("%s: %.10f, want %.10f", tc.name, tc.got, tc.want)
		}
	}
	if alone, plain := p.Read(Access{Role: SIAlone, Partitions: 1, Rows: 5}), p.Read(Access{Role: Plain, Partitions: 1, Rows: 5}); math.Abs(alone-plain*p.SIQueryCost/p.CFQueryCost) > 1e-15 {
		t.Errorf("eq. 5: SI alone %v, want CF cost × si/cf", alone)
	}
	if got := p.Write(2, 3); math.Abs(got-(2*p.InsertCost+3*p.DeleteCost)) > 1e-15 {
		t.Errorf("eq. 6: 2 puts, 3 deletes: %v", got)
	}
}

func TestLoad(t *testing.T) {
	if p, err := Load("cassandra"); err != nil || p != Cassandra {
		t.Fatalf("built-in: %v %v", p, err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "pebble.json")
	os.WriteFile(good, []byte(`{"index_cost": 1e-5, "partition_cost": 2e-6, "row_cost": 1e-7, "insert_cost": 3e-6, "delete_cost": 2e-6, "cf_query_cost": 1e-5, "si_query_cost": 1.5e-5}`), 0o644)
	p, err := Load(good)
	if err != nil || p.Name != good || p.RowCost != 1e-7 {
		t.Fatalf("file: %+v %v", p, err)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"index_cost": -1, "cf_query_cost": 1, "si_query_cost": 1}`, "index_cost = -1 must be a finite number"},
		{`{"cf_query_cost": 0}`, "cf_query_cost must be > 0"},
		{`{"cf_query_cost": 2, "si_query_cost": 1}`, "si_query_cost (1) must be ≥ cf_query_cost (2)"},
		{`{"index_cost": 1, "typo": 2}`, "unknown field"},
	} {
		f := filepath.Join(dir, "bad.json")
		os.WriteFile(f, []byte(tc.body), 0o644)
		if _, err := Load(f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	if _, err := Load("nonesuch"); err == nil || !strings.Contains(err.Error(), "neither built in (cassandra) nor a readable file") {
		t.Errorf("missing profile: %v", err)
	}
}
