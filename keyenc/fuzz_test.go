package keyenc_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// fuzzType maps the fuzzer's byte onto the valid types plus two invalid ones
// (Invalid and Type(9)), which must fail cleanly.
func fuzzType(b byte) types.Type { return types.Type(b % 10) }

func seedKeys(f *testing.F, appendFn func([]byte, types.Type, types.Value, bool) ([]byte, error)) {
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
