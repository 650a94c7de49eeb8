package exec_test

import (
	"bytes"
	"context"
	"os"
	osexec "os/exec"
	"sync"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// Helpers of the engine's tests that need neither the SQLite reference nor
// the Bigtable emulator, so that the tests built with the race detector
// (the concurrency tests; files with "//go:build !race" are left out of
// them) can use them.

// loadRUBiS parses the RUBiS model and a workload (once per file, so that
// advisor runs can be shared).
func loadRUBiS(t testing.TB, wfile string) (*catalog.Model, *workload.Workload) {
	t.Helper()
	if in, ok := rubisCache.Load(wfile); ok {
		return in.(rubisInputs).m, in.(rubisInputs).w
	}
	m, w := parseRUBiS(t, wfile)
	rubisCache.Store(wfile, rubisInputs{m, w})
	return m, w
}

// tinyRUBiS counts: a few rows per entity, enough for joins to fan out.
func tinyRUBiS(e *catalog.Entity) int {
	return map[string]int{"regions": 3, "categories": 4, "users": 20, "items": 40, "bids": 150, "comments": 60, "buynow": 30}[e.Name]
}

func advise(t testing.TB, m *catalog.Model, w *workload.Workload, mode advisor.Mode, budget float64) *advisor.Result {
	t.Helper()
	type key struct {
		m      *catalog.Model
		name   string
		n      int
		mode   advisor.Mode
		budget float64
	}
	k := key{m, w.Name, len(w.Statements), mode, budget}
	if r, ok := adviseCache.Load(k); ok {
		return r.(*advisor.Result)
	}
	res, err := advisor.Advise(context.Background(), m, w, advisor.Options{Mix: "bidding", Profile: cost.Cassandra, Mode: mode, Budget: budget, Solver: &solver.CBC{}})
	if err != nil {
		t.Fatal(err)
	}
	adviseCache.Store(k, res)
	return res
}

// source offers generated data to Load as if read from files.
func source(d *gen.Data) func(func(exec.Row) error) error {
	return func(yield func(exec.Row) error) error {
		for _, e := range d.Order {
			for i, row := range d.Rows[e] {
				if err := yield(exec.Row{Entity: e, Values: append([]types.Value(nil), row...), File: e.Name + ".csv", Line: i + 2}); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func needCBC(t *testing.T) {
	t.Helper()
	if _, err := osexec.LookPath("cbc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cbc is not installed (CI installs coinor-cbc)")
		}
		t.Skip("cbc is not installed: apt-get install coinor-cbc")
	}
}

var rubisCache sync.Map // workload file → rubisInputs

type rubisInputs struct {
	m *catalog.Model
	w *workload.Workload
}

func parseRUBiS(t testing.TB, wfile string) (*catalog.Model, *workload.Workload) {
	t.Helper()
	m, _, w, err := rubis.Parse(wfile)
	if err != nil {
		t.Fatal(err)
	}
	return m, w
}

// adviseCache shares advisor runs between tests (the 61-statement workload
// takes seconds); a cached result is only used with the same model.
var adviseCache sync.Map

// openBigtable opens a fresh raw store on the in-process Bigtable emulator.
// It is nil in builds with the race detector: building gRPC and the
// emulator with it doubles the time of the race pass, and the concurrency
// it would check is the engine's and txnstore's, which the race pass checks
// on the row-wise store (txnstore over faultstore over memstore).
var openBigtable func(t testing.TB) txnstore.Inner

// advisedRUBiS returns the RUBiS model's source and the DDL of the schema
// the advisor recommends (with SIs) for a workload file and budget.
func advisedRUBiS(t testing.TB, wfile string, budget float64) (modelSrc []byte, ddl string) {
	t.Helper()
	m, w := loadRUBiS(t, wfile)
	res := advise(t, m, w, advisor.WithSI, budget)
	msrc, err := os.ReadFile("../examples/rubis/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	mstmts, err := lang.ParseScript("model.kvs", msrc)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteDDL(&b, mstmts); err != nil {
		t.Fatal(err)
	}
	return msrc, b.String()
}

// parseSchema parses a model, a schema over it (DEFINE COLUMN FAMILY …) and
// a workload.
func parseSchema(t testing.TB, modelSrc, schemaSrc, workloadSrc string) (*catalog.Model, *catalog.Schema, *workload.Workload) {
	t.Helper()
	ms, err := lang.ParseScript("model.kvs", []byte(modelSrc))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(ms)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := lang.ParseScript("schema.kvs", []byte(schemaSrc))
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.ParseSchema(m, ss)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(m, "workload.kvs", []byte(workloadSrc))
	if err != nil {
		t.Fatal(err)
	}
	return m, s, w
}

// execOn prepares src on en and runs it with args, failing t on an error.
func execOn(t testing.TB, en *exec.Engine, src string, args ...types.Value) {
	t.Helper()
	st, err := en.Prepare(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Exec(context.Background(), args...); err != nil {
		t.Fatalf("%s %v: %v", src, args, err)
	}
}
