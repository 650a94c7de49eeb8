package types

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Collections (Cassandra's SET<T>, LIST<T> and MAP<K, V>; seed 002) are
// Types too. A collection Type packs its kind, its element type (a map's
// value type) and a map's key type into the bits above a scalar's:
//
//	bits 0–3   element (value) type, a scalar
//	bits 4–7   a map's key type, a scalar
//	bits 8–9   kind: SET, LIST or MAP
//	bit  10    FROZEN: the collection is one value, stored as one cell
//
// so the scalar Types keep their values and a switch over scalars never
// matches a collection. Elements are never NULL and never collections.
//
// A collection's canonical Value is a Set (sorted by Compare, no
// duplicates), a List, or a Map (entries sorted by key, keys unique).
// Coerce makes them from those, from Go slices and maps, and from JSON
// text; its result is always canonical.

// Kind is what a Type is: a scalar or a kind of collection.
type Kind uint8

// The kinds of Type.
const (
	Scalar Kind = iota
	SetKind
	ListKind
	MapKind
)

const (
	elemMask   = 0x0f
	keyShift   = 4
	kindShift  = 8
	frozenFlag = 1 << 10
)

// SetOf is SET<elem>.
func SetOf(elem Type) Type { return Type(SetKind)<<kindShift | elem&elemMask }

// ListOf is LIST<elem>.
func ListOf(elem Type) Type { return Type(ListKind)<<kindShift | elem&elemMask }

// MapOf is MAP<key, val>.
func MapOf(key, val Type) Type {
	return Type(MapKind)<<kindShift | (key&elemMask)<<keyShift | val&elemMask
}

// Frozen is t stored as one value (FROZEN<t>); t itself if t is a scalar.
func (t Type) Frozen() Type {
	if t.Kind() == Scalar {
		return t
	}
	return t | frozenFlag
}

// IsFrozen reports whether t is a frozen collection.
func (t Type) IsFrozen() bool { return t&frozenFlag != 0 && t.Kind() != Scalar }

// Kind is t's kind.
func (t Type) Kind() Kind { return Kind(t>>kindShift) & 3 }

// IsCollection reports whether t is a SET, LIST or MAP.
func (t Type) IsCollection() bool { return t.Kind() != Scalar }

// Elem is the element type of a SET or LIST, the value type of a MAP.
func (t Type) Elem() Type { return t & elemMask }

// Key is the key type of a MAP (Invalid for other types).
func (t Type) Key() Type {
	if t.Kind() != MapKind {
		return Invalid
	}
	return t >> keyShift & elemMask
}

// Valid reports whether t is a scalar type or a well-formed collection of
// scalars.
func (t Type) Valid() bool {
	switch t.Kind() {
	case Scalar:
		return t > Invalid && t <= Bytes
	case MapKind:
		if k := t.Key(); k == Invalid || k > Bytes {
			return false
		}
	default:
		if t>>keyShift&elemMask != 0 {
			return false
		}
	}
	rest := t &^ (frozenFlag | 3<<kindShift | elemMask | elemMask<<keyShift)
	return rest == 0 && t.Elem() > Invalid && t.Elem() <= Bytes
}

// collectionName prints t as the language writes it: SET<STRING>,
// FROZEN<MAP<STRING, INT>>.
func collectionName(t Type) string {
	var s string
	switch t.Kind() {
	case SetKind:
		s = "SET<" + t.Elem().String() + ">"
	case ListKind:
		s = "LIST<" + t.Elem().String() + ">"
	case MapKind:
		s = "MAP<" + t.Key().String() + ", " + t.Elem().String() + ">"
	}
	if t.IsFrozen() {
		s = "FROZEN<" + s + ">"
	}
	return s
}

// Contained is the type of the value `CONTAINS` (key: `CONTAINS KEY`)
// looks for in a collection of type t: its element type (a MAP's value
// type), or a MAP's key type.
func (t Type) Contained(key bool) (Type, error) {
	switch {
	case !t.IsCollection():
		return Invalid, fmt.Errorf("CONTAINS applies to a SET, LIST or MAP, not a %s", t)
	case key && t.Kind() != MapKind:
		return Invalid, fmt.Errorf("CONTAINS KEY applies to a MAP, not a %s", t)
	case key:
		return t.Key(), nil
	}
	return t.Elem(), nil
}

// Set is a SET's canonical value: elements sorted by Compare, no two
// equal, none NULL.
type Set []Value

// List is a LIST's canonical value: elements in order, none NULL.
type List []Value

// Map is a MAP's canonical value: entries sorted by key, keys unique, no
// key or value NULL.
type Map []Entry

// Entry is one key and its value in a Map.
type Entry struct{ Key, Val Value }

// coerceCollection converts v to the canonical value of the collection
// type t: from a Set, List or Map (what the parser makes of `{…}`, `[…]`
// and `{k: v, …}`), a Go slice or map, or JSON text (a string or []byte:
// an array, or an object for a MAP).
func coerceCollection(v Value, t Type) (Value, error) {
	if s, ok := v.(string); ok {
		return coerceJSON([]byte(s), t)
	}
	if b, ok := v.([]byte); ok {
		return coerceJSON(b, t)
	}
	if t.Kind() == MapKind {
		var in Map
		switch x := v.(type) {
		case Map:
			in = x
		case Set:
			if len(x) != 0 { // `{}` parses as an empty set
				return nil, mismatch(v, t)
			}
		default:
			rv := reflect.ValueOf(v)
			if rv.Kind() != reflect.Map {
				return nil, mismatch(v, t)
			}
			for it := rv.MapRange(); it.Next(); {
				in = append(in, Entry{it.Key().Interface(), it.Value().Interface()})
			}
		}
		out := make(Map, 0, len(in))
		for _, e := range in {
			k, err := coerceElem(e.Key, t.Key(), t)
			if err != nil {
				return nil, err
			}
			val, err := coerceElem(e.Val, t.Elem(), t)
			if err != nil {
				return nil, err
			}
			out = append(out, Entry{k, val})
		}
		// Stable, so that of two equal keys the later one wins below.
		slices.SortStableFunc(out, func(a, b Entry) int { return Compare(a.Key, b.Key) })
		w := 0
		for i := range out {
			if w > 0 && Compare(out[w-1].Key, out[i].Key) == 0 {
				out[w-1] = out[i]
				continue
			}
			out[w] = out[i]
			w++
		}
		return out[:w], nil
	}
	var in []Value
	switch x := v.(type) {
	case Set:
		if t.Kind() == ListKind {
			return nil, mismatch(v, t)
		}
		in = x
	case List:
		if t.Kind() == SetKind {
			return nil, mismatch(v, t)
		}
		in = x
	case []Value:
		in = x
	case Map:
		return nil, mismatch(v, t)
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return nil, mismatch(v, t)
		}
		in = make([]Value, rv.Len())
		for i := range in {
			in[i] = rv.Index(i).Interface()
		}
	}
	out := make([]Value, len(in))
	for i, e := range in {
		c, err := coerceElem(e, t.Elem(), t)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	if t.Kind() == ListKind {
		return List(out), nil
	}
	slices.SortFunc(out, Compare)
	return Set(slices.CompactFunc(out, func(a, b Value) bool { return Compare(a, b) == 0 })), nil
}

func coerceElem(v Value, et, t Type) (Value, error) {
	if v == nil {
		return nil, fmt.Errorf("a %s cannot hold NULL", t)
	}
	c, err := Coerce(v, et)
	if err != nil {
		return nil, fmt.Errorf("in a %s: %w", t, err)
	}
	return c, nil
}

// coerceJSON reads a collection of type t from JSON text: an array for a
// SET or LIST, an object for a MAP (its keys are strings, parsed as the
// key type: "42", "true", "2024-01-02"). BYTES are base64 strings, as
// JSON writes them.
func coerceJSON(b []byte, t Type) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("cannot read %s from %s: %v", t, DisplayLiteral(string(b)), err)
	}
	if dec.More() {
		return nil, fmt.Errorf("cannot read %s from %s: text after the JSON value", t, DisplayLiteral(string(b)))
	}
	switch x := raw.(type) {
	case []any:
		if t.Kind() == MapKind {
			break
		}
		in := make([]Value, len(x))
		for i, e := range x {
			c, err := fromJSON(e, t.Elem(), t)
			if err != nil {
				return nil, err
			}
			in[i] = c
		}
		return coerceCollection(in, t)
	case map[string]any:
		if t.Kind() != MapKind {
			break
		}
		in := make(Map, 0, len(x))
		for k, e := range x {
			key, err := fromJSON(k, t.Key(), t)
			if err != nil {
				return nil, err
			}
			val, err := fromJSON(e, t.Elem(), t)
			if err != nil {
				return nil, err
			}
			in = append(in, Entry{key, val})
		}
		return coerceCollection(in, t)
	}
	want := "an array"
	if t.Kind() == MapKind {
		want = "an object"
	}
	return nil, fmt.Errorf("cannot read %s from %s: want %s", t, DisplayLiteral(string(b)), want)
}

