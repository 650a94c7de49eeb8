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

// TestAdviseKeepData: the browsing mix's advice with --keep-data keeps
// the data the bidding mix's advice needs, so advise --current builds
// bidding's from it; without --keep-data it cannot (it says --reload).
func TestAdviseKeepData(t *testing.T) {
	dir := t.TempDir()
	model, wl := "../../examples/rubis/model.kvs", "../../examples/rubis/workload_secondary.kvs"
	for _, keep := range []bool{true, false} {
		ddl := filepath.Join(dir, "browsing.kvs")
		args := []string{"advise", "-q", "--model", model, "--workload", wl, "--mix", "browsing", "--format", "ddl", "-o", ddl}
		if keep {
			args = append(args, "--keep-data")
		}
		mustRun(t, "", args...)
		out, err := run(t, "", "advise", "-q", "--model", model, "--workload", wl, "--mix", "bidding", "--current", ddl, "--rate", "100")
		switch {
		case keep && (err != nil || !strings.Contains(out, "Migration from the deployed schema")):
			t.Errorf("bidding from browsing --keep-data: %v\n%s", err, out)
		case !keep && (err == nil || !strings.Contains(err.Error(), "--reload")):
			t.Errorf("bidding from browsing without --keep-data: %v, want an error saying --reload", err)
		}
	}
}
