// Package cost owns the cost model the advisor minimizes: the constants of a
// backend (a Profile) and the formulas of seed 000 — eq. 4 for a column-family
// lookup, Algorithm 2 for steps through a secondary index, eq. 6 for writes.
//
// A lookup probing P partitions and returning R rows of C cells each costs
// IndexCost + P·PartitionCost + R·RowCost + R·C·CellCost (eq. 4, NoSE's
// Cassandra model, with a cost per cell: kvschema stores a value per cell,
// and a wide row costs more to read than a narrow one; CellCost is 0 in
// NoSE's model, and R·C·CellCost below is added to every step reading R
// rows).
// With S = CFQueryCost, D = SIQueryCost − CFQueryCost and J = S·max(R, 1):
// an SI step that answers the query alone costs eq. 4 × SIQueryCost/S
// (eq. 5); an SI step feeding its base CF costs
// IndexCost + P·PartitionCost + R·RowCost·D/J; the base-CF step after it
// IndexCost + P·PartitionCost·D/J + R·RowCost — or, with a calibrated
// IndexRowCost, its rows at that cost, and nothing more where the engine
// answers an SI and its base rows in one request (LocalIndexes). Writing
// R rows costs
// R·InsertCost, deleting them R·DeleteCost (eq. 6). A query whose ORDER BY
// no index delivers sorts its K result rows on the client: K·SortRowCost,
// charged on the plan's last step (Model.Sort).
//
// Profiles are per target, the engine a schema is advised for (see
// Builtin): kvschema's engine on Pebble (the default) or on Bigtable, whose
// constants package calibrate measured (profiles.go says how, where and
// when), and Cassandra, NoSE's constants for schemas exported to Cassandra.
package cost

//go:generate go run ../calibrate/genprofiles -o profiles.go

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Profile holds one backend's constants, in seconds.
type Profile struct {
	Name          string  `json:"name"`
	IndexCost     float64 `json:"index_cost"`
	PartitionCost float64 `json:"partition_cost"`
	RowCost       float64 `json:"row_cost"`
	InsertCost    float64 `json:"insert_cost"`
	DeleteCost    float64 `json:"delete_cost"`
	CFQueryCost   float64 `json:"cf_query_cost"`
	SIQueryCost   float64 `json:"si_query_cost"`
	// SortRowCost is the client's cost per row of a query's result it
	// sorts (an ORDER BY no index delivers). Profiles written before it
	// existed read as 0: sorting is free, as in NoSE's model.
	SortRowCost float64 `json:"sort_row_cost"`
	// IndexRowCost is the cost of a row of a base column family read
	// through a secondary index (the step after an SI): a seek, where a
	// row of a scan is RowCost. With it, on an engine with LocalIndexes,
	// the step after an SI costs its rows alone: the store answers the
	// index and the base rows in the SI step's one request (seed 000's
	// footnote 4), which paid IndexCost. Profiles written before it
	// existed read as 0: the paper's Algorithm 2 as it is (the step after
	// an SI a lookup of its own, its rows at RowCost).
	IndexRowCost float64 `json:"index_row_cost,omitempty"`
	// CellCost is the cost of each cell of a row read (Access.Cells per
	// row), beyond RowCost: kvschema keeps each value of a row in a cell
	// of its own, each a key of the store to step over and decode, so a
	// row of ten values costs more than one of two. Profiles written before
	// it existed read as 0: a row's cost does not depend on its width, as
	// in NoSE's model.
	CellCost float64 `json:"cell_cost,omitempty"`
	// ApplyCost is the cost of a write statement's one atomic batch,
	// whatever it writes: kvschema applies every index's rows of a
	// statement in one store call (a round trip and a commit), and
	// InsertCost and DeleteCost are the cost of each row in it. It is the
	// same for every schema, so it decides nothing; it makes a write's
	// predicted cost its latency, and the per-row costs the marginal ones
	// (fitted through the origin without it, they spread the batch's round
	// trip over the rows: 0.11 ms a row at rtt 1 ms where a row adds
	// about 0.01 ms). Profiles written before it existed read as 0, as in
	// NoSE's model (Cassandra writes each column family's rows by a
	// request of their own).
	ApplyCost float64 `json:"apply_cost,omitempty"`
	// Engine is the kind of store the constants describe: "pebble",
	// "bigtable" or "cassandra" ("" when unknown). An advised schema
	// records it as its target; loading the schema into another kind of
	// store is warned about.
	Engine string `json:"engine,omitempty"`
	// RTT is the network round trip, in seconds, that the constants
	// include on every store call (calibrate --rtt), when known.
	RTT float64 `json:"rtt,omitempty"`
	// LocalIndexes: the engine keeps secondary indexes itself, in their
	// base column family's write path (Cassandra; kvschema on Pebble:
	// store.Capabilities.LocalIndexes), so an SI's upkeep is its writes
	// alone — seed 000 plans no update of an SI (§3.4: it is updated
	// atomically with its base). Without it (kvschema on Bigtable, whose
	// SIs are tables the client keeps), an SI's upkeep runs the support
	// queries that find the entries to rewrite, as a CF's does.
	LocalIndexes bool `json:"local_indexes,omitempty"`
}

