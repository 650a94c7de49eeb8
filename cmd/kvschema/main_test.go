package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/examples"
)

// fig6 is seed 003's Fig. 6.
var fig6 = examples.Fig6

// seed003Insert and seed003Scan are the trace lines of seed 003 §4.
var (
	seed003Insert = []string{
		`batch begin`,
		`put "s1", "a1-b", "f:", "x-\x00\x00\x00d"`,
		`put "s2", "\x01ba1", "f:v1", "x"`,
		`put "s2", "\x01ba1", "f:v2", "\x00\x00\x00d"`,
		`batch end (3 mutations)`,
	}
	seed003Scan = `scan 's1', {STARTROW=>'a1-b', STOPROW=>'a1-c'}`
)

// run executes the CLI in-process with args and stdin; it returns everything
// written to stdout and stderr.
func run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := rootCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(stdin))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := run(t, stdin, args...)
	if err != nil {
		t.Fatalf("kvschema %q: %v\noutput:\n%s", args, err, out)
	}
	return out
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func splitLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// after returns the lines that follow the first line equal to marker (nil if
// there is none).
func after(t *testing.T, out, marker string) []string {
	t.Helper()
	ls := splitLines(out)
	for i, l := range ls {
		if l == marker {
			return ls[i+1:]
		}
	}
	t.Fatalf("output lacks line %q:\n%s", marker, out)
	return nil
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s: got %d lines, want at least %d:\n%s", what, len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s line %d:\n got %q\nwant %q", what, i, got[i], want[i])
		}
	}
}

func TestExecPebblePersists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	url := "pebble:" + dir + "?sync=false"
	run1 := writeFile(t, "run1.kvs", fig6+`
INSERT INTO r VALUES ('a1', 'b', 'x', 100);
SELECT * FROM r;
`)
	out := mustRun(t, "", "exec", "--echo", "--store", url, "--create", "-f", run1)
	equalLines(t, "first SELECT", after(t, out, "SELECT * FROM r;"), []string{
		"k1  k2  v1  v2",
		"a1  b   x   100",
		"(1 row)",
	})
	if !strings.Contains(out, "INSERT 1\n") {
		t.Errorf("no INSERT count in:\n%s", out)
	}

	// Second run on the same store: the identical definitions are a no-op,
	// and the SELECT sees both runs' rows.
	run2 := writeFile(t, "run2.kvs", fig6+`
INSERT INTO r VALUES ('a2', 'c', 'y', 200);
SELECT * FROM r;
SELECT k1, v2 FROM r WHERE k2 = 'b';
`)
	out = mustRun(t, "", "exec", "--echo", "--store", url, "-f", run2)
	got := after(t, out, "SELECT * FROM r;")
	equalLines(t, "second SELECT", got, []string{
		"k1  k2  v1  v2",
		"a1  b   x   100",
		"a2  c   y   200",
		"(2 rows)",
	})
	equalLines(t, "SELECT through s2", after(t, out, "SELECT k1, v2 FROM r WHERE k2 = 'b';"), []string{
		"k1  v2",
		"a1  100",
		"(1 row)",
	})

	// A different definition of an existing layout is refused.
	changed := strings.Replace(fig6, "QUALIFIER '',", "QUALIFIER 'q',", 1)
	out, err := run(t, "", "exec", "--echo", "--store", url, "-e", changed)
	if err == nil {
		t.Errorf("redefining s1 differently succeeded:\n%s", out)
	}
	// ... and the store still answers with the old layout.
	out = mustRun(t, "", "exec", "--echo", "--store", url, "-e", "SELECT v1 FROM r WHERE k1 = 'a1' AND k2 = 'b';")
	equalLines(t, "after refused redefinition", after(t, out, "SELECT v1 FROM r WHERE k1 = 'a1' AND k2 = 'b';"), []string{"v1", "x", "(1 row)"})
}

func TestExecTraceSeed003(t *testing.T) {
	script := writeFile(t, "seed.kvs", fig6+`
INSERT INTO r VALUES ('a1', 'b', 'x', 100);
SELECT * FROM r WHERE k1='a1' AND k2='b';
`)
	out := mustRun(t, "", "exec", "--echo", "--store", "mem:", "--trace", "-f", script)
	equalLines(t, "INSERT trace", after(t, out, "INSERT INTO r VALUES ('a1', 'b', 'x', 100);"),
		append(append([]string{}, seed003Insert...), "INSERT 1"))
	equalLines(t, "SELECT trace", after(t, out, "SELECT * FROM r WHERE k1 = 'a1' AND k2 = 'b';"), []string{
		seed003Scan,
		"k1  k2  v1  v2",
		"a1  b   x   100",
		"(1 row)",
	})

	// Without --trace no key-value operation is printed.
	out = mustRun(t, "", "exec", "--echo", "--store", "mem:", "-f", script)
	if strings.Contains(out, "put \"") || strings.Contains(out, "scan '") {
		t.Errorf("trace printed without --trace:\n%s", out)
	}
}

