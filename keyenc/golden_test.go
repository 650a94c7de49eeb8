package keyenc_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

var negZero = math.Copysign(0, -1)

func TestNaturalGolden(t *testing.T) {
	tests := []struct {
		typ  types.Type
		v    types.Value
		want string
	}{
		{types.Int, int64(100), "\x00\x00\x00d"},
		{types.Int, int64(-1), "\xff\xff\xff\xff"},
		{types.BigInt, int64(-2), "\xff\xff\xff\xff\xff\xff\xff\xfe"},
		{types.Float, 1.0, "\x3f\x80\x00\x00"},
		{types.Float, math.NaN(), "\x7f\xc0\x00\x00"},
		{types.Double, negZero, "\x80\x00\x00\x00\x00\x00\x00\x00"},
		{types.Double, math.NaN(), "\x7f\xf8\x00\x00\x00\x00\x00\x00"},
		{types.Bool, true, "\x01"},
		{types.Timestamp, time.Unix(1, 0).UTC(), "\x00\x00\x00\x00\x00\x0f\x42\x40"},
		{types.String, "a\x00b", "a\x00b"},
		{types.Bytes, []byte{}, ""},
	}
	for _, tt := range tests {
		got, err := keyenc.AppendNatural(nil, tt.typ, tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("AppendNatural(%s, %s) = % X, %v; want % X", tt.typ, types.Format(tt.v), got, err, tt.want)
		}
	}
}

func TestOrderedGolden(t *testing.T) {
	tests := []struct {
		typ      types.Type
		v        types.Value
		nullable bool
		asc      string // the descending encoding is its inverse
	}{
		{types.String, "a\x00b", false, "a\x00\xffb\x00\x01"},
		{types.String, "", false, "\x00\x01"},
		{types.Bytes, []byte{0xff, 0x00}, false, "\xff\x00\xff\x00\x01"},
		{types.Int, int64(-1), false, "\x7f\xff\xff\xff"},
		{types.Int, int64(0), false, "\x80\x00\x00\x00"},
		{types.Int, int64(math.MinInt32), false, "\x00\x00\x00\x00"},
		{types.BigInt, int64(0), false, "\x80\x00\x00\x00\x00\x00\x00\x00"},
		{types.BigInt, int64(math.MaxInt64), false, "\xff\xff\xff\xff\xff\xff\xff\xff"},
		{types.Float, 1.0, false, "\xbf\x80\x00\x00"},
		{types.Float, -1.0, false, "\x40\x7f\xff\xff"},
		{types.Float, negZero, false, "\x80\x00\x00\x00"},
		{types.Float, math.Inf(-1), false, "\x00\x7f\xff\xff"},
		{types.Float, math.NaN(), false, "\x00\x00\x00\x00"},
		{types.Double, 1.0, false, "\xbf\xf0\x00\x00\x00\x00\x00\x00"},
		{types.Double, math.NaN(), false, "\x00\x00\x00\x00\x00\x00\x00\x00"},
		{types.Bool, false, false, "\x00"},
		{types.Bool, true, false, "\x01"},
		{types.Timestamp, time.Unix(0, 0).UTC(), false, "\x80\x00\x00\x00\x00\x00\x00\x00"},
		{types.Timestamp, time.UnixMicro(-1).UTC(), false, "\x7f\xff\xff\xff\xff\xff\xff\xff"},
		{types.Int, nil, true, "\x00"},
		{types.Int, int64(1), true, "\x01\x80\x00\x00\x01"},
		{types.String, "", true, "\x01\x00\x01"},
	}
	for _, tt := range tests {
		got, err := keyenc.AppendOrdered(nil, tt.typ, tt.v, tt.nullable)
		if err != nil || string(got) != tt.asc {
			t.Errorf("AppendOrdered(%s, %s, %t) = % X, %v; want % X", tt.typ, types.Format(tt.v), tt.nullable, got, err, tt.asc)
		}
		desc := []byte(tt.asc)
		for i := range desc {
			desc[i] ^= 0xff
		}
		got, err = keyenc.AppendDesc(nil, tt.typ, tt.v, tt.nullable)
		if err != nil || !bytes.Equal(got, desc) {
			t.Errorf("AppendDesc(%s, %s, %t) = % X, %v; want % X", tt.typ, types.Format(tt.v), tt.nullable, got, err, desc)
		}
	}
}

