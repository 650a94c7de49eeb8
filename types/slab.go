package types

// Slab copies tuples (of Values or Datums) into shared backing arrays, for code that keeps many
// tuples: one allocation serves many of them. The zero Slab is ready; it is
// for one goroutine at a time.
//
// A copy it returns is the caller's (len == cap, so appending copies), but
// keeps its whole backing array alive: arrays grow from one tuple to
// maxSlabTuples as a Slab is used, so that a query returning a few rows
// allocates no more than it needs.
type Slab[T any] struct {
	free []T
	last []T // the last backing array made
	rows int // tuples the last backing array was made for
}

const maxSlabTuples = 64

// Copy returns a copy of t.
func (s *Slab[T]) Copy(t []T) []T {
	n := len(t)
	if n == 0 {
		return []T{}
	}
	if len(s.free) < n {
		s.rows = min(max(2*s.rows, 1), maxSlabTuples)
		s.free = make([]T, n*s.rows)
		s.last = s.free
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	copy(out, t)
	return out
}

// Reset makes the slab hand out its last (largest) backing array again,
// cleared, so that a loop that drops every copy between runs allocates
// nothing once warm. The caller must not use any copy made before the
// Reset.
func (s *Slab[T]) Reset() {
	clear(s.last)
	s.free = s.last
}
