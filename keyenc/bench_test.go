package keyenc_test

import (
	"testing"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// Values are boxed once, outside the loops, so that only the encoders'
// own allocations are counted.
var (
	benchString types.Value = "customer/0042/orders/2024-06-01T12:00:00"
	benchBigInt types.Value = int64(-1234567890123)
)

func BenchmarkAppendOrderedString(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = keyenc.AppendOrdered(buf[:0], types.String, benchString, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeOrderedString(b *testing.B) {
	enc, err := keyenc.AppendOrdered(nil, types.String, benchString, true)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := keyenc.DecodeOrdered(types.String, enc, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendOrderedBigInt(b *testing.B) {
	buf := make([]byte, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = keyenc.AppendOrdered(buf[:0], types.BigInt, benchBigInt, false); err != nil {
			b.Fatal(err)
		}
	}
}
