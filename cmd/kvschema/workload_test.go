package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkloadCommand: statements run through `kvschema exec` on an
// advised schema come back from `kvschema workload` as a query log, by
// shape and count, which `advise --workload-log` reads; and `advise
// --current` with its flags refuses what it cannot use.
func TestWorkloadCommand(t *testing.T) {
	dir := t.TempDir()
	model := "../../examples/chat/model.kvs"
	ddl := filepath.Join(dir, "schema.kvs")
	mustRun(t, "", "advise", "-q", "--model", model, "--workload", "../../examples/chat/workload.kvs", "--mix", "chat",
		"--static-columns", "--format", "ddl", "-o", ddl)
	url := "pebble:" + filepath.Join(dir, "db")
	mustRun(t, "", "load", "--store", url, "--schema", ddl, "--generate", "model", "--scale", "0.0001", "-q")
	mustRun(t, "", "exec", "--store", url,
		"-e", "SELECT rooms.name, rooms.messages.body FROM rooms.messages WHERE rooms.id = 1 LIMIT 3",
		"-e", "SELECT rooms.name, rooms.messages.body FROM rooms.messages WHERE rooms.id = 2 LIMIT 3",
		"-e", "UPDATE rooms SET name = 'x' WHERE rooms.id = 1")
	log := filepath.Join(dir, "observed.log")
	mustRun(t, "", "workload", "--store", url, "-o", log)
	out := mustRun(t, "", "workload", "--store", url)
	for _, want := range []string{
		"2\tSELECT rooms.name, rooms.messages.body FROM rooms.messages WHERE rooms.id = ? LIMIT 3\n",
		"1\tUPDATE rooms SET name = ? WHERE rooms.id = ?\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("workload output lacks %q:\n%s", want, out)
		}
	}
	adv := mustRun(t, "", "advise", "-q", "--model", model, "--workload-log", log, "--mix", "log", "--current", ddl, "--rate", "10")
	if !strings.Contains(adv, "Migration from the deployed schema") || !strings.Contains(adv, "keep 1: ") {
		t.Errorf("advise --current on the observed workload:\n%s", adv)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--current", ddl}, "--rate"},
		{[]string{"--current", ddl, "--rate", "10", "--amortize", "soon"}, "--amortize"},
		{[]string{"--migration-budget", "1MB"}, "--migration-budget needs --current"},
	} {
		args := append([]string{"advise", "-q", "--model", model, "--workload-log", log, "--mix", "log"}, tc.args...)
		if _, err := run(t, "", args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}
