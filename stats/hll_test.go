package stats

import (
	"encoding/binary"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// stdErr is the standard error of the estimate of n distinct hashes,
// relative to n: linear counting's (Whang et al. 1990) while it answers,
// never under HyperLogLog's 1.04/√m.
func stdErr(n float64) float64 {
	const m = float64(registers)
	hll := 1.04 / math.Sqrt(m)
	if t := n / m; t <= linearMax {
		return max(math.Sqrt(m*(math.Exp(t)-t-1))/n, hll)
	}
	return hll
}

// within3SE tells whether est is within 3 standard errors of n, give or
// take 1 for the rounding of a count.
func within3SE(est, n float64) bool { return withinSE(est, n, 3) }

func withinSE(est, n, k float64) bool { return math.Abs(est-n) <= k*stdErr(n)*n+1 }

func hashOf(seed, i uint64) uint64 {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], seed)
	binary.BigEndian.PutUint64(b[8:], i)
	return hash(b[:])
}

// TestHLLEverySize checks the estimate after each of 200,000 distinct
// hashes is added, for a few sets: every size from 1 up, so the switch
// from linear counting to the raw estimate is crossed, not sampled. The
// registers' sum is kept up to date as they change, so that checking each
// size costs O(1).
func TestHLLEverySize(t *testing.T) {
	const n = 200000
	for seed := range uint64(4) {
		var h HLL
		sum, zeros := float64(registers), registers
		for i := 1; i <= n; i++ {
			x := hashOf(seed, uint64(i))
			r := x >> (64 - precision)
			old := h.reg[r]
			h.Add(x)
			if h.reg[r] != old {
				sum += math.Ldexp(1, -int(h.reg[r])) - math.Ldexp(1, -int(old))
				if old == 0 {
					zeros--
				}
			}
			if est := estimate(sum, zeros); !within3SE(est, float64(i)) {
				t.Fatalf("set %d: %d distinct hashes estimated %.1f (error %.2f%%, 3 standard errors %.2f%%)", seed, i, est, 100*(est-float64(i))/float64(i), 300*stdErr(float64(i)))
			}
		}
		if est, inc := h.Estimate(), estimate(sum, zeros); math.Abs(est-inc) > 1e-6*est {
			t.Fatalf("set %d: Estimate %v, kept up to date %v", seed, est, inc)
		}
	}
}

// TestHLLProperty: for random sets of 1 to 200,000 values, added in any
// order and with repeats, the estimate is within 4 standard errors (±3.3%
// once linear counting has handed over). Not 3: one random set in some
// thousands is rightly off by more than 3 (measured: 1 in 2441), which
// would make this test fail one run in 25; TestHLLEverySize holds fixed
// sets to 3 at every size.
func TestHLLProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 200000).Draw(rt, "n")
		seed := rapid.Uint64().Draw(rt, "seed")
		repeat := rapid.IntRange(1, 3).Draw(rt, "repeat")
		var h HLL
		for r := 0; r < repeat; r++ {
			for i := n; i > 0; i -= r + 1 {
				h.Add(hashOf(seed, uint64(i)))
			}
		}
		if est := h.Estimate(); !withinSE(est, float64(n), 4) {
			rt.Fatalf("%d distinct values estimated %.1f", n, est)
		}
	})
}

// TestDistinctExact: below its limit, a Distinct counts exactly, however
// often values repeat.
func TestDistinctExact(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		limit := rapid.IntRange(1, 5000).Draw(rt, "limit")
		vals := rapid.SliceOfN(rapid.IntRange(0, limit-1), 0, 3*limit).Draw(rt, "values")
		d := NewDistinct(limit)
		want := map[int]bool{}
		for _, v := range vals {
			d.Add(hashOf(0, uint64(v)))
			want[v] = true
		}
		if !d.Exact() || d.Count() != int64(len(want)) {
			rt.Fatalf("counted %d (exact %v), want %d exactly", d.Count(), d.Exact(), len(want))
		}
	})
}

// TestDistinctSwitch: the sketch takes over at the first distinct value
// past the limit, not before (a repeat does not count), and keeps what
// the exact set had counted.
func TestDistinctSwitch(t *testing.T) {
	const limit = 1000
	d := NewDistinct(limit)
	for i := range uint64(limit) {
		d.Add(hashOf(1, i))
		d.Add(hashOf(1, 0))
	}
	if !d.Exact() || d.Count() != limit {
		t.Fatalf("at the limit: count %d, exact %v; want %d exactly", d.Count(), d.Exact(), limit)
	}
	d.Add(hashOf(1, limit))
	if d.Exact() || d.set != nil {
		t.Fatalf("past the limit: still exact (set of %d)", len(d.set))
	}
	if c := d.Count(); !within3SE(float64(c), limit+1) {
		t.Fatalf("past the limit: count %d, want about %d", c, limit+1)
	}
	for i := range uint64(50000) {
		d.Add(hashOf(1, i))
	}
	if c := d.Count(); d.Exact() || !within3SE(float64(c), 50000) {
		t.Fatalf("50000 values: count %d (exact %v)", c, d.Exact())
	}
}
