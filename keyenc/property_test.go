package keyenc_test

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// codec is one key direction: ascending (ordered) or descending.
type codec struct {
	name   string
	append func([]byte, types.Type, types.Value, bool) ([]byte, error)
	decode func(types.Type, []byte, bool) (types.Value, int, error)
	dir    int // sign of bytes.Compare relative to types.Compare
}

var codecs = []codec{
	{"asc", keyenc.AppendOrdered, keyenc.DecodeOrdered, 1},
	{"desc", keyenc.AppendDesc, keyenc.DecodeDesc, -1},
}

// forEachVariant runs fn as a subtest for every type, nullability and
// direction.
func forEachVariant(t *testing.T, fn func(t *rapid.T, c codec, typ types.Type, nullable bool)) {
	for _, c := range codecs {
		for _, typ := range types.AllTypes {
			for _, nullable := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/nullable=%t", c.name, typ, nullable)
				t.Run(name, rapid.MakeCheck(func(t *rapid.T) { fn(t, c, typ, nullable) }))
			}
		}
	}
}

func TestOrderedRoundTrip(t *testing.T) {
	forEachVariant(t, func(t *rapid.T, c codec, typ types.Type, nullable bool) {
		v := genValue(typ, nullable).Draw(t, "v")
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 3).Draw(t, "prefix")
		trailing := rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "trailing")

		out, err := c.append(prefix, typ, v, nullable)
		if err != nil {
			t.Fatalf("append %s: %v", types.Format(v), err)
		}
		if !bytes.Equal(out[:len(prefix)], prefix) {
			t.Fatalf("append changed dst: % X", out)
		}
		enc := out[len(prefix):]
		got, n, err := c.decode(typ, append(enc[:len(enc):len(enc)], trailing...), nullable)
		if err != nil {
			t.Fatalf("decode % X: %v", enc, err)
		}
		if n != len(enc) {
			t.Fatalf("decode % X consumed %d bytes, want %d", enc, n, len(enc))
		}
		if !sameValue(v, got) {
			t.Fatalf("decode(encode(%s)) = %s (%T)", types.Format(v), types.Format(got), got)
		}
	})
}

func TestOrderPreserved(t *testing.T) {
	forEachVariant(t, func(t *rapid.T, c codec, typ types.Type, nullable bool) {
		a, b := drawPair(t, typ, nullable)
		ea, err := c.append(nil, typ, a, nullable)
		if err != nil {
			t.Fatal(err)
		}
		eb, err := c.append(nil, typ, b, nullable)
		if err != nil {
			t.Fatal(err)
		}
		want := c.dir * types.Compare(a, b)
		if got := bytes.Compare(ea, eb); got != want {
			t.Fatalf("bytes.Compare(% X, % X) = %d, want %d for %s vs %s",
				ea, eb, got, want, types.Format(a), types.Format(b))
		}
		if len(ea) < len(eb) && bytes.HasPrefix(eb, ea) || len(eb) < len(ea) && bytes.HasPrefix(ea, eb) {
			t.Fatalf("% X and % X: one is a prefix of the other", ea, eb)
		}
	})
}

// column is one position of a composite key.
type column struct {
	typ      types.Type
	c        codec
	nullable bool
}

func TestTupleOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cols := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) column {
			return column{
				typ:      rapid.SampledFrom(types.AllTypes).Draw(t, "type"),
				c:        rapid.SampledFrom(codecs).Draw(t, "dir"),
				nullable: rapid.Bool().Draw(t, "nullable"),
			}
		}), 1, 4).Draw(t, "cols")

		var keyA, keyB []byte
		a := make([]types.Value, len(cols))
		b := make([]types.Value, len(cols))
		want := 0
		for i, col := range cols {
			a[i], b[i] = drawPair(t, col.typ, col.nullable)
			var err error
			if keyA, err = col.c.append(keyA, col.typ, a[i], col.nullable); err != nil {
				t.Fatal(err)
			}
			if keyB, err = col.c.append(keyB, col.typ, b[i], col.nullable); err != nil {
				t.Fatal(err)
			}
			if want == 0 {
				want = col.c.dir * types.Compare(a[i], b[i])
			}
		}
		if got := bytes.Compare(keyA, keyB); got != want {
			t.Fatalf("bytes.Compare(% X, % X) = %d, want %d", keyA, keyB, got, want)
		}

		// The key decodes back column by column.
		rest := keyA
		for i, col := range cols {
			v, n, err := col.c.decode(col.typ, rest, col.nullable)
			if err != nil {
				t.Fatalf("column %d: %v", i, err)
			}
			if !sameValue(a[i], v) {
				t.Fatalf("column %d: got %s, want %s", i, types.Format(v), types.Format(a[i]))
			}
			rest = rest[n:]
		}
		if len(rest) != 0 {
			t.Fatalf("% X left over after decoding the key", rest)
		}
	})
}

