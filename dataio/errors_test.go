package dataio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// readErrorCase is a file a reader must refuse, and how.
type readErrorCase struct {
	name   string
	format Format
	file   string // ENTITY.csv or ENTITY.jsonl
	src    string
	rows   int // rows read before the error
	want   string
	line   int
	field  string
}

// checkReadError reads tc.src as the entity its file names and checks the
// error: its text, its fields and the rows read before it.
func checkReadError(t *testing.T, m *catalog.Model, tc readErrorCase) {
	t.Helper()
	rows, err := readAll(t, []byte(tc.src), tc.file, tc.format, m.Entity(strings.TrimSuffix(tc.file, filepath.Ext(tc.file))))
	if err == nil {
		t.Fatalf("no error; rows %q", rows)
	}
	if err.Error() != tc.want {
		t.Fatalf("error\n got %s\nwant %s", err, tc.want)
	}
	var de *Error
	if !errors.As(err, &de) {
		t.Fatalf("error is %T, want *Error", err)
	}
	if de.File != tc.file || de.Line != tc.line || de.Field != tc.field {
		t.Fatalf("error fields %+v, want file %s line %d field %q", de, tc.file, tc.line, tc.field)
	}
	if len(rows) != tc.rows {
		t.Fatalf("%d rows before the error, want %d", len(rows), tc.rows)
	}
}