// fromJSON converts one decoded JSON element to a value of the scalar type
// et (Coerce then checks it).
func fromJSON(e any, et, t Type) (Value, error) {
	switch x := e.(type) {
	case nil:
		return nil, fmt.Errorf("a %s cannot hold NULL", t)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("in a %s: number %s out of range", t, x)
		}
		return f, nil
	case string:
		switch et {
		case Bytes:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return b, nil
			}
			return nil, fmt.Errorf("in a %s: BYTES are written in standard base64 in JSON, not %s", t, DisplayLiteral(x))
		case Int, BigInt, Float, Double:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				if i, err := strconv.ParseInt(x, 10, 64); err == nil {
					return i, nil
				}
				return f, nil
			}
		case Bool:
			if b, err := strconv.ParseBool(x); err == nil {
				return b, nil
			}
		}
		return x, nil
	case bool:
		return x, nil
	}
	return nil, fmt.Errorf("a %s cannot hold %s", t, KindName(e))
}

// JSON writes a canonical value as JSON: collections as arrays and
// objects (a MAP's keys as strings), BYTES in standard base64, timestamps
// as their literal text (as kvschema's JSON data files hold values).
// database/sql returns collections this way.
func JSON(v Value) string {
	return string(appendJSON(nil, v))
}

func appendJSON(dst []byte, v Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case Set:
		return appendJSONArray(dst, x)
	case List:
		return appendJSONArray(dst, x)
	case Map:
		dst = append(dst, '{')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			k := Value(JSONKey(e.Key))
			dst = appendJSON(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, e.Val)
		}
		return append(dst, '}')
	case string:
		return appendJSONString(dst, x)
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, x)
		return append(dst, '"')
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.AppendQuote(dst, FormatFloat(x))
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(dst, x)
	case time.Time:
		return strconv.AppendQuote(dst, FormatTimestamp(x))
	}
	return strconv.AppendQuote(dst, fmt.Sprint(v))
}

