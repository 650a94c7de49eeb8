package keyenc_test

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// TestDatumEncodersAgree: encoding a Datum gives the bytes encoding its
// Value gives, in every encoding, and decoding to a Datum gives the Datum
// of the decoded Value.
func TestDatumEncodersAgree(t *testing.T) {
	var shared types.Strings // packs the values of every draw
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(types.AllTypes).Draw(rt, "type")
		nullable := rapid.Bool().Draw(rt, "nullable")
		v := genValue(typ, nullable).Draw(rt, "value")
		d, ok := types.DatumOf(v)
		if !ok {
			rt.Fatalf("DatumOf(%#v) refused", v)
		}
		for _, enc := range []struct {
			name   string
			value  func([]byte, types.Type, types.Value, bool) ([]byte, error)
			datum  func([]byte, types.Type, types.Datum, bool) ([]byte, error)
			decode func(types.Type, []byte, bool, *types.Strings) (types.Datum, int, error)
		}{
			{"ordered", keyenc.AppendOrdered, keyenc.AppendOrderedDatum, keyenc.DecodeOrderedDatum},
			{"descending", keyenc.AppendDesc, keyenc.AppendDescDatum, keyenc.DecodeDescDatum},
			{"natural", func(dst []byte, t types.Type, v types.Value, _ bool) ([]byte, error) {
				return keyenc.AppendNatural(dst, t, v)
			},
				func(dst []byte, t types.Type, d types.Datum, _ bool) ([]byte, error) {
					return keyenc.AppendNaturalDatum(dst, t, d)
				},
				func(t types.Type, b []byte, _ bool, s *types.Strings) (types.Datum, int, error) {
					d, err := keyenc.DecodeNaturalDatum(t, b, s)
					return d, len(b), err
				}},
		} {
			if enc.name == "natural" && v == nil {
				continue
			}
			want, werr := enc.value([]byte("x"), typ, v, nullable)
			got, gerr := enc.datum([]byte("x"), typ, d, nullable)
			if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
				rt.Fatalf("%s %s %#v: Datum encodes % X (%v), Value % X (%v)", enc.name, typ, v, got, gerr, want, werr)
			}
			if werr != nil {
				continue
			}
			var strs *types.Strings // nil: each value its own copy
			if rapid.Bool().Draw(rt, "packed") {
				strs = &shared
			}
			back, n, err := enc.decode(typ, got[1:], nullable, strs)
			clear(got) // the decoded Datum must not share the encoding's memory
			if err != nil || n != len(got)-1 || types.CompareDatums(back, d) != 0 || back.IsNull() != d.IsNull() {
				rt.Fatalf("%s %s %#v: decodes to %v, %d bytes, %v", enc.name, typ, v, back.Value(), n, err)
			}
		}
	})
}