func TestExecExplain(t *testing.T) {
	out := mustRun(t, "", "exec", "--echo", "--store", "mem:", "--explain",
		"-e", fig6,
		"-e", "INSERT INTO r VALUES ('a1', 'b', 'x', 100);",
		"-e", "SELECT * FROM r WHERE k1 = 'a1' AND k2 = 'b';")
	got := after(t, out, "SELECT * FROM r WHERE k1 = 'a1' AND k2 = 'b';")
	if len(got) == 0 || !strings.HasPrefix(got[0], "  | CLIENT PARALLEL 1-WAY RANGE SCAN OVER s1 ") {
		t.Errorf("plan does not precede the SELECT's result:\n%s", out)
	}
	if !strings.Contains(out, "  | LAYOUT s1 CHOSEN") {
		t.Errorf("no layout choice in:\n%s", out)
	}
	// The INSERT's plan too.
	if !strings.Contains(out, "  | UPSERT 1 ROWS INTO r: 3 MUTATIONS OVER s1, s2 IN 1 ATOMIC BATCH") {
		t.Errorf("no INSERT plan in:\n%s", out)
	}
	// The result still follows the plan.
	if !strings.Contains(out, "a1  b   x   100\n(1 row)") {
		t.Errorf("no result in:\n%s", out)
	}

	// An EXPLAIN statement prints its plan once, unindented, without running.
	out = mustRun(t, "", "exec", "--echo", "--store", "mem:", "-e", fig6, "-e", "EXPLAIN SELECT * FROM r WHERE k2 = 'b';")
	got = after(t, out, "EXPLAIN SELECT * FROM r WHERE k2 = 'b';")
	if len(got) == 0 || !strings.HasPrefix(got[0], "CLIENT PARALLEL 1-WAY RANGE SCAN OVER s2") {
		t.Errorf("EXPLAIN output:\n%s", out)
	}
}

func TestExecMultipleE(t *testing.T) {
	out := mustRun(t, "", "exec", "--echo",
		"-e", "DEFINE RELATION t { k BIGINT KEY, v STRING };",
		"-e", "DEFINE PRIMARY SCHEMA tp FOR t { TABLE 't', ROW ordered{k}, FAMILY 'f', QUALIFIER '', VALUE v };",
		"-e", "INSERT INTO t VALUES (2, 'two'), (1, 'one'); INSERT INTO t VALUES (3, 'three');",
		"-e", "SELECT * FROM t WHERE k >= 2;")
	if !strings.Contains(out, "INSERT 2\n") || !strings.Contains(out, "INSERT 1\n") {
		t.Errorf("INSERT counts missing:\n%s", out)
	}
	equalLines(t, "SELECT", after(t, out, "SELECT * FROM t WHERE k >= 2;"), []string{
		"k  v", "2  two", "3  three", "(2 rows)",
	})
}

func TestExecErrors(t *testing.T) {
	badFile := writeFile(t, "bad.kvs", "DEFINE RELATION r { k STRING KEY };\n\n  SELEC * FROM r;\n")
	for _, tc := range []struct {
		name string
		args []string
		want *regexp.Regexp // matched against the error text
	}{
		{"syntax -e", []string{"exec", "-e", "SELEC 1"}, regexp.MustCompile(`^-e#1:1:1: .*SELEC`)},
		{"syntax second -e", []string{"exec", "-e", "DEFINE RELATION r { k STRING KEY };", "-e", "SELECT * FROM r WHERE;"}, regexp.MustCompile(`^-e#2:1:\d+: `)},
		{"syntax file", []string{"exec", "-f", badFile}, regexp.MustCompile(`^` + regexp.QuoteMeta(badFile) + `:3:3: `)},
		{"semantic error", []string{"exec", "-e", "DEFINE RELATION r { k STRING KEY, v INT };", "-e", "\n INSERT INTO r VALUES (1, 2);"}, regexp.MustCompile(`^-e#2:2:\d+: attribute k: `)},
		{"unknown relation", []string{"exec", "-e", "SELECT * FROM nope;"}, regexp.MustCompile(`^-e#1:1:15: unknown relation nope`)},
		{"explain keeps position", []string{"exec", "--explain", "-e", "DEFINE RELATION r { k STRING KEY, v INT };", "-e", "\n\n  SELECT * FROM r WHERE zz = 1;"}, regexp.MustCompile(`^-e#2:3:25: relation r has no attribute zz`)},
		{"missing file", []string{"exec", "-f", filepath.Join(t.TempDir(), "absent.kvs")}, regexp.MustCompile(`absent\.kvs`)},
		{"unknown scheme", []string{"exec", "--store", "foo:bar", "-e", "SELECT * FROM r;"}, regexp.MustCompile(`unknown scheme "foo" \(known: .*mem.*pebble`)},
		{"no scheme", []string{"exec", "--store", "nocolon", "-e", "SELECT * FROM r;"}, regexp.MustCompile(`want SCHEME:`)},
		{"stray argument", []string{"exec", "-e", "SELECT * FROM r;", "extra"}, regexp.MustCompile(`unknown command|accepts 0 arg`)},
		{"unknown subcommand", []string{"frobnicate"}, regexp.MustCompile(`unknown command`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, "", tc.args...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			if !tc.want.MatchString(err.Error()) {
				t.Errorf("error %q does not match %s", err, tc.want)
			}
		})
	}

	// A syntax error anywhere in a script stops it before it runs.
	dir := t.TempDir()
	url := "pebble:" + dir
	_, err := run(t, "", "exec", "--store", url, "--create", "-e", fig6+"INSERT INTO r VALUES ('a', 'b', 'c', 1); SELEC;")
	if err == nil {
		t.Fatal("no error")
	}
	// Nothing of -e#1 ran: the relation was never defined.
	out, err := run(t, "", "exec", "--store", url, "-e", "SELECT * FROM r;")
	if err == nil || !strings.Contains(err.Error(), "unknown relation r") {
		t.Errorf("after a syntax error, the script's earlier statements ran: %v\n%s", err, out)
	}
}

