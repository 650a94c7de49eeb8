// Package calibrate measures the cost constants of a backend — the
// cost.Profile the advisor minimizes — with micro-benchmarks, so that
// predicted plan costs rank plans as the backend runs them.
//
// Reads are measured through the engine, on a small synthetic schema whose
// every query has one plan, so that the constants include what the runtime
// does per step and per row (encoding, decoding, joining), not only the
// store's work:
//
//   - one lookup of 1 partition returning R rows, R = 1 … 1024, of 3 cells
//     and of 8 cells (a row keeps a cell per value: CellCost);
//   - a two-step join plan probing P partitions in its second step,
//     P = 1 … 1024 (one row per partition), the partitions scattered over
//     the column family as a join's are (adjacent ones would be read
//     almost as one scan, and PartitionCost would price a seek at a
//     fraction of its cost);
//   - a single-row lookup in a plain CF (CFQueryCost) and the same query
//     through a secondary index (SIQueryCost);
//   - R rows read through a secondary index, R = 1 … 1024, each row in a
//     partition of its own, scattered over the base column family, whose
//     rows have 4 cells, and the same through an index of a base of 9
//     (a row found through an index is a seek, where a row of a scan is a
//     step of the iterator: IndexRowCost).
//
// A countstore under the engine says what each run did: round trips
// (steps), probes (partitions asked for), rows and cells read. The
// constants (IndexCost, PartitionCost, RowCost, CellCost and IndexRowCost)
// are the non-negative least-squares fit of the median latencies of every
// read to steps·IndexCost + probes·PartitionCost + rows·RowCost +
// cells·CellCost + index rows·(IndexRowCost − RowCost), minimizing
// relative error (latencies span three orders of magnitude; each matters
// for ranking). Writes are measured on the store: one atomic batch putting
// (InsertCost) or deleting (DeleteCost) R rows of engine-like shape,
// R = 1 … 16, fitted as a + R·cost on relative error: a, the batch's
// round trip and commit, is ApplyCost (the mean of the two fits'), charged
// once per write statement. A client sort (SortRowCost) is measured on the client alone, as
// it runs there whatever the store: exec.SortRows (the executor's CLIENT
// SORT BY) ordering N shuffled tuples of the engine's type (types.Datum,
// rows of five values), N = 16 … 4,096, by a 20-byte STRING and by a
// BIGINT, fitted through the origin per row. A sort takes N·log N
// comparisons; the per-row constant is the fit over these sizes, the
// result sizes plans meet.
//
// Invariants: everything runs in the table namespace "calibrate." of the
// store (package prefixstore), which is emptied before and after, so a
// store holding a deployed schema can be calibrated in place. Calibrate
// through the same decorators (e.g. rttstore) the measured workload runs
// through.
package calibrate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/prefixstore"
	"github.com/kvschema/kvschema/store/rttstore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
)

// Namespace prefixes every table calibration creates.
const Namespace = "calibrate."

// WithRTT returns st with rtt added to every call to its server (package
// rttstore), as a remote store's network would: for a store under an
// intent log (txnstore, as bigtable: URLs open), to each call the log
// makes, so that a multi-row write pays a round trip for each of its locks,
// its commit and its rows, as it would on a remote Bigtable. The intent log
// is a new one with default options.
func WithRTT(st store.Store, rtt time.Duration) store.Store {
	if ts, ok := st.(*txnstore.Store); ok {
		return txnstore.New(rttstore.NewConditional(ts.Inner(), rtt))
	}
	return rttstore.New(st, rtt)
}

// Options tune a calibration.
type Options struct {
	Runs   int // timed runs per measurement (default 30)
	Warmup int // untimed runs before them (default 3; negative: none)
	// Progress, when set, is called after each measurement.
	Progress func(done, total int)
	// Engine and RTT are recorded in the profile (cost.Profile.Engine and
	// RTT): the kind of store calibrated (default: the store's own,
	// store.Capabilities.Engine, but none for mem:, which is no target)
	// and the round trip added to its calls (Run cannot tell it).
	Engine string
	RTT    time.Duration
}

// Measurement is one micro-benchmark: what a run did and how long it took.
type Measurement struct {
	Name string
	// Steps, Probes, Rows and Cells are per run: round trips, partitions
	// asked for, rows and cells read (reads); Rows is the rows written
	// (writes).
	Steps, Probes, Rows, Cells float64
	// Index: the rows were found through a secondary index.
	Index   bool
	Seconds float64 // median latency of a run
}

