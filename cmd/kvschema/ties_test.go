package main

import (
	"strings"
	"testing"
)

// --exact-ties, once the way to get the smallest schema of least cost,
// still parses (that is the default now) and says so.
func TestAdviseExactTiesDeprecated(t *testing.T) {
	needCBC(t)
	out := mustRun(t, "", "advise", "-q", "--model", seed37Model, "--workload", seed37Workload, "--exact-ties")
	if !strings.Contains(out, "--exact-ties has been deprecated, the smallest of the schemas of least cost is always chosen now") ||
		!strings.Contains(out, "(optimal, the smallest of that cost)") {
		t.Errorf("advise --exact-ties:\n%s", out)
	}
}
