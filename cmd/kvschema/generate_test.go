package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateLoadVerify: generate writes the RUBiS model's data (Zipfian
// foreign keys), the same again byte for byte; load --data of those files
// into an advised schema verifies clean against them, and so does load
// --generate model with the same settings, which must load the very same
// rows.
func TestGenerateLoadVerify(t *testing.T) {
	needCBC(t)
	dir := t.TempDir()
	ddl := filepath.Join(dir, "schema.kvs")
	mustRun(t, "", "advise", "--model", "../../examples/rubis/model.kvs", "--workload", "../../examples/rubis/workload.kvs",
		"--mix", "bidding", "--format", "ddl", "-o", ddl, "-q")
	gen := func(out string) {
		t.Helper()
		got := mustRun(t, "", "generate", "--model", "../../examples/rubis/model.kvs", "--scale", "0.02", "--seed", "4", "--skew", "1", "-o", out)
		// regions 1, categories 1, users 40, items 400, bids 4000,
		// comments 2000, buynow 800.
		if want := "generate: 7242 rows of 7 relations (scale 0.02, seed 4, skew 1) in " + out + "\n"; got != want {
			t.Fatalf("generate printed %q, want %q", got, want)
		}
	}
	data, again := filepath.Join(dir, "data"), filepath.Join(dir, "again")
	gen(data)
	gen(again)
	files, err := filepath.Glob(filepath.Join(data, "*.csv"))
	if err != nil || len(files) != 7 {
		t.Fatalf("files %v, %v", files, err)
	}
	for _, f := range files {
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(again, filepath.Base(f)))
		if err != nil || string(a) != string(b) {
			t.Fatalf("%s differs between two runs (%v)", filepath.Base(f), err)
		}
	}
	for _, load := range [][]string{{"--data", data}, {"--generate", "model", "--scale", "0.02", "--seed", "4", "--skew", "1"}} {
		url := "pebble:" + filepath.Join(t.TempDir(), "db")
		scratch := t.TempDir()
		out := mustRun(t, "", append([]string{"load", "--store", url, "--schema", ddl, "-q", "--temp-dir", scratch}, load...)...)
		if !strings.Contains(out, "loaded 7242 entity rows") {
			t.Fatalf("load %v:\n%s", load, out)
		}
		if left, err := os.ReadDir(scratch); err != nil || len(left) != 0 {
			t.Fatalf("load %v left %d entries in --temp-dir (%v)", load, len(left), err)
		}
		if out := mustRun(t, "", "verify", "--store", url, "--data", data); !strings.Contains(out, "verify: clean") {
			t.Fatalf("verify after load %v:\n%s", load, out)
		}
	}
	// The staging area is where --temp-dir says.
	missing := filepath.Join(t.TempDir(), "no such dir")
	if _, err := run(t, "", "load", "--store", "pebble:"+filepath.Join(t.TempDir(), "db"), "--schema", ddl, "-q", "--temp-dir", missing, "--data", data); err == nil || !strings.Contains(err.Error(), "staging area") {
		t.Errorf("load with a missing --temp-dir: %v", err)
	}
	if _, err := run(t, "", "generate", "--model", "../../examples/rubis/model.kvs"); err == nil || !strings.Contains(err.Error(), "-o DIR") {
		t.Errorf("generate without -o: %v", err)
	}
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	if _, err := run(t, "", "load", "--store", url, "--schema", ddl, "--generate", "rubis", "--skew", "1", "-q"); err == nil || !strings.Contains(err.Error(), "--skew is for --generate model") {
		t.Errorf("rubis with a skew: %v", err)
	}
}