// Result is a calibrated profile and the measurements behind it.
type Result struct {
	Profile cost.Profile
	Reads   []Measurement // fitted, with Index, by IndexCost, PartitionCost, RowCost, CellCost
	Inserts []Measurement // fitted by InsertCost
	Deletes []Measurement // fitted by DeleteCost
	CF, SI  Measurement   // single-row queries: CFQueryCost, SIQueryCost
	Index   []Measurement // R rows through a secondary index: IndexRowCost
	Sorts   []Measurement // client sorts of Rows tuples: SortRowCost
	// ReadError is the fit's root-mean-square relative error over Reads
	// and Index.
	ReadError float64
	Took      time.Duration
}

// Predicted is the fitted model's latency for a read measurement.
func (r *Result) Predicted(m Measurement) float64 {
	p := r.Profile
	return predict(m, [nfit]float64{p.IndexCost, p.PartitionCost, p.RowCost, p.CellCost, p.IndexRowCost - p.RowCost})
}

const script = `
DEFINE RELATION groups ROWS 20 { id BIGINT KEY SIZE 8 };
DEFINE RELATION parts ROWS 1400 { id BIGINT KEY SIZE 8, grp BIGINT SIZE 8 REFERENCES groups REVERSE parts };
DEFINE RELATION items ROWS 8400 {
  id BIGINT KEY SIZE 8,
  a STRING SIZE 20, b STRING SIZE 20, c DOUBLE SIZE 8,
  w BIGINT SIZE 8 CARDINALITY 8400, w2 BIGINT SIZE 8 CARDINALITY 8400,
  d1 DOUBLE SIZE 8, d2 DOUBLE SIZE 8, d3 DOUBLE SIZE 8, d4 DOUBLE SIZE 8,
  d5 DOUBLE SIZE 8, d6 DOUBLE SIZE 8, d7 DOUBLE SIZE 8, d8 DOUBLE SIZE 8,
  part BIGINT SIZE 8 REFERENCES parts REVERSE items
};
DEFINE COLUMN FAMILY items_by_part FOR parts { PARTITION KEY (parts.id), CLUSTERING KEY (parts.items.id), VALUES (parts.items.a, parts.items.b, parts.items.c) };
DEFINE COLUMN FAMILY parts_by_group FOR groups { PARTITION KEY (groups.id), CLUSTERING KEY (groups.parts.id), VALUES () };
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), CLUSTERING KEY (), VALUES (items.a, items.b, items.c, items.w) };
DEFINE SECONDARY INDEX items_by_w ON items_by_id (items.w);
DEFINE COLUMN FAMILY wide_by_part FOR parts { PARTITION KEY (parts.id), CLUSTERING KEY (parts.items.id), VALUES (parts.items.d1, parts.items.d2, parts.items.d3, parts.items.d4, parts.items.d5, parts.items.d6, parts.items.d7, parts.items.d8) };
DEFINE COLUMN FAMILY wide_by_id FOR items { PARTITION KEY (items.id), CLUSTERING KEY (), VALUES (items.d1, items.d2, items.d3, items.d4, items.d5, items.d6, items.d7, items.d8, items.w2) };
DEFINE SECONDARY INDEX wide_by_w2 ON wide_by_id (items.w2);
`

const (
	queryRows  = "SELECT items.id, items.a, items.b, items.c FROM items.part WHERE part.id = ?"
	queryParts = "SELECT items.id, items.a FROM items.part.grp WHERE grp.id = ?"
	queryCF    = "SELECT items.a, items.b FROM items WHERE items.id = ?"
	querySI    = "SELECT items.a, items.b FROM items WHERE items.w = ?"
	// The wide column families hold the d's, the narrow ones the rest, so
	// that each query has one plan.
	queryWideRows = "SELECT items.id, items.d1, items.d2, items.d3, items.d4, items.d5, items.d6, items.d7, items.d8 FROM items.part WHERE part.id = ?"
	queryWideSI   = "SELECT items.d1, items.d2, items.d3, items.d4, items.d5, items.d6, items.d7, items.d8 FROM items WHERE items.w2 = ?"
)

