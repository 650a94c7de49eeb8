package pebblestore

import (
	"errors"
)

// Key prefixes: every key of the database starts with one of them.
const (
	indexPrefix = 'i' // 'i' + enc(table) + enc(index) + enc(value) + row → empty
	metaPrefix  = 'm' // 'm' + table name → table metadata
	dataPrefix  = 't' // 't' + enc(table) + enc(row) + family 0x00 qualifier → value
)

// appendEnc appends the order-preserving, self-delimiting encoding of b:
// each 0x00 becomes 0x00 0xFF and the end is marked by 0x00 0x01. Since the
// terminator sorts below any escaped or plain byte, a < b implies
// enc(a) < enc(b), and no encoding is a prefix of another.
func appendEnc(dst, b []byte) []byte {
	// A byte loop: row keys are short and, encoding integers, full of
	// zeros, where bytes.IndexByte per zero costs 2.5× as much.
	for i, c := range b {
		if c != 0 {
			continue
		}
		dst = append(dst, b[:i]...)
		for _, c := range b[i:] {
			if c == 0 {
				dst = append(dst, 0x00, 0xFF)
			} else {
				dst = append(dst, c)
			}
		}
		return append(dst, 0x00, 0x01)
	}
	dst = append(dst, b...)
	return append(dst, 0x00, 0x01)
}

var errCorrupt = errors.New("pebblestore: malformed key")

// encLen returns the length of the encoding at the start of k and whether
// it has escapes. A byte loop beats bytes.IndexByte on the short keys it
// mostly sees, whose encodings of integers are full of escaped zeros; it
// runs twice for every key Pebble splits.
func encLen(k []byte) (n int, escaped bool, err error) {
	for i := 0; i+1 < len(k); i++ {
		if k[i] != 0 {
			continue
		}
		switch k[i+1] {
		case 0x01:
			return i + 2, escaped, nil
		case 0xFF:
			escaped = true
			i++
		default:
			return 0, false, errCorrupt
		}
	}
	return 0, false, errCorrupt
}

// decodeEnc writes to dst, which must be long enough, the bytes whose
// encoding starts k (with or without escapes), and returns their length
// and the encoding's.
func decodeEnc(dst, k []byte) (n, encLen int, err error) {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == 0 {
			if i+1 == len(k) {
				break
			}
			switch k[i+1] {
			case 0x01:
				return n, i + 2, nil
			case 0xFF:
				i++
			default:
				return 0, 0, errCorrupt
			}
		}
		dst[n] = c
		n++
	}
	return 0, 0, errCorrupt
}

// tablePrefix is the prefix of every data key of a table.
func tablePrefix(table string) []byte {
	return appendEnc([]byte{dataPrefix}, []byte(table))
}

// indexKeyPrefix is the prefix of every entry of a table's index.
func indexKeyPrefix(table, index string) []byte {
	return appendEnc(appendEnc([]byte{indexPrefix}, []byte(table)), []byte(index))
}

// endOfPrefix turns p, a table or row prefix (which ends in the terminator
// 0x00 0x01), into the smallest key above every key with that prefix.
func endOfPrefix(p []byte) []byte {
	p[len(p)-1] = 0x02
	return p
}

// rowPrefixLen returns the length of 't' + enc(table) + enc(row) at the
// start of k, or ok == false if k does not start with one.
func rowPrefixLen(k []byte) (n int, ok bool) {
	if len(k) == 0 || k[0] != dataPrefix {
		return 0, false
	}
	t, _, err := encLen(k[1:])
	if err != nil {
		return 0, false
	}
	r, _, err := encLen(k[1+t:])
	if err != nil {
		return 0, false
	}
	return 1 + t + r, true
}
