package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/bench"
	"github.com/kvschema/kvschema/exec"
)

// calibrate writes a profile that advise --profile accepts.
func TestCalibrateThenAdvise(t *testing.T) {
	needCBC(t)
	prof := filepath.Join(t.TempDir(), "profile.json")
	out := mustRun(t, "", "calibrate", "--store", "mem:", "--runs", "2", "-o", prof)
	if !strings.Contains(out, "index_cost") || !strings.Contains(out, "wrote "+prof) {
		t.Fatalf("calibrate output:\n%s", out)
	}
	out = mustRun(t, "", "advise", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload.kvs",
		"--mix", "bidding", "--budget", "161MB", "--profile", prof)
	if !strings.Contains(out, "calibrated mem: rtt=0s") {
		t.Errorf("advise did not report the calibrated profile:\n%s", out)
	}
}

func TestBenchRubisErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "rubis", "--rtt", "fast"}, `--rtt "fast"`},
		{[]string{"bench", "rubis", "--budget", "lots"}, "--budget"},
		{[]string{"bench", "rubis", "--variants", "si,nosql", "--out", t.TempDir()}, `unknown variant "nosql"`},
		{[]string{"calibrate", "--store", "mem:"}, "give -o FILE"},
	} {
		_, err := run(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want one mentioning %s", c.args, err, c.want)
		}
	}
}

const (
	chatModel    = "testdata/chat_model.kvs"
	chatWorkload = "testdata/chat_workload.kvs"
)

