package keyenc_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// fuzzType maps the fuzzer's byte onto the valid types plus two invalid ones
// (Invalid and Type(9)), which must fail cleanly, and from 200 on onto the
// collections of fuzzCollections.
func fuzzType(b byte) types.Type {
	if b >= 200 {
		return fuzzCollections[int(b-200)%len(fuzzCollections)]
	}
	return types.Type(b % 10)
}

// fuzzCollections are the collection types the fuzz targets decode.
var fuzzCollections = []types.Type{
	types.SetOf(types.String).Frozen(), types.ListOf(types.BigInt).Frozen(), types.MapOf(types.String, types.Int).Frozen(),
	types.SetOf(types.Double).Frozen(), types.ListOf(types.Bytes).Frozen(), types.MapOf(types.Timestamp, types.Bool).Frozen(),
	types.SetOf(types.Float).Frozen(), types.MapOf(types.Double, types.Float).Frozen(),
}

// collectionEdges are values of each of fuzzCollections, made of the
// edge values of their element types: empty, one element, all of them.
func collectionEdges() map[byte][]types.Value {
	out := map[byte][]types.Value{}
	for i, t := range fuzzCollections {
		elems := edgeValues[t.Elem()]
		var all types.Value = elems
		if t.Kind() == types.MapKind {
			m := types.Map{}
			for j, k := range edgeValues[t.Key()] {
				m = append(m, types.Entry{Key: k, Val: elems[j%len(elems)]})
			}
			all = m
		}
		for _, raw := range []types.Value{[]types.Value{}, []types.Value{elems[0]}, all} {
			if t.Kind() == types.MapKind {
				if l, ok := raw.([]types.Value); ok {
					m := types.Map{}
					for _, e := range l {
						m = append(m, types.Entry{Key: edgeValues[t.Key()][0], Val: e})
					}
					raw = m
				}
			}
			v, err := types.Coerce(raw, t)
			if err != nil {
				panic(fmt.Sprintf("%s: %v", t, err))
			}
			out[byte(200+i)] = append(out[byte(200+i)], v)
		}
	}
	return out
}

func seedKeys(f *testing.F, appendFn func([]byte, types.Type, types.Value, bool) ([]byte, error)) {
	for b, vs := range collectionEdges() {
		for _, nullable := range []bool{false, true} {
			for _, v := range vs {
				enc, err := appendFn(nil, fuzzType(b), v, nullable)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b, nullable, enc)
				f.Add(b, nullable, enc[:len(enc)-1]) // truncated
			}
		}
	}
	for typ, vs := range edgeValues {
		for _, nullable := range []bool{false, true} {
			for _, v := range slices.Concat(vs, []types.Value{nil}) {
				enc, err := appendFn(nil, typ, v, nullable)
				if err != nil {
					continue // NULL without nullable
				}
				f.Add(byte(typ), nullable, enc)
				f.Add(byte(typ), nullable, append(enc, 0x00, 0xff)) // trailing bytes
				f.Add(byte(typ), nullable, enc[:len(enc)-1])        // truncated
			}
		}
	}
}

// fuzzKeyDecoder checks that decode never panics and accepts only canonical
// encodings: re-encoding a decoded value gives exactly the bytes consumed.
func fuzzKeyDecoder(f *testing.F, appendFn func([]byte, types.Type, types.Value, bool) ([]byte, error),
	decode func(types.Type, []byte, bool) (types.Value, int, error)) {
	seedKeys(f, appendFn)
	f.Fuzz(func(t *testing.T, typeByte byte, nullable bool, data []byte) {
		typ := fuzzType(typeByte)
		v, n, err := decode(typ, data, nullable)
		if err != nil {
			if v != nil || n != 0 {
				t.Fatalf("failed decode returned %#v, %d", v, n)
			}
			return
		}
		if n < 1 || n > len(data) {
			t.Fatalf("decode(%s, % X) consumed %d bytes", typ, data, n)
		}
		enc, err := appendFn(nil, typ, v, nullable)
		if err != nil {
			t.Fatalf("decode(%s, % X) = %#v, which does not encode: %v", typ, data, v, err)
		}
		if !bytes.Equal(enc, data[:n]) {
			t.Fatalf("decode(%s, % X) = %s re-encodes to % X", typ, data[:n], types.Format(v), enc)
		}
	})
}

func FuzzDecodeOrdered(f *testing.F) {
	fuzzKeyDecoder(f, keyenc.AppendOrdered, keyenc.DecodeOrdered)
}

func FuzzDecodeDesc(f *testing.F) {
	fuzzKeyDecoder(f, keyenc.AppendDesc, keyenc.DecodeDesc)
}

func FuzzDecodeNatural(f *testing.F) {
	for b, vs := range collectionEdges() {
		for _, v := range vs {
			enc, err := keyenc.AppendNatural(nil, fuzzType(b), v)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, false, enc)
			f.Add(b, false, append(enc, 0))
		}
	}
	for typ, vs := range edgeValues {
		for _, v := range vs {
			enc, err := keyenc.AppendNatural(nil, typ, v)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(byte(typ), false, enc)
			f.Add(byte(typ), false, append(enc, 0))
		}
	}
	// nullable is unused: the natural encoding has no NULL. It is kept so
	// all three targets share one signature and corpus format.
	f.Fuzz(func(t *testing.T, typeByte byte, _ bool, data []byte) {
		typ := fuzzType(typeByte)
		v, err := keyenc.DecodeNatural(typ, data)
		if err != nil {
			if v != nil {
				t.Fatalf("failed decode returned %#v", v)
			}
			return
		}
		enc, err := keyenc.AppendNatural(nil, typ, v)
		if err != nil {
			t.Fatalf("DecodeNatural(%s, % X) = %#v, which does not encode: %v", typ, data, v, err)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("DecodeNatural(%s, % X) = %s re-encodes to % X", typ, data, types.Format(v), enc)
		}
	})
}
