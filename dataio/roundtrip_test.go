package dataio

import (
	"math"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// Text that CSV quoting, the NULL marker and the string escape must survive.
var trickyStrings = []string{
	"", " ", `\N`, `\`, `\\`, `\\N`, `\r`, `\x00`, `\x`, "\r", "\n", "\r\n", "a\r\nb", "\n\r",
	",", `"`, `""`, `a"b`, "a,b\nc", "\t", "\uFEFFbom", "é", "\x00", `\.`, " lead", "trail ",
	"N", `N\`, "true", "NULL", "null",
}

// stringGen draws STRING values: UTF-8 text, as every format requires.
func stringGen() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom(trickyStrings),
		rapid.String(),
		rapid.Custom(func(t *rapid.T) string {
			// Concatenations of the tricky pieces.
			parts := rapid.SliceOfN(rapid.SampledFrom(trickyStrings), 1, 4).Draw(t, "parts")
			s := ""
			for _, p := range parts {
				s += p
			}
			return s
		}),
	)
}

var (
	minTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

func valueGen(typ types.Type) *rapid.Generator[types.Value] {
	var g *rapid.Generator[types.Value]
	switch typ {
	case types.String:
		g = rapid.Map(stringGen(), func(s string) types.Value { return s })
	case types.Int:
		g = rapid.Map(rapid.Int32(), func(i int32) types.Value { return int64(i) })
	case types.BigInt:
		g = rapid.Map(rapid.OneOf(rapid.Int64(), rapid.SampledFrom([]int64{math.MinInt64, math.MaxInt64, 0, -1})),
			func(i int64) types.Value { return i })
	case types.Float:
		g = rapid.Map(rapid.Uint32(), func(b uint32) types.Value { return float64(math.Float32frombits(b)) })
	case types.Double:
		g = rapid.Map(rapid.OneOf(
			rapid.Map(rapid.Uint64(), math.Float64frombits),
			rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 0.1, 1e21, math.Inf(1), math.Inf(-1), math.NaN(),
				math.MaxFloat64, math.SmallestNonzeroFloat64, float64(float32(0.1))}),
		), func(f float64) types.Value { return f })
	case types.Bool:
		g = rapid.Map(rapid.Bool(), func(b bool) types.Value { return b })
	case types.Timestamp:
		g = rapid.Map(rapid.Int64Range(minTime, maxTime), func(us int64) types.Value { return time.UnixMicro(us).UTC() })
	case types.Bytes:
		g = rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 12), func(b []byte) types.Value { return b })
	default:
		if !typ.IsCollection() {
			panic("type " + typ.String())
		}
		// 0 to 4 elements of the element types, made canonical (a SET
		// sorted and without duplicates, a MAP's keys too).
		g = rapid.Custom(func(t *rapid.T) types.Value {
			n := rapid.IntRange(0, 4).Draw(t, "n")
			var raw types.Value
			if typ.Kind() == types.MapKind {
				m := make(types.Map, n)
				for i := range m {
					m[i] = types.Entry{Key: valueGen(typ.Key()).Draw(t, "key"), Val: valueGen(typ.Elem()).Draw(t, "val")}
				}
				raw = m
			} else {
				xs := make(types.List, n)
				for i := range xs {
					xs[i] = valueGen(typ.Elem()).Draw(t, "elem")
				}
				raw = xs
				if typ.Kind() == types.SetKind {
					raw = types.Set(xs)
				}
			}
			v, err := types.Coerce(raw, typ)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
	}
	return g
}

func rowGen(e *catalog.Entity) *rapid.Generator[[]types.Value] {
	return rapid.Custom(func(t *rapid.T) []types.Value {
		row := make([]types.Value, len(e.Columns))
		for i, c := range e.Columns {
			isKey := c.Field != nil && c.Field == e.ID()
			if !isKey && rapid.IntRange(0, 4).Draw(t, "null") == 0 {
				continue
			}
			row[i] = valueGen(c.Type).Draw(t, c.Name)
		}
		return row
	})
}

func TestRoundTripProperty(t *testing.T) {
	m := buildModel(t, testModel)
	rapid.Check(t, func(t *rapid.T) {
		e := rapid.SampledFrom(m.Entities).Draw(t, "entity")
		f := rapid.SampledFrom([]Format{CSV, JSONL}).Draw(t, "format")
		rows := rapid.SliceOfN(rowGen(e), 0, 6).Draw(t, "rows")
		data := writeAll(t, f, e, rows)
		got, err := readAll(t, data, "rt"+f.Ext(), f, e)
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, data)
		}
		for _, row := range got {
			checkRow(t, e, row)
		}
		if !sameRows(rows, got) {
			t.Fatalf("round trip differs\nwrote %#v\nread  %#v\nfile:\n%s", rows, got, data)
		}
	})
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
