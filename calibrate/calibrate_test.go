package calibrate

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
)

// The fit recovers the constants of latencies the cost model generates
// exactly, and clamps a coefficient the data would make negative.
func TestFitRecoversConstants(t *testing.T) {
	want := [nfit]float64{0.0011, 0.00002, 0.0000007, 0.0000003, 0.000004}
	var ms []Measurement
	for _, x := range [][3]float64{{1, 1, 1}, {1, 1, 64}, {1, 1, 1024}, {2, 2, 2}, {2, 65, 128}, {2, 1025, 2048}, {2, 2, 2}} {
		for _, cells := range []float64{1, 3, 8} {
			for _, index := range []bool{false, true} {
				m := Measurement{Steps: x[0], Probes: x[1], Rows: x[2], Cells: x[2] * cells, Index: index}
				m.Seconds = predict(m, want)
				ms = append(ms, m)
			}
		}
	}
	got, rms := fitNonNegative(ms)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*want[i]+1e-15 {
			t.Errorf("coefficient %d = %g, want %g", i, got[i], want[i])
		}
	}
	if rms > 1e-9 {
		t.Errorf("rms relative error %g on exact data", rms)
	}
	// Latency falling with partitions would need a negative partition cost.
	ms = []Measurement{{Steps: 1, Probes: 1, Rows: 1, Seconds: 0.002}, {Steps: 1, Probes: 100, Rows: 1, Seconds: 0.001}, {Steps: 1, Probes: 1, Rows: 100, Seconds: 0.003}}
	got, _ = fitNonNegative(ms)
	for i, b := range got {
		if b < 0 {
			t.Errorf("coefficient %d = %g < 0", i, b)
		}
	}
	if c := fitThroughOrigin([]Measurement{{Rows: 1, Seconds: 0.5}, {Rows: 4, Seconds: 2}}); math.Abs(c-0.5) > 1e-12 {
		t.Errorf("fitThroughOrigin = %g, want 0.5", c)
	}
}

// TestFitAffine: a write batch's latency a + R·b is recovered exactly
// from exact measurements; a slope the data cannot have (latencies that
// fall with R) leaves the batch cost alone, and an intercept below zero
// the fit through the origin.
func TestFitAffine(t *testing.T) {
	var ms []Measurement
	for _, r := range writeSizes {
		ms = append(ms, Measurement{Rows: float64(r), Seconds: 1e-3 + float64(r)*1e-5})
	}
	if a, b := fitAffine(ms); math.Abs(a-1e-3) > 1e-12 || math.Abs(b-1e-5) > 1e-12 {
		t.Errorf("fitAffine = %g + R·%g, want 0.001 + R·1e-05", a, b)
	}
	falling := []Measurement{{Rows: 1, Seconds: 2e-3}, {Rows: 16, Seconds: 1e-3}}
	if a, b := fitAffine(falling); b != 0 || a < 1e-3 || a > 2e-3 {
		t.Errorf("fitAffine of falling latencies = %g + R·%g, want a batch cost between them and no slope", a, b)
	}
	steep := []Measurement{{Rows: 1, Seconds: 1e-6}, {Rows: 16, Seconds: 1e-3}}
	if a, b := fitAffine(steep); a != 0 || b <= 0 {
		t.Errorf("fitAffine of a steep line = %g + R·%g, want no batch cost", a, b)
	}
}