// appendJSONString appends s as a JSON string: '"', '\\' and the control
// characters escaped, everything else as it is.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

func appendJSONArray(dst []byte, xs []Value) []byte {
	dst = append(dst, '[')
	for i, e := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSON(dst, e)
	}
	return append(dst, ']')
}

// JSONKey is a map key as the JSON object key JSON writes for it.
func JSONKey(k Value) string {
	switch x := k.(type) {
	case string:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return FormatTimestamp(x)
	case float64:
		return FormatFloat(x)
	}
	return fmt.Sprint(k)
}

// compareCollections orders collections of one kind element by element
// (a MAP by key, then value), a shorter prefix first; kinds by kind.
func compareCollections(a, b Value) (int, bool) {
	switch x := a.(type) {
	case Set:
		if y, ok := b.(Set); ok {
			return slices.CompareFunc(x, y, Compare), true
		}
	case List:
		if y, ok := b.(List); ok {
			return slices.CompareFunc(x, y, Compare), true
		}
	case Map:
		if y, ok := b.(Map); ok {
			return slices.CompareFunc(x, y, func(p, q Entry) int {
				if c := Compare(p.Key, q.Key); c != 0 {
					return c
				}
				return Compare(p.Val, q.Val)
			}), true
		}
	}
	return 0, false
}

