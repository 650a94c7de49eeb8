// Package keyenc owns the byte encodings of attribute values: the natural
// encoding used in cell values, the ordered and descending encodings used in
// row keys, and the Phoenix-compatible salt bucket of an encoded key.
//
// Values are types.Value holding the canonical Go type of their types.Type
// (see package types); encoders reject anything else rather than convert.
//
// # Natural encoding
//
// The natural encoding is the plain big-endian representation, as HBase's
// Bytes.toBytes writes it:
//
//	STRING, BYTES  the raw bytes; the whole input is the value (variable
//	               length, not self-delimiting). STRING is not checked for
//	               valid UTF-8.
//	INT            4 bytes, big-endian two's complement (100 → 00 00 00 64)
//	BIGINT         8 bytes, big-endian two's complement
//	FLOAT          IEEE-754 binary32 bits, big-endian
//	DOUBLE         IEEE-754 binary64 bits, big-endian
//	BOOL           one byte, 0x00 (false) or 0x01 (true)
//	TIMESTAMP      int64 microseconds since the Unix epoch, 8 bytes big-endian
//
// NaN is always written with the canonical quiet-NaN bits (those of Java's
// floatToIntBits/doubleToLongBits: 7F C0 00 00 and 7F F8 00 00 00 00 00 00). Negative zero keeps its sign bit. NULL has no
// natural encoding.
//
// # Ordered encoding
//
// The ordered encoding is self-delimiting and order-preserving: for non-NULL
// a and b of one type, bytes.Compare(enc(a), enc(b)) == types.Compare(a, b),
// and no encoding is a proper prefix of another, so the concatenated
// encodings of tuples sort like the tuples:
//
//	STRING, BYTES  the bytes with each 0x00 escaped as 00 FF, then the
//	               terminator 00 01 ("a\x00b" → 61 00 FF 62 00 01)
//	INT            4 bytes big-endian with the sign bit flipped (-1 → 7F FF FF FF)
//	BIGINT         8 bytes big-endian with the sign bit flipped
//	TIMESTAMP      its microseconds as for BIGINT
//	FLOAT, DOUBLE  4 / 8 bytes: NaN is all zero bytes (below -Inf, as
//	               types.Compare orders NaN lowest); -0 is encoded as +0;
//	               otherwise a positive number's bits get the sign bit
//	               flipped and a negative number's bits are all inverted
//	BOOL           0x00 / 0x01
//
// With nullable set, a marker byte comes first: 0x00 for NULL (nothing
// follows) or 0x01 before a present value, so NULL sorts first. Without it,
// NULL is rejected and no marker is written.
//
// # Descending encoding
//
// The descending encoding is the ordered encoding with every byte inverted
// (b ^ 0xFF). Because the ordered encoding is prefix-free, inversion exactly
// reverses the order (NULL sorts last) and the result stays self-delimiting.
//
// # Canonical encodings
//
// Decoders never panic and accept only canonical encodings, that is, bytes
// the matching encoder produces: whenever a decode succeeds, re-encoding the
// value reproduces exactly the bytes consumed. Hence they reject truncated
// input, a 0x00 in an escaped string followed by anything but 0xFF or 0x01, a
// null marker other than 0x00/0x01, a BOOL byte other than 0x00/0x01, NaNs
// with non-canonical bits (natural) or any NaN other than the all-zero
// pattern (ordered), and -0 in the ordered encoding. Every bit pattern of an
// INT, BIGINT or TIMESTAMP is valid. Decoders return fresh memory, never
// slices of their input, and timestamps in UTC.
//
// Each decoder has a Datum form (DecodeNaturalDatum, DecodeOrderedDatum,
// DecodeDescDatum) for the typed read path: the same decoding, unboxed, so
// that only STRING and BYTES values allocate (their bytes). The Value
// forms box its result.
//
// # Encoder input
//
// Encoders take the canonical Go types only: string, int64 (range-checked to
// int32 for INT), float64 (FLOAT must be exactly representable as float32),
// bool, time.Time and []byte. A TIMESTAMP must be a whole number of
// microseconds within int64 microseconds of the epoch; its location is
// irrelevant because the instant is what is encoded. On error, Append
// functions return dst unchanged.
//
// Stability: this package is a stage of kvschema's pipeline, not an API;
// it changes as the pipeline does. Programs use package kvschema (the
// root), its database/sql driver, and the store seam (package store).
package keyenc

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/kvschema/kvschema/types"
)