const shellScript = `DEFINE RELATION r {
  k STRING KEY,
  v INT
};
DEFINE PRIMARY SCHEMA p FOR r {
  TABLE 't', ROW k, FAMILY 'f', QUALIFIER '', VALUE v
};
.trace on
INSERT INTO r
  VALUES ('a', 1);
.trace off
INSERT INTO r VALUES ('b', 2);
SELECT * FROM nope;
.explain on
SELECT * FROM r WHERE k = 'a';
.explain off
SELECT v FROM r WHERE k = 'b'; SELECT
  k FROM r WHERE v = 1;
.schema
.help
.quit
SELECT * FROM r;
`

func TestShellScript(t *testing.T) {
	out := mustRun(t, shellScript, "shell", "--store", "mem:")

	// Multi-line statements get the continuation prompt.
	if !strings.Contains(out, "kvschema> DEFINE RELATION r {\n      ...   k STRING KEY,\n") {
		t.Errorf("no continuation prompt:\n%s", out)
	}
	// .trace on: the first INSERT shows its put; the second (trace off) does not.
	equalLines(t, "traced INSERT", after(t, out, "      ...   VALUES ('a', 1);"), []string{
		`put "t", "a", "f:", "\x00\x00\x00\x01"`,
		"INSERT 1",
	})
	equalLines(t, "untraced INSERT", after(t, out, "kvschema> INSERT INTO r VALUES ('b', 2);"), []string{"INSERT 1"})
	// An error is printed, with a caret under its position, and the shell
	// goes on.
	equalLines(t, "error", after(t, out, "kvschema> SELECT * FROM nope;"), []string{
		"error: shell:1:15: unknown relation nope",
		"  SELECT * FROM nope;",
		"                ^",
	})
	// .explain on prints the plan before the result.
	got := after(t, out, "kvschema> SELECT * FROM r WHERE k = 'a';")
	if len(got) < 1 || !strings.HasPrefix(got[0], "  | CLIENT PARALLEL 1-WAY RANGE SCAN OVER p ['a']") {
		t.Errorf(".explain on: no plan:\n%s", out)
	}
	if !strings.Contains(strings.Join(got, "\n"), "k  v\na  1\n(1 row)") {
		t.Errorf(".explain on: no result:\n%s", out)
	}
	// Two statements on one line, and one spanning lines.
	equalLines(t, "two statements", after(t, out, "      ...   k FROM r WHERE v = 1;"), []string{"v", "2", "(1 row)", "k", "a", "(1 row)"})
	// .schema prints the definitions.
	schema := strings.Join(after(t, out, "kvschema> .schema"), "\n")
	for _, frag := range []string{"DEFINE RELATION r {\n  k STRING KEY,\n  v INT\n};", "DEFINE PRIMARY SCHEMA p FOR r {\n  TABLE 't',"} {
		if !strings.Contains(schema, frag) {
			t.Errorf(".schema lacks %q:\n%s", frag, schema)
		}
	}
	if !strings.Contains(out, "DESCRIBE [SCHEMA | name]") {
		t.Errorf(".help printed nothing:\n%s", out)
	}
	// .quit ends the shell: the statement after it is not run.
	if strings.Contains(out, "SELECT * FROM r;") {
		t.Errorf("shell went on after .quit:\n%s", out)
	}
	if strings.Contains(out, "put \"t\", \"b\"") {
		t.Errorf("trace stayed on after .trace off:\n%s", out)
	}
}

func TestShellEOF(t *testing.T) {
	// End of input ends the shell without error, also mid-statement.
	out := mustRun(t, "DEFINE RELATION r { k STRING KEY };\nSELECT *\nFROM r\n", "shell", "--store", "mem:")
	if !strings.HasSuffix(out, "kvschema> SELECT *\n      ... FROM r\n\nerror: statement not run: input ended before its ';'\n") {
		t.Errorf("output:\n%q", out)
	}
	// An empty input, too.
	if out := mustRun(t, "", "shell"); out != "\n" {
		t.Errorf("empty input: output %q", out)
	}
}