// Contains reports whether the canonical collection c holds the element
// (for a MAP: the value) v, by Compare; key asks for a MAP's key instead.
// A NULL collection or element holds nothing.
func Contains(c, v Value, key bool) bool {
	if v == nil {
		return false
	}
	switch x := c.(type) {
	case Set:
		_, ok := slices.BinarySearchFunc(x, v, Compare)
		return ok
	case List:
		return slices.ContainsFunc(x, func(e Value) bool { return Compare(e, v) == 0 })
	case Map:
		if key {
			_, ok := slices.BinarySearchFunc(x, v, func(e Entry, v Value) int { return Compare(e.Key, v) })
			return ok
		}
		return slices.ContainsFunc(x, func(e Entry) bool { return Compare(e.Val, v) == 0 })
	}
	return false
}

// ContainsDatum is Contains for Datums: whether the collection c holds v
// (a MAP's value; with key, a MAP's key). It reads c's encoding in place,
// without decoding the collection or allocating, where equal elements have
// equal bytes: every element type but FLOAT and DOUBLE (0 and -0 are
// equal), which are decoded.
func ContainsDatum(c, v Datum, key bool) bool {
	t := c.Type
	if c.IsNull() || v.IsNull() || !t.IsCollection() {
		return false
	}
	et := t.Elem()
	if key {
		et = t.Key()
	}
	var buf [8]byte
	var want []byte
	switch {
	case et == Float || et == Double || v.class() != (Datum{Type: et}).class():
		return Contains(c.Value(), v.Value(), key)
	case et == String || et == Bytes:
		// Compared below without the length prefix.
	case et == Bool:
		want = append(buf[:0], byte(v.bits))
	default: // INT, BIGINT, TIMESTAMP: 8 bytes big endian
		want = binary.BigEndian.AppendUint64(buf[:0], v.bits)
	}
	same := func(e string) bool {
		if want == nil {
			return e == v.str
		}
		return e == string(want)
	}
	b := c.str
	n, k := uvarintString(b)
	b = b[k:]
	for i := uint64(0); i < n && len(b) > 0; i++ {
		var e string
		if t.Kind() == MapKind {
			var kb string
			kb, b = elemString(b, t.Key())
			e, b = elemString(b, t.Elem())
			if key {
				e = kb
			}
		} else {
			e, b = elemString(b, et)
		}
		if same(e) {
			return true
		}
	}
	return false
}

// elemString splits one element of type et off the encoding b (which
// CollectionDatum or DatumOf checked): a STRING's or BYTES's bytes without
// their length, another type's fixed bytes.
func elemString(b string, et Type) (elem, rest string) {
	switch et {
	case String, Bytes:
		n, k := uvarintString(b)
		end := min(k+int(n), len(b))
		return b[k:end], b[end:]
	case Bool:
		return b[:min(1, len(b))], b[min(1, len(b)):]
	}
	return b[:min(8, len(b))], b[min(8, len(b)):]
}

// uvarintString is uvarint on a string.
func uvarintString(s string) (uint64, int) {
	var x uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<(7*i), i + 1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	return 0, 0
}

// formatCollection writes a collection as the literal the parser reads:
// {1, 2}, ['a', 'b'], {'k': 1}.
func formatCollection(v Value) (string, bool) {
	var parts []string
	open, close := "{", "}"
	switch x := v.(type) {
	case Set:
		for _, e := range x {
			parts = append(parts, Format(e))
		}
	case List:
		open, close = "[", "]"
		for _, e := range x {
			parts = append(parts, Format(e))
		}
	case Map:
		for _, e := range x {
			parts = append(parts, Format(e.Key)+": "+Format(e.Val))
		}
	default:
		return "", false
	}
	return open + strings.Join(parts, ", ") + close, true
}