// sizes of the partitions (R series) and of the joins (P series).
var (
	rowSizes  = []int{1, 4, 16, 64, 256, 1024}
	partSizes = []int{1, 4, 16, 64, 256, 1024}
	// partsPerSize partitions of each R size, so runs rotate over several.
	partsPerSize = 5
	writeSizes   = []int{1, 2, 4, 8, 16}
)

// rowSeriesGroup holds the R series' parts (never queried by group).
const rowSeriesGroup = 1000

// data is the synthetic data set and the parameters of each measurement.
type data struct {
	groups, parts, items [][]types.Value
	rowParts             map[int][]int64 // R → parts with R items
	partGroups           map[int]int64   // P → group with P parts
	itemIDs              []int64
	indexWs              map[int][]int64 // R → values of w that R items share
	singleWs             []int64         // values of w one item has
}

func synthesize(m *catalog.Model) *data {
	d := &data{rowParts: map[int][]int64{}, partGroups: map[int]int64{}, indexWs: map[int][]int64{}}
	items := m.Entity("items")
	var partID, itemID int64
	row := func(e *catalog.Entity, vals map[string]types.Value) []types.Value {
		out := make([]types.Value, len(e.Columns))
		for i, c := range e.Columns {
			out[i] = vals[c.Name]
		}
		return out
	}
	addItem := func(part int64) {
		itemID++
		s := fmt.Sprintf("%020d", itemID*7919)
		vals := map[string]types.Value{"id": itemID, "a": s, "b": s[10:] + s[:10], "c": float64(itemID) / 3, "w": itemID, "w2": itemID, "part": part}
		for k := 1; k <= 8; k++ {
			vals[fmt.Sprint("d", k)] = float64(itemID) / float64(k+1)
		}
		d.items = append(d.items, row(items, vals))
		d.itemIDs = append(d.itemIDs, itemID)
	}
	addPart := func(group int64) int64 {
		partID++
		d.parts = append(d.parts, row(m.Entity("parts"), map[string]types.Value{"id": partID, "grp": group}))
		return partID
	}
	d.groups = append(d.groups, row(m.Entity("groups"), map[string]types.Value{"id": int64(rowSeriesGroup)}))
	for _, r := range rowSizes {
		for i := 0; i < partsPerSize; i++ {
			p := addPart(rowSeriesGroup)
			d.rowParts[r] = append(d.rowParts[r], p)
			for j := 0; j < r; j++ {
				addItem(p)
			}
		}
	}
	// The join series: the parts of a group take every position k of
	// the series whose spread(k) falls in the group's share, so that its
	// partitions lie all over items_by_part, as the partitions a join
	// probes do (consecutive ones would be read almost as one scan).
	var groupOf []int64
	for g, n := range partSizes {
		gid := int64(g + 1)
		d.groups = append(d.groups, row(m.Entity("groups"), map[string]types.Value{"id": gid}))
		d.partGroups[n] = gid
		for range n {
			groupOf = append(groupOf, gid)
		}
	}
	slots := make([]int64, len(groupOf))
	for k, gid := range groupOf {
		slots[spread(k, len(slots))] = gid
	}
	for _, gid := range slots {
		addItem(addPart(gid))
	}
	// The index series: partsPerSize values of w for each R, each shared
	// by R items taken in a strided order, so that they lie all over the
	// base column family (keyed by id), as rows found through an index
	// do; the other items keep a w of their own.
	wCol, w2Col := items.Column(items.Field("w")), items.Column(items.Field("w2"))
	n := len(d.items)
	next, w := 0, int64(1_000_000)
	for _, r := range rowSizes {
		for i := 0; i < partsPerSize; i++ {
			w++
			d.indexWs[r] = append(d.indexWs[r], w)
			for j := 0; j < r; j++ {
				d.items[spread(next, n)][wCol] = w
				d.items[spread(next, n)][w2Col] = w
				next++
			}
		}
	}
	for k := next; k < n; k++ {
		d.singleWs = append(d.singleWs, d.items[spread(k, n)][wCol].(int64))
	}
	return d
}

