package lang

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chunkReader hands out src at most n bytes per Read; with eofWithData the
// last bytes come with io.EOF, as some readers do.
type chunkReader struct {
	src         []byte
	n           int
	eofWithData bool
}

func (c *chunkReader) Read(b []byte) (int, error) {
	if len(c.src) == 0 {
		return 0, io.EOF
	}
	k := copy(b[:min(len(b), c.n)], c.src)
	c.src = c.src[k:]
	if c.eofWithData && len(c.src) == 0 {
		return k, io.EOF
	}
	return k, nil
}

// readAll drains a Reader: the statements with the parts of split INSERTs
// joined back, and the error that ended it (nil at io.EOF). It checks the
// parts as it goes.
func readAll(t *testing.T, r *Reader, maxRows int) ([]Statement, error) {
	t.Helper()
	var ss []Statement
	var open *Insert // the statement whose parts are being joined
	for {
		s, err := r.Next()
		if err == io.EOF {
			if open != nil {
				t.Fatalf("input ended inside a split INSERT")
			}
			return ss, nil
		}
		if err != nil {
			if _, again := r.Next(); again != err {
				t.Fatalf("error not sticky: %v then %v", err, again)
			}
			return ss, err
		}
		part := r.Part()
		ins, isInsert := s.(*Insert)
		if (part.Row > 0 || part.More) && (!isInsert || maxRows <= 0 || len(ins.Rows) > maxRows || len(ins.Rows) == 0) {
			t.Fatalf("part %+v of %T with %d rows (limit %d)", part, s, len(ins.Rows), maxRows)
		}
		if part.More && len(ins.Rows) != maxRows {
			t.Fatalf("part %+v has %d rows, not the limit %d", part, len(ins.Rows), maxRows)
		}
		if part.Row == 0 {
			if open != nil {
				t.Fatalf("new statement inside a split INSERT")
			}
			if part.More {
				open = &Insert{At: ins.At, Relation: ins.Relation, RelationAt: ins.RelationAt, Columns: ins.Columns, Rows: append([][]Expr(nil), ins.Rows...)}
				continue
			}
			ss = append(ss, s)
			continue
		}
		if open == nil || part.Row != len(open.Rows) || ins.At != open.At || ins.Relation != open.Relation || !cmp.Equal(ins.Columns, open.Columns) {
			t.Fatalf("continuation %+v does not continue %v", part, open)
		}
		open.Rows = append(open.Rows, ins.Rows...)
		if !part.More {
			ss = append(ss, open)
			open = nil
		}
	}
}

// equalWithPos compares ASTs exactly, positions included.
var equalWithPos = cmp.Options{cmp.Comparer(bytes.Equal)}

