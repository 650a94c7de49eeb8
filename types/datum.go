package types

import (
	"math"
	"strings"
	"time"
	"unsafe"
)

// Datum is one value of a known type, unboxed: the unit of kvschema's typed
// read path. Decoders (keyenc, layout) write Datums and results hold them,
// so a scanned row costs no allocation beyond its string bytes, where a
// Value (an interface) allocates for every string, every []byte and most
// integers.
//
// Representation, by Type:
//
//	Invalid            NULL (the zero Datum)
//	INT, BIGINT        the int64 in bits
//	FLOAT, DOUBLE      math.Float64bits of the float64
//	BOOL               0 or 1
//	TIMESTAMP          microseconds since the Unix epoch (UTC), as int64
//	STRING, BYTES      the bytes in str (a BYTES Datum shares nothing with
//	                   the bytes it was made from)
//
// A Datum's Value is the canonical Go value of its type, so Datums and Values
// convert both ways without loss (DatumOf, Value).
type Datum struct {
	Type Type
	bits uint64
	str  string
}

// Null is the NULL Datum.
var Null = Datum{}

// IntDatum is an INT or BIGINT (t) Datum.
func IntDatum(t Type, v int64) Datum { return Datum{Type: t, bits: uint64(v)} }

// FloatDatum is a FLOAT or DOUBLE (t) Datum.
func FloatDatum(t Type, v float64) Datum { return Datum{Type: t, bits: math.Float64bits(v)} }

// BoolDatum is a BOOL Datum.
func BoolDatum(v bool) Datum {
	if v {
		return Datum{Type: Bool, bits: 1}
	}
	return Datum{Type: Bool}
}

// TimestampDatum is a TIMESTAMP Datum of us microseconds since the epoch.
func TimestampDatum(us int64) Datum { return Datum{Type: Timestamp, bits: uint64(us)} }

// StringDatum is a STRING Datum.
func StringDatum(s string) Datum { return Datum{Type: String, str: s} }

// BytesDatum is a BYTES Datum holding its own copy of b.
func BytesDatum(b []byte) Datum { return Datum{Type: Bytes, str: string(b)} }

// OwnedBytesDatum is a BYTES Datum made from b without copying: the caller
// gives b up and never changes it again.
func OwnedBytesDatum(b []byte) Datum {
	return Datum{Type: Bytes, str: unsafe.String(unsafe.SliceData(b), len(b))}
}

// DatumOf converts a canonical Value (nil: NULL) to a Datum; ok is false
// if v is not one. An int64 becomes a BIGINT and a float64 a DOUBLE: a
// Datum's type decides only how its value is held.
func DatumOf(v Value) (d Datum, ok bool) {
	switch x := v.(type) {
	case nil:
		return Null, true
	case string:
		return StringDatum(x), true
	case []byte:
		return BytesDatum(x), true
	case int64:
		return IntDatum(BigInt, x), true
	case float64:
		return FloatDatum(Double, x), true
	case bool:
		return BoolDatum(x), true
	case time.Time:
		us := x.UnixMicro()
		return TimestampDatum(us), x.Equal(time.UnixMicro(us))
	case Set, List, Map:
		t, ok := collectionTypeOf(x)
		if !ok {
			return Null, false
		}
		enc, err := AppendCollection(nil, t, x)
		if err != nil {
			return Null, false
		}
		return Datum{Type: t, str: string(enc)}, true
	}
	return Null, false
}

// CollectionDatum is a Datum of the collection type t holding enc, the
// encoding of a value of t (AppendCollection), which it checks.
func CollectionDatum(t Type, enc []byte, s *Strings) (Datum, error) {
	if err := CheckCollection(t, enc); err != nil {
		return Null, err
	}
	return Datum{Type: t, str: s.String(enc)}, nil
}

// collectionTypeOf is the type of a canonical collection, from the classes
// of its elements (STRING for an empty one's: the encoding of an empty
// collection is the same for every element type).
func collectionTypeOf(v Value) (Type, bool) {
	class := func(e Value) Type {
		d, ok := DatumOf(e)
		if !ok || d.Type.IsCollection() || d.IsNull() {
			return Invalid
		}
		return d.Type
	}
	same := func(xs []Value) Type {
		t := String
		for i, e := range xs {
			c := class(e)
			if i == 0 {
				t = c
			} else if c != t {
				return Invalid
			}
		}
		return t
	}
	var t Type
	switch x := v.(type) {
	case Set:
		t = SetOf(same(x))
	case List:
		t = ListOf(same(x))
	case Map:
		ks, vs := make([]Value, len(x)), make([]Value, len(x))
		for i, e := range x {
			ks[i], vs[i] = e.Key, e.Val
		}
		t = MapOf(same(ks), same(vs))
	}
	return t.Frozen(), t.Valid()
}

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return d.Type == Invalid }

// Int is the value of an INT or BIGINT Datum.
func (d Datum) Int() int64 { return int64(d.bits) }

// Float is the value of a FLOAT or DOUBLE Datum.
func (d Datum) Float() float64 { return math.Float64frombits(d.bits) }

// Bool is the value of a BOOL Datum.
func (d Datum) Bool() bool { return d.bits != 0 }

// Micros is the value of a TIMESTAMP Datum in microseconds since the epoch.
func (d Datum) Micros() int64 { return int64(d.bits) }

// Time is the value of a TIMESTAMP Datum.
func (d Datum) Time() time.Time { return time.UnixMicro(int64(d.bits)).UTC() }

// Str is the value of a STRING Datum, or the bytes of a BYTES Datum as a
// string (sharing memory with the Datum, without a copy).
func (d Datum) Str() string { return d.str }

// AppendBytes appends the bytes of a STRING or BYTES Datum to dst.
func (d Datum) AppendBytes(dst []byte) []byte { return append(dst, d.str...) }

// Value boxes d into its canonical Value (nil for NULL). BYTES yield a
// fresh slice.
func (d Datum) Value() Value {
	switch d.Type {
	case String:
		return d.str
	case Bytes:
		return []byte(d.str)
	case Int, BigInt:
		return int64(d.bits)
	case Float, Double:
		return math.Float64frombits(d.bits)
	case Bool:
		return d.bits != 0
	case Timestamp:
		return d.Time()
	}
	if d.Type.IsCollection() {
		// CollectionDatum and DatumOf checked the encoding.
		v, _ := DecodeCollection(d.Type, []byte(d.str))
		return v
	}
	return nil
}

// class groups the types whose Datums hold values the same way.
func (d Datum) class() Type {
	switch d.Type {
	case Int:
		return BigInt
	case Float:
		return Double
	case Bytes:
		return String
	}
	return d.Type
}

// CompareDatums orders Datums as Compare orders their Values, without
// boxing them.
func CompareDatums(a, b Datum) int {
	if c := a.class(); c == b.class() && (a.Type == Bytes) == (b.Type == Bytes) {
		switch c {
		case Invalid:
			return 0
		case String:
			return strings.Compare(a.str, b.str)
		case BigInt, Timestamp, Bool:
			return cmpOrdered(int64(a.bits), int64(b.bits))
		case Double:
			return compareFloat(a.Float(), b.Float())
		}
	}
	return Compare(a.Value(), b.Value())
}
