package pebblestore

import (
	"bytes"
	"errors"
)

// Key prefixes: every key of the database starts with one of them.
const (
	metaPrefix = 'm' // 'm' + table name → table metadata
	dataPrefix = 't' // 't' + enc(table) + enc(row) + family 0x00 qualifier → value
)

// appendEnc appends the order-preserving, self-delimiting encoding of b:
// each 0x00 becomes 0x00 0xFF and the end is marked by 0x00 0x01. Since the
// terminator sorts below any escaped or plain byte, a < b implies
// enc(a) < enc(b), and no encoding is a prefix of another.
func appendEnc(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, 0xFF)
		b = b[i+1:]
	}
	dst = append(dst, b...)
	return append(dst, 0x00, 0x01)
}

var errCorrupt = errors.New("pebblestore: malformed key")

// encLen returns the length of the encoding at the start of k and whether
// it has escapes.
func encLen(k []byte) (n int, escaped bool, err error) {
	for i := 0; ; {
		j := bytes.IndexByte(k[i:], 0)
		if j < 0 || i+j+1 >= len(k) {
			return 0, false, errCorrupt
		}
		i += j + 1
		switch k[i] {
		case 0x01:
			return i + 1, escaped, nil
		case 0xFF:
			escaped = true
			i++
		default:
			return 0, false, errCorrupt
		}
	}
}

// appendDec appends the bytes whose encoding (terminator included) is enc.
func appendDec(dst, enc []byte) []byte {
	enc = enc[:len(enc)-2]
	for {
		i := bytes.IndexByte(enc, 0)
		if i < 0 {
			return append(dst, enc...)
		}
		dst = append(dst, enc[:i+1]...)
		enc = enc[i+2:]
	}
}

// tablePrefix is the prefix of every data key of a table.
func tablePrefix(table string) []byte {
	return appendEnc([]byte{dataPrefix}, []byte(table))
}

// endOfPrefix turns p, a table or row prefix (which ends in the terminator
// 0x00 0x01), into the smallest key above every key with that prefix.
func endOfPrefix(p []byte) []byte {
	p[len(p)-1] = 0x02
	return p
}