func TestShellPebblePersists(t *testing.T) {
	url := "pebble:" + t.TempDir()
	mustRun(t, fig6+"INSERT INTO r VALUES ('a1', 'b', 'x', 100);\n", "shell", "--store", url, "--create")
	out := mustRun(t, ".schema\nSELECT * FROM r;\n", "shell", "--store", url)
	if !strings.Contains(out, "DEFINE SCHEMA s2 FOR r {") {
		t.Errorf(".schema after reopening:\n%s", out)
	}
	equalLines(t, "SELECT after reopening", after(t, out, "kvschema> SELECT * FROM r;"), []string{
		"k1  k2  v1  v2", "a1  b   x   100", "(1 row)",
	})
}

func TestDemo(t *testing.T) {
	out := mustRun(t, "", "demo", "--client")
	if !strings.HasPrefix(out, "-- store pebble:") {
		t.Errorf("demo does not name its store:\n%s", out)
	}
	equalLines(t, "demo INSERT", after(t, out, "INSERT INTO r VALUES ('a1', 'b', 'x', 100);"),
		append(append([]string{}, seed003Insert...), "INSERT 1"))
	equalLines(t, "demo SELECT", after(t, out, "SELECT * FROM r WHERE k1 = 'a1' AND k2 = 'b';"), []string{
		seed003Scan, "k1  k2  v1  v2", "a1  b   x   100", "(1 row)",
	})
	for _, frag := range []string{
		// The salted layout is pre-split into 4 buckets: defining
		// events_by_kind backfills from 4 bucket scans.
		`scan 'events', {STARTROW=>'\x00', STOPROW=>'\x01'}`,
		`scan 'events', {STARTROW=>'\x03', STOPROW=>'\x04'}`,
		"CLIENT PARALLEL 1-WAY RANGE SCAN OVER events_by_user [1]",
		"4-way salted fan-out",
		"CLIENT PARALLEL 1-WAY RANGE SCAN OVER events_by_kind ['bid',5.0] - ['bid',20.0]",
		"INSERT 4\n",
		"UPDATE 1\n",
		"DELETE 1\n",
	} {
		if !strings.Contains(out, frag) {
			t.Errorf("demo output lacks %q", frag)
		}
	}
	// The final SELECT: the walk-through's end state.
	equalLines(t, "final SELECT", after(t, out, "SELECT * FROM events;"), []string{
		"scan 'events_by_kind'",
		"user_id  ts                               kind    amount",
		"1        TIMESTAMP '2026-11-01 10:00:00'  bid     12.5",
		"1        TIMESTAMP '2026-11-02 09:30:00'  bid     40.0",
		"2        TIMESTAMP '2026-11-01 11:00:00'  refund  -3.25",
		"(3 rows)",
	})
	if !strings.HasSuffix(out, "(3 rows)\n") {
		t.Errorf("demo output does not end with the final result:\n...%s", out[max(0, len(out)-300):])
	}
	// The temporary store is removed.
	m := regexp.MustCompile(`^-- store pebble:(\S+)`).FindStringSubmatch(out)
	if m != nil {
		if _, err := os.Stat(filepath.Dir(m[1])); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("demo left its store %s behind (%v)", m[1], err)
		}
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// binary builds the command once per test process.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "kvschema-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "kvschema")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	// Commands given no --store run on a throwaway store, as if a user had
	// exported KVSCHEMA_STORE=mem: (TestStoreRequired checks the default).
	os.Setenv(storeEnv, "mem:")
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func TestBinaryExitStatus(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "exec", "-e", "SELECT * FROM r WHERE;")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit status 1, got %v", err)
	}
	if !regexp.MustCompile(`^kvschema: -e#1:1:\d+: `).MatchString(stderr.String()) {
		t.Errorf("stderr %q", stderr.String())
	}

	// Success: exit 0, results on stdout, nothing on stderr.
	cmd = exec.Command(bin, "exec", "--echo", "-e", fig6, "-e", "INSERT INTO r VALUES ('a1','b','x',100);")
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if stderr.Len() != 0 || !strings.Contains(stdout.String(), "INSERT 1") {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}

	// The shell reading a pipe (not a terminal).
	cmd = exec.Command(bin, "shell")
	cmd.Stdin = strings.NewReader(fig6 + ".trace on\nINSERT INTO r VALUES ('a1','b','x',100);\n")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	equalLines(t, "piped shell", after(t, string(b), "kvschema> INSERT INTO r VALUES ('a1','b','x',100);"), seed003Insert)
}

// tmuxShell runs the shell on a terminal (tmux), with HOME at home.
type tmuxShell struct {
	t          *testing.T
	tmux, sock string
	home       string
}

