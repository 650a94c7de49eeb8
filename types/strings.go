package types

import (
	"strings"
)

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
	// chunk is the current chunk: its bytes so far are handed out, and
	// String appends to it within its capacity. A strings.Builder, as its
	// Grow allocates without zeroing (a chunk is overwritten before it is
	// read; zeroing it was 3% of a 100-row scan) and its String shares
	// the bytes written so far, which never change afterwards.
	chunk strings.Builder
	size  int // the current chunk's size: chunks double up to maxStringChunk
}

const (
	minStringChunk  = 256
	maxStringChunk  = 8 << 10
	maxPackedString = 512
)

// String returns a string holding a copy of b. (Appending within the
// chunk's capacity writes its length only: a pointer written per value
// would cost a write barrier each while the GC marks.)
func (s *Strings) String(b []byte) string {
	n := len(b)
	if s == nil || n > maxPackedString {
		return string(b)
	}
	if n == 0 {
		return ""
	}
	if s.chunk.Cap()-s.chunk.Len() < n {
		s.size = min(max(2*s.size, minStringChunk), maxStringChunk)
		s.chunk = strings.Builder{}
		s.chunk.Grow(max(s.size, n))
	}
	start := s.chunk.Len()
	s.chunk.Write(b) // within capacity: no copy of the chunk
	all := s.chunk.String()
	return all[start:]
}

// Datum returns a STRING (t == String) or BYTES Datum holding a copy of b.
func (s *Strings) Datum(t Type, b []byte) Datum {
	return Datum{Type: t, str: s.String(b)}
}
