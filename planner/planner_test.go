package planner_test

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/workload"
)

// rubisPool reads testdata/rubis_pool.kvs: several advised RUBiS schemas in
// one, so most queries have several plans to choose from.
func rubisPool(t *testing.T, workloadFile string) (qs, ws []*workload.Statement, s *catalog.Schema) {
	t.Helper()
	m, _, w, err := rubis.Parse(workloadFile)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/rubis_pool.kvs")
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := lang.ParseScript("testdata/rubis_pool.kvs", src)
	if err != nil {
		t.Fatal(err)
	}
	s, err = catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range w.Statements {
		if st.Query != nil {
			qs = append(qs, st)
		} else {
			ws = append(ws, st)
		}
	}
	return qs, ws, s
}

// rowsModel prices a lookup by what it touches and a write by its rows: a
// model unlike the paper's, so plans chosen under it differ.
type rowsModel struct{}

func (rowsModel) Read(a cost.Access) float64 {
	c := 1 + a.Partitions + 0.01*a.Rows
	if a.Role != cost.Plain {
		c *= 3
	}
	return c
}
func (rowsModel) Write(puts, deletes float64) float64 { return puts + deletes }
func (rowsModel) Sort(rows float64) float64           { return 0.001 * rows }

// allPaths lists every start-to-end path of d (nil and false beyond limit).
func allPaths(d *planner.DAG, limit int) ([][]int, bool) {
	var out [][]int
	var walk func(s int, path []int) bool
	walk = func(s int, path []int) bool {
		if d.States[s].End {
			out = append(out, append([]int(nil), path...))
			return len(out) <= limit
		}
		for _, a := range d.States[s].Out {
			if !walk(d.Arcs[a].To, append(path, a)) {
				return false
			}
		}
		return true
	}
	if !walk(0, nil) {
		return nil, false
	}
	return out, true
}

