package types

import "unsafe"

// Strings copies borrowed bytes (a store's iterator memory) into immutable
// strings, packing small ones into shared chunks, so that decoding a result
// of many short values allocates once per chunk instead of once per value.
// The zero Strings is ready; a nil *Strings copies each value on its own.
// It is for one goroutine at a time.
//
// Safety: a chunk's bytes are written only before the string covering them
// is handed out and never again (a full chunk is dropped, not reused), so
// the strings stay valid and unchanged for as long as anything refers to
// them. The price is that a string keeps its whole chunk alive — at most
// maxStringChunk bytes; values longer than maxPackedString get memory of
// their own.
type Strings struct {
	chunk []byte // the current chunk: chunk[:used] is handed out
	used  int
	size  int // the current chunk's size: chunks double up to maxStringChunk
}

const (
	minStringChunk  = 256
	maxStringChunk  = 8 << 10
	maxPackedString = 512
)

// String returns a string holding a copy of b. (It advances an offset, not
// a slice: a pointer written per value would cost a write barrier each
// while the GC marks.)
func (s *Strings) String(b []byte) string {
	n := len(b)
	if s == nil || n > maxPackedString {
		return string(b)
	}
	if n == 0 {
		return ""
	}
	if len(s.chunk)-s.used < n {
		s.size = min(max(2*s.size, minStringChunk), maxStringChunk)
		s.chunk, s.used = make([]byte, max(s.size, n)), 0
	}
	out := s.chunk[s.used : s.used+n : s.used+n]
	s.used += n
	copy(out, b)
	return unsafe.String(unsafe.SliceData(out), n)
}

// Datum returns a STRING (t == String) or BYTES Datum holding a copy of b.
func (s *Strings) Datum(t Type, b []byte) Datum {
	return Datum{Type: t, str: s.String(b)}
}
