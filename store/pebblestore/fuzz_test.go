package pebblestore

import (
	"bytes"
	"testing"
)

// FuzzKeyDecoding: the key decoders never panic on any bytes (data read
// from disk is untrusted), decoding inverts encoding, and Split returns a
// prefix of the key that Pebble can rely on.
func FuzzKeyDecoding(f *testing.F) {
	f.Add([]byte("t"+"s1\x00\x01"+"a1-b\x00\x01"+"f\x00"), []byte("row"))
	f.Add([]byte("t\x00\xff\x00\x01\x00\x01"), []byte("\x00\x00\xff"))
	f.Add([]byte("zzz"), []byte{})
	f.Fuzz(func(t *testing.T, k, raw []byte) {
		// Arbitrary bytes: no panics, consistent lengths.
		if n, _, err := encLen(k); err == nil {
			if n > len(k) {
				t.Fatalf("encLen %d > len %d", n, len(k))
			}
			dst := make([]byte, len(k))
			if _, m, err := decodeEnc(dst, k); err != nil || m != n {
				t.Fatalf("decodeEnc disagrees with encLen: %d vs %d, %v", m, n, err)
			}
		}
		if n := splitRow(k); n < 0 || n > len(k) {
			t.Fatalf("Split %d outside [0,%d]", n, len(k))
		}
		// Encoded bytes decode back exactly, with trailing data ignored.
		enc := appendEnc(nil, raw)
		withTail := append(append([]byte{}, enc...), k...)
		dst := make([]byte, len(withTail))
		n, m, err := decodeEnc(dst, withTail)
		if err != nil || m != len(enc) || !bytes.Equal(dst[:n], raw) {
			t.Fatalf("decode(enc(%q)) = %q (%d of %d bytes), %v", raw, dst[:n], m, len(enc), err)
		}
		// A data key's Split is its row prefix; the prefix's successor
		// sorts above every key of the row.
		key := append(append(append([]byte{dataPrefix}, appendEnc(nil, []byte("tbl"))...), enc...), k...)
		p := splitRow(key)
		if !bytes.Equal(key[:p], append(append([]byte{dataPrefix}, appendEnc(nil, []byte("tbl"))...), enc...)) {
			t.Fatalf("Split(%q) = %d", key, p)
		}
		succ := immediateSuccessor(nil, key[:p])
		if bytes.Compare(succ, key) <= 0 {
			t.Fatalf("successor %q not above row key %q", succ, key)
		}
	})
}
