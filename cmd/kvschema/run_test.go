package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/rubis"
)

// TestAdviseLoadQueryVerify is the README's three-command path: advise to a
// DDL file, load data files, query, verify, then a write and verify again.
func TestAdviseLoadQueryVerify(t *testing.T) {
	needCBC(t)
	adviseLoadQueryVerify(t, "pebble:"+filepath.Join(t.TempDir(), "db"), "")
}

// adviseLoadQueryVerify runs the README's path against the store at url,
// advised for target (the default when ""), and returns the schema file
// it advised.
func adviseLoadQueryVerify(t *testing.T, url, target string) string {
	dir := t.TempDir()
	ddl := filepath.Join(dir, "schema.kvs")
	args := []string{"advise", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload.kvs",
		"--mix", "bidding", "--format", "ddl", "-o", ddl, "-q"}
	if target != "" {
		args = append(args, "--target", target)
	}
	mustRun(t, "", args...)
	m, _, _, err := rubis.Parse("workload.kvs")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := rubis.WriteDir(context.Background(), data, m, rubis.Config{Scale: 0.0005, Seed: 3}, dataio.CSV); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "load", "--store", url, "--model", "../../examples/rubis/model.kvs", "--schema", ddl, "--data", data, "-q")
	if !strings.Contains(out, "loaded 17102 entity rows") || strings.Contains(out, "warning") {
		t.Fatalf("load output:\n%s", out)
	}
	// Running it again finds every index loaded.
	out = mustRun(t, "", "load", "--store", url, "--data", data, "-q")
	if m := regexp.MustCompile(`\((\d+) indexes, (\d+) already done\)`).FindStringSubmatch(out); m == nil || m[1] != m[2] {
		t.Fatalf("second load:\n%s", out)
	}
	out = mustRun(t, "", "exec", "--store", url, "--explain", "-e", "SELECT items.name FROM items WHERE items.id = 3")
	// A lookup of a column family of items by id (cf_items_by_id, or
	// _2… when the schema has several), whose key the target's profile
	// chose: items.id alone (a point lookup) or with a clustering key (a
	// range scan of the partition).
	for _, frag := range []string{"CLIENT PARALLEL 1-WAY ", "items.name", "(1 row)"} {
		if !strings.Contains(out, frag) {
			t.Fatalf("exec output lacks %q:\n%s", frag, out)
		}
	}
	if !regexp.MustCompile(` OVER cf_items_by_id(_\d+)? \[items\.id = 3\]`).MatchString(out) {
		t.Fatalf("exec output reads no column family of items by id:\n%s", out)
	}
	out = mustRun(t, "", "verify", "--store", url, "--data", data)
	if !strings.Contains(out, "verify: clean") {
		t.Fatalf("verify:\n%s", out)
	}
	mustRun(t, "", "exec", "--store", url, "-e", "INSERT INTO bids SET id = 900000, qty = 1, bid = 2.5, date = '2026-01-01 00:00:00' AND CONNECT TO item(3), user(2)",
		"-e", "UPDATE items SET nb_of_bids = 7, max_bid = 2.5 WHERE items.id = 3")
	out = mustRun(t, "", "verify", "--store", url)
	if !strings.Contains(out, "verify: clean") {
		t.Fatalf("verify after writes:\n%s", out)
	}
	// Against the files (which lack the new bid) it reports differences.
	out, err = run(t, "", "verify", "--store", url, "--data", data)
	if err == nil || !strings.Contains(out, "extra row") {
		t.Fatalf("verify against stale files: %v\n%s", err, out)
	}
	// The shell reaches the advised schema too, and a relation defined by
	// the client lives beside it; a name the model owns cannot be defined
	// again.
	out = mustRun(t, "SELECT items.nb_of_bids, items.max_bid FROM items WHERE items.id = 3;\n"+
		"DEFINE RELATION notes { id BIGINT KEY, body STRING };\nINSERT INTO notes VALUES (0, 'nowhere to go');\n"+
		"DEFINE SCHEMA notes_by_id FOR notes { TABLE 'notes', ROW ordered{id}, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id'] };\n"+
		"INSERT INTO notes VALUES (1, 'hi');\nSELECT * FROM notes;\n.schema\n", "shell", "--store", url)
	for _, frag := range []string{"items.nb_of_bids  items.max_bid\n7                 2.5\n(1 row)",
		"error: shell:1:1: relation notes has no schema to store its tuples in", "id  body\n1   hi\n(1 row)",
		"DEFINE SCHEMA notes_by_id FOR notes {", "-- the advised schema", "DEFINE RELATION items ROWS 20000 {", "DEFINE COLUMN FAMILY cf_items_by_id FOR items {"} {
		if !strings.Contains(out, frag) {
			t.Fatalf("shell output lacks %q:\n%s", frag, out)
		}
	}
	out, err = run(t, "DEFINE RELATION items { id BIGINT KEY };\n", "shell", "--store", url)
	if !strings.Contains(out+fmt.Sprint(err), "relation items is defined by the advised schema deployed in this store") {
		t.Fatalf("redefining a model relation: %v\n%s", err, out)
	}
	return ddl
}