// ieeeFormat holds the bit patterns of an IEEE-754 binary format that the
// encodings need to canonicalize NaN and recognize it and -0.
type ieeeFormat struct {
	sign uint64 // the sign bit, which is also the bits of -0
	inf  uint64 // +Inf; larger magnitudes are NaNs
	nan  uint64 // canonical quiet NaN, as Java's floatToIntBits/doubleToLongBits
	all  uint64 // all bits of the format
}

var (
	ieee32 = ieeeFormat{sign: 1 << 31, inf: 0x7F800000, nan: 0x7FC00000, all: math.MaxUint32}
	ieee64 = ieeeFormat{sign: 1 << 63, inf: 0x7FF0000000000000, nan: 0x7FF8000000000000, all: math.MaxUint64}
)

// isNaN reports whether u is the bits of any NaN.
func (f ieeeFormat) isNaN(u uint64) bool { return u&^f.sign > f.inf }

// toOrdered maps canonical natural bits to the ordered encoding.
func (f ieeeFormat) toOrdered(u uint64) uint64 {
	switch {
	case u == f.nan:
		return 0
	case u == f.sign: // -0 compares equal to +0, so it must encode equal too
		return f.sign
	case u&f.sign == 0:
		return u ^ f.sign
	}
	return ^u & f.all
}

// fromOrdered inverts toOrdered; ok is false for bytes it never produces.
func (f ieeeFormat) fromOrdered(e uint64) (u uint64, ok bool) {
	if e == 0 {
		return f.nan, true
	}
	if e&f.sign != 0 {
		u = e ^ f.sign
	} else {
		u = ^e & f.all
	}
	return u, u != f.sign && !f.isNaN(u)
}

// datumOf is v, a canonical value of type t, as a Datum, for the encoders
// (which only read it: a []byte is not copied).
func datumOf(t types.Type, v types.Value) (types.Datum, error) {
	var d types.Datum
	ok := false
	switch x := v.(type) {
	case []byte:
		d, ok = types.OwnedBytesDatum(x), true
	case time.Time:
		// UnixMicro is undefined out of range and truncates sub-microsecond
		// parts; converting back detects both.
		m := x.UnixMicro()
		if !time.UnixMicro(m).Equal(x) {
			return types.Null, fmt.Errorf("keyenc: TIMESTAMP value %s is not a whole number of microseconds within int64 range", x.Format(time.RFC3339Nano))
		}
		d, ok = types.TimestampDatum(m), true
	default:
		d, ok = types.DatumOf(v)
	}
	if !ok || v == nil || !sameClass(t, d.Type) {
		return types.Null, mismatch(t, v)
	}
	return d, nil
}

// sameClass reports whether a Datum of type dt holds a value of type t.
func sameClass(t, dt types.Type) bool {
	switch t {
	case types.Int, types.BigInt:
		return dt == types.Int || dt == types.BigInt
	case types.Float, types.Double:
		return dt == types.Float || dt == types.Double
	}
	return t == dt
}

// checkDatum fails unless d is a non-NULL value of type t.
func checkDatum(t types.Type, d types.Datum) error {
	switch {
	case d.IsNull():
		return fmt.Errorf("keyenc: %s value is NULL", t)
	case !sameClass(t, d.Type):
		return fmt.Errorf("keyenc: %s value must be %s, got a %s", t, goType(t), d.Type)
	}
	return nil
}

// fixedBits returns the natural-encoding bits of d, a non-NULL value of the
// fixed-width type t, right-aligned in a uint64.
func fixedBits(t types.Type, d types.Datum) (uint64, error) {
	if err := checkDatum(t, d); err != nil {
		return 0, err
	}
	switch t {
	case types.Int:
		x := d.Int()
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("keyenc: INT value %d out of range", x)
		}
		return uint64(uint32(int32(x))), nil
	case types.BigInt:
		return uint64(d.Int()), nil
	case types.Float:
		x := d.Float()
		if math.IsNaN(x) {
			return ieee32.nan, nil
		}
		f := float32(x)
		if float64(f) != x {
			return 0, fmt.Errorf("keyenc: FLOAT value %g is not a float32", x)
		}
		return uint64(math.Float32bits(f)), nil
	case types.Double:
		x := d.Float()
		if math.IsNaN(x) {
			return ieee64.nan, nil
		}
		return math.Float64bits(x), nil
	case types.Bool:
		if d.Bool() {
			return 1, nil
		}
		return 0, nil
	case types.Timestamp:
		return uint64(d.Micros()), nil
	}
	return 0, unsupported(t)
}

