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
	if _, err := Load("nonesuch"); err == nil || !strings.Contains(err.Error(), "neither built in (bigtable, cassandra, pebble) nor a readable file") {
		t.Errorf("missing profile: %v", err)
	}
	if _, err := Load(""); err == nil || !strings.Contains(err.Error(), "give one of bigtable, cassandra, pebble") {
		t.Errorf("no profile: %v", err)
	}
}

// Every target loads by name, is valid, names its engine and prices a
// client sort (cassandra: at 0, as NoSE's model does).
func TestBuiltinTargets(t *testing.T) {
	if got := strings.Join(Targets(), ","); got != "bigtable,cassandra,pebble" {
		t.Fatalf("targets %s", got)
	}
	if DefaultTarget != "pebble" {
		t.Errorf("default target %s, want pebble (kvschema's engine)", DefaultTarget)
	}
	for _, name := range Targets() {
		p, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != name || p.Engine != name {
			t.Errorf("%s: name %q, engine %q", name, p.Name, p.Engine)
		}
		if err := p.Validate(); err != nil {
			t.Error(err)
		}
		if name == "cassandra" {
			if p.SortRowCost != 0 || p.Sort(100) != 0 {
				t.Errorf("cassandra prices a sort: %v", p.SortRowCost)
			}
		} else if !(p.SortRowCost > 0) || p.Sort(100) != 100*p.SortRowCost {
			t.Errorf("%s: sort_row_cost %v, Sort(100) %v", name, p.SortRowCost, p.Sort(100))
		}
	}
	// Bigtable's profile assumes 1 ms round trips; Pebble's none.
	if Bigtable.RTT != 0.001 || Pebble.RTT != 0 {
		t.Errorf("rtt: bigtable %v, pebble %v", Bigtable.RTT, Pebble.RTT)
	}
	// A round trip dominates every Bigtable read: its SI step (two reads)
	// costs about twice a CF's.
	if r := Bigtable.SIQueryCost / Bigtable.CFQueryCost; r < 1.5 || r > 3 {
		t.Errorf("bigtable si/cf query cost %v", r)
	}
	if (Prefix{}).Sort(1e6) != 0 {
		t.Error("Prefix prices a sort")
	}
}

// A profile file written before sort_row_cost existed reads as sorting
// for free; a negative one is refused.
// TestIndexRowCost: the step after an SI prices its rows at IndexRowCost
// when the profile has one, at RowCost when it does not (the paper's
// Algorithm 2, and profiles written before it); other steps are unchanged.
func TestIndexRowCost(t *testing.T) {
	p := Profile{Name: "p", IndexCost: 1, PartitionCost: 0.5, RowCost: 0.1, CFQueryCost: 1, SIQueryCost: 2}
	a := Access{Role: AfterSI, Partitions: 10, Rows: 10}
	without := p.Read(a)
	p.IndexRowCost = 0.4
	if got, want := p.Read(a)-without, 10*(0.4-0.1); math.Abs(got-want) > 1e-12 {
		t.Errorf("after an SI: %v more, want %v", got, want)
	}
	// A local index: the SI step's request brought the rows.
	local := p
	local.LocalIndexes = true
	if got := local.Read(a); math.Abs(got-10*0.4) > 1e-12 {
		t.Errorf("after a local SI: %v, want the rows alone, %v", got, 10*0.4)
	}
	// An SI the store cannot keep with this base is a table of its own,
	// read before the base, on kvschema's engine; Cassandra keeps any.
	kept := a
	kept.ClientIndex = true
	if got, want := local.Read(kept), p.Read(a); got != want {
		t.Errorf("after a client-kept SI: %v, want the non-local cost %v", got, want)
	}
	cas := local
	cas.Engine = EngineCassandra
	if got := cas.Read(kept); math.Abs(got-10*0.4) > 1e-12 {
		t.Errorf("after a Cassandra SI on any column: %v, want the rows alone, %v", got, 10*0.4)
	}
	for _, r := range []Role{Plain, SIAlone, SIFirst} {
		a.Role = r
		q := p
		q.IndexRowCost = 0
		if p.Read(a) != q.Read(a) {
			t.Errorf("role %v: %v with an index row cost, %v without", r, p.Read(a), q.Read(a))
		}
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "p.json")
	os.WriteFile(f, []byte(`{"cf_query_cost": 1e-5, "si_query_cost": 1e-5, "index_row_cost": -1}`), 0o644)
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), "index_row_cost = -1") {
		t.Errorf("negative index row cost: %v", err)
	}
}

func TestSortRowCostField(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "p.json")
	os.WriteFile(f, []byte(`{"index_cost": 1e-5, "cf_query_cost": 1e-5, "si_query_cost": 1e-5}`), 0o644)
	if p, err := Load(f); err != nil || p.SortRowCost != 0 || p.Engine != "" {
		t.Fatalf("%+v %v", p, err)
	}
	os.WriteFile(f, []byte(`{"cf_query_cost": 1e-5, "si_query_cost": 1e-5, "sort_row_cost": -1}`), 0o644)
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), "sort_row_cost = -1") {
		t.Errorf("negative sort cost: %v", err)
	}
}

// CellCost prices each cell of every row a step reads, in every role; a
// profile without it (NoSE's model, profiles written before it) prices a
// row alike whatever its width.
func TestCellCost(t *testing.T) {
	p := Profile{Name: "p", IndexCost: 1, PartitionCost: 0.5, RowCost: 0.1, CFQueryCost: 1, SIQueryCost: 2, IndexRowCost: 0.4}
	for _, local := range []bool{false, true} {
		p.LocalIndexes = local
		for _, r := range []Role{Plain, Scan, SIAlone, SIFirst, AfterSI} {
			narrow := Access{Role: r, Partitions: 3, Rows: 10, Cells: 1}
			wide := narrow
			wide.Cells = 9
			q := p
			if q.Read(wide) != q.Read(narrow) {
				t.Errorf("role %v, no cell cost: %v for rows of 9 cells, %v for 1", r, q.Read(wide), q.Read(narrow))
			}
			q.CellCost = 0.01
			if got, want := q.Read(wide)-p.Read(wide), 10*9*0.01; math.Abs(got-want) > 1e-12 {
				t.Errorf("role %v, local %v: 10 rows of 9 cells cost %v more, want %v", r, local, got, want)
			}
			if zero := (Access{Role: r, Partitions: 3, Rows: 10}); q.Read(zero) != q.Read(narrow) {
				t.Errorf("role %v: 0 cells cost %v, 1 cell %v (0 counts as 1)", r, q.Read(zero), q.Read(narrow))
			}
		}
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "p.json")
	os.WriteFile(f, []byte(`{"cf_query_cost": 1e-5, "si_query_cost": 1e-5, "cell_cost": 2e-7}`), 0o644)
	if got, err := Load(f); err != nil || got.CellCost != 2e-7 {
		t.Errorf("cell_cost: %+v %v", got, err)
	}
	os.WriteFile(f, []byte(`{"cf_query_cost": 1e-5, "si_query_cost": 1e-5, "cell_cost": -1}`), 0o644)
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), "cell_cost = -1") {
		t.Errorf("negative cell cost: %v", err)
	}
}
