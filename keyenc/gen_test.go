package keyenc_test

import (
	"math"
	"reflect"
	"time"

	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// Generators favour values that are equal or close to each other and the
// edge cases of each encoding: tiny alphabets containing the escape bytes,
// integers around 0 and the extremes, special floats.

// edgeBytes makes shared prefixes, equal values and every escape sequence
// (00 FF, 00 01, ...) likely.
var edgeBytes = []byte{0x00, 0x01, 0xFE, 0xFF, 'a'}

var genRaw = rapid.OneOf(
	rapid.SliceOfN(rapid.SampledFrom(edgeBytes), 0, 6),
	rapid.SliceOf(rapid.Byte()),
)

func intsNear(lo, hi int64) *rapid.Generator[int64] {
	return rapid.OneOf(
		rapid.Int64Range(-3, 3),
		rapid.SampledFrom([]int64{lo, lo + 1, hi - 1, hi, -256, -255, 255, 256}),
		rapid.Int64Range(lo, hi),
	)
}

var float32Specials = []float32{
	float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32,
	float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32,
	float32(math.Inf(1)), float32(math.NaN()),
}

var float64Specials = []float64{
	math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64,
	math.Copysign(0, -1), 0, math.SmallestNonzeroFloat64, 1, math.MaxFloat64,
	math.Inf(1), math.NaN(),
}

// edgeValues are the edge cases of every type: escape sequences, empty
// values, extremes, special floats, timestamps far before and after 1970.
var edgeValues = map[types.Type][]types.Value{
	types.String: {"", "a\x00b", "\x00\xff", "\x00\x01", "\x00\x00", "\xff", "\xff\xff\x00"},
	types.Bytes:  {[]byte{}, []byte{0, 0xff}, []byte{0, 1}, []byte("xyz")},
	types.Int:    {int64(0), int64(-1), int64(math.MinInt32), int64(math.MaxInt32)},
	types.BigInt: {int64(0), int64(-1), int64(math.MinInt64), int64(math.MaxInt64)},
	types.Float:  {0.0, negZero, 1.0, -math.MaxFloat32, math.Inf(-1), math.Inf(1), math.NaN(), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32},
	types.Double: {0.0, negZero, -1.5, math.MaxFloat64, math.Inf(-1), math.Inf(1), math.NaN(), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64},
	types.Bool:   {false, true},
	types.Timestamp: {time.UnixMicro(0).UTC(), time.UnixMicro(-1).UTC(),
		time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.UnixMicro(math.MinInt64).UTC(), time.UnixMicro(math.MaxInt64).UTC()},
}

func boxed[V any](g *rapid.Generator[V], conv func(V) types.Value) *rapid.Generator[types.Value] {
	return rapid.Map(g, conv)
}

// valueGens generate non-NULL canonical values of each type.
var valueGens = map[types.Type]*rapid.Generator[types.Value]{
	types.String: boxed(genRaw, func(b []byte) types.Value { return string(b) }),
	types.Bytes:  boxed(genRaw, func(b []byte) types.Value { return b }),
	types.Int: boxed(intsNear(math.MinInt32, math.MaxInt32),
		func(i int64) types.Value { return i }),
	types.BigInt: boxed(intsNear(math.MinInt64, math.MaxInt64),
		func(i int64) types.Value { return i }),
	types.Float: boxed(rapid.OneOf(
		rapid.SampledFrom(float32Specials),
		rapid.Map(rapid.Uint32(), math.Float32frombits), // includes NaN payloads
		rapid.Map(rapid.Int64Range(-3, 3), func(i int64) float32 { return float32(i) }),
	), func(f float32) types.Value { return float64(f) }),
	types.Double: boxed(rapid.OneOf(
		rapid.SampledFrom(float64Specials),
		rapid.Map(rapid.Uint64(), math.Float64frombits),
		rapid.Map(rapid.Int64Range(-3, 3), func(i int64) float64 { return float64(i) }),
	), func(f float64) types.Value { return f }),
	types.Bool: boxed(rapid.Bool(), func(b bool) types.Value { return b }),
	// Microseconds: around the epoch (also before it) and the extremes.
	types.Timestamp: boxed(rapid.OneOf(
		intsNear(math.MinInt64, math.MaxInt64),
		rapid.Int64Range(-1e17, 1e17), // years ~ -1200 .. 5100
	), func(m int64) types.Value { return time.UnixMicro(m).UTC() }),
}

var nullableGens = func() map[types.Type]*rapid.Generator[types.Value] {
	m := make(map[types.Type]*rapid.Generator[types.Value])
	for t, g := range valueGens {
		m[t] = rapid.OneOf(rapid.Just[types.Value](nil), g)
	}
	return m
}()

func genValue(t types.Type, nullable bool) *rapid.Generator[types.Value] {
	if nullable {
		return nullableGens[t]
	}
	return valueGens[t]
}

// drawPair draws two values of type t that are often equal or, for
// STRING/BYTES, share a prefix.
func drawPair(t *rapid.T, typ types.Type, nullable bool) (a, b types.Value) {
	g := genValue(typ, nullable)
	a = g.Draw(t, "a")
	switch rapid.IntRange(0, 2).Draw(t, "relation") {
	case 0:
		return a, a
	case 1:
		b = g.Draw(t, "b")
		if typ != types.String && typ != types.Bytes || a == nil || b == nil {
			return a, b
		}
		raw := func(v types.Value) []byte {
			if s, ok := v.(string); ok {
				return []byte(s)
			}
			return v.([]byte)
		}
		ra := raw(a)
		k := rapid.IntRange(0, len(ra)).Draw(t, "prefix")
		joined := append(ra[:k:k], raw(b)...) // full slice expression: never writes into a

		if typ == types.String {
			return a, string(joined)
		}
		return a, joined
	}
	return a, g.Draw(t, "b")
}

// sameValue reports whether got is want decoded: equal under types.Compare,
// of the same Go type, and timestamps in UTC.
func sameValue(want, got types.Value) bool {
	if reflect.TypeOf(want) != reflect.TypeOf(got) || types.Compare(want, got) != 0 {
		return false
	}
	if ts, ok := got.(time.Time); ok {
		return ts.Location() == time.UTC
	}
	return true
}
