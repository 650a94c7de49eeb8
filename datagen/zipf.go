package datagen

import "math"

// zipf draws ranks 1..n with P(k) ∝ k^-s for any s > 0 (math/rand/v2's
// Zipf needs s > 1) by rejection-inversion (W. Hörmann and G. Derflinger,
// "Rejection-inversion to generate variates from monotone discrete
// distributions", 1996): O(1) memory and set-up whatever n, so it streams,
// and a draw takes about one uniform number (rejections are rare).
//
// With h(x) = x^-s and H its antiderivative, the areas under h of the
// intervals [k-½, k+½] (for k = 1, [1.5-h(1), 1.5]) partition
// [H(1.5)-1, H(n+½)]; a uniform point of that span is inverted to x and
// rounded to k, which is accepted when the point lies under k's bar.
type zipf struct {
	s        float64
	n        float64
	hx1, hn  float64 // the span: H(1.5) - 1 and H(n + ½)
	squeeze  float64 // x within this of k is always accepted
	oneMinus float64 // 1 - s
}

func newZipf(s float64, n uint64) *zipf {
	z := &zipf{s: s, n: float64(n), oneMinus: 1 - s}
	z.hx1 = z.bigH(1.5) - 1
	z.hn = z.bigH(z.n + 0.5)
	z.squeeze = 2 - z.bigHInv(z.bigH(2.5)-z.h(2))
	return z
}

func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// bigH is (x^(1-s) - 1)/(1-s), log x at s = 1, computed without
// cancellation near s = 1.
func (z *zipf) bigH(x float64) float64 {
	lx := math.Log(x)
	return expm1Over(z.oneMinus*lx) * lx
}

// bigHInv inverts bigH.
func (z *zipf) bigHInv(y float64) float64 {
	t := max(y*z.oneMinus, -1) // below -1 only by rounding
	return math.Exp(log1pOver(t) * y)
}

// expm1Over is (e^x - 1)/x, 1 at 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) < 1e-8 {
		return 1 + x/2 + x*x/6
	}
	return math.Expm1(x) / x
}

// log1pOver is log(1+x)/x, 1 at 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) < 1e-8 {
		return 1 - x/2 + x*x/3
	}
	return math.Log1p(x) / x
}

// rank draws a rank in [1, n].
func (z *zipf) rank(r *Rand) uint64 {
	for {
		u := z.hn + r.Float64()*(z.hx1-z.hn)
		x := z.bigHInv(u)
		k := math.Min(math.Max(math.Floor(x+0.5), 1), z.n)
		if k-x <= z.squeeze || u >= z.bigH(k+0.5)-z.h(k) {
			return uint64(k)
		}
	}
}
