package keyenc_test

import (
	"bytes"
	"testing"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// genCollection draws a canonical value of the collection type t: 0 to 4
// elements of its element types, coerced (a SET sorted without
// duplicates, a MAP's keys too).
func genCollection(t *rapid.T, typ types.Type, label string) types.Value {
	n := rapid.IntRange(0, 4).Draw(t, label+" n")
	var raw types.Value
	if typ.Kind() == types.MapKind {
		m := types.Map{}
		for ; n > 0; n-- {
			m = append(m, types.Entry{Key: valueGens[typ.Key()].Draw(t, label+" key"), Val: valueGens[typ.Elem()].Draw(t, label+" val")})
		}
		raw = m
	} else {
		xs := []types.Value{}
		for ; n > 0; n-- {
			xs = append(xs, valueGens[typ.Elem()].Draw(t, label+" elem"))
		}
		raw = xs
	}
	v, err := types.Coerce(raw, typ)
	if err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
	return v
}

// TestCollectionEncodings: a collection's ordered and descending encodings
// decode to it and order as types.Compare orders collections (element by
// element, a prefix first), and its natural encoding decodes to it.
func TestCollectionEncodings(t *testing.T) {
	for _, typ := range fuzzCollections {
		t.Run(typ.String(), rapid.MakeCheck(func(t *rapid.T) {
			a := genCollection(t, typ, "a")
			b := a
			switch rapid.IntRange(0, 2).Draw(t, "relation") {
			case 0:
				b = genCollection(t, typ, "b")
			case 1:
				// b extends a prefix of a (a LIST: a SET or MAP may
				// reorder the added elements, which is fine too).
				xs := types.List{}
				switch x := a.(type) {
				case types.Set:
					xs = append(xs, x[:rapid.IntRange(0, len(x)).Draw(t, "k")]...)
				case types.List:
					xs = append(xs, x[:rapid.IntRange(0, len(x)).Draw(t, "k")]...)
				}
				if typ.Kind() != types.MapKind {
					extra := genCollection(t, typ, "extra")
					switch x := extra.(type) {
					case types.Set:
						xs = append(xs, x...)
					case types.List:
						xs = append(xs, x...)
					}
					v, err := types.Coerce([]types.Value(xs), typ)
					if err != nil {
						t.Fatal(err)
					}
					b = v
				}
			}
			for _, c := range codecs {
				for _, nullable := range []bool{false, true} {
					ea, err := c.append(nil, typ, a, nullable)
					if err != nil {
						t.Fatal(err)
					}
					eb, err := c.append(nil, typ, b, nullable)
					if err != nil {
						t.Fatal(err)
					}
					got, n, err := c.decode(typ, append(ea, 0x42), nullable)
					// (Equal by Compare: as for a scalar, -0 encodes as 0.)
					if err != nil || n != len(ea) || types.Compare(got, a) != 0 {
						t.Fatalf("%s: decode(% X) = %s, %d, %v; want %s", c.name, ea, types.Format(got), n, err, types.Format(a))
					}
					if got, want := bytes.Compare(ea, eb), c.dir*types.Compare(a, b); got != want {
						t.Fatalf("%s: bytes.Compare(% X, % X) = %d, want %d for %s vs %s", c.name, ea, eb, got, want, types.Format(a), types.Format(b))
					}
				}
			}
			nat, err := keyenc.AppendNatural(nil, typ, a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := keyenc.DecodeNatural(typ, nat)
			if err != nil || types.Format(got) != types.Format(a) {
				t.Fatalf("natural: decode(% X) = %s, %v; want %s", nat, types.Format(got), err, types.Format(a))
			}
		}))
	}
}
