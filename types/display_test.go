package types

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, value, text string }{
		{"", "", ""},
		{"plain text, 'quoted' \"too\"", "plain text, 'quoted' \"too\"", "plain text, 'quoted' \"too\""},
		{"é 日本 €", "é 日本 €", "é 日本 €"},
		{"\x1b[31m\x07\x00\r\x7f", `\x1b[31m\x07\x00\x0d\x7f`, `\x1b[31m\x07\x00\x0d\x7f`},
		{"a\tb\nc", `a\x09b\x0ac`, "a\tb\nc"},
		{`back\slash`, `back\x5cslash`, `back\slash`},
		{"\xff\xfe", `\xff\xfe`, `\xff\xfe`},
		{"\xe2\x82", `\xe2\x82`, `\xe2\x82`}, // a rune cut short
		{"\u009b2J", `\xc2\x9b2J`, `\xc2\x9b2J`},
		{"\u202eevil", `\xe2\x80\xaeevil`, `\xe2\x80\xaeevil`},
		{"\u00a0nbsp", `\xc2\xa0nbsp`, `\xc2\xa0nbsp`},
		{"\ufffd", "\ufffd", "\ufffd"}, // U+FFFD itself is printable
	} {
		if got := Escape(tc.in); got != tc.value {
			t.Errorf("Escape(%q) = %s, want %s", tc.in, got, tc.value)
		}
		if got := EscapeText(tc.in); got != tc.text {
			t.Errorf("EscapeText(%q) = %s, want %s", tc.in, got, tc.text)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Escape("nothing to escape here, é") }); n != 0 {
		t.Errorf("Escape of printable text allocates %v times", n)
	}
}

func TestDisplay(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		v                Value
		display, literal string
	}{
		{"it's \x1b", `it's \x1b`, `'it''s \x1b'`},
		{"a\\b", `a\x5cb`, `'a\x5cb'`},
		{nil, "NULL", "NULL"},
		{int64(-3), "-3", "-3"},
		{1.5, "1.5", "1.5"},
		{true, "TRUE", "TRUE"},
		{[]byte{0, 0x1b}, "x'001b'", "x'001b'"},
		{ts, "TIMESTAMP '2026-01-02 03:04:05'", "TIMESTAMP '2026-01-02 03:04:05'"},
		{struct{ S string }{"\x1b"}, `{\x1b}`, `{\x1b}`}, // not canonical: still escaped
	} {
		if got := Display(tc.v); got != tc.display {
			t.Errorf("Display(%#v) = %s, want %s", tc.v, got, tc.display)
		}
		if got := DisplayLiteral(tc.v); got != tc.literal {
			t.Errorf("DisplayLiteral(%#v) = %s, want %s", tc.v, got, tc.literal)
		}
	}
	// Errors that quote a value use the rule too.
	if _, err := Coerce("\x1b[2J", Int); err == nil || err.Error() != `cannot use '\x1b[2J' (string) as INT` {
		t.Errorf("Coerce error: %v", err)
	}
}

// unescape inverts Escape.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			n, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
			b.WriteByte(byte(n))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// For any bytes, Escape gives valid UTF-8 made of printable runes only
// (so printing it cannot act on a terminal), from which the bytes can be
// read back; EscapeText differs only in keeping line breaks, tabs and
// backslashes.
func TestEscapeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.RuneFrom(nil, unicode.C, unicode.Zs, unicode.Cf)),
			rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) })).Draw(t, "s")
		for _, text := range []bool{false, true} {
			e := escape(s, text)
			if !utf8.ValidString(e) {
				t.Fatalf("escape(%q, %v) = %q: invalid UTF-8", s, text, e)
			}
			for _, r := range e {
				if !unicode.IsPrint(r) && !(text && (r == '\n' || r == '\t')) {
					t.Fatalf("escape(%q, %v) = %q holds %U", s, text, e, r)
				}
			}
		}
		if got := unescape(Escape(s)); got != s {
			t.Fatalf("Escape(%q) = %q reads back as %q", s, Escape(s), got)
		}
	})
}
