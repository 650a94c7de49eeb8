package main

import (
	"path/filepath"
	"strings"
	"testing"
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
