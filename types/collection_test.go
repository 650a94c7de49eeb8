package types

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// genScalar draws a value of the scalar type t from a small domain, so
// that drawn collections repeat elements.
func genScalar(t *rapid.T, typ Type, label string) Value {
	switch typ {
	case String:
		return rapid.SampledFrom([]string{"", "a", "b", "a\x00", "é\"\\\n"}).Draw(t, label)
	case Bytes:
		return []byte(rapid.SampledFrom([]string{"", "\x00", "\xff", "ab"}).Draw(t, label))
	case Int, BigInt:
		return rapid.Int64Range(-3, 3).Draw(t, label)
	case Float:
		return rapid.SampledFrom([]float64{math.NaN(), math.Inf(-1), -2.5, 0, 1, float64(float32(0.1))}).Draw(t, label)
	case Double:
		return rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), -2.5, 0, 0.1, 1e300}).Draw(t, label)
	case Bool:
		return rapid.Bool().Draw(t, label)
	}
	return time.UnixMicro(rapid.Int64Range(-2, 2).Draw(t, label)).UTC()
}

func genCollectionType(t *rapid.T) Type {
	scalar := func(l string) Type { return rapid.SampledFrom(AllTypes).Draw(t, l) }
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		return SetOf(scalar("elem")).Frozen()
	case 1:
		return ListOf(scalar("elem")).Frozen()
	}
	return MapOf(scalar("key"), scalar("val")).Frozen()
}

// genRaw draws a collection of type t as a user may write it: elements in
// any order, repeated.
func genRaw(t *rapid.T, typ Type) Value {
	n := rapid.IntRange(0, 5).Draw(t, "n")
	if typ.Kind() == MapKind {
		m := Map{}
		for ; n > 0; n-- {
			m = append(m, Entry{genScalar(t, typ.Key(), "key"), genScalar(t, typ.Elem(), "val")})
		}
		return m
	}
	xs := []Value{}
	for ; n > 0; n-- {
		xs = append(xs, genScalar(t, typ.Elem(), "elem"))
	}
	return xs
}