// The encoding of a collection (a collection Datum holds it; a frozen
// collection's cell is it): the number of elements as a uvarint, then each
// element (a MAP's key, then its value). An element's bytes depend on its
// class only, so INT and BIGINT elements, say, encode alike: 8 bytes big
// endian for integers, timestamps (microseconds) and floats (IEEE bits of
// the float64), 1 byte for a BOOL, and a uvarint length then the bytes for
// STRING and BYTES.

// AppendCollection appends the encoding of the canonical collection v of
// type t to dst.
func AppendCollection(dst []byte, t Type, v Value) ([]byte, error) {
	c, err := Coerce(v, t)
	if err != nil {
		return dst, err
	}
	switch x := c.(type) {
	case Set:
		return appendElems(dst, x, t.Elem()), nil
	case List:
		return appendElems(dst, x, t.Elem()), nil
	case Map:
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		for _, e := range x {
			dst = appendElem(dst, e.Key, t.Key())
			dst = appendElem(dst, e.Val, t.Elem())
		}
		return dst, nil
	}
	return dst, mismatch(v, t)
}

// AppendElement appends v, a value of the scalar type et, as an element of
// a collection's encoding (a collection stored one cell per element keeps
// each element so, and a read concatenates them).
func AppendElement(dst []byte, et Type, v Value) ([]byte, error) {
	if et.IsCollection() || !et.Valid() {
		return dst, fmt.Errorf("types: %s is not an element type", et)
	}
	c, err := Coerce(v, et)
	if err != nil {
		return dst, err
	}
	if c == nil {
		return dst, fmt.Errorf("a collection's element cannot be NULL")
	}
	return appendElem(dst, c, et), nil
}

func appendElems(dst []byte, xs []Value, et Type) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(xs)))
	for _, e := range xs {
		dst = appendElem(dst, e, et)
	}
	return dst
}

// appendElem appends one element, a canonical value of et.
func appendElem(dst []byte, v Value, et Type) []byte {
	switch x := v.(type) {
	case string:
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...)
	case []byte:
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...)
	case int64:
		return binary.BigEndian.AppendUint64(dst, uint64(x))
	case float64:
		if math.IsNaN(x) {
			x = math.NaN() // one NaN, so that equal collections encode alike
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(x))
	case bool:
		return append(dst, byte(b2i(x)))
	case time.Time:
		return binary.BigEndian.AppendUint64(dst, uint64(x.UnixMicro()))
	}
	panic(fmt.Sprintf("types: %T in a collection of %s", v, et))
}

// DecodeCollection decodes the whole encoding b of a collection of type t
// into its canonical value, checking that it is one (CheckCollection).
func DecodeCollection(t Type, b []byte) (Value, error) {
	if err := CheckCollection(t, b); err != nil {
		return nil, err
	}
	n, k := uvarint(b)
	b = b[k:]
	elem := func(et Type) Value {
		var e []byte
		e, b, _ = splitElem(b, et, t)
		return elemValue(e, et)
	}
	switch t.Kind() {
	case MapKind:
		m := make(Map, n)
		for i := range m {
			m[i] = Entry{elem(t.Key()), elem(t.Elem())}
		}
		return m, nil
	case ListKind:
		xs := make(List, n)
		for i := range xs {
			xs[i] = elem(t.Elem())
		}
		return xs, nil
	}
	xs := make(Set, n)
	for i := range xs {
		xs[i] = elem(t.Elem())
	}
	return xs, nil
}

