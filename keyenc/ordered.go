package keyenc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kvschema/kvschema/types"
)

// Marker and escape bytes of the ordered encoding.
const (
	nullMarker    = 0x00 // nullable NULL
	presentMarker = 0x01 // nullable non-NULL, value follows
	escapedZero   = 0xFF // after 0x00: a literal zero byte of the value
	terminator    = 0x01 // after 0x00: end of the value

	sign32 = 1 << 31 // flipped so that negative integers sort first
	sign64 = 1 << 63
)

// AppendOrdered appends the ordered encoding of v, a canonical value of type
// t, to dst. NULL is accepted only if nullable.
func AppendOrdered(dst []byte, t types.Type, v types.Value, nullable bool) ([]byte, error) {
	if v != nil && t.IsCollection() {
		c, err := types.Coerce(v, t)
		if err != nil {
			return dst, fmt.Errorf("keyenc: %v", err)
		}
		return appendOrderedCollection(appendPresent(dst, nullable), t, c)
	}
	if v == nil || !known(t) {
		return AppendOrderedDatum(dst, t, types.Null, nullable)
	}
	d, err := datumOf(t, v)
	if err != nil {
		return dst, err
	}
	return AppendOrderedDatum(dst, t, d, nullable)
}

// AppendOrderedDatum is AppendOrdered for a Datum.
func AppendOrderedDatum(dst []byte, t types.Type, d types.Datum, nullable bool) ([]byte, error) {
	if !known(t) && !t.Valid() {
		return dst, unsupported(t)
	}
	if d.IsNull() {
		if !nullable {
			return dst, fmt.Errorf("keyenc: NULL %s value in a non-nullable encoding", t)
		}
		return append(dst, nullMarker), nil
	}
	if t.IsCollection() {
		return AppendOrdered(dst, t, d.Value(), nullable)
	}
	// Values are checked before anything is appended so that dst's spare
	// capacity is untouched on error.
	if t == types.String || t == types.Bytes {
		if err := checkDatum(t, d); err != nil {
			return dst, err
		}
		return appendEscaped(appendPresent(dst, nullable), d.Str()), nil
	}
	u, err := fixedBits(t, d)
	if err != nil {
		return dst, err
	}
	return appendUint(appendPresent(dst, nullable), toOrdered(t, u), t.FixedWidth()), nil
}

// The ordered encoding of a collection: each element (a MAP's key, then
// its value) as elemMarker and the element's ordered encoding, then
// endMarker. Elements are self-delimiting and endMarker sorts before
// elemMarker, so byte order is types.Compare's: element by element, a
// prefix first.
const (
	endMarker  = 0x00
	elemMarker = 0x01
)

// appendOrderedCollection appends the elements of c, a canonical value of
// the collection type t. (Appending to dst's spare capacity before an
// error is harmless here: c is canonical, so no element fails.)
func appendOrderedCollection(dst []byte, t types.Type, c types.Value) ([]byte, error) {
	var err error
	elem := func(et types.Type, v types.Value) {
		if err == nil {
			dst, err = AppendOrdered(append(dst, elemMarker), et, v, false)
		}
	}
	switch x := c.(type) {
	case types.Set:
		for _, e := range x {
			elem(t.Elem(), e)
		}
	case types.List:
		for _, e := range x {
			elem(t.Elem(), e)
		}
	case types.Map:
		for _, e := range x {
			elem(t.Key(), e.Key)
			elem(t.Elem(), e.Val)
		}
	}
	return append(dst, endMarker), err
}

// decodeOrderedCollection decodes a collection of type t from b, from
// offset n (after its null marker), read through mask.
func decodeOrderedCollection(t types.Type, b []byte, n int, mask byte, enc string, s *types.Strings) (types.Datum, int, error) {
	var xs []types.Value
	for {
		if n >= len(b) {
			return types.Null, 0, malformed(t, enc, "truncated: no end marker")
		}
		m := b[n] ^ mask
		n++
		if m == endMarker {
			break
		}
		if m != elemMarker {
			return types.Null, 0, malformed(t, enc, "has bad element marker 0x%02X", b[n-1])
		}
		et := t.Elem()
		if t.Kind() == types.MapKind && len(xs)%2 == 0 {
			et = t.Key()
		}
		d, k, err := decodeOrdered(et, b[n:], false, mask, nil)
		if err != nil {
			return types.Null, 0, err
		}
		xs = append(xs, d.Value())
		n += k
	}
	var v types.Value
	switch t.Kind() {
	case types.SetKind:
		v = types.Set(xs)
	case types.ListKind:
		v = types.List(xs)
	default:
		if len(xs)%2 != 0 {
			return types.Null, 0, malformed(t, enc, "has a key without a value")
		}
		m := make(types.Map, len(xs)/2)
		for i := range m {
			m[i] = types.Entry{Key: xs[2*i], Val: xs[2*i+1]}
		}
		v = m
	}
	// The collection's own encoding checks that it is canonical (a SET
	// sorted without duplicates, a MAP's keys too).
	raw, err := types.AppendCollection(nil, t, v)
	if err != nil {
		return types.Null, 0, malformed(t, enc, "%v", err)
	}
	d, err := types.CollectionDatum(t, raw, s)
	if err != nil {
		return types.Null, 0, malformed(t, enc, "%v", err)
	}
	if types.Compare(d.Value(), v) != 0 {
		return types.Null, 0, malformed(t, enc, "is not canonical (elements out of order or repeated)")
	}
	return d, n, nil
}