// TestCollectionProperties: Coerce makes a canonical collection (a SET
// sorted without duplicates, a MAP by key with the last value of a
// repeated key, a LIST as given) that Coerce leaves alone; its encoding,
// its Datum, its JSON text and its literal all give it back; CONTAINS
// agrees with a search of what was written.
func TestCollectionProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		typ := genCollectionType(t)
		if !typ.Valid() || !typ.IsFrozen() || typ.Kind() == Scalar {
			t.Fatalf("%s is not a valid frozen collection", typ)
		}
		raw := genRaw(t, typ)
		v, err := Coerce(raw, typ)
		if err != nil {
			t.Fatalf("Coerce(%v, %s): %v", raw, typ, err)
		}
		same := func(what string, got Value) {
			t.Helper()
			if Compare(got, v) != 0 || Format(got) != Format(v) {
				t.Fatalf("%s: %s, want %s", what, Format(got), Format(v))
			}
		}
		again, err := Coerce(v, typ)
		if err != nil {
			t.Fatal(err)
		}
		same("Coerce again", again)
		// Canonical.
		switch x := v.(type) {
		case Set:
			for i := 1; i < len(x); i++ {
				if Compare(x[i-1], x[i]) >= 0 {
					t.Fatalf("set %s not strictly sorted", Format(v))
				}
			}
			for _, e := range raw.([]Value) {
				if !slices.ContainsFunc(x, func(y Value) bool { return Compare(e, y) == 0 }) {
					t.Fatalf("set %s lost %s", Format(v), Format(e))
				}
			}
		case List:
			if len(x) != len(raw.([]Value)) {
				t.Fatalf("list %s has %d elements, wrote %d", Format(v), len(x), len(raw.([]Value)))
			}
		case Map:
			for i := 1; i < len(x); i++ {
				if Compare(x[i-1].Key, x[i].Key) >= 0 {
					t.Fatalf("map %s keys not strictly sorted", Format(v))
				}
			}
			for _, e := range x {
				// The value of the last entry written with this key.
				var last Value
				for _, w := range raw.(Map) {
					if Compare(w.Key, e.Key) == 0 {
						last = w.Val
					}
				}
				if Compare(last, e.Val) != 0 {
					t.Fatalf("map %s: %s has %s, last written %s", Format(v), Format(e.Key), Format(e.Val), Format(last))
				}
			}
		default:
			t.Fatalf("Coerce gave %T", v)
		}
		enc, err := AppendCollection(nil, typ, v)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := DecodeCollection(typ, enc)
		if err != nil {
			t.Fatalf("decode % X: %v", enc, err)
		}
		same("decode", dec)
		d, ok := DatumOf(v)
		if !ok {
			t.Fatalf("DatumOf(%s) refused", Format(v))
		}
		same("Datum", d.Value())
		if CompareDatums(d, d) != 0 {
			t.Fatal("a Datum differs from itself")
		}
		js, err := Coerce(JSON(v), typ)
		if err != nil {
			t.Fatalf("JSON %s: %v", JSON(v), err)
		}
		if Compare(js, v) != 0 {
			t.Fatalf("JSON %s reads back as %s, want %s", JSON(v), Format(js), Format(v))
		}
		// CONTAINS (KEY) of each element written, and of a value drawn.
		probe := genScalar(t, typ.Elem(), "probe")
		var elems, keys []Value
		switch x := raw.(type) {
		case []Value:
			elems = x
		case Map:
			for _, e := range v.(Map) {
				elems, keys = append(elems, e.Val), append(keys, e.Key)
			}
		}
		has := func(xs []Value, p Value) bool {
			return slices.ContainsFunc(xs, func(e Value) bool { return Compare(e, p) == 0 })
		}
		// ContainsDatum reads the encoding in place, and agrees.
		inPlace := func(p Value, key bool) bool {
			dp, _ := DatumOf(p)
			return ContainsDatum(d, dp, key)
		}
		if p, _ := Coerce(probe, typ.Elem()); Contains(v, p, false) != has(elems, p) || inPlace(p, false) != has(elems, p) {
			t.Fatalf("%s CONTAINS %s = %t, in place %t", Format(v), Format(p), Contains(v, p, false), inPlace(p, false))
		}
		for _, e := range elems {
			if !inPlace(e, false) {
				t.Fatalf("%s CONTAINS its element %s: false in place", Format(v), Format(e))
			}
		}
		if typ.Kind() == MapKind {
			k, _ := Coerce(genScalar(t, typ.Key(), "probe key"), typ.Key())
			if Contains(v, k, true) != has(keys, k) || inPlace(k, true) != has(keys, k) {
				t.Fatalf("%s CONTAINS KEY %s = %t, in place %t", Format(v), Format(k), Contains(v, k, true), inPlace(k, true))
			}
		}
	})
}

