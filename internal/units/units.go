// Package units formats and parses byte sizes as the CLI, reports and
// storage budgets write them: SI suffixes (161MB = 161e6 bytes) and IEC
// ones (2GiB), "unlimited" for no limit.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Format writes a byte count with a binary-free SI unit (161MB = 161e6).
func Format(b float64) string {
	if math.IsInf(b, 1) {
		return "unlimited"
	}
	for _, u := range []struct {
		unit string
		v    float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if b >= u.v {
			return fmt.Sprintf("%.4g%s", b/u.v, u.unit)
		}
	}
	return fmt.Sprintf("%.0fB", b)
}

// Parse reads a size: a number of bytes with an optional suffix, in any
// letter case, B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024); "unlimited" means no budget. Zero is refused: a budget
// of nothing admits no schema, and "no budget" is spelled "unlimited".
func Parse(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "unlimited") {
		return math.Inf(1), nil
	}
	units := []struct {
		suf string
		mul float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mul := 1.0
	for _, u := range units {
		if n := len(t) - len(u.suf); n >= 0 && strings.EqualFold(t[n:], u.suf) {
			t, mul = strings.TrimSpace(t[:n]), u.mul
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if i := strings.IndexFunc(t, unicode.IsLetter); i > 0 {
			return 0, fmt.Errorf("budget %q: unknown unit %q (use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB; any letter case)", s, t[i:])
		}
	}
	if err == nil && v == 0 {
		return 0, fmt.Errorf("budget %q: a budget of 0 bytes admits no schema (for no limit, write unlimited)", s)
	}
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("budget %q: want a positive number of bytes, e.g. 161000000, 161MB or 2GiB", s)
	}
	return v * mul, nil
}