// startShell starts `kvschema shell ARGS…` in a tmux session, or skips the
// test without tmux.
func startShell(t *testing.T, args string) *tmuxShell {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	sh := &tmuxShell{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock"), home: t.TempDir()}
	if out, err := sh.tm("new-session", "-d", "-x", "200", "-y", "50", "-s", "kvs", binary(t)+" shell "+args); err != nil {
		t.Skipf("tmux cannot start a session: %v %s", err, out)
	}
	t.Cleanup(func() { sh.tm("kill-server") })
	return sh
}

func (sh *tmuxShell) tm(args ...string) (string, error) {
	c := exec.Command(sh.tmux, append([]string{"-S", sh.sock}, args...)...)
	c.Env = append(os.Environ(), "HOME="+sh.home, "TERM=xterm")
	b, err := c.CombinedOutput()
	return string(b), err
}

func (sh *tmuxShell) capture() string { s, _ := sh.tm("capture-pane", "-p", "-t", "kvs"); return s }

// waitFor waits until the screen shows want, and returns the screen.
func (sh *tmuxShell) waitFor(want string) string {
	sh.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := sh.capture()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			sh.t.Fatalf("terminal never showed %q:\n%s", want, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// keys sends tmux key names (C-c, Tab, Enter) or, after "-l", literal text.
func (sh *tmuxShell) keys(k ...string) {
	sh.t.Helper()
	if out, err := sh.tm(append([]string{"send-keys", "-t", "kvs"}, k...)...); err != nil {
		sh.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// send types line and Enter.
func (sh *tmuxShell) send(line string) {
	sh.t.Helper()
	if strings.HasSuffix(line, ";") {
		line = line[:len(line)-1] + `\;` // tmux takes a bare trailing ';' as a command separator
	}
	sh.keys("-l", line)
	sh.keys("Enter")
}

// TestShellTerminal drives the shell on a real terminal (line editing
// through liner) with tmux, when tmux is installed.
func TestShellTerminal(t *testing.T) {
	sh := startShell(t, "--store mem:")
	home, capture, waitFor, send, keys := sh.home, sh.capture, sh.waitFor, sh.send, sh.keys
	waitFor("kvschema>") // capture-pane drops trailing blanks
	send("DEFINE RELATION r { k STRING KEY,")
	waitFor("      ...")
	send("v INT };")
	send("DEFINE PRIMARY SCHEMA p FOR r { TABLE 't', ROW k, FAMILY 'f', QUALIFIER '', VALUE v };")
	send(".trace on")
	send("INSERT INTO r VALUES ('a', 7);")
	waitFor(`put "t", "a", "f:", "\x00\x00\x00\x07"`)
	send("SELECT * FROM r;")
	waitFor("(1 row)")
	// Ctrl-C drops the statement being typed: the next one runs alone.
	keys("-l", "SELECT * FR")
	// Echoed first (else C-c may come before the text on a busy machine):
	// the screen's last line.
	for deadline := time.Now().Add(20 * time.Second); !strings.HasSuffix(strings.TrimRight(capture(), " \n"), "kvschema> SELECT * FR"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed the typed text:\n%s", capture())
		}
	}
	keys("C-c")
	send("SELECT v FROM r WHERE k = 'a';")
	if s := waitFor("v\n7\n(1 row)"); !strings.Contains(s, "SELECT * FR^C\nkvschema> SELECT v") || strings.Contains(s, "error") {
		t.Fatalf("after Ctrl-C:\n%s", s)
	}
	// Tab completes keywords (a second Tab lists the candidates) and the
	// catalog's names, as declared.
	keys("-l", "SHOW TAB")
	keys("Tab")
	keys("Tab")
	waitFor("SHOW TABLE\nTABLE TABLES\nkvschema> SHOW TABLE")
	keys("C-c")
	keys("-l", "TIMI")
	keys("Tab")
	keys("-l", " ON")
	keys("Enter")
	waitFor("Timing is on.")
	send("DEFINE RELATION accounts { id BIGINT KEY };")
	waitFor("Time: ")
	keys("-l", "describe acc")
	keys("Tab")
	keys("Enter")
	waitFor("DEFINE RELATION accounts {")
	send("SHOW TABLES")
	waitFor("p         SCHEMA    r   t      DEFINE")
	send("help")
	waitFor("SHOW TABLES                relations")
	send("paging off")
	waitFor("Paging is off.")
	send("exit")
	// The history file is written on exit.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(home, ".kvschema_history"))
		if err == nil && strings.Contains(string(b), "SELECT * FROM r;") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history not written (%v): %q\nscreen:\n%s", err, b, capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExecStdin: without -f or -e (or with -f -), exec runs the script
// piped on standard input; its errors are positioned in "stdin".
func TestExecStdin(t *testing.T) {
	script := "DEFINE RELATION r { k STRING KEY, v INT };\nDEFINE PRIMARY SCHEMA s FOR r { TABLE 's', ROW k, VALUE v };\nINSERT INTO r VALUES ('a', 1);\nSELECT * FROM r;\n"
	for _, args := range [][]string{{"exec"}, {"exec", "-f", "-"}} {
		out := mustRun(t, script, args...)
		// Results and counts, no echo of the statements (that is --echo).
		if want := "INSERT 1\nk  v\na  1\n(1 row)\n"; out != want {
			t.Errorf("%q: output\n%s\nwant\n%s", args, out, want)
		}
	}
	if _, err := run(t, "DEFINE RELATION r { k STRING KEY };\nSELEC;", "exec"); err == nil || !strings.HasPrefix(err.Error(), "stdin:2:1: ") {
		t.Errorf("syntax error on stdin: %v", err)
	}
}

// TestExecFormats: -q prints only results; --format writes rows as CSV,
// JSON or JSON Lines, with NULL, bytes, timestamps and quoting as
// documented.
func TestExecFormats(t *testing.T) {
	defs := `DEFINE RELATION r { k STRING KEY, n BIGINT, d DOUBLE, ok BOOL, ts TIMESTAMP, raw BYTES };
DEFINE PRIMARY SCHEMA s FOR r { TABLE 's', ROW ordered{k}, QUALIFIER attr_name['k'], VALUE attr_value['k'] };
INSERT INTO r VALUES ('a,"b"', 7, 1.5, true, '2026-11-26 10:00:00.5', x'00ff');
INSERT INTO r (k) VALUES ('z');
SELECT * FROM r;`
	for _, tc := range []struct{ format, want string }{
		{"csv", "k,n,d,ok,ts,raw\n\"a,\"\"b\"\"\",7,1.5,true,2026-11-26T10:00:00.500000Z,0x00ff\nz,,,,,\n"},
		{"jsonl", `{"k":"a,\"b\"","n":7,"d":1.5,"ok":true,"ts":"2026-11-26T10:00:00.500000Z","raw":"0x00ff"}` + "\n" + `{"k":"z","n":null,"d":null,"ok":null,"ts":null,"raw":null}` + "\n"},
		{"json", `[{"k":"a,\"b\"","n":7,"d":1.5,"ok":true,"ts":"2026-11-26T10:00:00.500000Z","raw":"0x00ff"},{"k":"z","n":null,"d":null,"ok":null,"ts":null,"raw":null}]` + "\n"},
	} {
		out := mustRun(t, "", "exec", "-q", "--format", tc.format, "-e", defs)
		if out != tc.want {
			t.Errorf("--format %s:\n%s\nwant\n%s", tc.format, out, tc.want)
		}
	}
	if _, err := run(t, "", "exec", "--format", "xml", "-e", "SELECT * FROM r;"); err == nil || !strings.Contains(err.Error(), "want one of table, vertical, csv, json, jsonl") {
		t.Errorf("--format xml: %v", err)
	}
}

// TestShellCommands: the shell's commands on a pipe — EXPAND, TIMING,
// SOURCE, CAPTURE, SHOW TABLES, DESCRIBE, wrong arguments — and exit
// without a dot.
func TestShellCommands(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, "more.kvs", "INSERT INTO r VALUES ('c', 3);\nSELECT * FROM nope;\n")
	captured := filepath.Join(dir, "out.txt")
	out := mustRun(t, `DEFINE RELATION r { k STRING KEY, v INT };
DEFINE PRIMARY SCHEMA p FOR r { TABLE 't', ROW k, VALUE v };
INSERT INTO r VALUES ('a', 1), ('b', 2);
EXPAND ON
SELECT * FROM r WHERE k = 'a';
expand off;
Timing on
SELECT v FROM r WHERE k = 'b';
timing off
SOURCE '`+src+`'
CAPTURE '`+captured+`'
SELECT k FROM r WHERE v = 3;
CAPTURE OFF
SELECT k FROM r WHERE v = 1;
SHOW TABLES;
DESCRIBE p
TIMING sometimes
EXPAND
exit
SELECT * FROM r;
`, "shell", "--store", "mem:")
	equalLines(t, "expanded", after(t, out, "kvschema> SELECT * FROM r WHERE k = 'a';"), []string{"-[ RECORD 1 ]-", "k | a", "v | 1", "(1 row)"})
	got := after(t, out, "kvschema> SELECT v FROM r WHERE k = 'b';")
	equalLines(t, "timed", got, []string{"v", "2", "(1 row)"})
	if len(got) < 4 || !regexp.MustCompile(`^Time: \d+\.\d{3} ms$`).MatchString(got[3]) {
		t.Errorf("no time after the result:\n%s", strings.Join(got, "\n"))
	}
	// SOURCE runs the file; its errors name the file.
	equalLines(t, "sourced", after(t, out, "kvschema> SOURCE '"+src+"'"), []string{"INSERT 1", "error: " + src + ":2:15: unknown relation nope"})
	equalLines(t, "describe", after(t, out, "kvschema> DESCRIBE p"), []string{"", "-- layout of r in table t", "DEFINE PRIMARY SCHEMA p FOR r {"})
	equalLines(t, "show tables", after(t, out, "kvschema> SHOW TABLES;"), []string{
		"name  kind      of  table  defined by", "r     RELATION             DEFINE", "p     SCHEMA    r   t      DEFINE", "(2 rows)"})
	equalLines(t, "bad setting", after(t, out, "kvschema> TIMING sometimes"), []string{"error: TIMING takes ON or OFF", "kvschema> EXPAND", "Expanded display is off."})
	if strings.Contains(out, "kvschema> SELECT * FROM r;") {
		t.Errorf("the shell went on after exit:\n%s", out)
	}
	b, err := os.ReadFile(captured)
	if err != nil {
		t.Fatal(err)
	}
	// Only what was printed between CAPTURE and CAPTURE OFF.
	if string(b) != "k\nc\n(1 row)\n" {
		t.Errorf("captured %q", b)
	}
}

// TestStoreRequired: a command without --store or KVSCHEMA_STORE says how
// to name one; a pebble: directory without a store is refused unless
// --create (so a mistyped path does not give an empty store); the
// environment variable names the store when the flag does not.
func TestStoreRequired(t *testing.T) {
	bin := binary(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, storeEnv+"=") {
			env = append(env, kv)
		}
	}
	runBin := func(extra []string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(append([]string(nil), env...), extra...)
		cmd.Stdin = strings.NewReader("")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	for _, args := range [][]string{{"exec", "-e", "SELECT * FROM r;"}, {"shell"}, {"verify"}, {"repair"}} {
		out, err := runBin(nil, args...)
		if err == nil || !strings.Contains(out, "no store: give --store URL") {
			t.Errorf("%q without a store: %v %s", args, err, out)
		}
	}
	dir := filepath.Join(t.TempDir(), "typo")
	out, err := runBin(nil, "exec", "--store", "pebble:"+dir, "-e", "SELECT * FROM r;")
	if err == nil || !strings.Contains(out, "no store in "+dir+" (check the path; --create makes a new one") {
		t.Errorf("missing pebble store: %v %s", err, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused open made %s (%v)", dir, err)
	}
	if out, err := runBin(nil, "exec", "--store", "pebble:"+dir, "--create", "-e", fig6); err != nil {
		t.Fatalf("--create: %v %s", err, out)
	}
	out, err = runBin([]string{storeEnv + "=pebble:" + dir}, "exec", "-q", "-e", "SELECT * FROM r;")
	if err != nil || !strings.Contains(out, "(0 rows)") {
		t.Errorf("%s from the environment: %v %s", storeEnv, err, out)
	}
}

// TestShellCtrlCStopsStatement: Ctrl-C while a script runs (SOURCE of
// thousands of synced INSERTs) cancels it — the rest of it never runs —
// and the shell goes on.
func TestShellCtrlCStopsStatement(t *testing.T) {
	dir := t.TempDir()
	var script strings.Builder
	script.WriteString("DEFINE RELATION r { k BIGINT KEY, v STRING };\nDEFINE PRIMARY SCHEMA p FOR r { TABLE 't', ROW ordered{k}, VALUE v };\n")
	const n = 20000
	for i := range n {
		fmt.Fprintf(&script, "INSERT INTO r VALUES (%d, 'x');\n", i)
	}
	file := filepath.Join(dir, "many.kvs")
	if err := os.WriteFile(file, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Synced writes: each INSERT waits for its fsync, so the script runs
	// for seconds.
	sh := startShell(t, "--create --store pebble:"+filepath.Join(dir, "db"))
	sh.waitFor("kvschema>")
	sh.send("SOURCE '" + file + "'")
	sh.waitFor("INSERT 1")
	sh.keys("C-c")
	screen := sh.waitFor("cancelled (Ctrl-C)")
	if !strings.Contains(screen, "error: ") {
		t.Errorf("no error line:\n%s", screen)
	}
	sh.send("SELECT k FROM r WHERE k = " + fmt.Sprint(n-1) + ";")
	if screen := sh.waitFor("rows)"); !strings.Contains(screen, "(0 rows)") {
		t.Errorf("the script ran to its end despite Ctrl-C:\n%s", screen)
	}
}

// TestExecTransactions: BEGIN … COMMIT applies its statements together,
// ROLLBACK drops them, a transaction may span -f files, and one left open
// at the end is rolled back with an error naming where it began (the store
// keeps nothing of it).
func TestExecTransactions(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"
	mustRun(t, "", "exec", "--store", url, "--create", "-e", fig6)
	out := mustRun(t, "", "exec", "--store", url, "-e", `
BEGIN;
INSERT INTO r VALUES ('a1', 'b', 'x', 100);
SELECT k1 FROM r;
ROLLBACK;
SELECT k1 FROM r;
BEGIN TRANSACTION;
INSERT INTO r VALUES ('a2', 'b', 'y', 200);
COMMIT;
SELECT k1 FROM r;`)
	want := "BEGIN\nINSERT 1\nk1\na1\n(1 row)\nROLLBACK\nk1\n(0 rows)\nBEGIN\nINSERT 1\nCOMMIT\nk1\na2\n(1 row)\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	begin := writeFile(t, "begin.kvs", "BEGIN;\nINSERT INTO r VALUES ('a3', 'b', 'z', 300);\n")
	commit := writeFile(t, "commit.kvs", "COMMIT;\n")
	mustRun(t, "", "exec", "-q", "--store", url, "-f", begin, "-f", commit)
	out, err := run(t, "", "exec", "-q", "--store", url, "-f", begin, "-e", "INSERT INTO r VALUES ('a4', 'b', 'w', 400);")
	if err == nil || !strings.Contains(err.Error(), "begin.kvs:1:1: the transaction begun here was neither committed nor rolled back: its writes were dropped") {
		t.Errorf("an open transaction at the end: %v\n%s", err, out)
	}
	out = mustRun(t, "", "exec", "--store", url, "-e", "SELECT k1 FROM r;")
	if want := "k1\na2\na3\n(2 rows)\n"; out != want {
		t.Errorf("after the runs: %s, want %s", out, want)
	}
	for src, msg := range map[string]string{
		"COMMIT;":        "-e#1:1:1: no transaction is open (BEGIN opens one)",
		"BEGIN; BEGIN;":  "-e#1:1:8: a transaction is already open (BEGIN at 1:1): COMMIT or ROLLBACK it first",
		"BEGIN; " + fig6: "DEFINE: kvschema: not inside a transaction",
	} {
		if out, err := run(t, "", "exec", "--store", url, "-e", src); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q\n%s", src, err, msg, out)
		}
	}
}

// TestShellTransaction: the prompt shows an open transaction, a failed
// statement leaves it open, and leaving the shell rolls it back, saying so.
func TestShellTransaction(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"
	mustRun(t, "", "exec", "--store", url, "--create", "-e", fig6)
	out := mustRun(t, `BEGIN;
INSERT INTO r VALUES ('a1', 'b', 'x', 100);
INSERT INTO r VALUES ('a2', 'b', 'x', 'not a number');
COMMIT;
BEGIN;
INSERT INTO r
  VALUES ('a3', 'b', 'x', 300);
`, "shell", "--store", url)
	for _, frag := range []string{
		"kvschema> BEGIN;\nBEGIN\nkvschema*> INSERT INTO r VALUES ('a1', 'b', 'x', 100);\nINSERT 1\n",
		"kvschema*> COMMIT;\nCOMMIT\nkvschema> BEGIN;",
		"kvschema*> INSERT INTO r\n       ...   VALUES ('a3', 'b', 'x', 300);\nINSERT 1\n",
		"error: shell:1:1: the transaction begun here was neither committed nor rolled back: its writes were dropped\n",
	} {
		if !strings.Contains(out, frag) {
			t.Errorf("no %q in:\n%s", frag, out)
		}
	}
	if out := mustRun(t, "", "exec", "--store", url, "-e", "SELECT k1 FROM r;"); out != "k1\na1\n(1 row)\n" {
		t.Errorf("after the shell: %s", out)
	}
}

// TestShellDropSchema: a layout added to a relation with tuples, and one
// dropped, through the shell (the statements run as any other).
func TestShellDropSchema(t *testing.T) {
	out := mustRun(t, `DEFINE RELATION r { k STRING KEY, v INT };
DEFINE PRIMARY SCHEMA p FOR r { TABLE 't', ROW k, FAMILY 'f', QUALIFIER '', VALUE v };
INSERT INTO r VALUES ('a', 1), ('b', 2);
DEFINE SCHEMA by_v FOR r { TABLE 'tv', ROW ordered{v}:k, FAMILY 'f', QUALIFIER '', VALUE '' };
DROP SCHEMA p;
SELECT * FROM r WHERE v = 2;
DROP SCHEMA p;
`, "shell", "--store", "mem:")
	// Definitions print nothing; the second DROP is an error naming p.
	if !strings.Contains(out, "kvschema> DROP SCHEMA p;\nkvschema> SELECT * FROM r WHERE v = 2;\nk  v\nb  2\n(1 row)\n") {
		t.Errorf("no row through by_v:\n%s", out)
	}
	if !strings.Contains(out, "error: shell:1:1: unknown schema p") {
		t.Errorf("dropping p again:\n%s", out)
	}
}

// TestExecSchemaRate: exec --schema-rate paces an online DEFINE SCHEMA and
// reports its copy; a bad rate is refused before anything runs.
func TestExecSchemaRate(t *testing.T) {
	store := "pebble:" + filepath.Join(t.TempDir(), "db")
	var vals []string
	for i := range 300 {
		vals = append(vals, fmt.Sprintf("(%d, 'o%d', %d)", i, i%3, i))
	}
	if out, err := run(t, "", "exec", "--store", store, "--create", "-q", "-e",
		"DEFINE RELATION acct { id BIGINT KEY, owner STRING, balance BIGINT }; DEFINE PRIMARY SCHEMA acct_by_id FOR acct { TABLE 'acct', ROW ordered{id}, QUALIFIER attr_name['id'], VALUE attr_value['id'] }; INSERT INTO acct VALUES "+strings.Join(vals, ", ")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	start := time.Now()
	out := mustRun(t, "", "exec", "--store", store, "--schema-rate", "1000", "-e",
		"DEFINE SCHEMA acct_by_owner FOR acct { TABLE 'acct_owner', ROW ordered{owner}:ordered{balance}:ordered{id} }")
	if d := time.Since(start); d < 270*time.Millisecond {
		t.Errorf("300 tuples copied at 1000 a second in %v", d)
	}
	if !strings.Contains(out, "copy acct_by_owner") || !strings.Contains(out, "300") {
		t.Errorf("no report of the copy:\n%s", out)
	}
	if got := mustRun(t, "", "exec", "--store", store, "-q", "--format", "csv", "-e", "SELECT id FROM acct WHERE owner = 'o1' AND id = 4"); !strings.Contains(got, "4") {
		t.Errorf("the new layout: %q", got)
	}
	if _, err := run(t, "", "exec", "--store", store, "--schema-rate", "-1", "-e", "SELECT id FROM acct WHERE id = 1"); err == nil || !strings.Contains(err.Error(), "--schema-rate -1") {
		t.Errorf("--schema-rate -1: %v", err)
	}
}
