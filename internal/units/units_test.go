package units

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]float64{
		"161000000": 161e6, "161MB": 161e6, "161 MB": 161e6, "2GiB": 2 << 30, "1.5kB": 1500, "12B": 12, "unlimited": math.Inf(1), "0": math.Inf(1),
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5", "12XB", "MB", "1e999"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
