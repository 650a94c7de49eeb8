package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// advise --target: the built-in targets and profile files; an unknown
// name lists the choices; --profile is its former name.
func TestAdviseTargetFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "nonesuch"}, `--target: unknown target "nonesuch": give one of bigtable, cassandra, pebble, or a JSON profile file`},
		{[]string{"--target", "./nonesuch.json"}, `profile "./nonesuch.json" is neither built in (bigtable, cassandra, pebble) nor a readable file`},
		{[]string{"--target", "pebble", "--profile", "cassandra"}, "--target pebble and --profile cassandra disagree"},
	} {
		args := append([]string{"advise", "-q", "--model", seed37Model, "--workload", seed37Workload}, tc.args...)
		if out, err := run(t, "", args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
	}
}

// The target goes into the schema's DDL and comes back: cost prices the
// file with the profile it records, and load warns when the store is of
// another kind than the target, and only then.
func TestTargetRoundTrip(t *testing.T) {
	needCBC(t)
	dir := t.TempDir()
	ddls := map[string]string{}
	for _, target := range []string{"", "pebble", "bigtable", "cassandra"} {
		ddl := filepath.Join(dir, "schema-"+target+".kvs")
		args := []string{"advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--format", "ddl", "-o", ddl}
		if target != "" {
			args = append(args, "--target", target)
		}
		mustRun(t, "", args...)
		ddls[target] = ddl
		want := target
		if want == "" {
			want = "pebble" // the default: kvschema's engine
		}
		src := readFile(t, ddl)
		for _, frag := range []string{", target " + want + ", profile " + want + "):", "\n-- kvschema target: " + want + "\n", "\n-- kvschema profile: {\"name\":\"" + want + "\","} {
			if !strings.Contains(src, frag) {
				t.Errorf("--target %q: the DDL lacks %q:\n%s", target, frag, src)
			}
		}
		// cost without --target prices it as it was advised.
		if out := mustRun(t, "", "cost", "--schema", ddl, "--workload", seed37Workload); !strings.HasPrefix(out, "-- kvschema cost: mix default, profile "+want+"\n") {
			t.Errorf("cost of the %s schema:\n%s", want, out[:min(len(out), 200)])
		}
	}
	if out := mustRun(t, "", "cost", "--schema", ddls["bigtable"], "--workload", seed37Workload, "--target", "cassandra"); !strings.HasPrefix(out, "-- kvschema cost: mix default, profile cassandra\n") {
		t.Errorf("cost --target cassandra:\n%s", out[:min(len(out), 200)])
	}
	load := func(target string) string {
		url := "pebble:" + filepath.Join(t.TempDir(), "db")
		return mustRun(t, "", "load", "--store", url, "--schema", ddls[target], "--generate", "model", "--scale", "0.0002", "-q")
	}
	for _, tc := range []struct{ target, want string }{
		{"pebble", ""},
		{"", ""},
		{"bigtable", "kvschema: warning: the schema was advised for target bigtable, but the store is pebble: its plans were costed with another engine's constants; kvschema advise --target pebble designs for this store\n"},
		{"cassandra", "kvschema: warning: the schema was advised for target cassandra, but the store is pebble: Cassandra's constants"},
	} {
		out := load(tc.target)
		if tc.want == "" && strings.Contains(out, "warning") || !strings.Contains(out, tc.want) || !strings.Contains(out, "loaded 20 entity rows") {
			t.Errorf("load of the schema advised for %q:\n%s", tc.target, out)
		}
	}
	// mem: takes any target.
	if out := mustRun(t, "", "load", "--store", "mem:", "--schema", ddls["cassandra"], "--generate", "model", "--scale", "0.0002", "-q"); strings.Contains(out, "warning") {
		t.Errorf("load into mem:\n%s", out)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
