package bench

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{50, 5}, {95, 10}, {99, 10}, {10, 1}, {11, 2}, {100, 10}} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
}

func TestSpearman(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if r := spearman([]float64{1, 2, 3, 4}, []float64{10, 20, 30, 1000}); !near(r, 1) {
		t.Errorf("monotone: %v, want 1", r)
	}
	if r := spearman([]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}); !near(r, -1) {
		t.Errorf("reversed: %v, want -1", r)
	}
	// Ties get mean ranks: x ranks 1, 2.5, 2.5, 4 and y ranks 1, 2, 3, 4
	// give Pearson 4.5 / √(4.5·5) = 0.9486832980505138.
	if r := spearman([]float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}); !near(r, 0.9486832980505138) {
		t.Errorf("ties: %v", r)
	}
	if r := spearman([]float64{1, 1}, []float64{1, 2}); !math.IsNaN(r) {
		t.Errorf("constant series: %v, want NaN", r)
	}
}

// Spearman's correlation depends only on the order of the values: any
// strictly increasing transform of either series leaves it unchanged, and
// it lies in [-1, 1].
func TestSpearmanIsRankInvariant(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 30).Draw(t, "n")
		// Integers, so that distinct values stay distinct under exp.
		x := floats(rapid.SliceOfN(rapid.IntRange(-1000, 1000), n, n).Draw(t, "x"))
		y := floats(rapid.SliceOfN(rapid.IntRange(-1000, 1000), n, n).Draw(t, "y"))
		r := spearman(x, y)
		if math.IsNaN(r) {
			return
		}
		if r < -1-1e-9 || r > 1+1e-9 {
			t.Fatalf("spearman = %v out of [-1, 1]", r)
		}
		ex := make([]float64, n)
		for i, v := range x {
			ex[i] = math.Exp(v / 100)
		}
		if r2 := spearman(ex, y); math.Abs(r-r2) > 1e-9 {
			t.Fatalf("exp transform changed spearman: %v vs %v", r, r2)
		}
	})
}

func floats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// TestSameSchema: variants whose DDL differs only in comments (the header
// names the mode) chose the same schema; another structure makes them
// differ.
func TestSameSchema(t *testing.T) {
	ddl := "DEFINE COLUMN FAMILY a FOR r {\n  PARTITION KEY (r.id)\n};\n"
	si := &VariantResult{Name: "si", Schema: "-- mode cf+si, cost 1\n" + ddl}
	cf := &VariantResult{Name: "cf", Schema: "-- mode cf, cost 1\n\n" + ddl}
	if !SameSchema(si, cf) {
		t.Error("same structures, different comments: not the same schema")
	}
	cf.Schema += "DEFINE COLUMN FAMILY b FOR r {\n  PARTITION KEY (r.name)\n};\n"
	if SameSchema(si, cf) {
		t.Error("one more column family: still the same schema")
	}
}