// benchResults reads results.csv: its rows as maps from column to value.
func benchResults(t *testing.T, dir string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// checkBenchResults checks that results.csv has, for each variant and
// each rtt, exactly the statements tags with a positive mean, and that
// summary.json has exactly the variants.
func checkBenchResults(t *testing.T, dir string, variants, rtts, tags []string) {
	t.Helper()
	got := map[string]bool{}
	for _, r := range benchResults(t, dir) {
		key := r["variant"] + " " + r["rtt_s"] + " " + r["tag"]
		if got[key] {
			t.Errorf("results.csv: %s twice", key)
		}
		got[key] = true
		if mean, err := strconv.ParseFloat(r["mean_s"], 64); err != nil || !(mean > 0) {
			t.Errorf("results.csv: %s: mean_s %q, want a positive time", key, r["mean_s"])
		}
	}
	want := map[string]bool{}
	for _, v := range variants {
		for _, rtt := range rtts {
			for _, tag := range tags {
				want[v+" "+rtt+" "+tag] = true
			}
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("results.csv lacks %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("results.csv has %s, which is no statement of the mix or no variant asked for", k)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]json.RawMessage
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range sum {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(variants, ",") {
		t.Errorf("summary.json has variants %v, want %v", names, variants)
	}
}

// kvschema bench runs any model and workload: a chat service's, on data
// generated from its statistics.
func TestBenchModelGenerated(t *testing.T) {
	needCBC(t)
	out := t.TempDir()
	start := time.Now()
	text := mustRun(t, "", "bench", "-q", "--model", chatModel, "--workload", chatWorkload, "--mix", "posting",
		"--generate", "model", "--scale", "0.5", "--skew", "0.5", "--variants", "cf,si", "--store", "mem:", "--profile", "cassandra",
		"--rtt", "0,50us", "--iterations", "3", "--warmup", "1", "--out", out)
	t.Logf("bench took %v", time.Since(start))
	if !strings.Contains(text, "report: "+out+"/REPORT.md") || strings.Contains(text, "target") {
		t.Errorf("output:\n%s", text)
	}
	for _, name := range []string{"REPORT.md", "results.csv", "summary.json", "model.kvs", "profile.json", "schema-cf.kvs", "schema-si.kvs",
		"fig4-rtt0s.png", "fig5-rtt50us.png", "cost-rtt50us.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "schema-baseline.kvs")); err == nil {
		t.Error("schema-baseline.kvs written, though the baseline was not asked for")
	}
	// The posting mix: every group but Browse (by_topic).
	checkBenchResults(t, out, []string{"cf", "si"}, []string{"0", "5e-05"}, []string{"room", "recent", "user", "by_author", "post", "like"})
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Benchmark: posting mix of " + chatWorkload + " on " + chatModel,
		"Command: `kvschema bench --model " + chatModel + " --workload " + chatWorkload + " --mix posting --generate model --scale 0.5 --skew 0.5 --seed 1 --variants cf,si",
		"generated from the model's statistics", "messages 1000, rooms 10, users 100",
		"| si / cf |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q:\n%s", want, md)
		}
	}
	// The measured model: ROWS are the data's.
	model, err := os.ReadFile(filepath.Join(out, "model.kvs"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(model), "DEFINE RELATION messages ROWS 1000 {") {
		t.Errorf("model.kvs:\n%s", model)
	}
}

// chatSQL is the chat service's schema as SQL DDL without statistics: the
// bench measures them on the data.
const chatSQL = `CREATE TABLE users (
  id bigint PRIMARY KEY,
  name varchar(40),
  country varchar(2)
);
CREATE TABLE rooms (
  id bigint PRIMARY KEY,
  title varchar(40),
  topic varchar(10),
  owner bigint REFERENCES users(id)
);
CREATE TABLE messages (
  id bigint PRIMARY KEY,
  body text,
  posted timestamp,
  likes integer,
  room bigint REFERENCES rooms(id),
  author bigint REFERENCES users(id)
);
`

// chatLog is a query log of the chat service.
const chatLog = "50\tSELECT title, topic FROM rooms WHERE id = 2\n" +
	"30\tSELECT body, posted, likes FROM messages WHERE room = 20 ORDER BY posted LIMIT 20\n" +
	"10\tSELECT name FROM users WHERE id = 3\n" +
	"5\tINSERT INTO messages (id, body, posted, likes, room, author) VALUES (1000, 'hi', '2024-05-01 10:00:00', 0, 10, 2)\n" +
	"8\tUPDATE messages SET likes = 4 WHERE id = 107\n" +
	"3\tBEGIN\n"

// chatData writes the chat service's data as CSV files into a new
// directory; bad, if not empty, replaces line 4 of messages.csv.
func chatData(t *testing.T, bad string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"users.csv": "id,name,country\n1,ann,fr\n2,bob,de\n3,cyd,fr\n",
		"rooms.csv": "id,title,topic,owner\n10,general,misc,1\n20,random,misc,2\n30,go,tech,3\n",
	}
	msgs := []string{"id,body,posted,likes,room,author"}
	for i := 100; i <= 140; i++ { // keys not 1..N: new keys must go beyond 140
		msgs = append(msgs, fmt.Sprintf("%d,message %d,2024-05-0%d 10:00:00,%d,%d,%d", i, i, i%9+1, i%7, (i%3+1)*10, i%3+1))
	}
	if bad != "" {
		msgs[3] = bad
	}
	files["messages.csv"] = strings.Join(msgs, "\n") + "\n"
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kvschema bench --data runs on data files, measuring the statistics a
// model without them lacks; bad data is an error naming its file and line.
func TestBenchData(t *testing.T) {
	needCBC(t)
	model := writeFile(t, "chat.sql", chatSQL)
	log := writeFile(t, "chat.log", chatLog)
	args := func(data, out string) []string {
		return []string{"bench", "-q", "--model", model, "--workload-log", log, "--data", data, "--variants", "si",
			"--store", "mem:", "--profile", "cassandra", "--rtt", "0", "--iterations", "3", "--warmup", "1", "--out", out}
	}
	out := t.TempDir()
	mustRun(t, "", args(chatData(t, ""), out)...)
	checkBenchResults(t, out, []string{"si"}, []string{"0"}, []string{"L1", "L2", "L3", "L4", "L5"})
	for _, r := range benchResults(t, out) {
		if r["tag"] == "L4" && r["rows"] != "1" { // the INSERT: a new message each run
			t.Errorf("the INSERT wrote %s rows per run, want 1", r["rows"])
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Benchmark: log mix of " + log + " on " + model, "--workload-log " + log + " --mix log --data ", "messages 41, rooms 3, users 3"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}

	for _, c := range []struct{ line, want string }{
		{"102,message 102,2024-05-04 10:00:00,many,10,1", `messages.csv:4: field likes: "many" is not a BIGINT`},
		{"102,message 102,2024-05-04 10:00:00,3,99,1", "messages.csv:4: field room: no rooms has id = 99 (dangling foreign key)"},
	} {
		_, err := run(t, "", args(chatData(t, c.line), t.TempDir())...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bad data %q: err = %v, want one mentioning %s", c.line, err, c.want)
		}
	}
}

// The generic bench's input errors name the file at fault, before any
// data is generated or schema advised.
func TestBenchInputErrors(t *testing.T) {
	dir := t.TempDir()
	badWorkload := writeFile(t, "bad.kvs", `DEFINE WORKLOAD w MIXES (m) {
  GROUP G WEIGHTS (m 1) {
    SELECT rooms.title FROM rooms WHERE rooms.colour = ?;
  }
};`)
	sql := writeFile(t, "chat.sql", chatSQL)
	common := []string{"-q", "--store", "mem:", "--profile", "cassandra", "--out", dir}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "testdata/none.kvs", "--workload", chatWorkload}, "testdata/none.kvs"},
		{[]string{"--model", chatModel, "--workload", "testdata/none.kvs"}, "testdata/none.kvs"},
		{[]string{"--model", chatModel, "--workload-log", "testdata/none.log"}, "testdata/none.log"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--mix", "lurking"}, `workload ` + chatWorkload + ` has no mix "lurking" (its mixes: reading, posting)`},
		{[]string{"--model", chatModel, "--workload", badWorkload}, badWorkload + ":3:41: relation rooms has no attribute colour"},
		{[]string{"--model", chatModel}, "exactly one of --workload FILE and --workload-log FILE"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--workload-log", chatWorkload}, "exactly one of"},
		{[]string{"--workload", chatWorkload}, "--model"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--data", dir, "--generate", "model"}, "at most one of --data DIR and --generate"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--data", dir, "--scale", "2"}, "--scale is for --generate"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--data", filepath.Join(dir, "none")}, filepath.Join(dir, "none")},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--data", dir}, "holds no data files"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--generate", "fake"}, `unknown generator "fake"`},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--generate", "rubis"}, "not RUBiS-shaped"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--skew", "1", "--generate", "rubis"}, "skew 1 is for the model generator"},
		{[]string{"--model", sql, "--workload", chatWorkload}, "run on data files (--data DIR)"},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "--variants", "nosql"}, `unknown variant "nosql"`},
		{[]string{"--model", chatModel, "--workload", chatWorkload, "extra"}, `unknown command "extra"`},
	} {
		_, err := run(t, "", append(append([]string{"bench"}, c.args...), common...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want one mentioning %s", c.args, err, c.want)
		}
	}
}

// The bench flags that need parsing: one budget is the run's budget, a
// list of them a sweep, --sweep the default sweep; --executor names the
// executor.
func TestBenchFlags(t *testing.T) {
	for _, c := range []struct {
		o       benchOptions
		budget  float64
		budgets []float64
		sweep   bool
		x       exec.Executor
	}{
		{benchOptions{}, 0, nil, false, exec.Batched},
		{benchOptions{budget: "161MB", executor: "batched"}, 161e6, nil, false, exec.Batched},
		{benchOptions{budget: "unlimited"}, math.Inf(1), nil, false, exec.Batched},
		{benchOptions{budget: "60MB,80MB, 100MB", executor: "per-partition"}, 0, []float64{60e6, 80e6, 100e6}, false, exec.PerPartition},
		{benchOptions{budget: "1GiB,2e6"}, 0, []float64{1 << 30, 2e6}, false, exec.Batched},
		{benchOptions{budget: "60MB,"}, 60e6, nil, false, exec.Batched},
		{benchOptions{sweep: true, executor: "per-partition"}, 0, nil, true, exec.PerPartition},
	} {
		var cfg bench.Config
		if err := c.o.parse(&cfg); err != nil {
			t.Errorf("%+v: %v", c.o, err)
			continue
		}
		if cfg.PebbleCache != 0 {
			t.Errorf("%+v: pebble cache %d without --pebble-cache", c.o, cfg.PebbleCache)
		}
		if cfg.Budget != c.budget || !slices.Equal(cfg.Budgets, c.budgets) || cfg.Sweep != c.sweep || cfg.Executor != c.x {
			t.Errorf("%+v: budget %v, budgets %v, sweep %v, executor %v; want %v, %v, %v, %v", c.o, cfg.Budget, cfg.Budgets, cfg.Sweep, cfg.Executor, c.budget, c.budgets, c.sweep, c.x)
		}
	}
	var cfg bench.Config
	if err := (&benchOptions{pebbleCache: "512MB"}).parse(&cfg); err != nil || cfg.PebbleCache != 512e6 {
		t.Errorf("--pebble-cache 512MB: %d, %v", cfg.PebbleCache, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "rubis", "--budget", "60MB,lots"}, `budget "lots"`},
		{[]string{"bench", "rubis", "--budget", "60MB,unlimited"}, "a sweep's budgets are sizes"},
		{[]string{"bench", "rubis", "--budget", ","}, "no budget"},
		{[]string{"bench", "rubis", "--sweep", "--budget", "60MB"}, "give --budget or --sweep, not both"},
		{[]string{"bench", "rubis", "--pebble-cache", "1kB"}, `--pebble-cache "1kB": want a size of at least 1MiB`},
		{[]string{"bench", "rubis", "--executor", "parallel"}, `--executor: unknown executor "parallel" (batched or per-partition)`},
		{[]string{"bench", "rubis", "--budget", "60MB,60MB", "--out", t.TempDir()}, "60MB given twice"},
		{[]string{"bench", "--model", chatModel, "--workload", chatWorkload, "--sweep", "--out", t.TempDir()}, "give the budgets (--budget 10MB,20MB,40MB)"},
	} {
		_, err := run(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want one mentioning %s", c.args, err, c.want)
		}
	}
}