func TestSaltBucketGolden(t *testing.T) {
	tests := []struct {
		key  string
		n    int
		want byte
	}{
		// h = 31*1 + 97 = 128; 128 % 16 = 0.
		{"a", 16, 0},
		// h = 31*1 + 97 = 128; 128 % 7 = 2.
		{"a", 7, 2},
		// h = 31*1 + int8(0x80) = 31 - 128 = -97; -97 % 16 = -1 (truncated); abs = 1.
		{"\x80", 16, 1},
		// h = 1 (no bytes); 1 % 1 = 0.
		{"", 1, 0},
		// h = 31*(31*1+97) + 98 = 31*128 + 98 = 4066; 4066 % 256 = 226.
		{"ab", 256, 226},
		// Overflow: 0x7F repeated. h0=1, h1=31+127=158, h2=31*158+127=5025,
		// h3=31*5025+127=155902, h4=31*155902+127=4833089,
		// h5=31*4833089+127=149825886, h6=31*149825886+127=4644602593
		// wraps to 4644602593-2^32=349635297, 349635297 % 100 = 97.
		{"\x7f\x7f\x7f\x7f\x7f\x7f", 100, 97},
	}
	for _, tt := range tests {
		if got := keyenc.SaltBucket([]byte(tt.key), tt.n); got != tt.want {
			t.Errorf("SaltBucket(%q, %d) = %d, want %d", tt.key, tt.n, got, tt.want)
		}
	}
}

