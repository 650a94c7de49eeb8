package types

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// typeOfValue is the type a canonical value belongs to (INT and FLOAT
// values are also BIGINT and DOUBLE values; either is drawn).
func typeOfValue(t *rapid.T, v Value) Type {
	switch v.(type) {
	case string:
		return String
	case []byte:
		return Bytes
	case int64:
		return rapid.SampledFrom([]Type{Int, BigInt}).Draw(t, "int type")
	case float64:
		return rapid.SampledFrom([]Type{Float, Double}).Draw(t, "float type")
	case bool:
		return Bool
	case nil:
		return rapid.SampledFrom(AllTypes).Draw(t, "null type")
	}
	return Timestamp
}

// TestDatumRoundTrip: a Datum stands for exactly the Value it was made
// from, and orders as Compare orders the Values.
func TestDatumRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a, b := genAny(rt, "a"), genAny(rt, "b")
		da, ok := DatumOf(a)
		if !ok {
			rt.Fatalf("DatumOf(%#v) refused", a)
		}
		db, _ := DatumOf(b)
		if rapid.Bool().Draw(rt, "declared type") {
			// A decoder's Datum carries the declared type (INT, FLOAT).
			da = declared(da, typeOfValue(rt, a))
		}
		if got := da.Value(); !reflect.DeepEqual(got, a) && Compare(got, a) != 0 {
			rt.Fatalf("DatumOf(%#v).Value() = %#v", a, got)
		}
		if got := da.Value(); reflect.TypeOf(got) != reflect.TypeOf(a) {
			rt.Fatalf("DatumOf(%#v).Value() is a %T", a, got)
		}
		if da.IsNull() != (a == nil) {
			rt.Fatalf("DatumOf(%#v).IsNull() = %v", a, da.IsNull())
		}
		if got, want := CompareDatums(da, db), Compare(a, b); got != want {
			rt.Fatalf("CompareDatums(%#v, %#v) = %d, Compare = %d", a, b, got, want)
		}
	})
}

// declared is d as a decoder of a column of type t makes it.
func declared(d Datum, t Type) Datum {
	if d.IsNull() {
		return d
	}
	switch t {
	case Int, BigInt:
		return IntDatum(t, d.Int())
	case Float, Double:
		return FloatDatum(t, d.Float())
	}
	return d
}

func TestDatumOfRefusesOtherValues(t *testing.T) {
	for _, v := range []Value{int(1), int32(1), float32(1), time.Unix(0, 1), struct{}{}} {
		if _, ok := DatumOf(v); ok {
			t.Errorf("DatumOf(%#v) accepted", v)
		}
	}
}

func TestBytesDatumCopies(t *testing.T) {
	b := []byte("ab")
	d := BytesDatum(b)
	b[0] = 'x'
	if d.Str() != "ab" {
		t.Fatalf("BytesDatum shares memory with its argument: %q", d.Str())
	}
	v := d.Value().([]byte)
	v[0] = 'y'
	if d.Str() != "ab" {
		t.Fatalf("Value shares memory with the Datum: %q", d.Str())
	}
}