func TestLoadBadFile(t *testing.T) {
	needCBC(t)
	dir := t.TempDir()
	ddl := filepath.Join(dir, "schema.kvs")
	mustRun(t, "", "advise", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload.kvs",
		"--mix", "bidding", "--format", "ddl", "-o", ddl, "-q")
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(data, "regions.csv"), []byte("id,name,dummy\n1,north,1\n2,south,x\n"), 0o644)
	url := "pebble:" + filepath.Join(dir, "db")
	out, err := run(t, "", "load", "--store", url, "--model", "../../examples/rubis/model.kvs", "--schema", ddl, "--data", data, "-q")
	if err == nil || !strings.Contains(err.Error(), "regions.csv:3: field dummy:") {
		t.Fatalf("bad file: %v\n%s", err, out)
	}
	// Bad data leaves the store as it was: no schema deployed.
	if out, err := run(t, "", "verify", "--store", url); err == nil || !strings.Contains(err.Error(), "the store holds no schema") {
		t.Fatalf("after a refused load, verify: %v\n%s", err, out)
	}
	// The schema file carries its model: --model is not needed.
	os.WriteFile(filepath.Join(data, "regions.csv"), []byte("id,name,dummy\n1,north,1\n"), 0o644)
	os.WriteFile(filepath.Join(data, "users.csv"), []byte("id,nickname,region\n1,bob,7\n"), 0o644)
	_, err = run(t, "", "load", "--store", url, "--schema", ddl, "--data", data, "-q")
	if err == nil || !strings.Contains(err.Error(), "users.csv:2: field region: no regions has id = 7 (dangling foreign key)") {
		t.Fatalf("dangling: %v", err)
	}
	os.Remove(filepath.Join(data, "users.csv"))
	os.WriteFile(filepath.Join(data, "sellers.csv"), []byte("id\n1\n"), 0o644)
	_, err = run(t, "", "load", "--store", url, "--schema", ddl, "--data", data, "-q")
	if err == nil || !strings.Contains(err.Error(), `unknown entity "sellers"`) {
		t.Fatalf("unknown entity: %v", err)
	}
	// Good data deploys and loads; other data then says what to do.
	os.Remove(filepath.Join(data, "sellers.csv"))
	mustRun(t, "", "load", "--store", url, "--schema", ddl, "--data", data, "-q")
	os.WriteFile(filepath.Join(data, "regions.csv"), []byte("id,name,dummy\n1,north,1\n2,south,1\n"), 0o644)
	_, err = run(t, "", "load", "--store", url, "--data", data, "-q")
	if err == nil || !strings.Contains(err.Error(), "a load fills an empty store once: to replace the data, load") || !strings.Contains(err.Error(), "write them with INSERT, UPDATE and DELETE") {
		t.Fatalf("second load of other data: %v", err)
	}
}

func TestRUBiSDemo(t *testing.T) {
	needCBC(t)
	if testing.Short() {
		t.Skip("the demo advises the 61-statement workload")
	}
	out := mustRun(t, "", "demo", "--iterations", "2", "--scale", "0.0005")
	for _, frag := range []string{"SI([items.quantity] → [items.id])", "Index Lookup Secondary Index", "INSERT 1", "UPDATE 1", "== 5. verify", ": clean", "== summary"} {
		if !strings.Contains(out, frag) {
			t.Fatalf("demo output lacks %q:\n%s", frag, out)
		}
	}
}

// TestVerifyClientRelations: verify on a store of client relations alone
// checks their layouts (seed 003's Fig. 6: s1 and s2 hold the same tuple).
func TestVerifyClientRelations(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	mustRun(t, "", "exec", "--store", url, "--create", "-q", "-e", fig6)
	mustRun(t, "", "exec", "--store", url, "-q", "-e", "INSERT INTO r VALUES ('a1', 'b', 'x', 100);")
	out := mustRun(t, "", "verify", "--store", url)
	for _, want := range []string{"s1 ", "s2 ", "1 rows", "verify: clean"} {
		if !strings.Contains(out, want) {
			t.Fatalf("verify of a client store: want %q in\n%s", want, out)
		}
	}
	if out, err := run(t, "", "verify", "--store", url, "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "the store holds no schema") {
		t.Fatalf("verify --data without an advised schema: %v\n%s", err, out)
	}
}