// DecodeOrdered decodes one ordered-encoded value of type t from the front of
// b and returns it with the number of bytes it took; bytes after it are
// ignored.
func DecodeOrdered(t types.Type, b []byte, nullable bool) (v types.Value, n int, err error) {
	d, n, err := decodeOrdered(t, b, nullable, 0x00, nil)
	return boxed(d), n, err
}

// DecodeOrderedDatum is DecodeOrdered without boxing (see DecodeNaturalDatum).
func DecodeOrderedDatum(t types.Type, b []byte, nullable bool, s *types.Strings) (types.Datum, int, error) {
	return decodeOrdered(t, b, nullable, 0x00, s)
}

// AppendDesc appends the descending encoding of v (the ordered encoding with
// every byte inverted) to dst.
func AppendDesc(dst []byte, t types.Type, v types.Value, nullable bool) ([]byte, error) {
	out, err := AppendOrdered(dst, t, v, nullable)
	return inverted(dst, out, err)
}

// AppendDescDatum is AppendDesc for a Datum.
func AppendDescDatum(dst []byte, t types.Type, d types.Datum, nullable bool) ([]byte, error) {
	out, err := AppendOrderedDatum(dst, t, d, nullable)
	return inverted(dst, out, err)
}

// inverted inverts the bytes an encoder appended to dst, giving out.
func inverted(dst, out []byte, err error) ([]byte, error) {
	if err != nil {
		return dst, err
	}
	for i := len(dst); i < len(out); i++ {
		out[i] ^= 0xFF
	}
	return out, nil
}

// DecodeDesc decodes one descending-encoded value of type t from the front of
// b, like DecodeOrdered.
func DecodeDesc(t types.Type, b []byte, nullable bool) (v types.Value, n int, err error) {
	d, n, err := decodeOrdered(t, b, nullable, 0xFF, nil)
	return boxed(d), n, err
}

// DecodeDescDatum is DecodeDesc without boxing (see DecodeNaturalDatum).
func DecodeDescDatum(t types.Type, b []byte, nullable bool, s *types.Strings) (types.Datum, int, error) {
	return decodeOrdered(t, b, nullable, 0xFF, s)
}

// known reports whether t is a valid type.
func known(t types.Type) bool {
	return t == types.String || t == types.Bytes || t.FixedWidth() > 0
}

func appendPresent(dst []byte, nullable bool) []byte {
	if nullable {
		return append(dst, presentMarker)
	}
	return dst
}

// appendEscaped appends s with each 0x00 escaped, then the terminator.
func appendEscaped[S string | []byte](dst []byte, s S) []byte {
	dst = slices.Grow(dst, len(s)+2)
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, s[start:i+1]...)
			dst = append(dst, escapedZero)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, 0x00, terminator)
}

// toOrdered maps the natural bits of a fixed-width value to its ordered
// bits.
func toOrdered(t types.Type, u uint64) uint64 {
	switch t {
	case types.Int:
		return u ^ sign32
	case types.BigInt, types.Timestamp:
		return u ^ sign64
	case types.Float:
		return ieee32.toOrdered(u)
	case types.Double:
		return ieee64.toOrdered(u)
	}
	return u // BOOL
}

// fromOrdered inverts toOrdered; ok is false for bits it never produces.
func fromOrdered(t types.Type, e uint64) (u uint64, ok bool) {
	switch t {
	case types.Int:
		return e ^ sign32, true
	case types.BigInt, types.Timestamp:
		return e ^ sign64, true
	case types.Float:
		return ieee32.fromOrdered(e)
	case types.Double:
		return ieee64.fromOrdered(e)
	}
	return e, true // BOOL, checked by fixedValue
}

