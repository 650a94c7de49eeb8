//go:build !race

package exec_test

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestStoreBytesGolden pins the bytes the engine stores: for two RUBiS
// schemas the advisor recommended (testdata/store-bytes-*.kvs; every structure unsalted, and again every one with 4 salt
// buckets) it loads tiny data, runs 300 writes of the crash workload
// (inserts, updates that change cells and move rows, connects) and digests
// every table's rows and cells. The digests were recorded with the
// engine's own encoder (engine/mapping.go at 8edfbb3); whatever encodes
// rows now must write exactly those bytes, so stores written before open
// and read the same. (The metadata tables' digests changed once, when the
// advised schema moved into the catalog of package catalog; and again,
// with cf_users_bids_items_by_id's, when the advisor began to return the
// smallest of the schemas of least cost, where that CF keeps its keys
// only: those digests are the current encoder's; and once more when the
// catalog began to record whether secondary indexes are the store's local
// indexes, and the stored Cassandra profile says it keeps them.) memstore keeps local indexes, so in the unsalted runs a
// secondary index whose base stores the indexed value as a cell has no
// table; the salted runs, whose bases cannot carry one (catalog's
// localBases), keep every secondary index in a table and pin its bytes.
// (Once more when SI rows began to hold their base's whole key: the short
// runs at the end write SIs as before, and reproduce the digests recorded
// before that change.)
func TestStoreBytesGolden(t *testing.T) {
	needCBC(t)
	var out strings.Builder
	for _, c := range []struct {
		workload string
		budget   float64
		schema   string
	}{{"workload.kvs", 0, "store-bytes-workload.kvs"}, {"workload_secondary.kvs", 161e6, "store-bytes-workload_secondary-161MB.kvs"}} {
		for _, salt := range []int{0, 4} {
			fmt.Fprintf(&out, "# %s budget %g salt %d\n", c.workload, c.budget, salt)
			out.WriteString(storeDigest(t, "testdata/"+c.schema, salt, false))
		}
	}
	// Short SIs (catalog.Advised.ShortSIs), as a store an earlier
	// kvschema wrote keeps them: the engine must write the bytes it wrote
	// (these digests are those of the runs above before SI rows held
	// their base's whole key), the catalog table aside.
	for _, salt := range []int{0, 4} {
		fmt.Fprintf(&out, "# workload_secondary.kvs budget 1.61e+08 salt %d, short SIs\n", salt)
		out.WriteString(storeDigest(t, "testdata/store-bytes-workload_secondary-161MB.kvs", salt, true))
	}
	checkGolden(t, "testdata/store-bytes.golden", out.String())
}

// checkGolden compares got with the golden file, which -update rewrites.
func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run %s -update rewrites it):\n%s", file, t.Name(), lineDiff(string(want), got))
	}
}

var cfDef = regexp.MustCompile(`(?s)(DEFINE COLUMN FAMILY [^{]*\{.*?)(\s*\};)`)

// storeDigest deploys a schema the advisor recommended for RUBiS (from
// file; salted with salt buckets if salt > 0), loads tiny data, runs writes
// and digests the store. The schemas are files, not advised afresh, so
// that the digests pin the encoding, whatever the advisor recommends now.
func storeDigest(t *testing.T, file string, salt int, short bool) string {
	ctx := context.Background()
	msrc, err := os.ReadFile("../examples/rubis/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	schema := string(b)
	if salt > 0 {
		schema = cfDef.ReplaceAllString(schema, fmt.Sprintf("$1, SALT_BUCKETS = %d$2", salt))
	}
	st := memstore.New()
	en, err := exec.Deploy(ctx, st, "model.kvs", msrc, "schema.kvs", []byte(schema), cost.Cassandra)
	if err != nil {
		t.Fatalf("%v\n%s", err, schema)
	}
	if short {
		a, err := catalog.ParseAdvised("model.kvs", msrc, "schema.kvs", []byte(schema), cost.Cassandra)
		if err != nil {
			t.Fatal(err)
		}
		exec.Realize(st, a)
		var names []string
		for _, x := range a.Schema.Indexes {
			names = append(names, x.Name)
		}
		if err := a.KeepShortSIs(names); err != nil {
			t.Fatal(err)
		}
		if len(a.ShortSIs) == 0 {
			t.Fatal("no SI is short: the short run pins nothing")
		}
		en = exec.FromCatalog(st, a, nil)
	}
	d := gen.Generate(en.Model(), tinyRUBiS, 3, 0.1)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "golden"}); err != nil {
		t.Fatal(err)
	}
	stmts := prepareCrashWrites(t, en)
	next := crashSequence(stmts, 5, 900_000)
	for range 300 {
		op := next()
		if _, err := stmts[op.stmt].Exec(ctx, op.args...); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	specs, err := st.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, spec := range specs {
		if short && spec.Name == catalog.Table {
			continue
		}
		h := sha256.New()
		rows, cells := 0, 0
		err := st.ReadRows(ctx, spec.Name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			rows++
			fmt.Fprintf(h, "%q\n", r.Key)
			for _, c := range r.Cells {
				cells++
				fmt.Fprintf(h, "  %s:%q=%q\n", c.Family, c.Qualifier, c.Value)
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s families %v splits %d: %d rows, %d cells, %x\n", spec.Name, spec.Families, len(spec.Splits), rows, cells, h.Sum(nil)[:12])
	}
	return out.String()
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

// TestExplainGolden pins EXPLAIN of every RUBiS statement (the paper's 61)
// on testdata/rubis_schema.kvs, an advised schema with a secondary index:
// the advisor's steps with their estimates and costs, then each step's
// store access in the client's vocabulary (POINT LOOKUP, RANGE SCAN, SKIP
// SCAN, filters, sort, limit); for writes, each index's upkeep and the
// plans of its support queries. A plan or vocabulary change shows in the
// diff; go test -run ExplainGolden -update rewrites the file.
func TestExplainGolden(t *testing.T) {
	_, _, w, err := rubis.Parse("workload_secondary.kvs")
	if err != nil {
		t.Fatal(err)
	}
	schemaSrc, err := os.ReadFile("testdata/rubis_schema.kvs")
	if err != nil {
		t.Fatal(err)
	}
	en, err := exec.Deploy(context.Background(), memstore.New(), "model.kvs", []byte(examples.RUBiSModel), "testdata/rubis_schema.kvs", schemaSrc, cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, s := range w.Statements {
		fmt.Fprintf(&out, "-- %s\n", s.Tag)
		st, err := en.PrepareAST(s.AST)
		if err != nil {
			fmt.Fprintf(&out, "%s\nerror: %v\n\n", s.Text(), err)
			continue
		}
		fmt.Fprintf(&out, "%s\n", st.Explain())
	}
	checkGolden(t, "testdata/explain/rubis.txt", out.String())
}
