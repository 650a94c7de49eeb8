package dataio

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// The tail of every "not UTF-8" message about a STRING.
const wantTextOnly = "a STRING holds text, binary data belongs in a BYTES column"

// A STRING is UTF-8 text in every format: bytes that are not UTF-8, and in
// JSON \u escapes of unpaired UTF-16 surrogates, are refused with the line
// and the field, never turned into U+FFFD.
func TestReadNotUTF8(t *testing.T) {
	m := buildModel(t, testModel)
	for _, tc := range []readErrorCase{
		{"CSV: stray byte", CSV, "items.csv", "id,name\n1,ok\n2,a\xffb\n", 1,
			`items.csv:3: field name: "a\xffb" is not UTF-8 text (byte 0xff at offset 1); ` + wantTextOnly, 3, "name"},
		{"CSV: escaped string", CSV, "items.csv", "id,name\n1,\\\\\xc3\n", 0,
			`items.csv:2: field name: "\\\\\xc3" is not UTF-8 text (byte 0xc3 at offset 2); ` + wantTextOnly, 2, "name"},
		{"CSV: UTF-8 encoded surrogate", CSV, "items.csv", "id,name\n1,\xed\xa0\x80\n", 0,
			`items.csv:2: field name: "\xed\xa0\x80" is not UTF-8 text (byte 0xed at offset 0); ` + wantTextOnly, 2, "name"},
		{"CSV: overlong encoding", CSV, "items.csv", "id,name\n1,\"x\n\xc0\xaf\"\n", 0,
			`items.csv:2: field name: "x\n\xc0\xaf" is not UTF-8 text (byte 0xc0 at offset 2); ` + wantTextOnly, 2, "name"},
		{"CSV: key", CSV, "tags.csv", "label\n\xfe\n", 0,
			`tags.csv:2: field label: "\xfe" is not UTF-8 text (byte 0xfe at offset 0); ` + wantTextOnly, 2, "label"},

		{"JSON: stray byte", JSONL, "items.jsonl", "{\"id\":1}\n{\"id\":2,\"name\":\"a\xffb\"}\n", 1,
			`items.jsonl:2: field name: string is not UTF-8 text (byte 0xff at column 18); ` + wantTextOnly, 2, "name"},
		{"JSON: lone high surrogate", JSONL, "items.jsonl", `{"id":1,"name":"\ud800"}`, 0,
			`items.jsonl:1: field name: string is not UTF-8 text (\ud800 at column 17 is an unpaired UTF-16 surrogate); ` + wantTextOnly, 1, "name"},
		{"JSON: lone low surrogate", JSONL, "items.jsonl", `  {"id":1, "name": "ab\uDC00"}`, 0,
			`items.jsonl:1: field name: string is not UTF-8 text (\uDC00 at column 23 is an unpaired UTF-16 surrogate); ` + wantTextOnly, 1, "name"},
		{"JSON: high surrogate then a letter", JSONL, "items.jsonl", `{"id":1,"name":"\ud83dx"}`, 0,
			`items.jsonl:1: field name: string is not UTF-8 text (\ud83d at column 17 is an unpaired UTF-16 surrogate); ` + wantTextOnly, 1, "name"},
		{"JSON: high surrogate then another escape", JSONL, "items.jsonl", `{"id":1,"name":"\ud83d\u0041"}`, 0,
			`items.jsonl:1: field name: string is not UTF-8 text (\ud83d at column 17 is an unpaired UTF-16 surrogate); ` + wantTextOnly, 1, "name"},
		{"JSON: pair in the wrong order", JSONL, "items.jsonl", `{"id":1,"name":"\ude00\ud83d"}`, 0,
			`items.jsonl:1: field name: string is not UTF-8 text (\ude00 at column 17 is an unpaired UTF-16 surrogate); ` + wantTextOnly, 1, "name"},
		{"JSON: two high surrogates", JSONL, "items.jsonl", `{"id":1,"name":"\ud83d\ud83d\ude00"}`, 0,
			`items.jsonl:1: field name: string is not UTF-8 text (\ud83d at column 17 is an unpaired UTF-16 surrogate); ` + wantTextOnly, 1, "name"},
		{"JSON: in a TIMESTAMP", JSONL, "items.jsonl", `{"id":1,"created":"\udfff"}`, 0,
			`items.jsonl:1: field created: string is not UTF-8 text (\udfff at column 20 is an unpaired UTF-16 surrogate)`, 1, "created"},
		{"JSON: in a key", JSONL, "items.jsonl", "{\"id\":1,\"na\xe9me\":\"x\"}", 0,
			`items.jsonl:1: key is not UTF-8 text (byte 0xe9 at column 12)`, 1, ""},
		{"JSON: escaped surrogate in a key", JSONL, "items.jsonl", `{"\ud800":1}`, 0,
			`items.jsonl:1: key is not UTF-8 text (\ud800 at column 3 is an unpaired UTF-16 surrogate)`, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkReadError(t, m, tc) })
	}
}