func TestReadErrors(t *testing.T) {
	m := buildModel(t, testModel)
	for _, tc := range []readErrorCase{
		{"bad BIGINT", CSV, "items.csv", "id,quantity\n1,5\n2,abc\n", 1,
			`items.csv:3: field quantity: "abc" is not a BIGINT`, 3, "quantity"},
		{"bad value on line 7", CSV, "items.csv", "id,quantity\n1,1\n2,2\n3,3\n4,4\n5,5\n6,abc\n", 5,
			`items.csv:7: field quantity: "abc" is not a BIGINT`, 7, "quantity"},
		{"INT out of range", CSV, "items.csv", "id,small\n1,3000000000\n", 0,
			`items.csv:2: field small: "3000000000" is out of range for INT`, 2, "small"},
		{"BIGINT out of range", CSV, "items.csv", "id\n99999999999999999999\n", 0,
			`items.csv:2: field id: "99999999999999999999" is out of range for BIGINT`, 2, "id"},
		{"FLOAT out of range", CSV, "items.csv", "id,price\n1,1e39\n", 0,
			`items.csv:2: field price: "1e39" is out of range for FLOAT`, 2, "price"},
		{"bad DOUBLE", CSV, "items.csv", "id,weight\n1,\n", 0,
			`items.csv:2: field weight: "" is not a DOUBLE`, 2, "weight"},
		{"bad BOOL", CSV, "items.csv", "id,ok\n1,yes\n", 0,
			`items.csv:2: field ok: "yes" is not a BOOL`, 2, "ok"},
		{"bad TIMESTAMP", CSV, "items.csv", "id,created\n1,2024-13-01\n", 0,
			`items.csv:2: field created: "2024-13-01" is not a TIMESTAMP (want YYYY-MM-DD[ HH:MM:SS[.ffffff]])`, 2, "created"},
		{"bad BYTES", CSV, "items.csv", "id,raw\n1,00ff\n", 0,
			`items.csv:2: field raw: "00ff" is not a BYTES value (want \x and hex digits)`, 2, "raw"},
		{"bad escape", CSV, "items.csv", "id,name\n1,\\a\\b\n", 0,
			`items.csv:2: field name: invalid escape in "\\a\\b" (a STRING starting with a backslash is escaped: \\ is a backslash, \r a carriage return)`, 2, "name"},
		{"bad foreign key", CSV, "items.csv", "id,owner\n1,x\n", 0,
			`items.csv:2: field owner: "x" is not a BIGINT`, 2, "owner"},
		{"field on a later line of a multi-line record", CSV, "items.csv", "id,name,quantity\n1,\"a\nb\",q\n", 0,
			`items.csv:3: field quantity: "q" is not a BIGINT`, 3, "quantity"},
		{"NULL key", CSV, "items.csv", "id,name\n1,a\n\\N,b\n", 1, `items.csv:3: missing key id`, 3, ""},
		{"key not in header", CSV, "items.csv", "name,quantity\na,1\n", 0, `items.csv:1: missing key id in the header`, 1, ""},
		{"unknown column", CSV, "items.csv", "id,colour\n", 0, `items.csv:1: unknown column "colour" in the header`, 1, ""},
		{"duplicate column", CSV, "items.csv", "id,name,id\n", 0, `items.csv:1: column "id" appears twice in the header`, 1, ""},
		{"empty file", CSV, "items.csv", "", 0, `items.csv:1: empty file: the header line is missing`, 1, ""},
		{"too few fields", CSV, "items.csv", "id,name\n1,a\n2\n", 1, `items.csv:3: 1 fields, the header has 2`, 3, ""},
		{"too many fields", CSV, "items.csv", "id,name\n1,a,b\n", 0, `items.csv:2: 3 fields, the header has 2`, 2, ""},
		{"bare quote", CSV, "items.csv", "id,name\n1,a\"b\n", 0, `items.csv:2: malformed CSV: bare " in non-quoted-field`, 2, ""},
		{"unterminated quote", CSV, "items.csv", "id,name\n1,\"ab\n", 0, `items.csv:2: malformed CSV: extraneous or missing " in quoted-field`, 2, ""},

		{"JSON: fraction for BIGINT", JSONL, "items.jsonl", `{"id":1,"quantity":1.5}`, 0,
			`items.jsonl:1: field quantity: 1.5 is not a BIGINT`, 1, "quantity"},
		{"JSON: exponent for BIGINT", JSONL, "items.jsonl", "{\"id\":1}\n\n{\"id\":2,\"quantity\":1e3}\n", 1,
			`items.jsonl:3: field quantity: 1e3 is not a BIGINT`, 3, "quantity"},
		{"JSON: BIGINT out of range", JSONL, "items.jsonl", `{"id":9223372036854775808}`, 0,
			`items.jsonl:1: field id: 9223372036854775808 is out of range for BIGINT`, 1, "id"},
		{"JSON: INT out of range", JSONL, "items.jsonl", `{"id":1,"small":-2147483649}`, 0,
			`items.jsonl:1: field small: -2147483649 is out of range for INT`, 1, "small"},
		{"JSON: string for BIGINT", JSONL, "items.jsonl", `{"id":"7"}`, 0,
			`items.jsonl:1: field id: "7" is not a BIGINT`, 1, "id"},
		{"JSON: number for STRING", JSONL, "items.jsonl", `{"id":1,"name":7}`, 0,
			`items.jsonl:1: field name: 7 is not a STRING`, 1, "name"},
		{"JSON: bool for DOUBLE", JSONL, "items.jsonl", `{"id":1,"weight":true}`, 0,
			`items.jsonl:1: field weight: true is not a DOUBLE`, 1, "weight"},
		{"JSON: text for DOUBLE", JSONL, "items.jsonl", `{"id":1,"weight":"1.5"}`, 0,
			`items.jsonl:1: field weight: "1.5" is not a DOUBLE`, 1, "weight"},
		{"JSON: object for BOOL", JSONL, "items.jsonl", `{"id":1,"ok":{}}`, 0,
			`items.jsonl:1: field ok: an object is not a BOOL`, 1, "ok"},
		{"JSON: array for TIMESTAMP", JSONL, "items.jsonl", `{"id":1,"created":[]}`, 0,
			`items.jsonl:1: field created: an array is not a TIMESTAMP`, 1, "created"},
		{"JSON: bad base64", JSONL, "items.jsonl", `{"id":1,"raw":"%%"}`, 0,
			`items.jsonl:1: field raw: "%%" is not a BYTES value (want standard base64)`, 1, "raw"},
		{"JSON: missing key", JSONL, "items.jsonl", `{"name":"a"}`, 0, `items.jsonl:1: missing key id`, 1, ""},
		{"JSON: null key", JSONL, "items.jsonl", `{"id":null}`, 0, `items.jsonl:1: missing key id`, 1, ""},
		{"JSON: unknown column", JSONL, "items.jsonl", `{"id":1,"colour":"red"}`, 0, `items.jsonl:1: unknown column "colour"`, 1, ""},
		{"JSON: repeated key", JSONL, "items.jsonl", `{"id":1,"id":2}`, 0, `items.jsonl:1: field id: appears twice in the object`, 1, "id"},
		{"JSON: not an object", JSONL, "items.jsonl", `[1]`, 0, `items.jsonl:1: malformed JSON: a line must hold one object`, 1, ""},
		{"JSON: syntax", JSONL, "items.jsonl", "{\"id\":1}\n{\"id\":2,}\n", 1,
			`items.jsonl:2: malformed JSON: invalid character '}' looking for beginning of object key string`, 2, ""},
		{"JSON: truncated", JSONL, "items.jsonl", `{"id":1`, 0, `items.jsonl:1: malformed JSON: unexpected EOF`, 1, ""},
		{"JSON: two objects", JSONL, "items.jsonl", `{"id":1} {"id":2}`, 0, `items.jsonl:1: malformed JSON: text after the object`, 1, ""},

		{"collection: NULL element", CSV, "posts.csv", "id,tags\n1,\"[\"\"a\"\",null]\"\n", 0,
			`posts.csv:2: field tags: a FROZEN<SET<STRING>> cannot hold NULL`, 2, "tags"},
		{"collection: object for a SET", CSV, "posts.csv", "id,tags\n1,{}\n", 0,
			`posts.csv:2: field tags: cannot read FROZEN<SET<STRING>> from '{}': want an array`, 2, "tags"},
		{"collection: INT key not a number", CSV, "posts.csv", "id,blobs\n1,\"{\"\"x\"\":\"\"AA==\"\"}\"\n", 0,
			`posts.csv:2: field blobs: in a FROZEN<MAP<INT, BYTES>>: cannot use 'x' (string) as INT`, 2, "blobs"},
		{"collection: not UTF-8", CSV, "posts.csv", "id,tags\n1,\"[\"\"\xff\"\"]\"\n", 0,
			`posts.csv:2: field tags: collection "[\"\xff\"]" is not UTF-8 text (byte 0xff at offset 2); ` + textOnly, 2, "tags"},
		{"JSON: collection with an unpaired surrogate", JSONL, "posts.jsonl", `{"id":1, "tags":["a","\ud800"]}`, 0,
			`posts.jsonl:1: field tags: collection is not UTF-8 text (\ud800 at column 23 is an unpaired UTF-16 surrogate); ` + textOnly, 1, "tags"},
		{"JSON: bad base64 in a MAP", JSONL, "posts.jsonl", `{"id":1,"blobs":{"1":"%%"}}`, 0,
			`posts.jsonl:1: field blobs: in a FROZEN<MAP<INT, BYTES>>: BYTES are written in standard base64 in JSON, not '%%'`, 1, "blobs"},
		{"JSON: FLOAT element out of range", JSONL, "posts.jsonl", `{"id":1,"amounts":[1e39]}`, 0,
			`posts.jsonl:1: field amounts: in a FROZEN<LIST<FLOAT>>: value 1e+39 out of range for FLOAT`, 1, "amounts"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkReadError(t, m, tc) })
	}
}