// checkSameAsParseScript runs src through a Reader (reads of readSize
// bytes, INSERTs split every maxRows rows) and through ParseScript, and
// fails unless they agree: the same statements, or the same first error.
func checkSameAsParseScript(t *testing.T, src []byte, readSize, maxRows int, eofWithData bool) {
	t.Helper()
	want, wantErr := ParseScript("f.kvs", src)
	for _, r := range []*Reader{
		NewReader("f.kvs", &chunkReader{src: src, n: readSize, eofWithData: eofWithData}),
		NewStringReader("f.kvs", string(src)),
	} {
		r.SplitInserts(maxRows)
		got, err := readAll(t, r, maxRows)
		if wantErr != nil {
			var we, ge *Error
			if !errors.As(wantErr, &we) || !errors.As(err, &ge) || we.Pos != ge.Pos || we.Msg != ge.Msg {
				t.Fatalf("ParseScript fails with %v; the Reader (reads of %d, parts of %d) with %v", wantErr, readSize, maxRows, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseScript accepts; the Reader (reads of %d, parts of %d) fails: %v", readSize, maxRows, err)
		}
		if diff := cmp.Diff(want, got, equalWithPos); diff != "" {
			t.Fatalf("the Reader (reads of %d, parts of %d) differs from ParseScript (-want +got):\n%s", readSize, maxRows, diff)
		}
	}
}

// FuzzReader: for any input, streaming yields what ParseScript does — the
// same statements, positions included, once the parts of split INSERTs are
// joined, or the same first error — whatever the size of the reads and of
// the parts.
func FuzzReader(f *testing.F) {
	f.Add([]byte(fig6), uint8(7), uint8(2))
	f.Add([]byte("INSERT INTO r VALUES (1), (2), (3), (4), (5);\nINSERT INTO r (a, b) VALUES (1, 'x'), (?, 2) ; SELECT 1"), uint8(1), uint8(2))
	f.Add([]byte("INSERT INTO r VALUES (1), (2), 3"), uint8(3), uint8(1))
	f.Add([]byte("INSERT INTO r VALUES (1), (2),"), uint8(3), uint8(2))
	f.Add([]byte("EXPLAIN INSERT INTO r VALUES (1), (2), (3)"), uint8(5), uint8(1))
	f.Add([]byte("SELECT 'é' FROM r -- c\n; /* unterminated"), uint8(1), uint8(0))
	f.Add([]byte("SELECT x'0g'"), uint8(2), uint8(0))
	for _, tc := range stmtTests {
		f.Add([]byte(tc.src), uint8(3), uint8(1))
	}
	for _, tc := range errorTests {
		f.Add([]byte(tc.src), uint8(2), uint8(1))
	}
	f.Fuzz(func(t *testing.T, src []byte, readSize, maxRows uint8) {
		n := int(readSize)%64 + 1
		checkSameAsParseScript(t, src, n, int(maxRows%5), readSize >= 128)
	})
}

func TestReaderSameAsParseScript(t *testing.T) {
	srcs := []string{fig6, "", ";;", "INSERT INTO r VALUES (1), (2), (3), (4), (5), (6), (7);SELECT 1;INSERT INTO r VALUES (1)"}
	for _, tc := range stmtTests {
		srcs = append(srcs, tc.src)
	}
	for _, tc := range errorTests {
		srcs = append(srcs, tc.src)
	}
	for _, src := range srcs {
		for _, readSize := range []int{1, 2, 3, 5, 64 << 10} {
			for _, maxRows := range []int{0, 1, 2, 3} {
				checkSameAsParseScript(t, []byte(src), readSize, maxRows, readSize == 3)
			}
		}
	}
}

// An INSERT … VALUES is handed over in parts of the given size, each a
// statement Print writes and ParseStatement reads back; the parts and
// PrintRows give back the statement's text.
func TestReaderSplitsInsert(t *testing.T) {
	src := "INSERT INTO r (a, b) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e');\nINSERT INTO r VALUES (6, 'f'), (7, 'g');\nEXPLAIN INSERT INTO r VALUES (8, 'h'), (9, 'i'), (10, 'j')"
	r := NewReader("s.kvs", strings.NewReader(src))
	r.SplitInserts(2)
	type step struct {
		rows int
		part Part
		text string
	}
	var got []step
	var echo strings.Builder
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, s)
		ins, _ := s.(*Insert)
		n := 0
		if ins != nil {
			n = len(ins.Rows)
		}
		got = append(got, step{n, r.Part(), Print(s)})
		// The echo the CLI prints: the first part whole, then the rows.
		if p := r.Part(); p.Row == 0 {
			echo.WriteString(Print(s))
		} else {
			echo.WriteString(PrintRows(ins.Rows))
		}
		if r.Part().More {
			echo.WriteString(", ")
		} else {
			echo.WriteString(";\n")
		}
	}
	want := []step{
		{2, Part{Row: 0, More: true}, "INSERT INTO r (a, b) VALUES (1, 'a'), (2, 'b')"},
		{2, Part{Row: 2, More: true}, "INSERT INTO r (a, b) VALUES (3, 'c'), (4, 'd')"},
		{1, Part{Row: 4}, "INSERT INTO r (a, b) VALUES (5, 'e')"},
		{2, Part{}, "INSERT INTO r VALUES (6, 'f'), (7, 'g')"},
		{0, Part{}, "EXPLAIN INSERT INTO r VALUES (8, 'h'), (9, 'i'), (10, 'j')"}, // only top-level INSERTs are split
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
		t.Fatalf("parts (-want +got):\n%s", diff)
	}
	ss, err := ParseScript("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if echo.String() != PrintScript(ss) {
		t.Errorf("echo of the parts:\n%s\nwant\n%s", echo.String(), PrintScript(ss))
	}
}

// A syntax error in a later part comes after the parts before it, at the
// position ParseScript names.
func TestReaderErrorInLaterPart(t *testing.T) {
	src := "INSERT INTO r VALUES (1), (2), (3),\n (4), (5 6)"
	r := NewReader("e.kvs", strings.NewReader(src))
	r.SplitInserts(2)
	for i, want := range []Part{{Row: 0, More: true}, {Row: 2, More: true}} {
		if _, err := r.Next(); err != nil || r.Part() != want {
			t.Fatalf("part %d: %+v, %v; want %+v", i, r.Part(), err, want)
		}
	}
	_, err := r.Next()
	if err == nil || err.Error() != "e.kvs:2:10: expected ')' or ',' after value, found number 6" {
		t.Fatalf("got %v", err)
	}
}

