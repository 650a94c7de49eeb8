package types

import (
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestCoerce(t *testing.T) {
	ts := time.Date(2026, 11, 21, 1, 2, 3, 456789000, time.UTC)
	cases := []struct {
		v    Value
		t    Type
		want Value
		err  string
	}{
		{"x", String, "x", ""},
		{[]byte("x"), String, "x", ""},
		{"x", Bytes, []byte("x"), ""},
		{int64(5), Int, int64(5), ""},
		{5, BigInt, int64(5), ""},
		{int64(3000000000), Int, nil, "out of range for INT"},
		{2.0, Int, int64(2), ""},
		{2.5, Int, nil, "cannot use 2.5 (float) as INT"},
		{int64(3), Double, 3.0, ""},
		{0.1, Float, float64(float32(0.1)), ""},
		{1e300, Float, nil, "out of range for FLOAT"},
		{int64(1), Bool, true, ""},
		{int64(2), Bool, nil, "as BOOL"},
		{"2026-11-21 01:02:03.456789", Timestamp, ts, ""},
		{ts.In(time.FixedZone("x", 3600)), Timestamp, ts, ""},
		{ts.Add(7), Timestamp, nil, "has 7 ns below the microsecond"},
		{"2026-11-21 01:02:03.4567891", Timestamp, nil, "has 100 ns below the microsecond"},
		{"yesterday", Timestamp, nil, "invalid timestamp"},
		{"1", Int, nil, "cannot use '1' (string) as INT"},
		{nil, Int, nil, ""},
	}
	for _, c := range cases {
		got, err := Coerce(c.v, c.t)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Coerce(%#v, %s) error = %v, want …%s…", c.v, c.t, err, c.err)
			}
			continue
		}
		if err != nil || Compare(got, c.want) != 0 || KindName(got) != KindName(c.want) {
			t.Errorf("Coerce(%#v, %s) = %#v, %v; want %#v", c.v, c.t, got, err, c.want)
		}
	}
}

func genAny(t *rapid.T, label string) Value {
	switch rapid.IntRange(0, 6).Draw(t, label+"_kind") {
	case 0:
		return nil
	case 1:
		return rapid.SampledFrom([]string{"", "a", "b", "a\x00"}).Draw(t, label)
	case 2:
		return []byte(rapid.SampledFrom([]string{"", "\x00", "\xff"}).Draw(t, label))
	case 3:
		return rapid.Int64Range(-3, 3).Draw(t, label)
	case 4:
		return rapid.SampledFrom([]float64{math.NaN(), math.Inf(-1), -2.5, -0.0, 0, 1, 2.5, 1e300}).Draw(t, label)
	case 5:
		return rapid.Bool().Draw(t, label)
	}
	return time.UnixMicro(rapid.Int64Range(-2, 2).Draw(t, label)).UTC()
}

// TestCompareTotalOrder: Compare is a total order over mixed values
// (sorting, de-duplication and merging rely on it).
func TestCompareTotalOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a, b, c := genAny(rt, "a"), genAny(rt, "b"), genAny(rt, "c")
		if Compare(a, a) != 0 {
			rt.Fatalf("Compare(%v, itself) != 0", a)
		}
		if Compare(a, b) != -Compare(b, a) {
			rt.Fatalf("not antisymmetric: %v, %v", a, b)
		}
		if Compare(a, b) <= 0 && Compare(b, c) <= 0 && Compare(a, c) > 0 {
			rt.Fatalf("not transitive: %v <= %v <= %v but %v > %v", a, b, c, a, c)
		}
	})
}

// TestSlabCopies: copies are independent of their source and of each
// other, even when appended to.
func TestSlabCopies(t *testing.T) {
	var s Slab[Value]
	src := []Value{int64(1), "a"}
	var got [][]Value
	for i := range 200 {
		src[0] = int64(i)
		got = append(got, s.Copy(src))
	}
	if ext := append(got[0], "x"); &ext[0] == &got[0][0] {
		t.Fatal("appending to a copy wrote into the slab") // over got[1]
	}
	for i, c := range got {
		if len(c) != 2 || c[0] != int64(i) || c[1] != "a" {
			t.Fatalf("copy %d = %v", i, c)
		}
	}
	if c := s.Copy(nil); c == nil || len(c) != 0 {
		t.Fatalf("Copy(nil) = %#v, want an empty tuple", c)
	}
}

func TestEqualTuples(t *testing.T) {
	for _, c := range []struct {
		a, b []Value
		want bool
	}{
		{nil, []Value{}, true},
		{[]Value{int64(1), "x", nil}, []Value{float64(1), "x", nil}, true},
		{[]Value{nil}, []Value{int64(0)}, false},
		{[]Value{"x"}, []Value{"x", "y"}, false},
		{[]Value{[]byte("a")}, []Value{[]byte("b")}, false},
	} {
		if got := EqualTuples(c.a, c.b); got != c.want {
			t.Errorf("EqualTuples(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

// TestSlabReset: after Reset the slab serves copies from its last array
// again (cleared), without allocating, and copies stay independent.
func TestSlabReset(t *testing.T) {
	var s Slab[Value]
	for i := 0; i < 10; i++ {
		s.Copy([]Value{int64(i), "x"})
	}
	s.Reset()
	allocs := testing.AllocsPerRun(100, func() {
		a := s.Copy([]Value{int64(1), "a"})
		b := s.Copy([]Value{int64(2), "b"})
		if a[0] != int64(1) || b[1] != "b" {
			t.Fatalf("copies %v %v", a, b)
		}
		s.Reset()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run after Reset, want 0", allocs)
	}
	s.Reset()
	if got := s.free[0]; got != nil {
		t.Errorf("Reset left %v in the array", got)
	}
}