// Errors are final: Next returns the same error again.
func TestErrorIsSticky(t *testing.T) {
	m := buildModel(t, testModel)
	r, err := NewReader(strings.NewReader("id\nx\n1\n"), "items.csv", CSV, m.Entity("items"))
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("%v then %v", err1, err2)
	}
}

func TestReadSubsetAndOrder(t *testing.T) {
	m := buildModel(t, testModel)
	items := m.Entity("items")
	ts := time.Date(2024, 1, 2, 3, 4, 5, 600000, time.UTC)
	src := "\uFEFFcreated,id,ok,name\n" +
		"2024-01-02 03:04:05.0006,1,TRUE,\\N\n" +
		"\n" + // blank lines are skipped
		"\\N,2,false,\"a,\"\"b\"\"\"\n"
	rows, err := readAll(t, []byte(src), "items.csv", CSV, items)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]types.Value{
		{int64(1), nil, nil, nil, nil, nil, true, ts, nil, nil},
		{int64(2), `a,"b"`, nil, nil, nil, nil, false, nil, nil, nil},
	}
	if !sameRows(rows, want) {
		t.Fatalf("got %v", rows)
	}
	jsrc := "\n  {\"ok\":true, \"created\":\"2024-01-02T03:04:05.0006Z\", \"id\":1, \"weight\":\"-Inf\", \"raw\":\"AP8=\"}  \r\n\n{\"id\":2,\"name\":null}"
	r, err := NewReader(strings.NewReader(jsrc), "items.jsonl", JSONL, items)
	if err != nil {
		t.Fatal(err)
	}
	row, err := r.Next()
	if err != nil || r.Line() != 2 {
		t.Fatalf("%v at line %d", err, r.Line())
	}
	got := append([]types.Value(nil), row...)
	if row, err = r.Next(); err != nil || r.Line() != 4 {
		t.Fatalf("%v at line %d", err, r.Line())
	}
	rows = [][]types.Value{got, append([]types.Value(nil), row...)}
	want = [][]types.Value{
		{int64(1), nil, nil, nil, nil, types.Value(negInf()), true, ts, []byte{0, 0xff}, nil},
		{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	if !sameRows(rows, want) {
		t.Fatalf("got %v", rows)
	}
}

func TestWriteErrors(t *testing.T) {
	m := buildModel(t, testModel)
	items := m.Entity("items")
	row := func(col string, v types.Value) []types.Value {
		r := make([]types.Value, len(items.Columns))
		r[0] = int64(1)
		for i, c := range items.Columns {
			if c.Name == col {
				r[i] = v
			}
		}
		return r
	}
	for _, tc := range []struct {
		row  []types.Value
		want string
	}{
		{[]types.Value{int64(1)}, "row of 1 values, entity items has 10 columns"},
		{row("id", nil), "missing key id"},
		{row("quantity", "abc"), "field quantity: cannot use 'abc' (string) as BIGINT"},
		{row("small", int64(1)<<40), "field small: value 1099511627776 out of range for INT"},
		{row("created", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)), "field created: timestamp year 10000 is outside 0..9999"},
	} {
		for _, f := range []Format{CSV, JSONL} {
			w, err := NewWriter(nopWriter{}, f, items)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(tc.row)
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s: got %v, want %s", f, err, tc.want)
			}
		}
	}
}