// TestCollectionTypes: names as the language writes them, and the types
// that are no collection's.
func TestCollectionTypes(t *testing.T) {
	for typ, want := range map[Type]string{
		SetOf(String).Frozen():          "FROZEN<SET<STRING>>",
		ListOf(Timestamp):               "LIST<TIMESTAMP>",
		MapOf(String, Int).Frozen():     "FROZEN<MAP<STRING, INT>>",
		MapOf(Bytes, Double):            "MAP<BYTES, DOUBLE>",
		Bool:                            "BOOL",
		Type(SetKind)<<kindShift | 0x0f: "Type(271)",
	} {
		if got := typ.String(); got != want {
			t.Errorf("%d: %q, want %q", typ, got, want)
		}
	}
	for _, bad := range []Type{SetOf(Invalid), Type(MapKind) << kindShift, SetOf(String) | Int<<keyShift, 1 << 12} {
		if bad.Valid() {
			t.Errorf("%s is valid", bad)
		}
	}
	if _, err := SetOf(Int).Contained(true); err == nil || !strings.Contains(err.Error(), "CONTAINS KEY applies to a MAP") {
		t.Errorf("CONTAINS KEY of a SET: %v", err)
	}
	for _, c := range []struct {
		v   Value
		typ Type
		err string
	}{
		{[]Value{"a", nil}, SetOf(String).Frozen(), "cannot hold NULL"},
		{Map{{"a", int64(1)}}, ListOf(String).Frozen(), "cannot use"},
		{`{"a": 1}`, SetOf(String).Frozen(), "want an array"},
		{`[1, 2`, ListOf(Int).Frozen(), "cannot read"},
		{`[3000000000]`, ListOf(Int).Frozen(), "out of range for INT"},
		{`{"x": 1}`, MapOf(Int, Int).Frozen(), "cannot use 'x'"},
		{`["not base64!"]`, SetOf(Bytes).Frozen(), "base64"},
	} {
		if _, err := Coerce(c.v, c.typ); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Coerce(%v, %s) = %v, want %q", c.v, c.typ, err, c.err)
		}
	}
	// Go slices and maps coerce, as Scan and database/sql pass them.
	if v, err := Coerce(map[string]int{"b": 2, "a": 1}, MapOf(String, BigInt).Frozen()); err != nil || Format(v) != "{'a': 1, 'b': 2}" {
		t.Errorf("Go map: %v, %v", v, err)
	}
	if v, err := Coerce([]string{"b", "a", "b"}, SetOf(String).Frozen()); err != nil || Format(v) != "{'a', 'b'}" {
		t.Errorf("Go slice: %v, %v", v, err)
	}
}

// FuzzDecodeCollection: the decoder never panics and accepts only
// canonical encodings (re-encoding gives the same bytes).
func FuzzDecodeCollection(f *testing.F) {
	types := []Type{SetOf(String).Frozen(), ListOf(BigInt).Frozen(), MapOf(String, Int).Frozen(), SetOf(Float).Frozen(), MapOf(Timestamp, Bool).Frozen(), ListOf(Bytes).Frozen()}
	for i, typ := range types {
		for _, raw := range []Value{[]Value{}, Map{}} {
			if v, err := Coerce(raw, typ); err == nil {
				enc, _ := AppendCollection(nil, typ, v)
				f.Add(byte(i), enc)
			}
		}
	}
	f.Add(byte(0), []byte("\x02\x01a\x01b"))
	f.Add(byte(2), []byte("\x01\x01k\x00\x00\x00\x00\x00\x00\x00\x07"))
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		typ := types[int(which)%len(types)]
		v, err := DecodeCollection(typ, b)
		if err != nil {
			return
		}
		enc, err := AppendCollection(nil, typ, v)
		if err != nil {
			t.Fatalf("decoded %s does not encode: %v", Format(v), err)
		}
		if string(enc) != string(b) {
			t.Fatalf("% X decodes to %s, which encodes as % X", b, Format(v), enc)
		}
	})
}

// BenchmarkContains: CONTAINS on a stored SET of 6 strings, decoding the
// collection (Contains of Datum.Value) and reading its encoding in place
// (ContainsDatum), as a filter does per row.
func BenchmarkContains(b *testing.B) {
	typ := SetOf(String).Frozen()
	v, _ := Coerce([]string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}, typ)
	enc, _ := AppendCollection(nil, typ, v)
	d, _ := CollectionDatum(typ, enc, nil)
	probe := StringDatum("echo")
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if !Contains(d.Value(), probe.Value(), false) {
				b.Fatal("not found")
			}
		}
	})
	b.Run("in place", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if !ContainsDatum(d, probe, false) {
				b.Fatal("not found")
			}
		}
	})
}

// BenchmarkCheckCollection: what reading a stored collection costs before
// its value is asked for: CollectionDatum checks the encoding in place
// (CheckCollection) where it used to decode it (DecodeCollection).
func BenchmarkCheckCollection(b *testing.B) {
	typ := SetOf(String).Frozen()
	v, _ := Coerce([]string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}, typ)
	enc, _ := AppendCollection(nil, typ, v)
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if err := CheckCollection(typ, enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := DecodeCollection(typ, enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