// Engines a profile can describe, the targets of advise.
const (
	EnginePebble    = "pebble"
	EngineBigtable  = "bigtable"
	EngineCassandra = "cassandra"
)

// DefaultTarget is the target advise designs for unless told otherwise:
// kvschema's own engine on Pebble.
const DefaultTarget = EnginePebble

// Cassandra is the profile of the paper's setting: NoSE's measured Cassandra
// constants and the SI extension's two latencies (shared/rubis/README.md).
// It is the target for schemas exported to Cassandra (kvschema export --to
// cql), and reproduces the paper. Its SI discount assumes Cassandra's
// one-request secondary-index reads — kvschema's engine has them where the
// store keeps local indexes (Pebble), not on Bigtable, where an SI step is
// a read of the index and then of its base column family — and Cassandra
// keeps SIs with their base rows (LocalIndexes), so, as in the paper, an
// SI's upkeep runs no support query. SortRowCost stays 0: NoSE's measurements price no client sort
// and the paper's results were computed without one, so charging one would
// no longer reproduce them; a Cassandra application sorts in its own code,
// at a cost kvschema cannot measure.
var Cassandra = Profile{
	Name:          "cassandra",
	Engine:        EngineCassandra,
	IndexCost:     0.0078395645,
	PartitionCost: 0.0013692786,
	RowCost:       1.17093638386496e-05,
	InsertCost:    0.013329108,
	DeleteCost:    0.0013287903,
	CFQueryCost:   0.001309539,
	SIQueryCost:   0.001309539 + 0.0006026385,
	LocalIndexes:  true,
}

// Builtin lists the profiles available by name: the targets of advise.
var Builtin = map[string]Profile{EnginePebble: Pebble, EngineBigtable: Bigtable, EngineCassandra: Cassandra}

// Targets lists the built-in profiles' names, sorted.
func Targets() []string {
	names := make([]string, 0, len(Builtin))
	for n := range Builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Load returns the built-in profile called name, or reads a JSON profile
// from the file name (as kvschema calibrate writes one).
func Load(name string) (Profile, error) {
	if p, ok := Builtin[name]; ok {
		return p, nil
	}
	if name == "" {
		return Profile{}, fmt.Errorf("no profile named: give one of %s, or a JSON profile file", strings.Join(Targets(), ", "))
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return Profile{}, fmt.Errorf("profile %q is neither built in (%s) nor a readable file: %v", name, strings.Join(Targets(), ", "), err)
	}
	var p Profile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %v", name, err)
	}
	if p.Name == "" {
		p.Name = name
	}
	return p, p.Validate()
}

// Validate checks that every constant is usable.
func (p Profile) Validate() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"index_cost", p.IndexCost}, {"partition_cost", p.PartitionCost}, {"row_cost", p.RowCost},
		{"insert_cost", p.InsertCost}, {"delete_cost", p.DeleteCost}, {"cf_query_cost", p.CFQueryCost}, {"si_query_cost", p.SIQueryCost},
		{"sort_row_cost", p.SortRowCost}, {"index_row_cost", p.IndexRowCost}, {"cell_cost", p.CellCost}, {"apply_cost", p.ApplyCost}, {"rtt", p.RTT}} {
		if !(c.v >= 0) || c.v > 1e6 {
			return fmt.Errorf("profile %s: %s = %v must be a finite number ≥ 0", p.Name, c.name, c.v)
		}
	}
	if p.CFQueryCost <= 0 {
		return fmt.Errorf("profile %s: cf_query_cost must be > 0 (it divides the SI formulas)", p.Name)
	}
	if p.SIQueryCost < p.CFQueryCost {
		return fmt.Errorf("profile %s: si_query_cost (%v) must be ≥ cf_query_cost (%v)", p.Name, p.SIQueryCost, p.CFQueryCost)
	}
	return nil
}

// Model prices the steps of plans: the seam between the planners, which
// enumerate plans, and what a backend's operations cost. Profile (the
// paper's formulas with a backend's constants) is one implementation, for
// the advisor and the catalogs it designs; Prefix (seed 003's rule) is
// another, for layouts defined by hand, which have no statistics.
type Model interface {
	// Read is the cost of one lookup step.
	Read(a Access) float64
	// Write is the cost of putting puts rows and deleting deletes rows.
	Write(puts, deletes float64) float64
	// Sort is the cost of sorting rows result rows on the client (an
	// ORDER BY that no index delivers).
	Sort(rows float64) float64
}

