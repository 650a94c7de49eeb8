package keyenc_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// TestDecodeOrderedInt64: the fast path agrees with the general decoders
// on every encoding of a BIGINT or TIMESTAMP (ordered and descending,
// nullable or not, NULL included, with bytes after it), and on arbitrary
// bytes it either agrees or declines.
func TestDecodeOrderedInt64(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom([]types.Type{types.BigInt, types.Timestamp}).Draw(rt, "type")
		nullable, desc := rapid.Bool().Draw(rt, "nullable"), rapid.Bool().Draw(rt, "desc")
		general := func(b []byte) (types.Datum, int, error) {
			if desc {
				return keyenc.DecodeDescDatum(typ, b, nullable, nil)
			}
			return keyenc.DecodeOrderedDatum(typ, b, nullable, nil)
		}
		var b []byte
		if rapid.Bool().Draw(rt, "encoded") {
			var v types.Value
			if !nullable || rapid.Bool().Draw(rt, "non-null") {
				if typ == types.BigInt {
					v = rapid.Int64().Draw(rt, "v")
				} else {
					v = time.UnixMicro(rapid.Int64Range(-1e15, 1e15).Draw(rt, "us")).UTC()
				}
			}
			var err error
			if desc {
				b, err = keyenc.AppendDesc(nil, typ, v, nullable)
			} else {
				b, err = keyenc.AppendOrdered(nil, typ, v, nullable)
			}
			if err != nil {
				rt.Fatal(err)
			}
			b = append(b, rapid.SliceOfN(rapid.Byte(), 0, 3).Draw(rt, "tail")...)
		} else {
			b = rapid.SliceOfN(rapid.Byte(), 0, 10).Draw(rt, "bytes")
		}
		d, n, ok := keyenc.DecodeOrderedInt64(typ, b, nullable, desc)
		gd, gn, err := general(b)
		if !ok {
			if err == nil && len(b) >= 9 {
				rt.Fatalf("% X: the fast path declined what the general decoder reads as %v", b, gd)
			}
			return
		}
		if err != nil || gn != n || types.CompareDatums(gd, d) != 0 || gd.IsNull() != d.IsNull() || gd.Type != d.Type {
			rt.Fatalf("% X: fast %v (%d bytes), general %v (%d bytes, %v)", b, d, n, gd, gn, err)
		}
	})
}