// TestLoadRelations: load --data on a store of client relations writes
// each RELATION.csv into every layout (a repeated key: the last row wins),
// verify is clean after it, and a file with a bad value writes nothing and
// names its line.
func TestLoadRelations(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	mustRun(t, "", "exec", "--store", url, "--create", "-q", "-e", fig6)
	dir := t.TempDir()
	csv := "k1,k2,v1,v2\na1,b,x,100\na2,c,y,7\na1,b,z,5\n"
	if err := os.WriteFile(filepath.Join(dir, "r.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "load", "--store", url, "--data", dir, "-q")
	if !strings.Contains(out, "load: r: 3 tuples from ") {
		t.Fatalf("load output:\n%s", out)
	}
	out = mustRun(t, "", "exec", "--store", url, "-q", "--format", "csv", "-e", "SELECT k1, v1, v2 FROM r ORDER BY k1;")
	if want := "k1,v1,v2\na1,z,5\na2,y,7\n"; out != want {
		t.Fatalf("after the load:\n%s\nwant:\n%s", out, want)
	}
	if out := mustRun(t, "", "verify", "--store", url); !strings.Contains(out, "verify: clean") {
		t.Fatalf("verify after the load:\n%s", out)
	}
	bad := "k1,k2,v1,v2\na3,d,w,1\na4,e,v,many\n"
	if err := os.WriteFile(filepath.Join(dir, "r.csv"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "", "load", "--store", url, "--data", dir, "-q"); err == nil || !strings.Contains(err.Error(), "r.csv:3") {
		t.Fatalf("a bad value: %v\n%s", err, out)
	}
	out = mustRun(t, "", "exec", "--store", url, "-q", "--format", "csv", "-e", "SELECT k1 FROM r;")
	if strings.Contains(out, "a3") {
		t.Fatalf("the refused load wrote a row:\n%s", out)
	}
}

// TestLoadBothKinds: on a store of client relations, load --schema --data
// loads each file where it belongs: a relation's into its layouts, an
// entity's through the advised schema it deploys; then, on the store
// holding both, a file naming neither is refused.
func TestLoadBothKinds(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("schema.kvs", "DEFINE RELATION users ROWS 100 { id BIGINT KEY, nick STRING CARDINALITY 100 };\n"+
		"DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nick) };\n")
	mustRun(t, "", "exec", "--store", url, "--create", "-q", "-e", fig6)
	data := t.TempDir()
	for name, content := range map[string]string{"users.csv": "id,nick\n1,ann\n2,bob\n", "r.csv": "k1,k2,v1,v2\na1,b,x,100\n"} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out := mustRun(t, "", "load", "--store", url, "--schema", filepath.Join(dir, "schema.kvs"), "--data", data, "-q"); !strings.Contains(out, "load: r: 1 tuples from ") {
		t.Fatalf("load output:\n%s", out)
	}
	for q, want := range map[string]string{
		"SELECT users.nick FROM users WHERE users.id = 2;": "users.nick\nbob\n",
		"SELECT k1, v1 FROM r;":                            "k1,v1\na1,x\n",
	} {
		if out := mustRun(t, "", "exec", "--store", url, "-q", "--format", "csv", "-e", q); out != want {
			t.Errorf("%s\n%s\nwant:\n%s", q, out, want)
		}
	}
	if out := mustRun(t, "", "verify", "--store", url); !strings.Contains(out, "verify: clean") {
		t.Fatalf("verify after the load:\n%s", out)
	}
	stray := t.TempDir()
	if err := os.WriteFile(filepath.Join(stray, "nobody.csv"), []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "", "load", "--store", url, "--data", stray, "-q"); err == nil || !strings.Contains(err.Error(), `unknown entity "nobody"`) {
		t.Fatalf("a file naming neither kind: %v\n%s", err, out)
	}
}

// TestLoadLocalIndexes: a schema with secondary indexes loads into Pebble,
// which keeps them as local indexes of their column families (no tables
// of their own): load, query through one and verify, from the command line.
func TestLoadLocalIndexes(t *testing.T) {
	needCBC(t)
	dir := t.TempDir()
	ddl := filepath.Join(dir, "schema.kvs")
	mustRun(t, "", "advise", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload_secondary.kvs",
		"--mix", "bidding", "--budget", "161MB", "--target", "cassandra", "--format", "ddl", "-o", ddl, "-q")
	src, err := os.ReadFile(ddl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "DEFINE SECONDARY INDEX si_items_by_quantity ON cf_items_by_id") {
		t.Fatalf("the advised schema lacks the index the test reads through:\n%s", src)
	}
	m, _, _, err := rubis.Parse("workload.kvs")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := rubis.WriteDir(context.Background(), data, m, rubis.Config{Scale: 0.0005, Seed: 3}, dataio.CSV); err != nil {
		t.Fatal(err)
	}
	url := "pebble:" + filepath.Join(dir, "db")
	mustRun(t, "", "load", "--store", url, "--model", "../../examples/rubis/model.kvs", "--schema", ddl, "--data", data, "-q")
	out := mustRun(t, "", "exec", "--store", url, "--explain", "-e", "SELECT items.name FROM items WHERE items.quantity = 3")
	if !strings.Contains(out, "OVER LOCAL INDEX si_items_by_quantity OF cf_items_by_id [items.quantity = 3] (1 ROUND TRIP") {
		t.Fatalf("the query does not read the local index:\n%s", out)
	}
	if out := mustRun(t, "", "verify", "--store", url); !strings.Contains(out, "verify: clean") {
		t.Fatalf("verify:\n%s", out)
	}
}
