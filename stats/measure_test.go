package stats

import (
	"database/sql"
	"fmt"
	"github.com/kvschema/kvschema/types"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
)

// rubis reads the RUBiS model.
func rubis(t testing.TB) *catalog.Model {
	t.Helper()
	src, err := os.ReadFile("../examples/rubis/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	stmts, _, err := lang.ParseModel("model.kvs", src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// counts are small RUBiS row counts, with one empty relation.
var counts = map[string]int{"categories": 20, "regions": 0, "users": 300, "items": 900, "bids": 2500, "comments": 700, "buynow": 400}

// generate writes generated RUBiS data into dir, relations in turn CSV and
// JSONL, and returns it.
func generate(t *testing.T, m *catalog.Model, dir string) *gen.Data {
	t.Helper()
	d := gen.Generate(m, func(e *catalog.Entity) int { return counts[e.Name] }, 5, 0.1)
	writeData(t, d, dir)
	return d
}

// writeData writes d into dir, relations in turn CSV and JSONL.
func writeData(t *testing.T, d *gen.Data, dir string) {
	t.Helper()
	for i, e := range d.Order {
		f := dataio.CSV
		if i%2 == 1 {
			f = dataio.JSONL
		}
		fh, err := os.Create(filepath.Join(dir, e.Name+f.Ext()))
		if err != nil {
			t.Fatal(err)
		}
		w, err := dataio.NewWriter(fh, f, e)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range d.Rows[e] {
			if err := w.Write(row); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
}

// exact computes the statistics of generated data directly: distinct
// values by their printed form, sizes by type.
func exact(d *gen.Data) map[string]Relation {
	out := map[string]Relation{}
	for _, e := range d.Order {
		r := Relation{Name: e.Name, Rows: int64(len(d.Rows[e]))}
		for i, c := range e.Columns {
			a := Attr{Name: c.Name, Type: c.Type, Exact: true}
			seen := map[string]bool{}
			for _, row := range d.Rows[e] {
				v := row[i]
				if v == nil {
					continue
				}
				a.NonNull++
				switch x := v.(type) {
				case string:
					a.Bytes += int64(len(x))
				case []byte:
					a.Bytes += int64(len(x))
				case types.Set, types.List, types.Map:
					enc, err := types.AppendCollection(nil, c.Type, x)
					if err != nil {
						panic(err)
					}
					a.Bytes += int64(len(enc))
					v = types.Format(x)
				default:
					a.Bytes += int64(c.Type.FixedWidth())
				}
				seen[fmt.Sprintf("%T %v", v, v)] = true
			}
			a.Distinct = int64(len(seen))
			r.Attrs = append(r.Attrs, a)
		}
		out[e.Name] = r
	}
	return out
}

func measureDir(t *testing.T, m *catalog.Model, dir string, opt Options) map[string]Relation {
	t.Helper()
	files, err := dataio.Files(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	rels, err := MeasureFiles(files, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Relation{}
	for _, r := range rels {
		out[r.Name] = r
	}
	return out
}

// TestMeasureExact: on generated data, every count and size measured
// equals the one computed from the rows themselves.
func TestMeasureExact(t *testing.T) {
	m := rubis(t)
	dir := t.TempDir()
	want := exact(generate(t, m, dir))
	got := measureDir(t, m, dir, Options{})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("measured statistics differ from exact ones (-want +got):\n%s", diff)
	}
}

// TestMeasureCollections: a collection's size is its stored encoding's,
// and equal collections count once, from CSV (JSON text) and JSON lines
// (arrays and objects) alike.
func TestMeasureCollections(t *testing.T) {
	stmts, _, err := lang.ParseModel("model.kvs", []byte(`
DEFINE RELATION posts ROWS 10 { id BIGINT KEY, tags FROZEN<SET<STRING>> CARDINALITY 5, votes FROZEN<MAP<STRING, INT>> CARDINALITY 4 };
DEFINE RELATION notes ROWS 10 { id BIGINT KEY, seen FROZEN<LIST<TIMESTAMP>> CARDINALITY 3, post BIGINT REFERENCES posts };`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := gen.Generate(m, func(*catalog.Entity) int { return 400 }, 7, 0.1)
	writeData(t, d, dir)
	want := exact(d)
	if a := want["posts"].Attrs[1]; a.Distinct < 5 || a.Bytes == 0 {
		t.Fatalf("generated tags: %+v", a)
	}
	if diff := cmp.Diff(want, measureDir(t, m, dir, Options{})); diff != "" {
		t.Fatalf("measured statistics differ from exact ones (-want +got):\n%s", diff)
	}
}

// TestMeasureSketch: with a small exact limit, attributes with more
// distinct values are estimated by the sketch, within 3 standard errors;
// the others stay exact.
func TestMeasureSketch(t *testing.T) {
	m := rubis(t)
	dir := t.TempDir()
	want := exact(generate(t, m, dir))
	const limit = 100
	got := measureDir(t, m, dir, Options{Exact: limit})
	sketched := 0
	for name, w := range want {
		g := got[name]
		if g.Rows != w.Rows {
			t.Errorf("%s: %d rows, want %d", name, g.Rows, w.Rows)
		}
		for i, wa := range w.Attrs {
			ga := g.Attrs[i]
			if ga.Bytes != wa.Bytes || ga.NonNull != wa.NonNull {
				t.Errorf("%s.%s: sizes %d/%d, want %d/%d", name, wa.Name, ga.Bytes, ga.NonNull, wa.Bytes, wa.NonNull)
			}
			switch {
			case wa.Distinct <= limit && (!ga.Exact || ga.Distinct != wa.Distinct):
				t.Errorf("%s.%s: %d distinct (exact %v), want exactly %d", name, wa.Name, ga.Distinct, ga.Exact, wa.Distinct)
			case wa.Distinct > limit && (ga.Exact || !within3SE(float64(ga.Distinct), float64(wa.Distinct))):
				t.Errorf("%s.%s: %d distinct (exact %v), want an estimate of %d", name, wa.Name, ga.Distinct, ga.Exact, wa.Distinct)
			case wa.Distinct > limit:
				sketched++
			}
		}
	}
	if sketched == 0 {
		t.Fatal("no attribute went past the limit: the test checks nothing of the sketch")
	}
}

// TestMeasureSQLite: the same data in a SQLite database file gives the
// same statistics as the data files.
func TestMeasureSQLite(t *testing.T) {
	m := rubis(t)
	dir := t.TempDir()
	d := generate(t, m, dir)
	fromFiles := measureDir(t, m, dir, Options{})

	path := filepath.Join(t.TempDir(), "app.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Order {
		var cols, marks []string
		for _, c := range e.Columns {
			cols = append(cols, `"`+strings.ToUpper(c.Name)+`" `+oracle.SQLType(c.Type)) // names differ in case only
			marks = append(marks, "?")
		}
		if _, err := tx.Exec(`CREATE TABLE "` + e.Name + `" (` + strings.Join(cols, ", ") + `, extra TEXT)`); err != nil {
			t.Fatal(err)
		}
		for _, row := range d.Rows[e] {
			args := make([]any, len(row))
			for i, v := range row {
				args[i] = oracle.Arg(v)
			}
			if _, err := tx.Exec(`INSERT INTO "`+e.Name+`" VALUES (`+strings.Join(marks, ", ")+`, 'ignored')`, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rels, err := MeasureSQLite(path, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromDB := map[string]Relation{}
	for _, r := range rels {
		fromDB[r.Name] = r
	}
	if diff := cmp.Diff(fromFiles, fromDB); diff != "" {
		t.Fatalf("SQLite statistics differ from the files' (-files +sqlite):\n%s", diff)
	}
}

// TestSQLiteErrors: a value of the wrong type, a missing key column and a
// file that is not a database are errors naming what is at fault.
func TestSQLiteErrors(t *testing.T) {
	m := rubis(t)
	path := filepath.Join(t.TempDir(), "bad.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE regions (id INTEGER, name TEXT, dummy INTEGER)`,
		`INSERT INTO regions VALUES (1, 'a', 2), (2, 'b', 'two')`,
		`CREATE TABLE categories (name TEXT)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	_, err = MeasureSQLite(path, m, Options{})
	if err == nil || !strings.Contains(err.Error(), "table categories: no column id") {
		t.Fatalf("got %v, want the missing key of categories", err)
	}
	if _, err := sql.Open("sqlite", path); err != nil {
		t.Fatal(err)
	}
	db, _ = sql.Open("sqlite", path)
	if _, err := db.Exec(`DROP TABLE categories`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = MeasureSQLite(path, m, Options{})
	if err == nil || !strings.Contains(err.Error(), `table regions: row 2: column dummy holds "string two", not a BIGINT`) {
		t.Fatalf("got %v, want the text in regions.dummy", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.sqlite")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MeasureSQLite(junk, m, Options{}); err == nil || !strings.Contains(err.Error(), junk) {
		t.Fatalf("got %v, want an error naming %s", err, junk)
	}
}

// TestApplyCompare: statistics written into the model read back as what
// was measured (clamped), and Compare finds exactly the statistics more
// than 2× off.
func TestApplyCompare(t *testing.T) {
	m := rubis(t)
	dir := t.TempDir()
	generate(t, m, dir)
	got := measureDir(t, m, dir, Options{})
	var rels []Relation
	for _, r := range got {
		rels = append(rels, r)
	}
	defs, err := catalog.Definitions(m.Defs)
	if err != nil {
		t.Fatal(err)
	}
	warn := Apply(defs, rels, ApplyOptions{})
	if want := []string{"relation regions: no rows in the data; written ROWS 1 (edit it if the relation will hold data)"}; !cmp.Equal(warn, want) {
		t.Fatalf("warnings %q, want %q", warn, want)
	}
	stmts := make([]lang.Statement, len(defs))
	for i, d := range defs {
		stmts[i] = d
	}
	fresh, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fresh.Entities {
		r := got[e.Name]
		if want := float64(max(r.Rows, 1)); e.Count != want {
			t.Errorf("%s: ROWS %v, want %v", e.Name, e.Count, want)
		}
		for _, f := range e.Fields {
			a, _ := measured(r, f.Name)
			if want := float64(clamp(a.Distinct, r.Rows)); !f.Key && f.Cardinality != want {
				t.Errorf("%s: CARDINALITY %v, want %v", f, f.Cardinality, want)
			}
			if want := math.Max(math.Round(a.Size()), 1); a.NonNull > 0 && f.Size != want {
				t.Errorf("%s: SIZE %v, want %v", f, f.Size, want)
			}
		}
	}
	if w := Compare(fresh, rels); len(w) != 0 {
		t.Fatalf("fresh model: warnings %q", w)
	}
	// KeepSizes measures only the SIZEs the model leaves out (here one).
	kept, err := catalog.Definitions(m.Defs)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := catalog.Definitions(m.Defs)
	if err != nil {
		t.Fatal(err)
	}
	zeroed := slices.IndexFunc(kept, func(d *lang.DefineRelation) bool { return d.Name == "items" })
	kept[zeroed].Attrs[1].Size = 0
	Apply(kept, rels, ApplyOptions{KeepSizes: true})
	for i, d := range kept {
		for j, a := range d.Attrs {
			want := orig[i].Attrs[j].Size
			if i == zeroed && j == 1 {
				want = defs[i].Attrs[j].Size // measured
			}
			if a.Size != want || a.Cardinality != defs[i].Attrs[j].Cardinality {
				t.Errorf("KeepSizes: %s.%s SIZE %d CARDINALITY %d, want %d and %d", d.Name, a.Name, a.Size, a.Cardinality, want, defs[i].Attrs[j].Cardinality)
			}
		}
	}
	fresh.Entity("items").Count *= 2.5
	fresh.Entity("users").Count /= 1.9 // within 2×: not stale
	fresh.Entity("bids").Field("bid").Cardinality = 1
	want := []string{
		"relation items: ROWS 2250 in the model, 900 in the data",
		fmt.Sprintf("relation bids: attribute bid has CARDINALITY 1 in the model, %d in the data", got["bids"].Attrs[2].Distinct),
	}
	if w := Compare(fresh, rels); !cmp.Equal(sortStrings(w), sortStrings(want)) {
		t.Fatalf("stale model: warnings %q, want %q", w, want)
	}
}

func sortStrings(s []string) []string { return slices.Sorted(slices.Values(s)) }
