package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
)

// parseModel reads a model file.
func parseModel(t *testing.T, path string) []lang.Statement {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stmts, _, err := lang.ParseModel(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return stmts
}

// TestStatsRoundTrip: the RUBiS model with its statistics stripped and
// generated data in: the model out has the generated row counts exactly
// and each attribute's number of distinct values (exact at this size).
func TestStatsRoundTrip(t *testing.T) {
	full, err := catalog.Build(parseModel(t, rubisModel))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{"categories": 20, "regions": 0, "users": 200, "items": 600, "bids": 1500, "comments": 400, "buynow": 300}
	d := gen.Generate(full, func(e *catalog.Entity) int { return counts[e.Name] }, 3, 0.1)
	dir := t.TempDir()
	for _, e := range d.Order {
		fh, err := os.Create(filepath.Join(dir, e.Name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		w, err := dataio.NewWriter(fh, dataio.CSV, e)
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

	defs, err := catalog.Definitions(full.Defs)
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range defs {
		def.Rows = 0
		for i := range def.Attrs {
			def.Attrs[i].Size, def.Attrs[i].Cardinality = 0, 0
		}
	}
	stripped := writeFile(t, "stripped.kvs", printDefs(defs))
	if _, err := run(t, "", "advise", "-q", "--model", stripped, "--workload", rubisWorkload); err == nil || !strings.Contains(err.Error(), "relations without ROWS: categories, regions, users, items, bids, comments, buynow; measure the statistics from the data: kvschema stats --model "+stripped+" --data") {
		t.Fatalf("advise of a model without ROWS: got %v, want an error pointing at kvschema stats", err)
	}

	out := filepath.Join(t.TempDir(), "model.kvs")
	log := mustRun(t, "", "stats", "--model", stripped, "--data", dir, "-o", out)
	if want := "kvschema: warning: relation regions: no rows in the data; written ROWS 1 (edit it if the relation will hold data)\n"; log != want {
		t.Fatalf("stderr %q, want %q", log, want)
	}
	// The same model as SQL DDL (a pg_dump whose statistics, the same as
	// the native model's, stats replaces): the same model out.
	fromSQL := mustRun(t, "", "stats", "--model", "../../workload/testdata/rubis_schema.sql", "--data", dir)
	fromKVS := mustRun(t, "", "stats", "--model", rubisModel, "--data", dir)
	body := func(s string) string { return s[strings.Index(s, "DEFINE RELATION"):] }
	if body(fromSQL) != body(fromKVS) {
		t.Errorf("stats of the SQL schema:\n%s\nof the native model:\n%s", fromSQL, fromKVS)
	}
	m, err := catalog.Build(parseModel(t, out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range full.Entities {
		got := m.Entity(e.Name)
		if want := float64(max(counts[e.Name], 1)); got.Count != want {
			t.Errorf("%s: ROWS %v, want %v", e.Name, got.Count, want)
		}
		for i, c := range e.Columns {
			if c.Field == nil || c.Field.Key {
				continue
			}
			distinct := map[string]bool{}
			for _, row := range d.Rows[e] {
				if row[i] != nil {
					distinct[fmt.Sprint(row[i])] = true
				}
			}
			if want := float64(max(len(distinct), 1)); got.Field(c.Name).Cardinality != want {
				t.Errorf("%s.%s: CARDINALITY %v, want %v", e.Name, c.Name, got.Field(c.Name).Cardinality, want)
			}
			if got.Field(c.Name).Size < 1 {
				t.Errorf("%s.%s: SIZE %v", e.Name, c.Name, got.Field(c.Name).Size)
			}
		}
	}
}

// TestAdviseData: advise --data warns about each statistic more than 2×
// off the data, naming both numbers, and says nothing of a model measured
// from the same data.
func TestAdviseData(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,firstname,lastname,password\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "%d,f%d,l%d,p%d\n", i, i%100, i%150, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "user.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--data", dir)
	for _, want := range []string{
		"kvschema: warning: relation user: ROWS 100000 in the model, 300 in the data\n",
		"kvschema: warning: relation user: attribute firstname has CARDINALITY 50000 in the model, 100 in the data\n",
		"kvschema: warning: relation user: attribute lastname has CARDINALITY 50000 in the model, 150 in the data\n",
		"kvschema: warning: relation user: attribute password has CARDINALITY 100000 in the model, 300 in the data\n",
	} {
		if !strings.Contains(stale, want) {
			t.Errorf("stale model: output lacks %q:\n%s", want, stale)
		}
	}
	fresh := filepath.Join(t.TempDir(), "fresh.kvs")
	mustRun(t, "", "stats", "--model", seed37Model, "--data", dir, "-o", fresh)
	out := mustRun(t, "", "advise", "-q", "--model", fresh, "--workload", seed37Workload, "--data", dir)
	if strings.Contains(out, "warning") {
		t.Fatalf("fresh model: warnings:\n%s", out)
	}

	// The same rows in a SQLite database: the same model.
	dbPath := filepath.Join(t.TempDir(), "app.sqlite")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE user (id INTEGER PRIMARY KEY, firstname TEXT, lastname TEXT, password TEXT)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 300; i++ {
		if _, err := tx.Exec(`INSERT INTO user VALUES (?, ?, ?, ?)`, i, fmt.Sprintf("f%d", i%100), fmt.Sprintf("l%d", i%150), fmt.Sprintf("p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fromFiles := mustRun(t, "", "stats", "--model", seed37Model, "--data", dir)
	fromDB := mustRun(t, "", "stats", "--model", seed37Model, "--data", dbPath)
	if _, err := run(t, "", "stats", "--model", rubisModel, "--data", dbPath); err == nil || !strings.Contains(err.Error(), "has no table named after a relation of the model") {
		t.Fatalf("stats of a database without the model's tables: %v", err)
	}
	body := func(s string) string { return s[strings.IndexByte(s, '\n'):] } // after the header naming the data
	if body(fromFiles) != body(fromDB) {
		t.Fatalf("stats from CSV:\n%s\nfrom SQLite:\n%s", fromFiles, fromDB)
	}
}
