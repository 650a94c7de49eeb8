package pebblestore

import "testing"

// TestParseURLCache: cache=SIZE sets the block cache, in the units sizes
// take everywhere (MB = 10^6 bytes, MiB = 2^20).
func TestParseURLCache(t *testing.T) {
	for rest, want := range map[string]int64{"d": 0, "d?cache=256MB": 256e6, "d?cache=1GiB&sync=false": 1 << 30} {
		_, opts, err := parseURL(rest)
		if err != nil || opts.CacheSize != want {
			t.Errorf("%q: cache %d, %v; want %d", rest, opts.CacheSize, err, want)
		}
	}
}