// fixedDatum is the inverse of fixedBits: it turns natural-encoding bits
// into the canonical value, rejecting patterns fixedBits never produces.
func fixedDatum(t types.Type, u uint64, enc string) (types.Datum, error) {
	switch t {
	case types.Int:
		return types.IntDatum(t, int64(int32(uint32(u)))), nil
	case types.BigInt:
		return types.IntDatum(t, int64(u)), nil
	case types.Float:
		if ieee32.isNaN(u) && u != ieee32.nan {
			return types.Null, malformed(t, enc, "has non-canonical NaN %08X", u)
		}
		return types.FloatDatum(t, float64(math.Float32frombits(uint32(u)))), nil
	case types.Double:
		if ieee64.isNaN(u) && u != ieee64.nan {
			return types.Null, malformed(t, enc, "has non-canonical NaN %016X", u)
		}
		return types.FloatDatum(t, math.Float64frombits(u)), nil
	case types.Bool:
		if u > 1 {
			return types.Null, malformed(t, enc, "has invalid byte 0x%02X", u)
		}
		return types.BoolDatum(u == 1), nil
	case types.Timestamp:
		return types.TimestampDatum(int64(u)), nil
	}
	return types.Null, unsupported(t)
}

// boxed is d as a Value, for a Datum keyenc made: its BYTES are a fresh
// buffer nobody else holds, which the Value may take over without a copy.
func boxed(d types.Datum) types.Value {
	if d.Type == types.Bytes {
		s := d.Str()
		if len(s) == 0 {
			return []byte{}
		}
		return unsafe.Slice(unsafe.StringData(s), len(s))
	}
	return d.Value()
}

// appendUint appends the low w bytes of u big-endian; w is a FixedWidth.
func appendUint(dst []byte, u uint64, w int) []byte {
	switch w {
	case 1:
		return append(dst, byte(u))
	case 4:
		return binary.BigEndian.AppendUint32(dst, uint32(u))
	}
	return binary.BigEndian.AppendUint64(dst, u)
}

// getUint reads a w-byte big-endian number from b, which has at least w
// bytes.
func getUint(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func unsupported(t types.Type) error {
	return fmt.Errorf("keyenc: unsupported type %s", t)
}

func mismatch(t types.Type, v types.Value) error {
	if v == nil {
		return fmt.Errorf("keyenc: %s value is NULL", t)
	}
	return fmt.Errorf("keyenc: %s value must be %s, got %T", t, goType(t), v)
}

// goType names the canonical Go type of t, for error messages.
func goType(t types.Type) string {
	switch t {
	case types.String:
		return "string"
	case types.Int, types.BigInt:
		return "int64"
	case types.Float, types.Double:
		return "float64"
	case types.Bool:
		return "bool"
	case types.Timestamp:
		return "time.Time"
	}
	return "[]byte"
}

// malformed reports undecodable input, naming the type and the encoding
// ("natural", "ordered" or "descending").
func malformed(t types.Type, enc, format string, args ...any) error {
	return fmt.Errorf("keyenc: %s %s encoding %s", t, enc, fmt.Sprintf(format, args...))
}

// SaltBucket returns the Phoenix salt bucket, in [0, n), of an already
// encoded row key: Java's Arrays.hashCode over the signed bytes,
//
//	h := int32(1); for each byte c: h = 31*h + int32(int8(c))
//
// with int32 wrap-around, then abs(h % n) (% truncating toward zero as in
// Java). It panics unless 1 <= n <= 256, as the bucket must fit one byte.
func SaltBucket(encoded []byte, n int) byte {
	if n < 1 || n > 256 {
		panic(fmt.Sprintf("keyenc: salt bucket count %d outside 1..256", n))
	}
	h := int32(1)
	for _, c := range encoded {
		h = 31*h + int32(int8(c))
	}
	r := h % int32(n)
	if r < 0 {
		r = -r
	}
	return byte(r)
}