// CheckCollection checks, without allocating, that b is the encoding of a
// canonical value of the collection type t: a SET's elements and a MAP's
// keys in strictly increasing order, the shortest varints, FLOAT elements
// that are float32s, NaN in one form and nothing after the last element.
// So a value has one encoding, and equal encodings are equal values.
func CheckCollection(t Type, b []byte) error {
	if !t.IsCollection() || !t.Valid() {
		return malformedCollection(t, "not a collection type")
	}
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return malformedCollection(t, "bad element count")
	}
	b = b[k:]
	var prev []byte
	for i := uint64(0); i < n; i++ {
		ordered := t.Elem() // a SET's elements, a MAP's keys
		if t.Kind() == MapKind {
			ordered = t.Key()
		}
		e, rest, err := splitElem(b, ordered, t)
		if err != nil {
			return err
		}
		if t.Kind() != ListKind && i > 0 && compareElems(prev, e, ordered) >= 0 {
			return malformedCollection(t, "elements out of order or repeated")
		}
		prev, b = e, rest
		if t.Kind() == MapKind {
			if _, b, err = splitElem(b, t.Elem(), t); err != nil {
				return err
			}
		}
	}
	if len(b) != 0 {
		return malformedCollection(t, "%d bytes after the last element", len(b))
	}
	return nil
}

// splitElem splits one element of type et off b, checking it: a STRING's
// or BYTES's bytes without their length, another type's fixed bytes.
func splitElem(b []byte, et, t Type) (elem, rest []byte, err error) {
	switch et {
	case String, Bytes:
		n, k := uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, nil, malformedCollection(t, "bad element length")
		}
		return b[k : k+int(n)], b[k+int(n):], nil
	case Bool:
		if len(b) < 1 || b[0] > 1 {
			return nil, nil, malformedCollection(t, "bad BOOL element")
		}
		return b[:1], b[1:], nil
	case Int, BigInt, Float, Double, Timestamp:
		if len(b) < 8 {
			return nil, nil, malformedCollection(t, "truncated element")
		}
		u := binary.BigEndian.Uint64(b)
		switch f := math.Float64frombits(u); {
		case et == Int && (int64(u) < math.MinInt32 || int64(u) > math.MaxInt32):
			return nil, nil, malformedCollection(t, "INT element out of range")
		case et != Float && et != Double:
		case math.IsNaN(f) && u != math.Float64bits(math.NaN()):
			return nil, nil, malformedCollection(t, "non-canonical NaN")
		case et == Float && !math.IsNaN(f) && float64(float32(f)) != f:
			return nil, nil, malformedCollection(t, "FLOAT element %g is not a float32", f)
		}
		return b[:8], b[8:], nil
	}
	return nil, nil, malformedCollection(t, "bad element type")
}

// compareElems orders two checked elements of type et as Compare orders
// their values.
func compareElems(a, b []byte, et Type) int {
	switch et {
	case String, Bytes, Bool:
		return bytes.Compare(a, b)
	case Float, Double:
		return compareFloat(math.Float64frombits(binary.BigEndian.Uint64(a)), math.Float64frombits(binary.BigEndian.Uint64(b)))
	}
	return cmpOrdered(int64(binary.BigEndian.Uint64(a)), int64(binary.BigEndian.Uint64(b)))
}

// elemValue is the value of a checked element of type et.
func elemValue(e []byte, et Type) Value {
	switch et {
	case String:
		return string(e)
	case Bytes:
		return bytes.Clone(e)
	case Bool:
		return e[0] == 1
	}
	u := binary.BigEndian.Uint64(e)
	switch et {
	case Float, Double:
		return math.Float64frombits(u)
	case Timestamp:
		return time.UnixMicro(int64(u)).UTC()
	}
	return int64(u)
}

// uvarint is binary.Uvarint accepting the shortest form only (k <= 0
// otherwise), so that a value has one encoding.
func uvarint(b []byte) (uint64, int) {
	n, k := binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, 0
	}
	return n, k
}

func malformedCollection(t Type, format string, args ...any) error {
	return fmt.Errorf("malformed %s value: %s", t, fmt.Sprintf(format, args...))
}