// failingReader returns src, then err.
type failingReader struct {
	src string
	err error
}

func (f *failingReader) Read(b []byte) (int, error) {
	if f.src == "" {
		return 0, f.err
	}
	n := copy(b, f.src)
	f.src = f.src[n:]
	return n, nil
}

// A read error is reported, at the position reached, and never passes for
// the end of the script: no statement cut short by it is returned.
func TestReaderReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, tc := range []struct {
		src   string
		stmts int
	}{
		{"SELECT * FROM r WHERE a = 1", 0},                          // complete-looking, but no ';'
		{"SELECT * FROM r WHERE a = 1 AND", 0},                      // would be a syntax error
		{"SELECT * FROM r;\nSELECT * FROM s WHERE b = 2", 1},        // the first is whole
		{"SELECT * FROM r;", 1},                                     // then the error, not io.EOF
		{"INSERT INTO r VALUES (1), (2), (3), (4), (5), (6), (", 3}, // whole parts are fine
	} {
		r := NewReader("x.kvs", &failingReader{src: tc.src, err: boom})
		r.SplitInserts(2)
		n := 0
		var err error
		for err == nil {
			if _, err = r.Next(); err == nil {
				n++
			}
		}
		var e *Error
		if n != tc.stmts || !errors.Is(err, boom) || !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "x.kvs:") {
			t.Errorf("%q: %d statements then %v; want %d then the read error", tc.src, n, err, tc.stmts)
		}
	}
}

// lineFeeder is an interactive input: each Read returns one line, and
// reading past the lines given fails the test (a Reader must not read
// beyond the ';' of the statement it returns).
type lineFeeder struct {
	t     *testing.T
	lines []string
}

func (l *lineFeeder) Read(b []byte) (int, error) {
	if len(l.lines) == 0 {
		l.t.Fatal("read past the statement asked for")
	}
	n := copy(b, l.lines[0])
	l.lines = l.lines[1:]
	return n, nil
}

func TestReaderReadsNoFurtherThanTheStatement(t *testing.T) {
	in := &lineFeeder{t: t, lines: []string{"SELECT *\n", "FROM r; -- first\n"}}
	r := NewReader("tty", in)
	s, err := r.Next()
	if err != nil || Print(s) != "SELECT * FROM r" {
		t.Fatalf("%v, %v", s, err)
	}
	in.lines = []string{"SELECT * FROM s WHERE a = 'x;y", "z'", ";\n"}
	if s, err = r.Next(); err != nil || Print(s) != "SELECT * FROM s WHERE a = 'x;yz'" {
		t.Fatalf("%v, %v", s, err)
	}
}

// genReader produces a script of n INSERT rows without holding it: one
// multi-row INSERT, or one INSERT per row.
type genReader struct {
	n, i   int
	single bool
	buf    []byte
}

func (g *genReader) Read(b []byte) (int, error) {
	for len(g.buf) < len(b) && g.i < g.n {
		switch {
		case g.single:
			g.buf = fmt.Appendf(g.buf, "INSERT INTO r (a, b) VALUES (%d, 'row %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx');\n", g.i, g.i)
		case g.i == 0:
			g.buf = fmt.Appendf(g.buf, "INSERT INTO r (a, b) VALUES\n(%d, 'row %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')", g.i, g.i)
		default:
			g.buf = fmt.Appendf(g.buf, ",\n(%d, 'row %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')", g.i, g.i)
		}
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(b, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

// The memory a Reader holds does not grow with the script: ~20 MB of
// INSERT rows, as one statement or as one statement per row, are read with
// the live heap staying within a few MB (the tokens and AST of the whole
// statement would take hundreds).
func TestReaderMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 40 MB of generated script")
	}
	const rows = 250_000
	for _, single := range []bool{false, true} {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		r := NewReader("gen.kvs", &genReader{n: rows, single: single})
		r.SplitInserts(1000)
		var peak uint64
		n, got := 0, 0
		for {
			s, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got += len(s.(*Insert).Rows)
			if n++; n%(rows/50) == 0 || !single && n%25 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
			}
		}
		if got != rows {
			t.Fatalf("single %v: %d rows, want %d", single, got, rows)
		}
		if peak > 8<<20 {
			t.Errorf("single %v: live heap grew by %d MB reading the script", single, peak>>20)
		}
	}
}