// priced recomputes a path's cost from its steps' estimates with m, and
// whether every step reads an allowed index.
func priced(d *planner.DAG, m cost.Model, path []int, allow func(*catalog.Index) bool) (float64, bool) {
	c := 0.0
	for _, a := range path {
		l := d.Arcs[a].Step
		if allow != nil && !allow(l.Index) {
			return 0, false
		}
		c += m.Read(cost.Access{Role: l.Role, Partitions: l.Partitions, Rows: l.Rows, Cells: planner.Cells(l.Index)})
	}
	if p := d.Plan(path); p.Sort {
		c += m.Sort(p.Steps[len(p.Steps)-1].Kept) // the client sort of the result
	}
	return c, true
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// TestShortestPathIsCheapest checks the planner's choice against exhaustive
// enumeration of every plan in the DAG, under two cost models and with
// random subsets of the indexes allowed (as the advisor's local search asks).
func TestShortestPathIsCheapest(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, wf := range []string{"workload.kvs", "workload_secondary.kvs"} {
		qs, _, s := rubisPool(t, wf)
		pool := planner.NewPool(s.Indexes)
		for _, cm := range []cost.Model{cost.Cassandra, rowsModel{}} {
			checked, choices := 0, 0
			for _, st := range qs {
				d := planner.Build(st.Query, cm, pool)
				paths, ok := allPaths(d, 100000)
				if !ok {
					continue
				}
				checked++
				if len(paths) > 1 {
					choices++
				}
				for trial := 0; trial < 8; trial++ {
					var allow func(*catalog.Index) bool
					if trial > 0 {
						in := map[*catalog.Index]bool{}
						for _, x := range s.Indexes {
							in[x] = r.Intn(3) > 0
						}
						allow = func(x *catalog.Index) bool { return in[x] }
					}
					best, found := math.Inf(1), false
					for _, p := range paths {
						if c, ok := priced(d, cm, p, allow); ok && c < best {
							best, found = c, true
						}
					}
					got, c := d.ShortestPath(allow)
					if (got != nil) != found {
						t.Fatalf("%s: shortest path %v, but exhaustive search found a plan: %t", st.Tag, got, found)
					}
					if !found {
						continue
					}
					if pc, _ := priced(d, cm, got, allow); !near(pc, best) || !near(c, best) {
						t.Fatalf("%s (%T, trial %d): shortest path costs %v (reported %v), exhaustive search %v", st.Tag, cm, trial, pc, c, best)
					}
					if trial == 0 {
						if pl := d.Cheapest(); pl == nil || !near(pl.Cost, best) {
							t.Fatalf("%s: Cheapest() = %v, want cost %v", st.Tag, pl, best)
						}
					}
				}
			}
			if checked < len(qs)*3/4 || choices < len(qs)/4 {
				t.Fatalf("%s: only %d of %d queries checked, %d with a choice of plans", wf, checked, len(qs), choices)
			}
		}
	}
}

// TestCutIsBuild: cutting every step of some indexes from a DAG leaves the
// DAG Build gives over the others, state for state and arc for arc (the
// advisor cuts its DAGs instead of building them again), and a cut that
// removes arcs leaves no state the start does not reach.
func TestCutIsBuild(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, wf := range []string{"workload.kvs", "workload_secondary.kvs"} {
		qs, ws, s := rubisPool(t, wf)
		var queries []*catalog.Query
		for _, st := range qs {
			queries = append(queries, st.Query)
		}
		for _, st := range ws {
			for _, x := range s.Indexes {
				if u, ok := planner.Maintain(st.Write, x); ok {
					queries = append(queries, u.Support...)
				}
			}
		}
		pool := planner.NewPool(s.Indexes)
		cut := 0
		for trial := 0; trial < 4; trial++ {
			drop := map[*catalog.Index]bool{}
			var kept []*catalog.Index
			for _, x := range s.Indexes {
				if drop[x] = r.Intn(4) == 0; !drop[x] {
					kept = append(kept, x)
				}
			}
			less := planner.NewPool(kept)
			for _, q := range queries {
				d := planner.Build(q, cost.Cassandra, pool)
				cut += d.Cut(func(a int) bool { return drop[d.Arcs[a].Step.Index] })
				want := planner.Build(q, cost.Cassandra, less)
				if got, want := dagText(d), dagText(want); got != want {
					t.Fatalf("%s: cut DAG\n%s\nBuild over the rest\n%s", q.Describe(), got, want)
				}
			}
		}
		if cut == 0 {
			t.Fatalf("%s: no cut removed an arc", wf)
		}
	}
	// A cut of some arcs of an index (as the advisor's dominance pruning
	// does): what the start no longer reaches is not live.
	qs, _, s := rubisPool(t, "workload_secondary.kvs")
	pool := planner.NewPool(s.Indexes)
	for _, st := range qs {
		d := planner.Build(st.Query, cost.Cassandra, pool)
		d.Cut(func(a int) bool { return d.Arcs[a].From == 0 && a%2 == 0 })
		reached := make([]bool, len(d.States))
		reached[0] = true
		for i := range d.States { // states are in discovery order
			for _, a := range d.States[i].Out {
				if reached[i] {
					reached[d.Arcs[a].To] = true
				}
			}
		}
		for i := range d.States {
			if !reached[i] {
				t.Fatalf("state %d of %s is not reached from the start after the cut", i, st.Tag)
			}
		}
	}
}

// TestPruneKeepsCheapest: after Prune, the least cost of a plan within any
// set of indexes is what it was (the advisor prunes its DAGs so), and
// Prune removes steps.
func TestPruneKeepsCheapest(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	pruned := 0
	for _, wf := range []string{"workload.kvs", "workload_secondary.kvs"} {
		qs, ws, s := rubisPool(t, wf)
		var queries []*catalog.Query
		for _, st := range qs {
			queries = append(queries, st.Query)
		}
		for _, st := range ws {
			for _, x := range s.Indexes {
				if u, ok := planner.Maintain(st.Write, x); ok {
					queries = append(queries, u.Support...)
				}
			}
		}
		pool := planner.NewPool(s.Indexes)
		for _, q := range queries {
			d, whole := planner.Build(q, cost.Cassandra, pool), planner.Build(q, cost.Cassandra, pool)
			pruned += d.Prune()
			for trial := 0; trial < 20; trial++ {
				var allow func(*catalog.Index) bool
				if trial > 0 {
					in := map[*catalog.Index]bool{}
					for _, x := range s.Indexes {
						in[x] = r.Intn(4) > 0
					}
					allow = func(x *catalog.Index) bool { return in[x] }
				}
				p1, c1 := whole.ShortestPath(allow)
				p2, c2 := d.ShortestPath(allow)
				if (p1 == nil) != (p2 == nil) || c1 != c2 {
					t.Fatalf("%s (trial %d): least cost %v (plan %v) before Prune, %v (plan %v) after", q.Describe(), trial, c1, p1, c2, p2)
				}
			}
		}
	}
	if pruned == 0 {
		t.Fatal("Prune removed nothing")
	}
}

// dagText lists a DAG's states and arcs, in order.
func dagText(d *planner.DAG) string {
	var b strings.Builder
	for i, st := range d.States {
		fmt.Fprintf(&b, "state %d live %v end %v out %v\n", i, st.Live, st.End, st.Out)
	}
	for i, a := range d.Arcs {
		fmt.Fprintf(&b, "arc %d %d>%d %s %v %v\n", i, a.From, a.To, a.Step.Index.Key, a.Step.Map, a.Step.Cost)
	}
	return b.String()
}

// TestModelChangesPlans shows the cost model is a seam: the same pool
// yields other plans under another model, each the cheapest under it.
func TestModelChangesPlans(t *testing.T) {
	qs, _, s := rubisPool(t, "workload_secondary.kvs")
	a, b := planner.New(s, cost.Cassandra), planner.New(s, rowsModel{})
	differ := 0
	for _, st := range qs {
		pa, err := a.Query(st.Query)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Query(st.Query)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range pb.Steps {
			sort := 0.0
			if pb.Sort && i == len(pb.Steps)-1 {
				sort = (rowsModel{}).Sort(l.Kept)
			}
			if !near(l.SortCost, sort) {
				t.Fatalf("%s: step on %s has sort cost %v, the model says %v", st.Tag, l.Index.Name, l.SortCost, sort)
			}
			if want := (rowsModel{}).Read(cost.Access{Role: l.Role, Partitions: l.Partitions, Rows: l.Rows}) + sort; !near(l.Cost, want) {
				t.Fatalf("%s: step on %s costs %v, the model says %v", st.Tag, l.Index.Name, l.Cost, want)
			}
		}
		if pa.Describe("") != pb.Describe("") {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("no query is planned differently under another cost model")
	}
}

// TestWriteUpkeep checks that every write's upkeep is priced by the model
// and every support query it needs has a plan.
func TestWriteUpkeep(t *testing.T) {
	_, ws, s := rubisPool(t, "workload_secondary.kvs")
	p := planner.New(s, rowsModel{})
	n := 0
	for _, st := range ws {
		ups, err := p.Write(st.Write)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			n++
			if u.WriteCost != u.Puts+u.Deletes {
				t.Errorf("%s on %s: write cost %v, want %v", st.Tag, u.Index.Name, u.WriteCost, u.Puts+u.Deletes)
			}
			for _, sp := range u.AllSupports() {
				if sp.Plan == nil || len(sp.Plan.Steps) == 0 {
					t.Errorf("%s on %s: support %s has no plan", st.Tag, u.Index.Name, sp.Query.Describe())
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no upkeep")
	}
}

// TestCannotAnswer: a schema lacking what a query needs gets an error
// saying what to add, not a plan.
func TestCannotAnswer(t *testing.T) {
	qs, _, s := rubisPool(t, "workload.kvs")
	var only []*catalog.Index
	for _, x := range s.Indexes {
		if x.Name == "norm_cf_categories_by_id" {
			only = append(only, x)
		}
	}
	if len(only) != 1 {
		t.Fatal("testdata lacks norm_cf_categories_by_id")
	}
	p := planner.New(&catalog.Schema{Indexes: only, Base: map[*catalog.Index]*catalog.Index{}}, cost.Cassandra)
	failed := 0
	for _, st := range qs {
		if _, err := p.Query(st.Query); err != nil {
			failed++
			if !strings.Contains(err.Error(), "add a column family") {
				t.Fatalf("%s: %v", st.Tag, err)
			}
		}
	}
	if failed == 0 {
		t.Fatal("one CF answered every query")
	}
}

// TestClientSortCost: a plan that sorts its result on the client costs
// rows × SortRowCost more than the same lookup without ORDER BY, and one
// whose column family delivers the order costs nothing more. The numbers
// are worked by hand from eq. 4: a lookup of 1 partition of x_by_grp holds
// ROWS/CARDINALITY(grp) = 1000/10 = 100 rows, so it costs
// IndexCost + 1·PartitionCost + 100·RowCost = 1 + 0.1 + 100·0.01 = 2.1,
// and sorting its 100 rows 100·0.001 = 0.1 more.
func TestClientSortCost(t *testing.T) {
	const schema = `
DEFINE RELATION x ROWS 1000 { id BIGINT KEY SIZE 8, grp BIGINT SIZE 8 CARDINALITY 10, v BIGINT SIZE 8 CARDINALITY 1000 };
DEFINE COLUMN FAMILY x_by_grp FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES (x.v) };
DEFINE COLUMN FAMILY x_by_grp_v FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.v, x.id), VALUES () };
`
	const wl = `
DEFINE WORKLOAD w MIXES (m) {
  GROUP g WEIGHTS (m 1) {
    SELECT x.id, x.v FROM x WHERE x.grp = ?; -- plain
    SELECT x.id, x.v FROM x WHERE x.grp = ? ORDER BY x.v; -- sorted
  }
};
`
	all, w := schemaAndWorkload(t, "sort", schema, wl)
	prof := cost.Profile{Name: "hand", IndexCost: 1, PartitionCost: 0.1, RowCost: 0.01, CFQueryCost: 1, SIQueryCost: 1, SortRowCost: 0.001}
	only := func(name string) *catalog.Schema {
		for _, x := range all.Indexes {
			if x.Name == name {
				return &catalog.Schema{Indexes: []*catalog.Index{x}, Base: map[*catalog.Index]*catalog.Index{}}
			}
		}
		t.Fatalf("no index %s", name)
		return nil
	}
	planOf := func(s *catalog.Schema, tag string, p cost.Profile) *plan.Query {
		for _, st := range w.Statements {
			if st.Tag == tag {
				pl, err := planner.New(s, p).Query(st.Query)
				if err != nil {
					t.Fatal(err)
				}
				return pl
			}
		}
		t.Fatalf("no statement %s", tag)
		return nil
	}
	unordered := only("x_by_grp")
	for _, tc := range []struct {
		s        *catalog.Schema
		tag      string
		prof     cost.Profile
		cost     float64
		sort     bool
		sortCost float64
	}{
		{unordered, "plain", prof, 2.1, false, 0},
		{unordered, "sorted", prof, 2.2, true, 0.1},
		{only("x_by_grp_v"), "sorted", prof, 2.1, false, 0},
		{unordered, "sorted", cost.Profile{Name: "free sort", IndexCost: 1, PartitionCost: 0.1, RowCost: 0.01, CFQueryCost: 1, SIQueryCost: 1}, 2.1, true, 0},
	} {
		pl := planOf(tc.s, tc.tag, tc.prof)
		if pl.Sort != tc.sort || !near(pl.Cost, tc.cost) || !near(pl.Steps[len(pl.Steps)-1].SortCost, tc.sortCost) {
			t.Errorf("%s on %s (%s): sort %t, cost %v, sort cost %v; want %t, %v, %v\n%s", tc.tag, tc.s.Indexes[0].Name, tc.prof.Name,
				pl.Sort, pl.Cost, pl.Steps[len(pl.Steps)-1].SortCost, tc.sort, tc.cost, tc.sortCost, pl.Describe(""))
		}
	}
	// With both CFs, whose lookups cost the same (2.1), the sort decides:
	// the CF that delivers the order wins.
	if pl := planOf(all, "sorted", prof); pl.Steps[0].Index.Name != "x_by_grp_v" || pl.Sort {
		t.Errorf("with both CFs the sorted query reads %s (sort %t), want x_by_grp_v without a sort", pl.Steps[0].Index.Name, pl.Sort)
	}
	if d := planOf(unordered, "sorted", prof).Describe(""); !strings.Contains(d, "client sort by x.v (100 rows, cost 0.1, in step 1's)") {
		t.Errorf("the plan does not show its sort's cost:\n%s", d)
	}
}

// TestPartitionBucketsCost: a read of one partition of a column family
// with N partition buckets costs N partitions (it reads each bucket); a
// point lookup of a whole key costs one, and so does the same read of the
// unbucketed column family.
func TestPartitionBucketsCost(t *testing.T) {
	const schema = `
DEFINE RELATION x ROWS 1000 { id BIGINT KEY SIZE 8, grp BIGINT SIZE 8 CARDINALITY 10, v BIGINT SIZE 8 CARDINALITY 1000 };
DEFINE COLUMN FAMILY plain FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES (x.v) };
DEFINE COLUMN FAMILY spread FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES (x.v), PARTITION_BUCKETS = 4 };
`
	const wl = `
DEFINE WORKLOAD w MIXES (m) {
  GROUP g WEIGHTS (m 1) {
    SELECT x.id, x.v FROM x WHERE x.grp = ?; -- partition
    SELECT x.v FROM x WHERE x.grp = ? AND x.id = ?; -- point
  }
};
`
	all, w := schemaAndWorkload(t, "buckets", schema, wl)
	only := func(name string) *catalog.Schema {
		return &catalog.Schema{Indexes: []*catalog.Index{all.Index(name)}, Base: map[*catalog.Index]*catalog.Index{}}
	}
	partitions := func(s *catalog.Schema, tag string) float64 {
		for _, st := range w.Statements {
			if st.Tag == tag {
				pl, err := planner.New(s, cost.Cassandra).Query(st.Query)
				if err != nil {
					t.Fatal(err)
				}
				return pl.Steps[0].Partitions
			}
		}
		t.Fatalf("no statement %s", tag)
		return 0
	}
	for _, tc := range []struct {
		cf, tag string
		want    float64
	}{
		{"plain", "partition", 1}, {"spread", "partition", 4},
		{"plain", "point", 1}, {"spread", "point", 1},
	} {
		if got := partitions(only(tc.cf), tc.tag); got != tc.want {
			t.Errorf("%s on %s reads %g partitions, want %g", tc.tag, tc.cf, got, tc.want)
		}
	}
	// Both in the schema: the partition read prefers the unbucketed CF.
	pl, err := planner.New(all, cost.Cassandra).Query(w.Statements[0].Query)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Steps[0].Index.Name != "plain" {
		t.Errorf("the partition read uses %s", pl.Steps[0].Index.Name)
	}
}

// schemaAndWorkload reads a script of relations and column families, and a
// workload over them, named after name.
func schemaAndWorkload(t *testing.T, name, schema, wl string) (*catalog.Schema, *workload.Workload) {
	t.Helper()
	stmts, err := lang.ParseScript(name+".kvs", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	all, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(m, name+"_workload.kvs", []byte(wl))
	if err != nil {
		t.Fatal(err)
	}
	return all, w
}

// TestCellCost: a step's rows cost their cells too (cost.Profile.CellCost):
// of two column families answering a query alike, the one whose rows hold
// fewer values wins, by rows × the difference in cells × CellCost; a row
// without values costs its marker cell.
func TestCellCost(t *testing.T) {
	const schema = `
DEFINE RELATION x ROWS 1000 { id BIGINT KEY SIZE 8, grp BIGINT SIZE 8 CARDINALITY 10, v BIGINT SIZE 8 CARDINALITY 1000,
  a BIGINT SIZE 8, b BIGINT SIZE 8, c BIGINT SIZE 8, d BIGINT SIZE 8 };
DEFINE COLUMN FAMILY narrow FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES (x.v) };
DEFINE COLUMN FAMILY wide FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES (x.v, x.a, x.b, x.c, x.d) };
DEFINE COLUMN FAMILY keys FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES () };
`
	const wl = `
DEFINE WORKLOAD w MIXES (m) {
  GROUP g WEIGHTS (m 1) {
    SELECT x.id, x.v FROM x WHERE x.grp = ?; -- v
    SELECT x.id FROM x WHERE x.grp = ?; -- ids
  }
};
`
	all, w := schemaAndWorkload(t, "cells", schema, wl)
	prof := cost.Profile{Name: "cells", IndexCost: 1, PartitionCost: 0.1, RowCost: 0.01, CFQueryCost: 1, SIQueryCost: 1, CellCost: 0.001}
	byName := map[string]*catalog.Index{}
	for _, x := range all.Indexes {
		byName[x.Name] = x
	}
	if c := [3]float64{planner.Cells(byName["narrow"]), planner.Cells(byName["wide"]), planner.Cells(byName["keys"])}; c != [3]float64{1, 5, 1} {
		t.Errorf("cells per row of narrow, wide, keys: %v, want [1 5 1]", c)
	}
	planOf := func(s *catalog.Schema, tag string) *plan.Query {
		for _, st := range w.Statements {
			if st.Tag == tag {
				pl, err := planner.New(s, prof).Query(st.Query)
				if err != nil {
					t.Fatal(err)
				}
				return pl
			}
		}
		t.Fatalf("no statement %s", tag)
		return nil
	}
	one := func(name string) *catalog.Schema {
		return &catalog.Schema{Indexes: []*catalog.Index{byName[name]}, Base: map[*catalog.Index]*catalog.Index{}}
	}
	// 100 rows of a partition: 1 + 0.1 + 100·0.01 + 100·cells·0.001.
	for _, tc := range []struct {
		cf, tag string
		cost    float64
	}{{"narrow", "v", 2.2}, {"wide", "v", 2.6}, {"keys", "ids", 2.2}} {
		if pl := planOf(one(tc.cf), tc.tag); !near(pl.Cost, tc.cost) {
			t.Errorf("%s on %s: cost %v, want %v", tc.tag, tc.cf, pl.Cost, tc.cost)
		}
	}
	if pl := planOf(all, "v"); pl.Steps[0].Index.Name != "narrow" {
		t.Errorf("with every CF, v reads %s, want narrow (fewer cells a row)", pl.Steps[0].Index.Name)
	}
}

// TestClientKeptSI: on kvschema's engine, a store keeps an SI as a local
// index (one request for the index and its base rows) only on a base that
// holds the SI's value as a value cell (catalog.CanKeepLocal); a base that
// holds it in its row key is read after the SI's own table, in a request
// of its own, and is priced so even where the profile has LocalIndexes.
// Cassandra's own indexes keep any column. At run time (Schema.Local set)
// only the SI's local base is read in the SI's request.
func TestClientKeptSI(t *testing.T) {
	const rel = `
DEFINE RELATION u ROWS 1000 { id BIGINT KEY SIZE 8, rating BIGINT SIZE 8 CARDINALITY 10, name STRING SIZE 10 };
`
	const keyed = `DEFINE COLUMN FAMILY keyed FOR u { PARTITION KEY (u.id), CLUSTERING KEY (u.rating), VALUES (u.name) };
`
	const valued = `DEFINE COLUMN FAMILY valued FOR u { PARTITION KEY (u.id), CLUSTERING KEY (), VALUES (u.rating, u.name) };
`
	const wl = `
DEFINE WORKLOAD w MIXES (m) {
  GROUP g WEIGHTS (m 1) {
    SELECT u.name FROM u WHERE u.rating = ?; -- q
  }
};
`
	pebble := cost.Profile{Name: "pebble", Engine: cost.EnginePebble, LocalIndexes: true, IndexCost: 1, PartitionCost: 0.1, RowCost: 0.01,
		CFQueryCost: 1, SIQueryCost: 1, IndexRowCost: 0.02}
	cassandra := pebble
	cassandra.Name, cassandra.Engine = "cassandra", cost.EngineCassandra
	// The SI step: 1 + 0.1 + 100 rows·0.01·0 = 1.1 (SIQueryCost =
	// CFQueryCost); then 100 base rows at 0.02 (local), or in a request
	// of their own: 1 + 100·0.1·0 + 100·0.02 = 3.
	for _, tc := range []struct {
		name, ddl string
		local     bool // the schema as the runtime has it (Schema.Local)
		prof      cost.Profile
		after     string
		cost      float64
	}{
		{"on valued", keyed + valued + "DEFINE SECONDARY INDEX si ON valued (u.rating);", false, pebble, "valued", 2},
		{"on keyed", keyed + "DEFINE SECONDARY INDEX si ON keyed (u.rating);", false, pebble, "keyed", 3},
		{"on keyed, cassandra", keyed + "DEFINE SECONDARY INDEX si ON keyed (u.rating);", false, cassandra, "keyed", 2},
		{"on keyed, run time", keyed + "DEFINE SECONDARY INDEX si ON keyed (u.rating);", true, pebble, "keyed", 3},
		{"on valued, run time", valued + "DEFINE SECONDARY INDEX si ON valued (u.rating);", true, pebble, "valued", 2},
	} {
		s, w := schemaAndWorkload(t, "kept", rel+tc.ddl, wl)
		if tc.local {
			s.KeepLocal(true)
		}
		pl, err := planner.New(s, tc.prof).Query(w.Statements[0].Query)
		if err != nil {
			t.Fatal(err)
		}
		if last := pl.Steps[len(pl.Steps)-1]; len(pl.Steps) != 2 || last.Index.Name != tc.after || !near(last.Cost, tc.cost) {
			t.Errorf("%s: %d steps, the last on %s costing %v; want 2, on %s, %v\n%s", tc.name, len(pl.Steps), last.Index.Name, last.Cost, tc.after, tc.cost, pl.Describe(""))
		}
	}
	s, _ := schemaAndWorkload(t, "kept", rel+keyed+valued+"DEFINE SECONDARY INDEX si ON valued (u.rating);", wl)
	var si, k, v *catalog.Index
	for _, x := range s.Indexes {
		switch x.Name {
		case "si":
			si = x
		case "keyed":
			k = x
		case "valued":
			v = x
		}
	}
	if catalog.CanKeepLocal(si, k) || !catalog.CanKeepLocal(si, v) {
		t.Errorf("CanKeepLocal: keyed %v, valued %v; want false, true", catalog.CanKeepLocal(si, k), catalog.CanKeepLocal(si, v))
	}
}

// TestLimitPipelineCost: with a LIMIT, a plan the runtime stops reading
// once the LIMIT is met (no client sort, a first lookup that does not stop
// at the LIMIT itself: a client filter) is priced on the share of its
// rows it reads, 2·LIMIT over the rows it returns; a LIMIT above half the
// result, a first lookup that stops at the LIMIT, or a client sort keep
// the full price.
func TestLimitPipelineCost(t *testing.T) {
	const schema = `
DEFINE RELATION x ROWS 1000 { id BIGINT KEY SIZE 8, grp BIGINT SIZE 8 CARDINALITY 10, v BIGINT SIZE 8 CARDINALITY 1000, flag BIGINT SIZE 8 CARDINALITY 4 };
DEFINE COLUMN FAMILY x_by_grp FOR x { PARTITION KEY (x.grp), CLUSTERING KEY (x.id), VALUES (x.v, x.flag) };
`
	const wl = `
DEFINE WORKLOAD w MIXES (m) {
  GROUP g WEIGHTS (m 1) {
    SELECT x.id FROM x WHERE x.grp = ? AND x.flag = ? LIMIT 5; -- filtered
    SELECT x.id FROM x WHERE x.grp = ? AND x.flag = ? LIMIT 20; -- most
    SELECT x.id FROM x WHERE x.grp = ? LIMIT 5; -- limited
    SELECT x.id FROM x WHERE x.grp = ? AND x.flag = ? ORDER BY x.v LIMIT 5; -- sorted
  }
};
`
	s, w := schemaAndWorkload(t, "limit", schema, wl)
	prof := cost.Profile{Name: "hand", IndexCost: 1, PartitionCost: 0.1, RowCost: 0.01, CFQueryCost: 1, SIQueryCost: 1, SortRowCost: 0.001}
	want := map[string]struct{ cost, read float64 }{
		"filtered": {1 + 0.1 + 0.01*100*0.4, 0.4}, // 100 rows, 25 pass: 10 of 25 needed
		"most":     {1 + 0.1 + 0.01*100, 0},
		"limited":  {1 + 0.1 + 0.01*5, 0},
		"sorted":   {1 + 0.1 + 0.01*100 + 0.001*25, 0},
	}
	for _, st := range w.Statements {
		pl, err := planner.New(s, prof).Query(st.Query)
		if err != nil {
			t.Fatal(err)
		}
		wt := want[st.Tag]
		if !near(pl.Cost, wt.cost) || !near(pl.Steps[0].Read, wt.read) {
			t.Errorf("%s: cost %v, read share %v; want %v, %v\n%s", st.Tag, pl.Cost, pl.Steps[0].Read, wt.cost, wt.read, pl.Describe(""))
		}
	}
	// Beside a column family keyed by the flag too, whose plan stops at
	// the LIMIT (its 5 rows are not the query's result), the filtered
	// plan keeps its share.
	all, w2 := schemaAndWorkload(t, "limit2", schema+`
DEFINE COLUMN FAMILY x_by_grp_flag FOR x { PARTITION KEY (x.grp, x.flag), CLUSTERING KEY (x.id), VALUES () };`, wl)
	d := planner.Build(w2.Statements[0].Query, prof, planner.NewPool(all.Indexes))
	found := false
	for _, a := range d.LiveArcs() {
		if st := d.Arcs[a].Step; st.Index.Name == "x_by_grp" {
			found = true
			if !near(st.Read, 0.4) || !near(st.Cost, want["filtered"].cost) {
				t.Errorf("beside x_by_grp_flag, x_by_grp's step: read share %v, cost %v; want 0.4, %v", st.Read, st.Cost, want["filtered"].cost)
			}
		}
	}
	if !found {
		t.Fatal("no plan reads x_by_grp")
	}
}
