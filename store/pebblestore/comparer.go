package pebblestore

import (
	"github.com/cockroachdb/pebble/v2"
)

// comparer orders keys bytewise, exactly like Pebble's default comparer,
// but tells Pebble where a data key's row ends: Split of
// 't'+enc(table)+enc(row)+family+0x00+qualifier is the length of
// 't'+enc(table)+enc(row), and of any other key (metadata, index
// entries, bounds, keys written by others through DB()) its whole length.
//
// That makes a row a Pebble "prefix": ReadRow and exact-key ReadRows read
// a row with Iterator.SeekPrefixGE, which stops at the row's end by
// itself, so one unbounded (cached) iterator serves any row without
// SetBounds, and successive seeks of sorted keys advance by Next. It
// would also let bloom filters skip sstables that lack the row; they are
// not configured, as they did not pay off in the benchmarks (sequential
// keys leave one sstable per level to look at).
//
// Bytewise order satisfies Pebble's requirements on Split: row prefixes
// are self-delimiting (no one is a prefix of another), so comparing two
// keys bytewise compares their prefixes first and their suffixes
// (family+0x00+qualifier, compared bytewise) only between equal prefixes;
// and a key whose Split is its length is never a proper prefix of another
// key's row prefix unless it sorts below it anyway.
//
// The comparer's name is recorded in the database, which Pebble then
// refuses to open with any other comparer: the name changes only with the
// order or the split.
var comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = splitRow
	c.ImmediateSuccessor = immediateSuccessor
	c.Name = "kvschema.pebblestore.row.v1"
	return &c
}()

func splitRow(k []byte) int {
	if n, ok := rowPrefixLen(k); ok {
		return n
	}
	return len(k)
}

// immediateSuccessor appends the smallest prefix (a key whose Split is
// its length) above the prefix a. Every key above a row prefix that starts
// with it belongs to the row, so the row prefix's successor is the row's
// end: its terminator 0x00 0x01 becomes 0x00 0x02. Any other prefix a is
// not a row prefix, and neither is a+0x00 (an encoding cannot end in 0x00),
// so that is its successor as in bytewise order.
func immediateSuccessor(dst, a []byte) []byte {
	if n, ok := rowPrefixLen(a); ok && n == len(a) {
		dst = append(dst, a...)
		endOfPrefix(dst[len(dst)-len(a):])
		return dst
	}
	return append(append(dst, a...), 0x00)
}
