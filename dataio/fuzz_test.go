package dataio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

var fuzzRows = [][]types.Value{
	{int64(1), "a,b", int64(5), int64(-7), 1.5, 2.25, true, time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC), []byte{0, 1}, int64(3)},
	{int64(2), `\N`, nil, nil, nil, nil, nil, nil, nil, nil},
	{int64(3), "line\r\nbreak \"q\"", int64(0), int64(0), 0.0, -0.0, false, time.Unix(0, 0).UTC(), []byte{}, nil},
}

// fuzzRead reads src to the end and checks every row and error, then that
// the rows read survive a round trip. Every STRING read is UTF-8 text
// (checkRow), and holds U+FFFD only if src does, raw or as a JSON escape: a
// Reader refuses what is not text rather than replace it.
func fuzzRead(t *testing.T, m *catalog.Model, src []byte, f Format) {
	srcHasFFFD := bytes.Contains(src, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(src), []byte(`\ufffd`))
	for _, e := range []string{"items", "tags", "posts"} {
		ent := m.Entity(e)
		r, err := NewReader(strings.NewReader(string(src)), "fuzz", f, ent)
		if err != nil {
			checkError(t, err)
			continue
		}
		var rows [][]types.Value
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkError(t, err)
				break
			}
			checkRow(t, ent, row)
			for i, v := range row {
				if s, ok := v.(string); ok && !srcHasFFFD && strings.ContainsRune(s, utf8.RuneError) {
					t.Fatalf("field %s: %q holds U+FFFD, which the input does not", ent.Columns[i].Name, s)
				}
			}
			rows = append(rows, append([]types.Value(nil), row...))
		}
		// What was read is written and read back the same.
		again, err := readAll(t, writeAll(t, f, ent, rows), "again", f, ent)
		if err != nil || !sameRows(rows, again) {
			t.Fatalf("rewrite: %v\nread  %#v\nagain %#v", err, rows, again)
		}
	}
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var de *Error
	if !errors.As(err, &de) {
		t.Fatalf("error %v is %T, want *Error", err, err)
	}
	if de.File != "fuzz" || de.Line < 1 || de.Msg == "" {
		t.Fatalf("error without file, line or message: %#v", de)
	}
}

func FuzzReadCSV(f *testing.F) {
	m := buildModel(f, testModel)
	f.Add(writeAll(f, CSV, m.Entity("items"), fuzzRows))
	f.Add(writeAll(f, CSV, m.Entity("tags"), [][]types.Value{{""}, {`\x`}, {"\r"}}))
	for _, s := range []string{"", "id\n", "id,name\n1,\\\n", "id,raw\n1,\\x0\n", "id,small\n1,99999999999\n", "\"id\n", "id,id\n", "label\n\\N\n",
		"label\n\xff\n", "id,name\n1,\\\xed\xa0\x80\n", "label\n\"a\n\xc3\"\n",
		"id,tags,scores,blobs,at\n1,\"[\"\"a\"\",\"\"b\"\"]\",\"{\"\"x\"\":1.5}\",\"{\"\"1\"\":\"\"AAE=\"\"}\",\"{\"\"2024-01-02\"\":3}\"\n",
		"id,tags\n1,\"[\"\"\xff\"\"]\"\n", "id,flags\n1,[true]\n", "id,amounts\n1,[1e400]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { fuzzRead(t, m, src, CSV) })
}

func FuzzReadJSONL(f *testing.F) {
	m := buildModel(f, testModel)
	f.Add(writeAll(f, JSONL, m.Entity("items"), fuzzRows))
	f.Add(writeAll(f, JSONL, m.Entity("tags"), [][]types.Value{{""}, {"é\n"}}))
	for _, s := range []string{"", "{}", `{"id":1e400}`, `{"id":1,"weight":"NaN","price":"inf"}`, `{"id":1,"id":1}`, `[{"id":1}]`, "{\"label\":\"\\ud800\"}", `{"id":1,"created":"2024-01-01"}`,
		"{\"label\":\"\xff\"}", `{"label":"\udc00\ud800"}`, `{"label":"\ud83d\ude00\\ud800"}`, "{\"\xff\":1}", `{"label":"\ufffd"}`,
		`{"id":1,"tags":["a","b","a"],"scores":{"x":0.5},"seen":["2024-01-02"],"blobs":{"7":"AAE="},"flags":[true,false]}`,
		`{"id":1,"tags":["\ud800"]}`, `{"id":1,"tags":[null]}`, `{"id":1,"scores":[1]}`, `{"id":1,"amounts":[3.4e39]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { fuzzRead(t, m, src, JSONL) })
}
