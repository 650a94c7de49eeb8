package units

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]float64{
		"161000000": 161e6, "161MB": 161e6, "161 MB": 161e6, "2GiB": 2 << 30, "1.5kB": 1500, "12B": 12, "unlimited": math.Inf(1), "Unlimited": math.Inf(1),
		"161mb": 161e6, "161Mb": 161e6, "1kb": 1e3, "1KB": 1e3, "2gib": 2 << 30, "2GIB": 2 << 30, "3 tb": 3e12, "7b": 7,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5", "12XB", "MB", "1e999", "0", "0MB", "0.0"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

// TestParseZero: 0 is an error that says how to ask for no limit.
func TestParseZero(t *testing.T) {
	if _, err := Parse("0"); err == nil || !strings.Contains(err.Error(), "write unlimited") {
		t.Errorf("Parse(0): %v", err)
	}
}
