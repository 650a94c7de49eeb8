package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func needCBC(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("cbc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cbc is not installed (CI installs coinor-cbc)")
		}
		t.Skip("cbc is not installed: apt-get install coinor-cbc")
	}
}

const (
	seed37Model    = "../../advisor/testdata/seed37_model.kvs"
	seed37Workload = "../../advisor/testdata/seed37_workload.kvs"
	rubisModel     = "../../examples/rubis/model.kvs"
	rubisWorkload  = "../../examples/rubis/workload.kvs"
)

// advise → ddl → cost gives back the same totals; export --to cql writes
// Cassandra DDL for the same schema.
func TestAdviseCostExport(t *testing.T) {
	needCBC(t)
	dir := t.TempDir()
	ddl := filepath.Join(dir, "schema.kvs")
	mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7MB", "--target", "cassandra", "--format", "ddl", "-o", ddl)
	text := mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7MB", "--profile", "cassandra")
	for _, want := range []string{
		"si_user_by_firstname SI([user.firstname] → [user.id])",
		"1. Index Lookup Secondary Index si_user_by_firstname",
		"2. Index Lookup Column Family cf_user_by_id",
		"Total cost 0.0269279, total size 6.6MB",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("advise text lacks %q:\n%s", want, text)
		}
	}
	var advised, costed struct {
		TotalCost float64 `json:"total_cost"`
		TotalSize float64 `json:"total_size"`
		Indexes   []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
			Base string `json:"base"`
		} `json:"indexes"`
		Plans map[string]struct {
			Steps []struct {
				Index string `json:"index"`
			} `json:"steps"`
		} `json:"plans"`
	}
	out := mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7000000", "--target", "cassandra", "--format", "json")
	if err := json.Unmarshal([]byte(out), &advised); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out = mustRun(t, "", "cost", "--schema", ddl, "--model", seed37Model, "--workload", seed37Workload, "--format", "json")
	if err := json.Unmarshal([]byte(out), &costed); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if math.Abs(advised.TotalCost-costed.TotalCost) > 1e-12 || advised.TotalSize != costed.TotalSize || len(costed.Indexes) != 2 {
		t.Errorf("advise says cost %v size %v; cost of its DDL says %v, %v", advised.TotalCost, advised.TotalSize, costed.TotalCost, costed.TotalSize)
	}
	if got := len(advised.Plans["by_firstname"].Steps); got != 2 || advised.Indexes[1].Base != "cf_user_by_id" {
		t.Errorf("json: by_firstname has %d steps, SI base %q", got, advised.Indexes[1].Base)
	}
	// The schema file carries its model: cost needs no --model.
	timing := regexp.MustCompile(`"total_seconds": [0-9.e-]+`)
	if text := mustRun(t, "", "cost", "--schema", ddl, "--workload", seed37Workload, "--format", "json"); timing.ReplaceAllString(text, "") != timing.ReplaceAllString(out, "") {
		t.Errorf("cost without --model differs:\n%s\nwith it:\n%s", text, out)
	}
	// The text of cost names no mode and no budget (a given schema has
	// none).
	if text := mustRun(t, "", "cost", "--schema", ddl, "--model", seed37Model, "--workload", seed37Workload); !strings.HasPrefix(text, "-- kvschema cost: mix ") || strings.Contains(text, "budget") {
		t.Errorf("cost text header:\n%s", text[:min(len(text), 200)])
	}
	// Budgets: any letter case; 0 is an error saying how to ask for none.
	if _, err := run(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7mb"); err != nil {
		t.Errorf("--budget 7mb: %v", err)
	}
	if out, err := run(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "0"); err == nil || !strings.Contains(out+err.Error(), "write unlimited") {
		t.Errorf("--budget 0: %v\n%s", err, out)
	}
	cql := mustRun(t, "", "export", "--schema", ddl, "--to", "cql", "--keyspace", "ks")
	want := `-- CF([user.id] [user.firstname] → [user.lastname, user.password])
CREATE TABLE ks.cf_user_by_id (
  user_id bigint,
  user_firstname text,
  user_lastname text,
  user_password text,
  PRIMARY KEY ((user_id), user_firstname)
) WITH CLUSTERING ORDER BY (user_firstname ASC);

-- SI([user.firstname] → [user.id])
CREATE INDEX si_user_by_firstname ON ks.cf_user_by_id (user_firstname);

`
	if cql != want {
		t.Errorf("cql:\n%s\nwant:\n%s", cql, want)
	}
	hbase := mustRun(t, "", "export", "--schema", ddl, "--to", "hbase", "--namespace", "ks")
	for _, want := range []string{
		"\ncreate_namespace 'ks'\n",
		"\n# CF([user.id] [user.firstname] → [user.lastname, user.password])\ncreate 'ks:cf_user_by_id', {NAME => 'v', VERSIONS => 1}\n",
		"\n# SI([user.firstname] → [user.id])\ncreate 'ks:si_user_by_firstname', {NAME => 'v', VERSIONS => 1}\n",
	} {
		if !strings.Contains(hbase, want) {
			t.Errorf("hbase export lacks %q:\n%s", want, hbase)
		}
	}
	cbt := mustRun(t, "", "export", "--schema", ddl, "--to", "cbt")
	for _, want := range []string{
		"#!/bin/sh\n",
		"\ncbt createtable cf_user_by_id \"families=v:maxversions=1\"\n",
		"\ncbt createtable si_user_by_firstname \"families=v:maxversions=1\"\n",
	} {
		if !strings.Contains(cbt, want) {
			t.Errorf("cbt export lacks %q:\n%s", want, cbt)
		}
	}
	dot := mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7MB", "--target", "cassandra", "--format", "dot")
	if !strings.HasPrefix(dot, "digraph kvschema {") || !strings.Contains(dot, `"ix_si_user_by_firstname" -> "ix_cf_user_by_id"`) {
		t.Errorf("dot output:\n%s", dot)
	}
	// One statement: its plan and the indexes it uses, nothing else.
	one := mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7MB", "--target", "cassandra", "--format", "dot", "--statement", "by_id")
	if !strings.Contains(one, "[by_id] SELECT") || strings.Contains(one, "by_firstname") || strings.Contains(one, "si_user_by_firstname") {
		t.Errorf("dot --statement by_id:\n%s", one)
	}
	// The SVG pictures are well-formed XML naming what they draw.
	for _, tc := range []struct {
		tag  string
		want []string
	}{
		{"", []string{"cf_user_by_id", "si_user_by_firstname", "secondary index on cf_user_by_id"}},
		{"by_firstname", []string{"[by_firstname] SELECT", "Index Lookup SI si_user_by_firstname", "Index Lookup CF cf_user_by_id"}},
	} {
		args := []string{"advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--budget", "7MB", "--target", "cassandra", "--format", "svg"}
		if tc.tag != "" {
			args = append(args, "--statement", tc.tag)
		}
		svg := mustRun(t, "", args...)
		dec := xml.NewDecoder(strings.NewReader(svg))
		var text strings.Builder
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("svg %q is not XML: %v\n%s", tc.tag, err, svg)
			}
			if cd, ok := tok.(xml.CharData); ok {
				text.Write(cd)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(text.String(), w) {
				t.Errorf("svg %q lacks %q:\n%s", tc.tag, w, text.String())
			}
		}
	}
	if _, err := run(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--format", "svg", "--statement", "nope"); err == nil || !strings.Contains(err.Error(), "no statement of that tag (its tags: by_id, by_firstname") {
		t.Errorf("--statement nope: %v", err)
	}
	if _, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command("dot", "-Tsvg")
		cmd.Stdin = strings.NewReader(dot)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("graphviz rejects the dot output: %v\n%s", err, b)
		}
	}
}

