package types_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/types"
)

// TestStringsStayUnchanged: every string Strings hands out keeps the bytes
// it was made from, however the source is reused and however many strings
// follow it (chunks are never written twice).
func TestStringsStayUnchanged(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var s types.Strings
		src := make([]byte, 0, 2048)
		var got, want []string
		for _, n := range rapid.SliceOf(rapid.IntRange(0, 1500)).Draw(rt, "lengths") {
			src = src[:n]
			for i := range src {
				src[i] = byte('a' + (len(got)+i)%26)
			}
			want = append(want, string(src))
			got = append(got, s.String(src))
			clear(src) // the store reuses its iterator's memory
		}
		for i := range got {
			if got[i] != want[i] {
				rt.Fatalf("string %d changed: %.20q…, want %.20q…", i, got[i], want[i])
			}
		}
	})
	var nilStrings *types.Strings
	if got := nilStrings.String([]byte("x")); got != "x" {
		t.Fatalf("nil Strings: %q", got)
	}
	if d := nilStrings.Datum(types.Bytes, []byte(strings.Repeat("b", 3))); d.Type != types.Bytes || d.Str() != "bbb" {
		t.Fatalf("Datum: %v", d)
	}
}

// TestStringsPack: short values share chunks, so many decodes allocate far
// less than once per value.
func TestStringsPack(t *testing.T) {
	var s types.Strings
	b := []byte(strings.Repeat("v", 100))
	allocs := testing.AllocsPerRun(10, func() {
		for range 100 {
			_ = s.String(b)
		}
	})
	if allocs > 5 {
		t.Fatalf("100 strings of 100 bytes: %v allocations, want ≤ 5", allocs)
	}
}