func TestFiles(t *testing.T) {
	m := buildModel(t, testModel)
	dir := t.TempDir()
	for _, name := range []string{"notes.jsonl", "items.CSV", "tags.csv", "owners.csv", "README.md", "x.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := Files(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, filepath.Base(f.Path)+":"+f.Entity.Name+":"+f.Format.String())
	}
	want := "owners.csv:owners:csv items.CSV:items:csv notes.jsonl:notes:jsonl tags.csv:tags:csv"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}

	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Files(dir, m)
	wantErr := "entity items has two data files: " + filepath.Join(dir, "items.CSV") + " and " + filepath.Join(dir, "items.jsonl")
	if err == nil || err.Error() != wantErr {
		t.Fatalf("got %v\nwant %s", err, wantErr)
	}
	os.Remove(filepath.Join(dir, "items.jsonl"))

	if err := os.WriteFile(filepath.Join(dir, "foo.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Files(dir, m)
	wantErr = `unknown entity "foo" (file ` + filepath.Join(dir, "foo.csv") + ")"
	if err == nil || err.Error() != wantErr {
		t.Fatalf("got %v\nwant %s", err, wantErr)
	}
}

func TestParentsFirst(t *testing.T) {
	m := buildModel(t, `
DEFINE RELATION a ROWS 1 { id BIGINT KEY, z BIGINT REFERENCES z REVERSE as, self BIGINT REFERENCES a REVERSE kids };
DEFINE RELATION z ROWS 1 { id BIGINT KEY };
DEFINE RELATION m ROWS 1 { id BIGINT KEY, a BIGINT REFERENCES a REVERSE ms };
DEFINE RELATION c1 ROWS 1 { id BIGINT KEY, c2 BIGINT REFERENCES c2 REVERSE c1s };
DEFINE RELATION c2 ROWS 1 { id BIGINT KEY, c1 BIGINT REFERENCES c1 REVERSE c2s };
`)
	var got []string
	for _, e := range ParentsFirst(m) {
		got = append(got, e.Name)
	}
	if s := strings.Join(got, " "); s != "z a m c1 c2" {
		t.Fatalf("got %s", s)
	}
}

func TestReadFile(t *testing.T) {
	m := buildModel(t, testModel)
	dir := t.TempDir()
	e := m.Entity("owners")
	rows := [][]types.Value{{int64(1), "ann"}, {int64(2), nil}}
	path := filepath.Join(dir, "owners.jsonl")
	if err := os.WriteFile(path, writeAll(t, JSONL, e, rows), 0o644); err != nil {
		t.Fatal(err)
	}
	var got [][]types.Value
	err := ReadFile(File{Path: path, Entity: e, Format: JSONL}, func(row []types.Value) error {
		got = append(got, append([]types.Value(nil), row...))
		return nil
	})
	if err != nil || !sameRows(rows, got) {
		t.Fatalf("%v %v", err, got)
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a/b.csv": CSV, "x.JSONL": JSONL, "x.json": 0, "csv": 0, "a.csv.gz": 0} {
		f, ok := FormatOf(path)
		if f != want || ok != (want != 0) {
			t.Errorf("FormatOf(%q) = %v %v", path, f, ok)
		}
	}
}