// What is UTF-8 text is read as is, U+FFFD and escaped backslashes included.
func TestReadUTF8(t *testing.T) {
	m := buildModel(t, testModel)
	tags := m.Entity("tags")
	for _, tc := range []struct {
		format    Format
		src, want string
	}{
		{CSV, "label\né \uFFFD 😀\n", "é \uFFFD 😀"},
		{CSV, "label\n\\\\\\\\r\xef\xbf\xbd\n", "\\\r\uFFFD"},
		{JSONL, `{"label":"\ud83d\ude00 \\ud800 \u00e9 \ufffd \uFFFD"}`, "😀 \\ud800 é \uFFFD \uFFFD"},
		{JSONL, "{\"label\":\"\xf0\x9f\x98\x80\\\"\\u0000\"}", "😀\"\x00"},
	} {
		rows, err := readAll(t, []byte(tc.src), "tags"+tc.format.Ext(), tc.format, tags)
		if err != nil || len(rows) != 1 || rows[0][0] != tc.want {
			t.Errorf("%s %q: got %q, %v; want %q", tc.format, tc.src, rows, err, tc.want)
		}
	}
}

// Neither Writer writes a STRING that is not UTF-8 text, and neither Reader
// reads one, whatever the bytes.
func TestNotUTF8Property(t *testing.T) {
	m := buildModel(t, testModel)
	tags := m.Entity("tags")
	want := "field label: string is not UTF-8 text; " + wantTextOnly
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.Custom(func(t *rapid.T) string {
			return rapid.StringN(0, 4, -1).Draw(t, "pre") + string(rapid.SliceOfN(rapid.Byte(), 1, 4).Draw(t, "bytes")) + rapid.StringN(0, 4, -1).Draw(t, "post")
		}).Filter(func(s string) bool { return !utf8.ValidString(s) }).Draw(t, "s")
		for _, f := range []Format{CSV, JSONL} {
			var out strings.Builder
			w, err := NewWriter(&out, f, tags)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write([]types.Value{s}); err == nil || err.Error() != want {
				t.Fatalf("%s writer: got %v, want %s", f, err, want)
			}
		}
		// By hand: CSV quoted as encoding/csv would, JSON with the bytes raw.
		csvSrc := "label\n\"" + strings.ReplaceAll(s, `"`, `""`) + "\"\n"
		jsonSrc := `{"label":"` + jsonEscapeASCII(s) + `"}`
		for _, in := range []struct {
			f   Format
			src string
		}{{CSV, csvSrc}, {JSONL, jsonSrc}} {
			rows, err := readAll(t, []byte(in.src), "tags"+in.f.Ext(), in.f, tags)
			var de *Error
			if err == nil || !errors.As(err, &de) || de.Field != "label" || de.Line != 1+btoi(in.f == CSV) ||
				!strings.Contains(de.Msg, "is not UTF-8 text") {
				t.Fatalf("%s reader on %q: rows %q, error %v", in.f, in.src, rows, err)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// jsonEscapeASCII escapes the quotes, backslashes and control characters of
// s for a JSON string, leaving every other byte as it is.
func jsonEscapeASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