// DecodeOrderedInt64 decodes the BIGINT or TIMESTAMP (t) at the start of
// b in the ordered encoding (descending when desc), after a null marker
// when nullable, and returns it and its length. It is the general
// decoder's fast path for the most common key attribute: ok is false when
// b does not start with such a value, and DecodeOrderedDatum (or
// DecodeDescDatum) then says why.
func DecodeOrderedInt64(t types.Type, b []byte, nullable, desc bool) (d types.Datum, n int, ok bool) {
	var mask byte
	if desc {
		mask = 0xFF
	}
	if nullable {
		if len(b) == 0 {
			return types.Null, 0, false
		}
		switch b[0] ^ mask {
		case nullMarker:
			return types.Null, 1, true
		case presentMarker:
			b, n = b[1:], 1
		default:
			return types.Null, 0, false
		}
	}
	if len(b) < 8 || t != types.BigInt && t != types.Timestamp {
		return types.Null, 0, false
	}
	u := binary.BigEndian.Uint64(b)
	if desc {
		u = ^u
	}
	return types.IntDatum(t, int64(u^sign64)), n + 8, true
}

// decodeOrdered decodes the ordered encoding from b read with every byte
// XORed with mask, so one decoder serves both directions without copying.
func decodeOrdered(t types.Type, b []byte, nullable bool, mask byte, s *types.Strings) (types.Datum, int, error) {
	enc := "ordered"
	if mask != 0 {
		enc = "descending"
	}
	if !known(t) && !(t.IsCollection() && t.Valid()) {
		return types.Null, 0, unsupported(t)
	}
	n := 0 // offset of the value proper
	if nullable {
		if len(b) == 0 {
			return types.Null, 0, malformed(t, enc, "truncated: need 1 byte, have 0")
		}
		switch b[0] ^ mask {
		case nullMarker:
			return types.Null, 1, nil
		case presentMarker:
			n = 1
		default:
			return types.Null, 0, malformed(t, enc, "has bad null marker 0x%02X", b[0])
		}
	}
	if t.IsCollection() {
		return decodeOrderedCollection(t, b, n, mask, enc, s)
	}
	if t == types.String || t == types.Bytes {
		return decodeEscaped(t, b, n, mask, enc, s)
	}
	w := t.FixedWidth()
	if len(b) < n+w {
		return types.Null, 0, malformed(t, enc, "truncated: need %d bytes, have %d", n+w, len(b))
	}
	e := getUint(b[n:], w)
	if mask != 0 {
		e ^= ^uint64(0) >> (64 - 8*w)
	}
	u, ok := fromOrdered(t, e)
	if !ok {
		return types.Null, 0, malformed(t, enc, "is not canonical: % X decodes to -0 or a NaN", b[n:n+w])
	}
	v, err := fixedDatum(t, u, enc)
	if err != nil {
		return types.Null, 0, err
	}
	return v, n + w, nil
}

// decodeEscaped decodes the escaped STRING or BYTES value starting at
// b[start], read through mask as in decodeOrdered.
func decodeEscaped(t types.Type, b []byte, start int, mask byte, enc string, s *types.Strings) (types.Datum, int, error) {
	// Find the terminator and count the escapes first, so that the result
	// buffer is allocated once, at its exact size.
	zeros := 0
	for i := start; ; {
		j := bytes.IndexByte(b[i:], mask) // a stored 0x00
		if j < 0 || i+j+1 == len(b) {
			return types.Null, 0, malformed(t, enc, "truncated: no terminator")
		}
		i += j + 1
		switch b[i] ^ mask {
		case escapedZero:
			zeros++
			i++
		case terminator:
			content := b[start : i-1]
			if mask == 0 && zeros == 0 {
				// Nothing to unescape: copy directly.
				return s.Datum(t, content), i + 1, nil
			}
			out := appendUnescaped(make([]byte, 0, len(content)-zeros), content, mask)
			if t == types.String {
				return types.StringDatum(string(out)), i + 1, nil
			}
			return types.OwnedBytesDatum(out), i + 1, nil
		default:
			return types.Null, 0, malformed(t, enc, "has bad escape %02X %02X at offset %d", b[i-1], b[i], i-1)
		}
	}
}

// appendUnescaped appends the bytes s stands for to dst; s is a validated
// escaped value without its terminator, read through mask.
func appendUnescaped(dst, s []byte, mask byte) []byte {
	start := len(dst)
	for {
		j := bytes.IndexByte(s, mask)
		if j < 0 {
			break
		}
		dst = append(dst, s[:j+1]...) // keeps the zero, drops its escape
		s = s[j+2:]
	}
	dst = append(dst, s...)
	if mask != 0 {
		for i := start; i < len(dst); i++ {
			dst[i] ^= mask
		}
	}
	return dst
}