// spread maps k = 0 … n−1 onto 0 … n−1, each once, consecutive k far
// apart: k·s mod n for the first s ≥ 7919 coprime with n.
func spread(k, n int) int {
	s := 7919
	for gcd(s, n) != 1 {
		s++
	}
	return k * s % n
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Run calibrates st. Wrap st in the decorators the workload will run
// through (a simulated round trip) before calling it. name names the
// profile.
func Run(ctx context.Context, st store.Store, name string, opt Options) (*Result, error) {
	start := time.Now()
	if opt.Runs <= 0 {
		opt.Runs = 30
	}
	if opt.Warmup < 0 {
		opt.Warmup = 0
	} else if opt.Warmup == 0 {
		opt.Warmup = 3
	}
	ns := prefixstore.New(st, Namespace)
	if err := empty(ctx, ns); err != nil {
		return nil, err
	}
	defer empty(context.WithoutCancel(ctx), ns)
	counted := countstore.New(ns)
	// The script holds the model and the schema; Deploy records them in the
	// namespace (emptied with it) and creates the tables.
	en, err := exec.Deploy(ctx, counted, "calibrate.kvs", []byte(script), "calibrate.kvs", []byte(script), cost.Cassandra)
	if err != nil {
		return nil, err
	}
	m := en.Model()
	d := synthesize(m)
	if _, err := en.Load(ctx, func(yield func(exec.Row) error) error {
		for _, set := range []struct {
			e    string
			rows [][]types.Value
		}{{"groups", d.groups}, {"parts", d.parts}, {"items", d.items}} {
			for _, r := range set.rows {
				if err := yield(exec.Row{Entity: m.Entity(set.e), Values: r}); err != nil {
					return err
				}
			}
		}
		return nil
	}, exec.LoadOptions{Identity: "calibrate"}); err != nil {
		return nil, err
	}

	res := &Result{}
	total := 4*len(rowSizes) + len(partSizes) + 2 + 2*len(writeSizes) + 2*len(sortSizes)
	done := 0
	tick := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	measure := func(name, text string, index bool, args func(i int) types.Value) (Measurement, error) {
		s, err := en.Prepare(text)
		if err != nil {
			return Measurement{}, err
		}
		lat := make([]float64, 0, opt.Runs)
		for i := 0; i < opt.Warmup+opt.Runs; i++ {
			if i == opt.Warmup {
				counted.Reset()
			}
			t0 := time.Now()
			if _, err := s.Query(ctx, args(i)); err != nil {
				return Measurement{}, err
			}
			if i >= opt.Warmup {
				lat = append(lat, time.Since(t0).Seconds())
			}
		}
		c := counted.Stats()
		n := float64(opt.Runs)
		tick()
		return Measurement{Name: name, Steps: float64(c.RoundTrips) / n, Probes: float64(c.Probes) / n, Rows: float64(c.RowsRead) / n, Cells: float64(c.CellsRead) / n, Index: index, Seconds: median(lat)}, nil
	}
	for _, q := range []struct{ name, text string }{{"", queryRows}, {" of 8 cells", queryWideRows}} {
		for _, r := range rowSizes {
			ps := d.rowParts[r]
			mm, err := measure(fmt.Sprintf("1 partition, %d rows%s", r, q.name), q.text, false, func(i int) types.Value { return ps[i%len(ps)] })
			if err != nil {
				return nil, err
			}
			res.Reads = append(res.Reads, mm)
		}
	}
	for _, p := range partSizes {
		g := d.partGroups[p]
		mm, err := measure(fmt.Sprintf("join over %d partitions", p), queryParts, false, func(int) types.Value { return g })
		if err != nil {
			return nil, err
		}
		res.Reads = append(res.Reads, mm)
	}
	pick := func(i int) types.Value { return d.itemIDs[(i*7919)%len(d.itemIDs)] }
	if res.CF, err = measure("single row, column family", queryCF, false, pick); err != nil {
		return nil, err
	}
	if res.SI, err = measure("single row, secondary index", querySI, true, func(i int) types.Value { return d.singleWs[(i*7919)%len(d.singleWs)] }); err != nil {
		return nil, err
	}
	for _, q := range []struct{ name, text string }{{"", querySI}, {" of 9 cells", queryWideSI}} {
		for _, r := range rowSizes {
			ws := d.indexWs[r]
			mm, err := measure(fmt.Sprintf("%d rows through an index%s", r, q.name), q.text, true, func(i int) types.Value { return ws[i%len(ws)] })
			if err != nil {
				return nil, err
			}
			res.Index = append(res.Index, mm)
		}
	}
	res.Reads = append(res.Reads, res.CF)
	if res.Inserts, res.Deletes, err = measureWrites(ctx, ns, opt, tick); err != nil {
		return nil, err
	}

	res.Sorts = measureSorts(opt, tick)

	p := cost.Profile{Name: name, Engine: opt.Engine, RTT: opt.RTT.Seconds(), LocalIndexes: st.Capabilities().LocalIndexes}
	if p.Engine == "" {
		if e := st.Capabilities().Engine; e != "mem" {
			p.Engine = e
		}
	}
	beta, rms := fitNonNegative(append(slices.Clip(res.Reads), res.Index...))
	p.IndexCost, p.PartitionCost, p.RowCost, p.CellCost = beta[0], beta[1], beta[2], beta[3]
	p.IndexRowCost = beta[2] + beta[4]
	res.ReadError = rms
	var applyIns, applyDel float64
	applyIns, p.InsertCost = fitAffine(res.Inserts)
	applyDel, p.DeleteCost = fitAffine(res.Deletes)
	p.ApplyCost = (applyIns + applyDel) / 2
	p.CFQueryCost = res.CF.Seconds
	p.SIQueryCost = max(res.SI.Seconds, res.CF.Seconds)
	p.SortRowCost = fitThroughOrigin(res.Sorts)
	res.Profile = p
	res.Took = time.Since(start)
	return res, p.Validate()
}

// measureWrites times batches putting, then deleting, R rows of four
// 20-byte cells (the shape of an engine row) in table "writes".
func measureWrites(ctx context.Context, st store.Store, opt Options, tick func()) (ins, del []Measurement, err error) {
	if err := st.CreateTable(ctx, store.TableSpec{Name: "writes", Families: []string{"v"}}); err != nil {
		return nil, nil, err
	}
	next := 0
	val := []byte("01234567890123456789")
	for _, r := range writeSizes {
		var putLat, delLat []float64
		for i := 0; i < opt.Warmup+opt.Runs; i++ {
			var puts, dels []store.Mutation
			for j := 0; j < r; j++ {
				next++
				key := fmt.Appendf(nil, "row%09d", next)
				for _, q := range []string{"a", "b", "c", "d"} {
					puts = append(puts, store.Mutation{Kind: store.SetCell, Table: "writes", Row: key, Family: "v", Qualifier: []byte(q), Value: val})
				}
				dels = append(dels, store.Mutation{Kind: store.DeleteRow, Table: "writes", Row: key})
			}
			t0 := time.Now()
			if err := st.Apply(ctx, puts); err != nil {
				return nil, nil, err
			}
			t1 := time.Now()
			if err := st.Apply(ctx, dels); err != nil {
				return nil, nil, err
			}
			t2 := time.Now()
			if i >= opt.Warmup {
				putLat = append(putLat, t1.Sub(t0).Seconds())
				delLat = append(delLat, t2.Sub(t1).Seconds())
			}
		}
		ins = append(ins, Measurement{Name: fmt.Sprintf("put %d rows", r), Steps: 1, Rows: float64(r), Seconds: median(putLat)})
		tick()
		del = append(del, Measurement{Name: fmt.Sprintf("delete %d rows", r), Steps: 1, Rows: float64(r), Seconds: median(delLat)})
		tick()
	}
	return ins, del, nil
}

// sortSizes are the numbers of tuples a measured client sort orders.
var sortSizes = []int{16, 64, 256, 1024, 4096}

// measureSorts times exec.SortRows on shuffled tuples of the engine's type
// (an id, two 20-byte strings, a double and a bigint, as the rows of
// queryRows), ordered by a string and by a bigint. A timed run sorts
// max(1, 4096/N) copies, so that small sorts take long enough to time; its
// latency per sort is kept.
func measureSorts(opt Options, tick func()) []Measurement {
	rng := rand.New(rand.NewPCG(1, 2))
	const maxN = 4096
	base := make([][]types.Datum, maxN)
	for i := range base {
		s := fmt.Sprintf("%020d", rng.Int64N(1e18))
		base[i] = []types.Datum{
			types.IntDatum(types.BigInt, int64(i)),
			types.StringDatum(s),
			types.StringDatum(s[10:] + s[:10]),
			types.FloatDatum(types.Double, rng.Float64()),
			types.IntDatum(types.BigInt, rng.Int64()),
		}
	}
	var out []Measurement
	for _, key := range []struct {
		name string
		col  int
	}{{"STRING", 1}, {"BIGINT", 4}} {
		order, desc := []int{key.col}, []bool{false}
		for _, n := range sortSizes {
			copies := max(1, maxN/n)
			lat := make([]float64, 0, opt.Runs)
			work := make([][][]types.Datum, copies)
			for i := 0; i < opt.Warmup+opt.Runs; i++ {
				for c := range work {
					w := make([][]types.Datum, n)
					for j := range w {
						w[j] = base[rng.IntN(maxN)]
					}
					work[c] = w
				}
				t0 := time.Now()
				for _, w := range work {
					exec.SortRows(w, order, desc)
				}
				if i >= opt.Warmup {
					lat = append(lat, time.Since(t0).Seconds()/float64(copies))
				}
			}
			out = append(out, Measurement{Name: fmt.Sprintf("sort %d rows by a %s", n, key.name), Rows: float64(n), Seconds: median(lat)})
			tick()
		}
	}
	return out
}

// empty deletes every row of every table of the namespace.
func empty(ctx context.Context, st store.Store) error {
	tabs, err := st.Tables(ctx)
	if err != nil {
		return err
	}
	for _, t := range tabs {
		var muts []store.Mutation
		err := st.ReadRows(ctx, t.Name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			muts = append(muts, store.Mutation{Kind: store.DeleteRow, Table: t.Name, Row: append([]byte(nil), r.Key...)})
			return true
		})
		if err != nil {
			return err
		}
		for len(muts) > 0 {
			n := min(len(muts), 10000)
			if err := st.Apply(ctx, muts[:n]); err != nil {
				return err
			}
			muts = muts[n:]
		}
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// nfit is the number of constants fitNonNegative fits.
const nfit = 5

// features are what a read measurement did, in the order of the fitted
// constants: steps, probes, rows, cells, and the rows found through an
// index (which cost IndexRowCost − RowCost more than a scan's).
func features(m Measurement) [nfit]float64 {
	x := [nfit]float64{m.Steps, m.Probes, m.Rows, m.Cells, 0}
	if m.Index {
		x[4] = m.Rows
	}
	return x
}

func predict(m Measurement, b [nfit]float64) float64 {
	var y float64
	for i, x := range features(m) {
		y += x * b[i]
	}
	return y
}

// fitNonNegative fits Seconds ≈ features·b with b ≥ 0, minimizing the sum
// of squared relative errors, and returns b and the root-mean-square
// relative error. With five unknowns the active-set search is exhaustive:
// every subset of free coefficients is solved by least squares and the
// best one with no negative coefficient wins.
func fitNonNegative(ms []Measurement) ([nfit]float64, float64) {
	best, bestErr := [nfit]float64{}, math.Inf(1)
	for mask := 1; mask < 1<<nfit; mask++ {
		var idx []int
		for j := 0; j < nfit; j++ {
			if mask&(1<<j) != 0 {
				idx = append(idx, j)
			}
		}
		// Normal equations of the weighted problem (weight 1/y²).
		k := len(idx)
		a := make([][]float64, k)
		for i := range a {
			a[i] = make([]float64, k+1)
		}
		for _, m := range ms {
			if m.Seconds <= 0 {
				continue
			}
			x := features(m)
			w := 1 / (m.Seconds * m.Seconds)
			for r := 0; r < k; r++ {
				for c := 0; c < k; c++ {
					a[r][c] += w * x[idx[r]] * x[idx[c]]
				}
				a[r][k] += w * x[idx[r]] * m.Seconds
			}
		}
		sol, ok := solve(a)
		if !ok {
			continue
		}
		var b [nfit]float64
		neg := false
		for i, j := range idx {
			b[j] = sol[i]
			neg = neg || sol[i] < 0
		}
		if neg {
			continue
		}
		if e := relError(ms, b); e < bestErr {
			best, bestErr = b, e
		}
	}
	return best, bestErr
}

func relError(ms []Measurement, b [nfit]float64) float64 {
	var sum float64
	n := 0
	for _, m := range ms {
		if m.Seconds <= 0 {
			continue
		}
		e := (predict(m, b) - m.Seconds) / m.Seconds
		sum += e * e
		n++
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(n))
}

// solve solves the augmented k×(k+1) system by Gaussian elimination with
// partial pivoting; ok is false when it is singular.
func solve(a [][]float64) ([]float64, bool) {
	k := len(a)
	for c := 0; c < k; c++ {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-300 {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < k; r++ {
			f := a[r][c] / a[c][c]
			for j := c; j <= k; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	x := make([]float64, k)
	for r := k - 1; r >= 0; r-- {
		s := a[r][k]
		for j := r + 1; j < k; j++ {
			s -= a[r][j] * x[j]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

// fitThroughOrigin fits Seconds ≈ Rows·c minimizing relative error:
// c = Σ(x/y) / Σ(x²/y²).
func fitThroughOrigin(ms []Measurement) float64 {
	var num, den float64
	for _, m := range ms {
		if m.Seconds > 0 {
			num += m.Rows / m.Seconds
			den += m.Rows * m.Rows / (m.Seconds * m.Seconds)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// fitAffine fits a + R·b (a, b ≥ 0) to ms by least squares on relative
// error: a write's one batch (ApplyCost) and each of its rows.
func fitAffine(ms []Measurement) (a, b float64) {
	// The normal equations of Σ ((a + R·b − t)/t)², weights 1/t².
	var sw, sr, srr, st, srt float64
	for _, m := range ms {
		if m.Seconds <= 0 {
			continue
		}
		w := 1 / (m.Seconds * m.Seconds)
		sw += w
		sr += w * m.Rows
		srr += w * m.Rows * m.Rows
		st += w * m.Seconds
		srt += w * m.Rows * m.Seconds
	}
	if det := sw*srr - sr*sr; det > 0 {
		a, b = (st*srr-sr*srt)/det, (sw*srt-sr*st)/det
	}
	switch {
	case sw == 0:
		return 0, 0
	case b < 0 || sw*srr-sr*sr <= 0: // no slope to fit: the batch alone
		return st / sw, 0
	case a < 0:
		return 0, fitThroughOrigin(ms)
	}
	return a, b
}

// Report prints the measurements next to the fitted model's prediction.
func (r *Result) Report() string {
	var b strings.Builder
	p := r.Profile
	fmt.Fprintf(&b, "profile %s (calibrated in %v)\n", p.Name, r.Took.Round(time.Millisecond))
	fmt.Fprintf(&b, "  index_cost %.3g s, partition_cost %.3g s, row_cost %.3g s, cell_cost %.3g s, index_row_cost %.3g s (fit: %.1f%% rms relative error)\n", p.IndexCost, p.PartitionCost, p.RowCost, p.CellCost, p.IndexRowCost, 100*r.ReadError)
	fmt.Fprintf(&b, "  apply_cost %.3g s a write, insert_cost %.3g s, delete_cost %.3g s per row; cf_query_cost %.3g s, si_query_cost %.3g s; sort_row_cost %.3g s\n", p.ApplyCost, p.InsertCost, p.DeleteCost, p.CFQueryCost, p.SIQueryCost, p.SortRowCost)
	fmt.Fprintf(&b, "  %-40s %6s %7s %7s %7s %12s %12s\n", "read", "steps", "probes", "rows", "cells", "measured", "fitted")
	for _, m := range append(slices.Clip(r.Reads), r.Index...) {
		fmt.Fprintf(&b, "  %-40s %6.1f %7.1f %7.1f %7.1f %12s %12s\n", m.Name, m.Steps, m.Probes, m.Rows, m.Cells, seconds(m.Seconds), seconds(r.Predicted(m)))
	}
	fmt.Fprintf(&b, "  %-40s %6.1f %7.1f %7.1f %7.1f %12s\n", r.SI.Name, r.SI.Steps, r.SI.Probes, r.SI.Rows, r.SI.Cells, seconds(r.SI.Seconds))
	for _, set := range []struct {
		ms     []Measurement
		perRow float64
	}{{r.Inserts, p.InsertCost}, {r.Deletes, p.DeleteCost}} {
		for _, m := range set.ms {
			fmt.Fprintf(&b, "  %-40s %6.1f %7s %7.1f %7s %12s %12s\n", m.Name, m.Steps, "", m.Rows, "", seconds(m.Seconds), seconds(p.ApplyCost+m.Rows*set.perRow))
		}
	}
	for _, m := range r.Sorts {
		fmt.Fprintf(&b, "  %-40s %6s %7s %7.1f %7s %12s %12s\n", m.Name, "", "", m.Rows, "", seconds(m.Seconds), seconds(m.Rows*p.SortRowCost))
	}
	return b.String()
}

func seconds(s float64) string { return time.Duration(s * 1e9).Round(100 * time.Nanosecond).String() }
