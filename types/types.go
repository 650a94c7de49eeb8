// Package types owns kvschema's attribute types and the Go representation of
// their values.
//
// Every value that crosses a package boundary is a Value holding exactly one of
// these canonical Go types (or nil for SQL NULL):
//
//	STRING    string
//	INT       int64   (range-checked to int32)
//	BIGINT    int64
//	FLOAT     float64 (rounded to float32 precision)
//	DOUBLE    float64
//	BOOL      bool
//	TIMESTAMP time.Time (UTC, microsecond precision)
//	BYTES     []byte
//
// Coerce is the only way foreign values (literals, parameters, database/sql
// arguments) enter: it converts or rejects, so later stages never see a value of
// the wrong Go type for its attribute.
//
// The read path holds values unboxed instead, as Datums: decoders write
// them, query results hold them, and a Datum converts to and from its Value
// without loss (Datum.Value, DatumOf).
package types

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Type is an attribute type: a scalar, or a collection of scalars (see
// SetOf, ListOf, MapOf).
type Type uint16

// The attribute types. Invalid is the zero value so a forgotten type is caught.
const (
	Invalid Type = iota
	String
	Int
	BigInt
	Float
	Double
	Bool
	Timestamp
	Bytes
)

var typeNames = [...]string{
	Invalid:   "INVALID",
	String:    "STRING",
	Int:       "INT",
	BigInt:    "BIGINT",
	Float:     "FLOAT",
	Double:    "DOUBLE",
	Bool:      "BOOL",
	Timestamp: "TIMESTAMP",
	Bytes:     "BYTES",
}

// AllTypes lists every valid type, for tests and generators.
var AllTypes = []Type{String, Int, BigInt, Float, Double, Bool, Timestamp, Bytes}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	if t.Valid() {
		return collectionName(t)
	}
	return fmt.Sprintf("Type(%d)", uint16(t))
}

// ParseType maps a type name (case-insensitive) to a Type. Common SQL aliases
// are accepted: VARCHAR/TEXT for STRING, INTEGER for INT, BOOLEAN for BOOL,
// VARBINARY/BLOB for BYTES, REAL for FLOAT.
func ParseType(name string) (Type, bool) {
	switch strings.ToUpper(name) {
	case "STRING", "VARCHAR", "TEXT":
		return String, true
	case "INT", "INTEGER":
		return Int, true
	case "BIGINT", "LONG":
		return BigInt, true
	case "FLOAT", "REAL":
		return Float, true
	case "DOUBLE":
		return Double, true
	case "BOOL", "BOOLEAN":
		return Bool, true
	case "TIMESTAMP":
		return Timestamp, true
	case "BYTES", "VARBINARY", "BLOB":
		return Bytes, true
	}
	return Invalid, false
}

// FixedWidth is the byte width of the type's natural encoding, or 0 if the
// type is variable-length.
func (t Type) FixedWidth() int {
	switch t {
	case Int, Float:
		return 4
	case BigInt, Double, Timestamp:
		return 8
	case Bool:
		return 1
	}
	return 0
}

// Value is a value of some Type: one of the canonical Go types listed in the
// package doc, or nil for NULL.
type Value = any

// TimestampPrecision is the resolution timestamps are stored with.
const TimestampPrecision = time.Microsecond

// ExactTimestamp returns t in UTC, or an error if t has a finer part than
// TimestampPrecision: a TIMESTAMP never silently drops digits.
func ExactTimestamp(t time.Time) (time.Time, error) {
	u := t.UTC()
	if r := u.Truncate(TimestampPrecision); !r.Equal(u) {
		return time.Time{}, fmt.Errorf("timestamp %s has %d ns below the microsecond: a TIMESTAMP keeps microseconds (truncate it first, e.g. t.Truncate(time.Microsecond))", u.Format(time.RFC3339Nano), u.Sub(r).Nanoseconds())
	}
	return u, nil
}

// Coerce converts v to the canonical representation of t or says why it
// cannot. nil stays nil (NULL). Conversions are the ones a SQL user expects:
// integers widen to floats, integral floats narrow to integers, strings parse
// as timestamps; nothing lossy is accepted silently.
func Coerce(v Value, t Type) (Value, error) {
	if v == nil {
		return nil, nil
	}
	if t.IsCollection() {
		return coerceCollection(v, t)
	}
	// Already canonical: return v itself (re-boxing would allocate).
	switch x := v.(type) {
	case string:
		if t == String {
			return v, nil
		}
	case []byte:
		if t == Bytes {
			return v, nil
		}
	case int64:
		if t == BigInt || t == Int && x >= math.MinInt32 && x <= math.MaxInt32 {
			return v, nil
		}
	case float64:
		if t == Double || t == Float && float64(float32(x)) == x {
			return v, nil
		}
	case bool:
		if t == Bool {
			return v, nil
		}
	}
	switch t {
	case String:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case Bytes:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case Int, BigInt:
		i, ok := toInt64(v)
		if !ok {
			break
		}
		if t == Int && (i < math.MinInt32 || i > math.MaxInt32) {
			return nil, fmt.Errorf("value %d out of range for INT", i)
		}
		return i, nil
	case Float, Double:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			i, ok := toInt64(v)
			if !ok {
				return nil, mismatch(v, t)
			}
			f = float64(i)
		}
		if t == Float {
			if !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
				return nil, fmt.Errorf("value %g out of range for FLOAT", f)
			}
			f = float64(float32(f))
		}
		return f, nil
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		}
	case Timestamp:
		switch x := v.(type) {
		case time.Time:
			return ExactTimestamp(x)
		case string:
			ts, err := ParseTimestamp(x)
			if err != nil {
				return nil, err
			}
			return ts, nil
		}
	}
	return nil, mismatch(v, t)
}

