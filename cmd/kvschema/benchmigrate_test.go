package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchMigrateCommand: a chat store loaded with the schema advised
// without static columns migrates to the one advised with them while
// writers run; the report has a line per phase and the targets, the
// timeline chart is written, and bad flags are refused.
func TestBenchMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	model, workload := "../../examples/chat/model.kvs", "../../examples/chat/workload.kvs"
	from, to := filepath.Join(dir, "from.kvs"), filepath.Join(dir, "to.kvs")
	mustRun(t, "", "advise", "-q", "--model", model, "--workload", workload, "--mix", "chat", "--format", "ddl", "-o", from)
	mustRun(t, "", "advise", "-q", "--model", model, "--workload", workload, "--mix", "chat", "--static-columns", "--format", "ddl", "-o", to)
	out := filepath.Join(dir, "out")
	args := []string{"bench-migrate", "-q", "--from", from, "--to", to, "--workload", workload, "--mix", "chat",
		"--generate", "model", "--scale", "0.0001", "--rate", "200", "--warmup", "300ms", "--cooldown", "300ms", "--out", out}
	res := mustRun(t, "", args...)
	text, err := os.ReadFile(filepath.Join(out, "migration.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res, string(text)) {
		t.Errorf("the command's output is not the report:\n%s", res)
	}
	for _, want := range []string{"\nbefore ", "\nadd ", "\nbackfill+catch-up ", "\nverify ", "\nswitch ", "\ndrop ", "\nafter ",
		"migration: add ", "load: ", "backfill: ", "write latency: ", "verify after the run: clean"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the report lacks %q:\n%s", strings.TrimSpace(want), text)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "migration-timeline.png")); err != nil || fi.Size() == 0 {
		t.Errorf("the timeline chart: %v %v", fi, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench-migrate", "--from", from, "--workload", workload, "--generate", "model"}, "--to"},
		{[]string{"bench-migrate", "--from", from, "--to", to, "--generate", "model"}, "--workload"},
		{[]string{"bench-migrate", "--from", from, "--to", to, "--workload", workload}, "--generate"},
		{[]string{"bench-migrate", "--from", from, "--to", to, "--workload", workload, "--generate", "model", "--writers", "0"}, "--writers"},
		{[]string{"bench-migrate", "--from", from, "--to", to, "--workload", workload, "--generate", "model", "--mix", "nope"}, "no mix"},
		{[]string{"bench-migrate", "--from", from, "--to", from, "--workload", workload, "--generate", "model", "--scale", "0.0001",
			"--warmup", "10ms", "--cooldown", "10ms", "--out", out}, "nothing to do"},
	} {
		if _, err := run(t, "", tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.args[1:], err, tc.want)
		}
	}
}