// TestExportSplits: the hbase and cbt exports pre-split salted and SPLIT ON
// tables; the flags of one target are refused with another.
func TestExportSplits(t *testing.T) {
	schema := writeFile(t, "schema.kvs", `DEFINE RELATION users ROWS 10 { id BIGINT KEY, name STRING };
DEFINE COLUMN FAMILY by_id FOR users { PARTITION KEY (users.id), VALUES (users.name), SALT_BUCKETS = 3 };
DEFINE COLUMN FAMILY by_name FOR users { PARTITION KEY (users.name), CLUSTERING KEY (users.id), SPLIT ON ('m') };
DEFINE COLUMN FAMILY by_id_split FOR users { PARTITION KEY (users.id), VALUES (users.name), SPLIT ON (-1) };`)
	hbase := mustRun(t, "", "export", "--schema", schema, "--to", "hbase")
	for _, want := range []string{
		`create 'by_id', {NAME => 'v', VERSIONS => 1}, SPLITS => ['\x01', '\x02']` + "\n",
		`create 'by_name', {NAME => 'v', VERSIONS => 1}, SPLITS => ['\x01m\x00\x01']` + "\n",
		`create 'by_id_split', {NAME => 'v', VERSIONS => 1}, SPLITS => ['\x01\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFF']` + "\n",
	} {
		if !strings.Contains(hbase, want) {
			t.Errorf("hbase export lacks %q:\n%s", want, hbase)
		}
	}
	cbt := mustRun(t, "", "export", "--schema", schema, "--to", "cbt")
	for _, want := range []string{
		`splits=$(printf 'splits=\001,\002.') && cbt createtable by_id "families=v:maxversions=1" "${splits%.}"` + "\n",
		`# split '\x01m\x00\x01' left out: it has a 0x00 byte, which no command-line argument can hold` + "\n" +
			`cbt createtable by_name "families=v:maxversions=1"` + "\n",
		`splits=$(printf 'splits=\001\177\377\377\377\377\377\377\377.') && cbt createtable by_id_split`,
	} {
		if !strings.Contains(cbt, want) {
			t.Errorf("cbt export lacks %q:\n%s", want, cbt)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", "phoenix"}, `unknown --to "phoenix" (supported: cql, hbase, cbt)`},
		{[]string{"--to", "cql", "--namespace", "ns"}, "--namespace is for --to hbase"},
		{[]string{"--to", "cbt", "--keyspace", "ks"}, "--keyspace is for --to cql"},
		{[]string{"--to", "hbase", "--namespace", "a:b"}, `namespace "a:b": HBase takes only letters, digits and '_'`},
	} {
		out, err := run(t, "", append([]string{"export", "--schema", schema}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("export %q: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
	}
}

func TestAdviseRUBiSModes(t *testing.T) {
	needCBC(t)
	costs := map[string]float64{}
	for _, mode := range []string{"", "--no-secondary-index", "--normalized"} {
		args := []string{"advise", "-q", "--model", rubisModel, "--workload", rubisWorkload, "--mix", "bidding", "--format", "json"}
		if mode != "" {
			args = append(args, mode)
		}
		var res struct {
			TotalCost float64 `json:"total_cost"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "", args...)), &res); err != nil {
			t.Fatal(err)
		}
		costs[mode] = res.TotalCost
	}
	if !(costs[""] <= costs["--no-secondary-index"] && costs["--no-secondary-index"] < costs["--normalized"]) {
		t.Errorf("modelled costs: with SIs %v, CFs only %v, normalized %v", costs[""], costs["--no-secondary-index"], costs["--normalized"])
	}
}

func TestAdviseErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	model := write("m.kvs", "DEFINE RELATION u ROWS 10 { id BIGINT KEY, name STRING };\n")
	for _, tc := range []struct {
		workload string
		args     []string
		want     string
	}{
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.nope = ?;\n }\n};", nil, "w.kvs:3:30: relation u has no attribute nope"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u.friends WHERE u.id = ?;\n }\n};", nil, "w.kvs:3:3: relation u has no relationship friends"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM v WHERE v.id = ?;\n }\n};", nil, "w.kvs:3:22: unknown relation v"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.name > ?;\n }\n};", nil, "w.kvs:3:3: the query needs an equality predicate"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (x 1) {\n  SELECT u.name FROM u WHERE u.id = ?;\n }\n};", nil, "w.kvs:2:19: group g: unknown mix x"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.id = ? OR u.id = ?;\n }\n};", nil, "w.kvs:3:30: a workload query's WHERE must be a conjunction"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.id = 'x';\n }\n};", nil, "w.kvs:3:37: u.id:"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.id = ?\n }", nil, "w.kvs:4:3: expected GROUP or '}' in workload, found end of input"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.id = ?;\n }\n};", []string{"--mix", "q"}, "workload w has no mix \"q\""},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.id = ?;\n }\n};", []string{"--budget", "12XB"}, "unknown unit"},
		{"DEFINE WORKLOAD w MIXES (m) {\n GROUP g WEIGHTS (m 1) {\n  SELECT u.name FROM u WHERE u.id = ?;\n }\n};", []string{"--budget", "10B"}, "the smallest budget that works is"},
	} {
		w := write("w.kvs", tc.workload)
		args := append([]string{"advise", "-q", "--model", model, "--workload", w}, tc.args...)
		if strings.Contains(tc.want, "smallest budget") {
			if _, err := exec.LookPath("cbc"); err != nil {
				continue
			}
		}
		out, err := run(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v (output %s), want error containing %q", tc.workload, err, out, tc.want)
		}
	}
	bad := write("bad.kvs", "DEFINE RELATION u ROWS 10 { id BIGINT KEY, r BIGINT REFERENCES nowhere REVERSE us };\n")
	if _, err := run(t, "", "advise", "--model", bad, "--workload", model); err == nil || !strings.Contains(err.Error(), "bad.kvs:1:44: relation u: r REFERENCES unknown relation nowhere") {
		t.Errorf("unknown referenced relation: %v", err)
	}
}

// TestVersion: version names kvschema and the Go release it was built
// with (and, in a build with VCS stamping, the commit).
func TestVersion(t *testing.T) {
	out := mustRun(t, "", "version")
	if !strings.HasPrefix(out, "kvschema ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version: %q", out)
	}
}

// TestEveryCommandHasExamples: each command's help shows how to run it,
// and no help text speaks in the seed papers' numbering.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() && sub.Example == "" {
				t.Errorf("%s has no Example", sub.CommandPath())
			}
			for _, text := range []string{sub.Short, sub.Long, sub.Example, sub.Flags().FlagUsages()} {
				if strings.Contains(text, "seed 00") {
					t.Errorf("%s's help speaks of %q", sub.CommandPath(), "seed 00…")
				}
			}
			walk(sub)
		}
	}
	walk(rootCmd())
}

// TestAdviseCtrlC: a Ctrl-C while cbc searches stops it with the best
// schema found so far, which advise prints with its proven gap; the
// process exits 0.
func TestAdviseCtrlC(t *testing.T) {
	needCBC(t)
	bin := binary(t)
	cmd := exec.Command(bin, "advise", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload_secondary.kvs",
		"--mix", "bidding", "--budget", "161MB")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var log []string
	interrupted := false
	for sc.Scan() {
		log = append(log, sc.Text())
		// The first incumbent: there is a schema to keep.
		if !interrupted && strings.HasPrefix(sc.Text(), "advise: cbc: ") && strings.Contains(sc.Text(), "best ") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			interrupted = true
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("advise after Ctrl-C: %v\n%s", err, strings.Join(log, "\n"))
	}
	if !interrupted {
		t.Skipf("cbc reported no incumbent before proving optimality:\n%s", strings.Join(log, "\n"))
	}
	out := stdout.String()
	if regexp.MustCompile(`cbc [0-9.]+ in \S+ \(optimal\)`).MatchString(out) && !strings.Contains(out, "stopped with gap") {
		// The solver proved optimality before the interrupt reached it
		// (it needs less than a second after its first incumbent).
		t.Skipf("cbc finished before the interrupt took effect:\n%s", strings.Join(log, "\n"))
	}
	if !strings.Contains(strings.Join(log, "\n"), "advise: interrupted: the solver stops with the best schema found so far") {
		t.Errorf("no word of the interruption:\n%s", strings.Join(log, "\n"))
	}
	if !strings.Contains(out, "Schema\n") || !regexp.MustCompile(`\(stopped with gap [0-9.]+%\)`).MatchString(out) {
		t.Errorf("no schema with its gap:\n%s", out)
	}
}

// TestExportLayouts: export of a client script (DEFINE SCHEMA layouts)
// writes its tables for HBase and cbt and says why not CQL, without asking
// for the advisor's statistics.
func TestExportLayouts(t *testing.T) {
	out := mustRun(t, "", "export", "--schema", "../../examples/seed003.kvs", "--to", "hbase")
	if !strings.Contains(out, "create 'events', {NAME => 'e', VERSIONS => 1}, SPLITS => ['\\x01', '\\x02', '\\x03']") {
		t.Errorf("hbase:\n%s", out)
	}
	out = mustRun(t, "", "export", "--schema", "../../examples/seed003.kvs", "--to", "cbt")
	if !strings.Contains(out, `cbt createtable s1 "families=f:maxversions=1"`) {
		t.Errorf("cbt:\n%s", out)
	}
	if _, err := run(t, "", "export", "--schema", "../../examples/seed003.kvs", "--to", "cql"); err == nil || !strings.Contains(err.Error(), "defines layouts (DEFINE SCHEMA)") {
		t.Errorf("cql: %v", err)
	}
}

// TestAdviseDrawsAWrite: the picture of a write shows each index it keeps
// correct, fed by its support queries.
func TestAdviseDrawsAWrite(t *testing.T) {
	needCBC(t)
	svg := mustRun(t, "", "advise", "-q", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload.kvs",
		"--mix", "bidding", "--format", "svg", "--statement", "15")
	for _, w := range []string{"[15] UPDATE items SET quantity = ?", "write cf_items_by_id", "support query 1"} {
		if !strings.Contains(svg, html.EscapeString(w)) {
			t.Errorf("svg lacks %q:\n%s", w, svg)
		}
	}
	// How many indexes it keeps is the advised schema's (the target's
	// profile's) business.
	if !regexp.MustCompile(`it keeps [2-9] indexes correct`).MatchString(svg) {
		t.Errorf("svg does not say which indexes the write keeps:\n%s", svg)
	}
	dot := mustRun(t, "", "advise", "-q", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload.kvs",
		"--mix", "bidding", "--format", "dot", "--statement", "15")
	if !strings.Contains(dot, "write cf_items_by_id") || !strings.Contains(dot, `[label="support"]`) {
		t.Errorf("dot of a write:\n%s", dot)
	}
}