func TestSaltBucketPanicsOnBadN(t *testing.T) {
	for _, n := range []int{0, -1, 257} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SaltBucket(_, %d) did not panic", n)
				}
			}()
			keyenc.SaltBucket([]byte("a"), n)
		}()
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		typ      types.Type
		v        types.Value
		nullable bool
		want     string
	}{
		{types.Int, nil, false, "keyenc: NULL INT value in a non-nullable encoding"},
		{types.Int, 5, false, "keyenc: INT value must be int64, got int"},
		{types.Int, int64(math.MaxInt32 + 1), false, "keyenc: INT value 2147483648 out of range"},
		{types.Float, 0.1, false, "keyenc: FLOAT value 0.1 is not a float32"},
		{types.Float, 1e300, false, "keyenc: FLOAT value 1e+300 is not a float32"},
		{types.String, []byte("x"), true, "keyenc: STRING value must be string, got []uint8"},
		{types.Bytes, "x", false, "keyenc: BYTES value must be []byte, got string"},
		{types.Bool, int64(1), false, "keyenc: BOOL value must be bool, got int64"},
		{types.Timestamp, time.Unix(0, 1).UTC(), false, "keyenc: TIMESTAMP value 1970-01-01T00:00:00.000000001Z is not a whole number of microseconds within int64 range"},
		{types.Timestamp, time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), false, "keyenc: TIMESTAMP value 300000-01-01T00:00:00Z is not a whole number of microseconds within int64 range"},
		{types.Invalid, nil, true, "keyenc: unsupported type INVALID"},
		{types.Type(42), int64(1), false, "keyenc: unsupported type Type(42)"},
	}
	for _, tt := range tests {
		dst := make([]byte, 2, 16)
		for name, appendFn := range map[string]func([]byte, types.Type, types.Value, bool) ([]byte, error){
			"AppendOrdered": keyenc.AppendOrdered,
			"AppendDesc":    keyenc.AppendDesc,
		} {
			got, err := appendFn(dst, tt.typ, tt.v, tt.nullable)
			if err == nil || err.Error() != tt.want {
				t.Errorf("%s(%s, %#v) error = %v, want %q", name, tt.typ, tt.v, err, tt.want)
			}
			if len(got) != 2 || !bytes.Equal(dst[:cap(dst)], make([]byte, cap(dst))) {
				t.Errorf("%s(%s, %#v) changed dst on error: % X", name, tt.typ, tt.v, dst[:cap(dst)])
			}
		}
		if tt.v == nil {
			continue
		}
		_, err := keyenc.AppendNatural(dst, tt.typ, tt.v)
		if err == nil || err.Error() != tt.want {
			t.Errorf("AppendNatural(%s, %#v) error = %v, want %q", tt.typ, tt.v, err, tt.want)
		}
	}
	if _, err := keyenc.AppendNatural(nil, types.Int, nil); err == nil || err.Error() != "keyenc: INT value is NULL" {
		t.Errorf("AppendNatural(INT, NULL) error = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		typ      types.Type
		in       string
		nullable bool
		desc     bool
		want     string
	}{
		{types.Int, "\x80\x00", false, false, "keyenc: INT ordered encoding truncated: need 4 bytes, have 2"},
		{types.Int, "\xfe\x7f", true, true, "keyenc: INT descending encoding truncated: need 5 bytes, have 2"},
		{types.BigInt, "", true, false, "keyenc: BIGINT ordered encoding truncated: need 1 byte, have 0"},
		{types.Int, "\x02\x80\x00\x00\x00", true, false, "keyenc: INT ordered encoding has bad null marker 0x02"},
		{types.String, "ab", false, false, "keyenc: STRING ordered encoding truncated: no terminator"},
		{types.String, "ab\x00", false, false, "keyenc: STRING ordered encoding truncated: no terminator"},
		{types.String, "a\x00\x02\x00\x01", false, false, "keyenc: STRING ordered encoding has bad escape 00 02 at offset 1"},
		{types.Bytes, "\x01\x00\x00", true, false, "keyenc: BYTES ordered encoding has bad escape 00 00 at offset 1"},
		{types.Bytes, "\x9e\xff\xfd", false, true, "keyenc: BYTES descending encoding has bad escape FF FD at offset 1"},
		{types.Bool, "\x02", false, false, "keyenc: BOOL ordered encoding has invalid byte 0x02"},
		{types.Float, "\x7f\xff\xff\xff", false, false, "keyenc: FLOAT ordered encoding is not canonical: 7F FF FF FF decodes to -0 or a NaN"},
		{types.Float, "\xff\xc0\x00\x00", false, false, "keyenc: FLOAT ordered encoding is not canonical: FF C0 00 00 decodes to -0 or a NaN"},
		{types.Double, "\x00\x00\x00\x00\x00\x00\x00\x01", false, false, "keyenc: DOUBLE ordered encoding is not canonical: 00 00 00 00 00 00 00 01 decodes to -0 or a NaN"},
		{types.Invalid, "\x00", false, false, "keyenc: unsupported type INVALID"},
	}
	for _, tt := range tests {
		decode := keyenc.DecodeOrdered
		if tt.desc {
			decode = keyenc.DecodeDesc
		}
		v, n, err := decode(tt.typ, []byte(tt.in), tt.nullable)
		if err == nil || err.Error() != tt.want {
			t.Errorf("decode(%s, % X, %t) = %v, %d, %v; want error %q", tt.typ, tt.in, tt.nullable, v, n, err, tt.want)
		}
	}

	natural := []struct {
		typ  types.Type
		in   string
		want string
	}{
		{types.Int, "\x00\x00\x00", "keyenc: INT natural encoding has 3 bytes, want 4"},
		{types.BigInt, "\x00\x00\x00\x00\x00\x00\x00\x00\x00", "keyenc: BIGINT natural encoding has 9 bytes, want 8"},
		{types.Bool, "\x02", "keyenc: BOOL natural encoding has invalid byte 0x02"},
		{types.Float, "\x7f\xc0\x00\x01", "keyenc: FLOAT natural encoding has non-canonical NaN 7FC00001"},
		{types.Float, "\xff\xc0\x00\x00", "keyenc: FLOAT natural encoding has non-canonical NaN FFC00000"},
		{types.Double, "\x7f\xf0\x00\x00\x00\x00\x00\x01", "keyenc: DOUBLE natural encoding has non-canonical NaN 7FF0000000000001"},
		{types.Type(9), "", "keyenc: unsupported type Type(9)"},
	}
	for _, tt := range natural {
		v, err := keyenc.DecodeNatural(tt.typ, []byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("DecodeNatural(%s, % X) = %v, %v; want error %q", tt.typ, tt.in, v, err, tt.want)
		}
	}
}

// TestDecodeCopies checks that decoded values do not alias the input, which
// callers typically reuse.
func TestDecodeCopies(t *testing.T) {
	in := []byte("ab\x00\x01")
	v, _, err := keyenc.DecodeOrdered(types.Bytes, in, false)
	if err != nil {
		t.Fatal(err)
	}
	nat, err := keyenc.DecodeNatural(types.Bytes, in[:2])
	if err != nil {
		t.Fatal(err)
	}
	in[0] = 'X'
	if string(v.([]byte)) != "ab" || string(nat.([]byte)) != "ab" {
		t.Errorf("decoded values alias the input: %q, %q", v, nat)
	}
	if empty, _ := keyenc.DecodeNatural(types.Bytes, nil); empty == nil || len(empty.([]byte)) != 0 || empty.([]byte) == nil {
		t.Errorf("DecodeNatural(BYTES, nil) = %#v, want empty non-nil []byte", empty)
	}
	if s, _ := keyenc.DecodeNatural(types.String, []byte("x\x00")); s != "x\x00" || strings.Contains(s.(string), "X") {
		t.Errorf("DecodeNatural(STRING) = %q", s)
	}
}