// A calibration run on an in-memory store measures what each
// micro-benchmark is meant to (steps, probes, rows per run), yields a valid
// profile, and leaves only empty tables in its namespace, other tables
// untouched.
func TestRunMeasuresThePlannedWork(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, store.TableSpec{Name: "user", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "user", Row: []byte("k"), Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, st, "mem", Options{Runs: 3, Warmup: 1, Engine: "pebble", RTT: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Profile; p.Name != "mem" || p.Engine != "pebble" || p.RTT != 0.002 {
		t.Errorf("profile name %q, engine %q, rtt %v: want those of the options", p.Name, p.Engine, p.RTT)
	}
	if err := res.Profile.Validate(); err != nil {
		t.Fatal(err)
	}
	// Steps, probes, rows, cells: items_by_part's rows have 3 cells,
	// wide_by_part's 8, parts_by_group's the empty marker, items_by_id's 4.
	want := map[string][4]float64{}
	for _, r := range rowSizes {
		want[fmt.Sprintf("1 partition, %d rows", r)] = [4]float64{1, 1, float64(r), float64(3 * r)}
		want[fmt.Sprintf("1 partition, %d rows of 8 cells", r)] = [4]float64{1, 1, float64(r), float64(8 * r)}
	}
	for _, p := range partSizes {
		want[fmt.Sprintf("join over %d partitions", p)] = [4]float64{2, float64(1 + p), float64(2 * p), float64(p + 3*p)}
	}
	want["single row, column family"] = [4]float64{1, 1, 1, 4}
	for _, m := range res.Reads {
		w, ok := want[m.Name]
		if !ok {
			t.Errorf("unexpected measurement %q", m.Name)
			continue
		}
		if got := [4]float64{m.Steps, m.Probes, m.Rows, m.Cells}; got != w || m.Index {
			t.Errorf("%s: steps, probes, rows, cells = %v (index %v), want %v", m.Name, got, m.Index, w)
		}
		if !(m.Seconds > 0) {
			t.Errorf("%s: latency %v", m.Name, m.Seconds)
		}
	}
	if len(res.Reads) != len(want) {
		t.Errorf("%d read measurements, want %d", len(res.Reads), len(want))
	}
	// memstore keeps the SI as a local index of its base: one read
	// returns the base row (on a store without local indexes, the SI's
	// table and then the base: 2 steps, 2 rows).
	if res.SI.Steps != 1 || res.SI.Rows != 1 {
		t.Errorf("SI query: %+v, want 1 step and 1 row (a local index)", res.SI)
	}
	// R rows through the index: one read, R rows, each in its own
	// partition of the base.
	// (items_by_id's rows have 4 cells, wide_by_id's 9.)
	if len(res.Index) != 2*len(rowSizes) {
		t.Errorf("%d index measurements, want %d", len(res.Index), 2*len(rowSizes))
	}
	for i, m := range res.Index {
		r, cells := float64(rowSizes[i%len(rowSizes)]), 4.0
		if i >= len(rowSizes) {
			cells = 9
		}
		if m.Steps != 1 || m.Rows != r || m.Cells != cells*r || !m.Index || !(m.Seconds > 0) {
			t.Errorf("%s: %+v, want 1 step, %v rows and %v cells through an index", m.Name, m, r, cells*r)
		}
	}
	if !(res.Profile.IndexRowCost > 0) {
		t.Errorf("index_row_cost %v, want > 0", res.Profile.IndexRowCost)
	}
	if len(res.Inserts) != len(writeSizes) || len(res.Deletes) != len(writeSizes) {
		t.Errorf("%d insert and %d delete measurements, want %d each", len(res.Inserts), len(res.Deletes), len(writeSizes))
	}
	if len(res.Sorts) != 2*len(sortSizes) {
		t.Errorf("%d sort measurements, want %d", len(res.Sorts), 2*len(sortSizes))
	}
	for _, m := range res.Sorts {
		if !(m.Seconds > 0) || m.Steps != 0 {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	if !(res.Profile.SortRowCost > 0) {
		t.Errorf("sort_row_cost %v, want > 0", res.Profile.SortRowCost)
	}
	tabs, err := st.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range tabs {
		n := 0
		if err := st.ReadRows(ctx, tab.Name, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		if tab.Name == "user" && n != 1 {
			t.Errorf("table user has %d rows after calibration, want 1", n)
		}
		if tab.Name != "user" && n != 0 {
			t.Errorf("calibration left %d rows in %s", n, tab.Name)
		}
	}
	t.Log(res.Report())
}