// Access describes one lookup step for costing: its role next to secondary
// indexes, the partitions it probes (for a client read without statistics,
// the store reads it makes) and the rows it reads; and, for models that
// rank reads without statistics, which index it reads, how much of that
// index's key it binds and whether it yields the order asked for.
type Access struct {
	Role       Role
	Partitions float64
	Rows       float64
	// Cells is the number of cells a row read holds (a column family's
	// values, or its empty marker cell); 0 counts as 1.
	Cells float64
	// ClientIndex, on the step after an SI: kvschema's stores cannot keep
	// the SI with this column family as a local index (it holds the SI's
	// value in its row key, or is salted, bucketed or has static columns:
	// catalog.CanKeepLocal), so the engine keeps the SI as a table of its
	// own, read in a request before the base's, even where the profile
	// has LocalIndexes. Cassandra's own indexes keep any column: a
	// Cassandra profile ignores it.
	ClientIndex bool
	Index       string
	Key         Key
	Ordered     bool // rows come in the query's ORDER BY: no client sort
}

// Key says how much of an index's row key a read binds.
type Key struct {
	Fixed int  // leading key elements bound by equality
	Range bool // the element after them bounded by a range
	Exact bool // every element fixed: point lookups
}

// Prefix is seed 003's rule as a cost model, for catalogs without
// statistics: a read costs less the more leading key elements it fixes;
// ties go to a range-bounded next element, then to exact keys, then to a
// read in the order asked for, then to fewer store reads (Partitions). Its
// costs rank reads; they are not times. A written row costs 1.
type Prefix struct{}

// prefixMaxFixed bounds the fixed key elements Prefix tells apart (ROW
// elements of a layout are far fewer).
const prefixMaxFixed = 1 << 16

// Read implements Model: lexicographic, each criterion weighing more than
// all later ones together.
func (Prefix) Read(a Access) float64 {
	c := float64(prefixMaxFixed-min(max(a.Key.Fixed, 0), prefixMaxFixed)) * 16
	if !a.Key.Range {
		c += 8
	}
	if !a.Key.Exact {
		c += 4
	}
	if !a.Ordered {
		c += 2
	}
	return c + a.Partitions/(a.Partitions+1) // < 1
}

// Write implements Model.
func (Prefix) Write(puts, deletes float64) float64 { return puts + deletes }

// Sort implements Model: 0, as Read already ranks a read that needs no
// sort (Access.Ordered) above one that does.
func (Prefix) Sort(float64) float64 { return 0 }

// Read is the cost of a lookup (eq. 4, and Algorithm 2 next to an SI).
func (p Profile) Read(a Access) float64 {
	return p.read(a) + a.Rows*max(a.Cells, 1)*p.CellCost
}

// read is Read without the cost of the rows' cells.
func (p Profile) read(a Access) float64 {
	base := p.IndexCost + a.Partitions*p.PartitionCost + a.Rows*p.RowCost
	d := p.SIQueryCost - p.CFQueryCost
	j := p.CFQueryCost * max(a.Rows, 1)
	switch a.Role {
	case SIAlone:
		return base * p.SIQueryCost / p.CFQueryCost
	case SIFirst:
		return p.IndexCost + a.Partitions*p.PartitionCost + a.Rows*p.RowCost*d/j
	case AfterSI:
		local := p.KeepsSI(!a.ClientIndex)
		switch {
		case p.IndexRowCost > 0 && local:
			return a.Rows * p.IndexRowCost
		case p.IndexRowCost > 0:
			return p.IndexCost + a.Partitions*p.PartitionCost*d/j + a.Rows*p.IndexRowCost
		}
		return p.IndexCost + a.Partitions*p.PartitionCost*d/j + a.Rows*p.RowCost
	}
	return base
}

// KeepsSI reports whether the engine keeps a secondary index itself, in its
// base's write path, answering it and its base rows in one request:
// where it keeps local indexes, Cassandra any SI, kvschema's stores an SI
// whose base holds its value as a value cell (onValue;
// catalog.CanKeepLocal), others being tables the engine keeps.
func (p Profile) KeepsSI(onValue bool) bool {
	return p.LocalIndexes && (onValue || p.Engine == EngineCassandra)
}

// Write is the cost of writing puts rows and deleting deletes rows (eq. 6).
func (p Profile) Write(puts, deletes float64) float64 {
	return puts*p.InsertCost + deletes*p.DeleteCost
}

// Sort is the cost of a client sort of rows rows: rows·SortRowCost.
func (p Profile) Sort(rows float64) float64 { return rows * p.SortRowCost }

// Role says how a lookup step relates to secondary indexes (the cases of seed
// 000's Algorithm 2): the executor follows it, a Model prices it.
type Role uint8

// Roles of a lookup.
const (
	Plain   Role = iota // a CF lookup not next to an SI step
	SIAlone             // an SI lookup that answers the query by itself
	SIFirst             // an SI lookup feeding its base CF
	AfterSI             // the base-CF lookup after an SI lookup
	// Scan is a first step reading a whole column family, every partition:
	// nothing binds its partition key. The runtime falls back on it for a
	// query no keyed plan answers; the advisor never plans one.
	Scan
)
