package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/lang"
)

const (
	rubisSQL = "../../workload/testdata/rubis_schema.sql"
	rubisLog = "../../workload/testdata/rubis_bidding.log"
)

// TestModelPrint: model --print writes an SQL schema as DEFINE RELATION
// statements — RUBiS's as examples/rubis/model.kvs has them — and its
// output, read again, prints the same (the round trip DDL → model →
// DEFINE RELATION → model).
func TestModelPrint(t *testing.T) {
	out := mustRun(t, "", "model", "--model", rubisSQL, "--print")
	printed, notes, _ := strings.Cut(out, "-- The conceptual model of")
	if !strings.Contains(printed, "kvschema: note: "+rubisSQL+":10:1: skipped SET: not part of the conceptual model (5 statements, the first here)") {
		t.Errorf("no note on the skipped SETs:\n%s", printed)
	}
	text := "-- The conceptual model of" + notes
	native, err := lang.ParseScript("model.kvs", []byte(examples.RUBiSModel))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(native)
	if err != nil {
		t.Fatal(err)
	}
	if body := text[strings.Index(text, "\n")+1:]; body != lang.PrintScript(m.Defs) {
		t.Errorf("printed model:\n%s\nwant examples/rubis/model.kvs's:\n%s", body, lang.PrintScript(m.Defs))
	}
	again := mustRun(t, "", "model", "--model", writeFile(t, "printed.kvs", text), "--print")
	if _, body, _ := strings.Cut(again, "\n"); body != text[strings.Index(text, "\n")+1:] {
		t.Errorf("the printed model prints differently:\n%s", again)
	}
	// Without --print, a summary.
	if sum := mustRun(t, "", "model", "--model", rubisSQL); !strings.Contains(sum, "7 relations, 10 relationships\n") ||
		!strings.Contains(sum, "\nitems: 20000 rows, key id; attributes id, name, description,") ||
		!strings.Contains(sum, "relationships seller → users, category → categories, bids →* bids,") {
		t.Errorf("summary:\n%s", sum)
	}
}

// TestModelInputs: several model files, SQL and kvschema mixed; a model
// without statistics prints, and says what advise will need.
func TestModelInputs(t *testing.T) {
	users := writeFile(t, "users.sql", "CREATE TABLE users ( -- ROWS 100\n  id integer PRIMARY KEY,\n  nick text\n);\nCREATE INDEX u_nick ON users (nick);\n")
	items := writeFile(t, "items.kvs", "DEFINE RELATION items ROWS 1000 { id BIGINT KEY, seller BIGINT REFERENCES users };\n")
	out := mustRun(t, "", "model", "--model", users, "--model", items, "--print")
	for _, want := range []string{
		"kvschema: note: " + users + ":5:1: skipped CREATE INDEX: indexes are physical design, which kvschema advises\n",
		"DEFINE RELATION users ROWS 100 {\n  id BIGINT KEY,\n  nick STRING\n};\n",
		"DEFINE RELATION items ROWS 1000 {\n  id BIGINT KEY,\n  seller BIGINT REFERENCES users REVERSE items\n};\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	bare := writeFile(t, "bare.sql", "CREATE TABLE t (\n  id integer PRIMARY KEY\n);\n")
	out = mustRun(t, "", "model", "--model", bare, "--print")
	if !strings.Contains(out, "DEFINE RELATION t {\n  id BIGINT KEY\n};\n") ||
		!strings.Contains(out, "kvschema: note: advise cannot take this model yet: "+bare+":1:1: relation t needs its row count for the advisor") {
		t.Errorf("a model without statistics:\n%s", out)
	}
	if _, err := run(t, "", "model", "--model", bare); err == nil || !strings.Contains(err.Error(), bare+":1:1: relation t needs its row count for the advisor: DEFINE RELATION t ROWS n {…}, or in SQL a comment -- ROWS n at the end of the line CREATE TABLE t ( (statistic ROWS missing)") {
		t.Errorf("model without statistics: %v", err)
	}
	if _, err := run(t, "", "model"); err == nil || !strings.Contains(err.Error(), "give the conceptual model with --model FILE") {
		t.Errorf("no model: %v", err)
	}
	bad := writeFile(t, "bad.sql", "SET x = 1;\nCREATE TABLE t (id xml);\n")
	if _, err := run(t, "", "model", "--model", bad, "--print"); err == nil || !strings.Contains(err.Error(), bad+":2:20: column id: type 'xml' is not supported") {
		t.Errorf("unsupported type: %v", err)
	}
}

// TestAdviseWorkloadLog: advise and cost take an SQL schema and a query
// log; the log's report goes to stderr.
func TestAdviseWorkloadLog(t *testing.T) {
	log := writeFile(t, "q.log", "100\tSELECT nickname FROM users WHERE id = $1\n"+
		"5\tSELECT * FROM items WHERE name LIKE ?\n"+
		"40\tUPDATE users SET nickname = 'x' WHERE id = 3\n")
	if _, err := run(t, "", "advise", "--model", rubisSQL); err == nil || !strings.Contains(err.Error(), "give the workload with exactly one of --workload FILE and --workload-log FILE") {
		t.Errorf("no workload: %v", err)
	}
	if _, err := run(t, "", "advise", "--model", rubisSQL, "--workload", "../../examples/rubis/workload.kvs", "--workload-log", log); err == nil || !strings.Contains(err.Error(), "exactly one of") {
		t.Errorf("two workloads: %v", err)
	}
	empty := writeFile(t, "empty.log", "7\tCOMMIT\n")
	out, err := run(t, "", "advise", "-q", "--model", rubisSQL, "--workload-log", empty)
	if err == nil || !strings.Contains(err.Error(), empty+": no statement of the log can be used (0 read, 0 not expressible, 1 ignored)") || !strings.Contains(out, "1 ignored (session and transaction control)") {
		t.Errorf("a log of nothing usable: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("cbc"); err != nil {
		t.Skip("cbc is not installed")
	}
	out = mustRun(t, "", "advise", "-q", "--model", rubisSQL, "--workload-log", log)
	for _, want := range []string{
		log + ": 3 statements, weight 145; 1 not expressible, weight 5 (3.45% of the log's weight)\n",
		log + ":2:34: expected end of input after statement, found 'LIKE'\n",
		"-- kvschema advise: mode cf+si, mix log,",
		"cf_users_by_id CF([users.id] [] → [users.nickname])",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("advise output lacks %q:\n%s", want, out)
		}
	}
	ddl := writeFile(t, "schema.kvs", "")
	mustRun(t, "", "advise", "-q", "--model", rubisSQL, "--workload-log", log, "--format", "ddl", "-o", ddl)
	// The DDL carries the model in kvschema's language: cost reads it from
	// there, with the same log.
	if cost := mustRun(t, "", "cost", "--schema", ddl, "--workload-log", log); !strings.Contains(cost, "-- kvschema cost: mix log") {
		t.Errorf("cost:\n%s", cost)
	}
}