func TestNaturalRoundTrip(t *testing.T) {
	for _, typ := range types.AllTypes {
		t.Run(typ.String(), rapid.MakeCheck(func(t *rapid.T) {
			v := genValue(typ, false).Draw(t, "v")
			enc, err := keyenc.AppendNatural(nil, typ, v)
			if err != nil {
				t.Fatalf("encode %s: %v", types.Format(v), err)
			}
			if w := typ.FixedWidth(); w != 0 && len(enc) != w {
				t.Fatalf("encoding % X has %d bytes, want %d", enc, len(enc), w)
			}
			got, err := keyenc.DecodeNatural(typ, enc)
			if err != nil {
				t.Fatalf("decode % X: %v", enc, err)
			}
			if !sameValue(v, got) {
				t.Fatalf("decode(encode(%s)) = %s (%T)", types.Format(v), types.Format(got), got)
			}
			// Unlike the ordered encoding, the natural one keeps -0.
			if f, ok := v.(float64); ok && !math.IsNaN(f) && math.Signbit(f) != math.Signbit(got.(float64)) {
				t.Fatalf("decode(encode(%g)) = %g", f, got)
			}
			if again, _ := keyenc.AppendNatural(nil, typ, got); !bytes.Equal(again, enc) {
				t.Fatalf("re-encoding gives % X, want % X", again, enc)
			}
		}))
	}
}

func TestSaltBucketProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOf(rapid.Byte()).Draw(t, "key")
		n := rapid.IntRange(1, 256).Draw(t, "n")
		got := keyenc.SaltBucket(key, n)
		if int(got) >= n {
			t.Fatalf("SaltBucket(% X, %d) = %d, not below n", key, n, got)
		}
		if again := keyenc.SaltBucket(bytes.Clone(key), n); again != got {
			t.Fatalf("SaltBucket not deterministic: %d then %d", got, again)
		}
		// Model: the same hash in int64, wrapped to 32 bits explicitly.
		h := int64(1)
		for _, c := range key {
			h = int64(int32(31*h + int64(int8(c))))
		}
		if want := byte(abs(h % int64(n))); got != want {
			t.Fatalf("SaltBucket(% X, %d) = %d, want %d", key, n, got, want)
		}
	})
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestEdgeValuesRoundTrip checks the edge cases deterministically in every
// encoding, on top of the generators that merely make them likely.
func TestEdgeValuesRoundTrip(t *testing.T) {
	for typ, vs := range edgeValues {
		for _, v := range vs {
			nat, err := keyenc.AppendNatural(nil, typ, v)
			if err != nil {
				t.Fatalf("AppendNatural(%s, %s): %v", typ, types.Format(v), err)
			}
			if got, err := keyenc.DecodeNatural(typ, nat); err != nil || !sameValue(v, got) {
				t.Errorf("DecodeNatural(%s, % X) = %s, %v; want %s", typ, nat, types.Format(got), err, types.Format(v))
			}
			for _, c := range codecs {
				for _, nullable := range []bool{false, true} {
					enc, err := c.append(nil, typ, v, nullable)
					if err != nil {
						t.Fatalf("%s %s %s: %v", c.name, typ, types.Format(v), err)
					}
					got, n, err := c.decode(typ, append(enc, 0x00, 0xFF), nullable)
					if err != nil || n != len(enc) || !sameValue(v, got) {
						t.Errorf("%s decode(%s, % X, %t) = %s, %d, %v; want %s, %d",
							c.name, typ, enc, nullable, types.Format(got), n, err, types.Format(v), len(enc))
					}
				}
			}
		}
	}
}