func mismatch(v Value, t Type) error {
	return fmt.Errorf("cannot use %s (%s) as %s", DisplayLiteral(v), KindName(v), t)
}

// KindName names the SQL kind of a Go value, for error messages.
func KindName(v Value) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case string:
		return "string"
	case []byte:
		return "bytes"
	case int64, int, int32, int16, int8, uint8, uint16, uint32, uint64, uint:
		return "integer"
	case float64, float32:
		return "float"
	case bool:
		return "boolean"
	case time.Time:
		return "timestamp"
	case Set:
		return "set"
	case List:
		return "list"
	case Map:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

func toInt64(v Value) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), true
		}
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// timestampLayouts are accepted by ParseTimestamp, most specific first.
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02",
}

// ParseTimestamp parses an ISO-8601-style timestamp; values without a zone
// are UTC.
func ParseTimestamp(s string) (time.Time, error) {
	for _, layout := range timestampLayouts {
		if ts, err := time.Parse(layout, s); err == nil {
			return ExactTimestamp(ts)
		}
	}
	return time.Time{}, fmt.Errorf("invalid timestamp %q (want YYYY-MM-DD[ HH:MM:SS[.ffffff]])", s)
}

// FormatTimestamp prints a timestamp in the form ParseTimestamp reads back.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.999999")
}

// EqualTuples reports whether a and b hold equal values (by Compare, so
// NULL equals only NULL and 1 equals 1.0) in the same positions.
func EqualTuples(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// Compare orders two non-NULL values of the same type: -1, 0 or +1. NULL
// sorts before everything (as SQLite and Phoenix ASC order do). Values of
// different kinds compare numerically when both are numbers and by kind
// otherwise, so Compare is a total order usable for sorting.
func Compare(a, b Value) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		default:
			return 1
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y)
		case float64:
			return compareIntFloat(x, y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return compareFloat(x, y)
		case int64:
			return -compareIntFloat(y, x)
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmpOrdered(b2i(x), b2i(y))
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	default:
		if c, ok := compareCollections(a, b); ok {
			return c
		}
	}
	return cmpOrdered(kindRank(a), kindRank(b))
}

// compareFloat orders NaN below every other float so the order is total.
func compareFloat(x, y float64) int {
	switch {
	case math.IsNaN(x) && math.IsNaN(y):
		return 0
	case math.IsNaN(x):
		return -1
	case math.IsNaN(y):
		return 1
	}
	return cmpOrdered(x, y)
}

func compareIntFloat(i int64, f float64) int {
	if math.IsNaN(f) {
		return 1
	}
	if f >= math.MaxInt64 {
		return -1
	}
	if f < math.MinInt64 {
		return 1
	}
	t := math.Trunc(f)
	if c := cmpOrdered(i, int64(t)); c != 0 {
		return c
	}
	return cmpOrdered(0, f-t)
}

func kindRank(v Value) int {
	switch v.(type) {
	case bool:
		return 1
	case int64, float64:
		return 2
	case time.Time:
		return 3
	case string:
		return 4
	case []byte:
		return 5
	case Set:
		return 6
	case List:
		return 7
	case Map:
		return 8
	}
	return 9
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Format prints a value as a kvschema literal that the parser reads back to
// the same value: 'it”s', 42, 1.5, TRUE, NULL, x'00ff',
// TIMESTAMP '2024-01-02 03:04:05'.
func Format(v Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return QuoteString(x)
	case []byte:
		return fmt.Sprintf("x'%x'", x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return FormatFloat(x)
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case time.Time:
		return "TIMESTAMP " + QuoteString(FormatTimestamp(x))
	}
	if s, ok := formatCollection(v); ok {
		return s
	}
	return fmt.Sprintf("%v", v)
}

// FormatFloat prints a float so that it re-lexes as a float (never as an
// integer): 1 → 1.0, 1e+21 → 1e+21. NaN and infinities (which no literal
// produces) print as NaN / Infinity for messages only.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// QuoteString quotes s as a single-quoted literal, doubling embedded quotes.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
