package dataio

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// Reader reads the rows of one entity's data file.
type Reader struct {
	file   string
	format Format
	ent    *catalog.Entity
	keys   []int // indexes of the key attributes in ent.Columns
	colIdx map[string]int
	row    []types.Value
	line   int   // line of the last row
	err    error // sticky

	// CSV
	cr    *csv.Reader
	colOf []int // CSV field → column

	// JSON lines
	br   *bufio.Reader
	buf  []byte
	next int // number of lines consumed
	seen []bool
}

// NewReader returns a Reader of the rows of entity e from r, in format f.
// file names the input in errors. For CSV it reads the header line.
func NewReader(r io.Reader, file string, f Format, e *catalog.Entity) (*Reader, error) {
	if !f.valid() {
		return nil, &Error{File: file, Msg: "unknown data file format " + f.String()}
	}
	rd := &Reader{file: file, format: f, ent: e, row: make([]types.Value, len(e.Columns))}
	for _, k := range e.Key { // one for a model's entity; a relation's may have several
		rd.keys = append(rd.keys, e.Column(k))
	}
	if len(rd.keys) == 0 {
		return nil, &Error{File: file, Msg: "entity " + e.Name + " has no key column"}
	}
	rd.colIdx = make(map[string]int, len(e.Columns))
	for i, c := range e.Columns {
		rd.colIdx[c.Name] = i
	}
	if f == JSONL {
		rd.br = bufio.NewReaderSize(r, 64<<10)
		rd.seen = make([]bool, len(e.Columns))
		return rd, nil
	}
	rd.cr = csv.NewReader(r)
	rd.cr.FieldsPerRecord = -1
	rd.cr.ReuseRecord = true
	header, err := rd.cr.Read()
	if err == io.EOF {
		return nil, &Error{File: file, Line: 1, Msg: "empty file: the header line is missing"}
	}
	if err != nil {
		return nil, rd.csvError(err)
	}
	line, _ := rd.cr.FieldPos(0)
	rd.line = line
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\uFEFF") // a byte order mark
	}
	rd.colOf = make([]int, len(header))
	present := make([]bool, len(e.Columns))
	for i, name := range header {
		if strings.Contains(name, ".") {
			return nil, &Error{File: file, Line: line, Msg: "column " + dottedColumn(name)}
		}
		c, ok := rd.colIdx[name]
		if !ok {
			return nil, &Error{File: file, Line: line, Msg: fmt.Sprintf("unknown column %s in the header", describe(name))}
		}
		if present[c] {
			return nil, &Error{File: file, Line: line, Msg: fmt.Sprintf("column %s appears twice in the header", describe(name))}
		}
		present[c] = true
		rd.colOf[i] = c
	}
	for _, k := range rd.keys {
		if !present[k] {
			return nil, &Error{File: file, Line: line, Msg: "missing key " + e.Columns[k].Name + " in the header"}
		}
	}
	return rd, nil
}

// Line is the line number (1-based) where the last row returned by Next, or
// the last error, is.
func (r *Reader) Line() int { return r.line }

// Next returns the next row, in Entity.Columns order, or io.EOF after the
// last. The returned slice is reused by the next call: copy it to keep it
// (the values themselves are not shared). Errors are *Error and final: after
// one, Next returns it again.
func (r *Reader) Next() ([]types.Value, error) {
	if r.err != nil {
		return nil, r.err
	}
	var row []types.Value
	var err error
	if r.format == JSONL {
		row, err = r.nextJSON()
	} else {
		row, err = r.nextCSV()
	}
	if err != nil {
		r.err = err
		return nil, err
	}
	return row, nil
}

func (r *Reader) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		r.line = pe.Line
		return &Error{File: r.file, Line: pe.Line, Msg: "malformed CSV: " + pe.Err.Error()}
	}
	return &Error{File: r.file, Line: r.line, Msg: "read error: " + err.Error(), Err: err}
}

func (r *Reader) nextCSV() ([]types.Value, error) {
	rec, err := r.cr.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, r.csvError(err)
	}
	r.line, _ = r.cr.FieldPos(0)
	if len(rec) != len(r.colOf) {
		return nil, &Error{File: r.file, Line: r.line, Msg: fmt.Sprintf("%d fields, the header has %d", len(rec), len(r.colOf))}
	}
	clear(r.row)
	for i, s := range rec {
		c := r.colOf[i]
		col := &r.ent.Columns[c]
		v, msg := parseCSV(s, col.Type)
		if msg != "" {
			line, _ := r.cr.FieldPos(i)
			return nil, &Error{File: r.file, Line: line, Field: col.Name, Msg: msg}
		}
		r.row[c] = v
	}
	if err := r.missingKey(); err != nil {
		return nil, err
	}
	return r.row, nil
}

// missingKey is the error of a row without a value of a key attribute.
func (r *Reader) missingKey() error {
	for _, k := range r.keys {
		if r.row[k] == nil {
			return &Error{File: r.file, Line: r.line, Msg: "missing key " + r.ent.Columns[k].Name}
		}
	}
	return nil
}

// parseCSV reads one CSV field as a value of type t, or says why it cannot.
func parseCSV(s string, t types.Type) (types.Value, string) {
	if s == `\N` {
		return nil, ""
	}
	if t.IsCollection() {
		if i := notUTF8(s); i >= 0 {
			return nil, fmt.Sprintf("collection %s is not UTF-8 text (byte 0x%02x at offset %d); %s", describe(s), s[i], i, textOnly)
		}
		return parseCollection(s, t, 0)
	}
	switch t {
	case types.String:
		// Checked before unescaping, which maps ASCII to ASCII only, so
		// that the offset is the field's.
		if i := notUTF8(s); i >= 0 {
			return nil, fmt.Sprintf("%s is not UTF-8 text (byte 0x%02x at offset %d); %s", describe(s), s[i], i, textOnly)
		}
		if len(s) > 0 && s[0] == '\\' {
			return unescape(s)
		}
		return s, ""
	case types.Int, types.BigInt:
		return parseInt(s, t, describe(s))
	case types.Float, types.Double:
		return parseFloat(s, t, describe(s))
	case types.Bool:
		switch {
		case strings.EqualFold(s, "true"):
			return true, ""
		case strings.EqualFold(s, "false"):
			return false, ""
		}
	case types.Timestamp:
		if ts, err := types.ParseTimestamp(s); err == nil {
			return ts, ""
		}
		return nil, describe(s) + " is not a TIMESTAMP (want YYYY-MM-DD[ HH:MM:SS[.ffffff]])"
	case types.Bytes:
		if strings.HasPrefix(s, `\x`) {
			if b, err := hex.DecodeString(s[2:]); err == nil {
				return b, ""
			}
		}
		return nil, describe(s) + ` is not a BYTES value (want \x and hex digits)`
	default:
		return nil, "column of unsupported type " + t.String()
	}
	return nil, notA(describe(s), t)
}

// parseCollection reads a collection written as JSON text (a CSV field,
// or a JSON data file's array or object, which starts after column col of
// its line). Its strings must be UTF-8 text, as a STRING's: encoding/json
// alone would read what is not as U+FFFD.
func parseCollection(s string, t types.Type, col int) (types.Value, string) {
	if msg := notJSONText([]byte(s), col); msg != "" {
		return nil, "collection " + msg + "; " + textOnly
	}
	v, err := types.Coerce(s, t)
	if err != nil {
		return nil, err.Error()
	}
	return v, ""
}

func notA(desc string, t types.Type) string { return desc + " is not a " + t.String() }

func parseInt(s string, t types.Type, desc string) (types.Value, string) {
	bits := 64
	if t == types.Int {
		bits = 32
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return n, ""
	}
	if errors.Is(err, strconv.ErrRange) {
		return nil, desc + " is out of range for " + t.String()
	}
	return nil, notA(desc, t)
}

func parseFloat(s string, t types.Type, desc string) (types.Value, string) {
	bits := 64
	if t == types.Float {
		bits = 32
	}
	f, err := strconv.ParseFloat(s, bits)
	if err == nil {
		return f, ""
	}
	if errors.Is(err, strconv.ErrRange) {
		return nil, desc + " is out of range for " + t.String()
	}
	return nil, notA(desc, t)
}

// unescape reads an escaped STRING field (see the package doc); s begins
// with a backslash.
func unescape(s string) (types.Value, string) {
	rest := s[1:]
	i := strings.IndexByte(rest, '\\')
	if i < 0 {
		return rest, ""
	}
	b := make([]byte, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 < len(rest) {
			switch rest[i+1] {
			case '\\':
				b = append(b, '\\')
				i++
				continue
			case 'r':
				b = append(b, '\r')
				i++
				continue
			}
		}
		return nil, "invalid escape in " + describe(s) + ` (a STRING starting with a backslash is escaped: \\ is a backslash, \r a carriage return)`
	}
	return string(b), ""
}

// readLine returns the next line of a JSON lines file without its end of
// line, or io.EOF.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		switch {
		case err == nil:
			r.next++
			return r.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(r.buf) == 0 {
				return nil, io.EOF
			}
			r.next++
			return r.buf, nil
		default:
			return nil, &Error{File: r.file, Line: r.next + 1, Msg: "read error: " + err.Error(), Err: err}
		}
	}
}

func (r *Reader) nextJSON() ([]types.Value, error) {
	var line []byte
	for {
		l, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if line = bytes.TrimSpace(l); len(line) > 0 {
			break
		}
	}
	r.line = r.next
	lead := len(r.buf) - len(bytes.TrimLeftFunc(r.buf, unicode.IsSpace)) // as bytes.TrimSpace trims
	clear(r.row)
	clear(r.seen)
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	malformed := func(err error) error {
		msg := "malformed JSON"
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			msg += ": " + err.Error()
		}
		return &Error{File: r.file, Line: r.line, Msg: msg}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err)
	}
	if tok != json.Delim('{') {
		return nil, &Error{File: r.file, Line: r.line, Msg: "malformed JSON: a line must hold one object"}
	}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, malformed(nil)
		}
		if msg := notJSONText(line[start:dec.InputOffset()], lead+int(start)); msg != "" {
			return nil, &Error{File: r.file, Line: r.line, Msg: "key " + msg}
		}
		if strings.Contains(name, ".") {
			return nil, &Error{File: r.file, Line: r.line, Msg: "key " + dottedColumn(name)}
		}
		c, ok := r.colIdx[name]
		if !ok {
			return nil, &Error{File: r.file, Line: r.line, Msg: "unknown column " + describe(name)}
		}
		col := &r.ent.Columns[c]
		if r.seen[c] {
			return nil, &Error{File: r.file, Line: r.line, Field: col.Name, Msg: "appears twice in the object"}
		}
		r.seen[c] = true
		if col.Type.IsCollection() {
			// The whole array or object, as JSON text.
			start := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, malformed(err)
			}
			if string(raw) != "null" {
				// (raw starts after the separators before it.)
				at := lead + int(start) + bytes.Index(line[start:], raw[:1])
				v, msg := parseCollection(string(raw), col.Type, at)
				if msg != "" {
					return nil, &Error{File: r.file, Line: r.line, Field: col.Name, Msg: msg}
				}
				r.row[c] = v
			}
			continue
		}
		start = dec.InputOffset()
		if tok, err = dec.Token(); err != nil {
			return nil, malformed(err)
		}
		if _, ok := tok.(string); ok {
			// The decoder turned what is not UTF-8 text into U+FFFD:
			// look at the string as written.
			if msg := notJSONText(line[start:dec.InputOffset()], lead+int(start)); msg != "" {
				msg = "string " + msg
				if col.Type == types.String {
					msg += "; " + textOnly
				}
				return nil, &Error{File: r.file, Line: r.line, Field: col.Name, Msg: msg}
			}
		}
		v, msg := parseJSON(tok, col.Type)
		if msg != "" {
			return nil, &Error{File: r.file, Line: r.line, Field: col.Name, Msg: msg}
		}
		r.row[c] = v
	}
	if tok, err = dec.Token(); err != nil {
		return nil, malformed(err)
	}
	if tok != json.Delim('}') {
		return nil, malformed(nil)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{File: r.file, Line: r.line, Msg: "malformed JSON: text after the object"}
	}
	if err := r.missingKey(); err != nil {
		return nil, err
	}
	return r.row, nil
}

// parseJSON reads one JSON value (a json.Decoder token, numbers as
// json.Number) as a value of type t, or says why it cannot.
func parseJSON(tok json.Token, t types.Type) (types.Value, string) {
	var desc string
	switch x := tok.(type) {
	case nil:
		return nil, ""
	case json.Number:
		s := string(x)
		desc = s
		if len(desc) > 60 {
			desc = desc[:60] + "…"
		}
		switch t {
		case types.Int, types.BigInt:
			return parseInt(s, t, desc)
		case types.Float, types.Double:
			return parseFloat(s, t, desc)
		}
	case string:
		desc = describe(x)
		switch t {
		case types.String:
			return x, ""
		case types.Timestamp:
			if ts, err := types.ParseTimestamp(x); err == nil {
				return ts, ""
			}
			return nil, desc + " is not a TIMESTAMP (want YYYY-MM-DD[ HH:MM:SS[.ffffff]])"
		case types.Bytes:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return b, ""
			}
			return nil, desc + " is not a BYTES value (want standard base64)"
		case types.Float, types.Double:
			// The values JSON numbers cannot hold.
			if v, msg := parseFloat(x, t, desc); msg == "" {
				if f := v.(float64); math.IsNaN(f) || math.IsInf(f, 0) {
					return v, ""
				}
			}
		}
	case bool:
		desc = strconv.FormatBool(x)
		if t == types.Bool {
			return x, ""
		}
	case json.Delim:
		desc = "an array"
		if x == '{' {
			desc = "an object"
		}
	default:
		desc = fmt.Sprintf("%v", x)
	}
	switch t {
	case types.String, types.Int, types.BigInt, types.Float, types.Double, types.Bool, types.Timestamp, types.Bytes:
		return nil, notA(desc, t)
	}
	return nil, "column of unsupported type " + t.String()
}

// textOnly ends the messages about a STRING that is not UTF-8 text.
const textOnly = "a STRING holds text, binary data belongs in a BYTES column"

// dottedColumn says why a data file cannot have a column named name, which
// holds a '.'.
func dottedColumn(name string) string {
	return describe(name) + " cannot contain '.': the columns of a data file are its entity's own attributes, and a '.' separates the steps of a path (an attribute of a related entity goes in that entity's file)"
}

// notUTF8 returns the offset of the first byte of s that is not part of a
// valid UTF-8 sequence, or -1 if s is UTF-8 text.
func notUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1 // unreachable
}

// notJSONText looks at the source of one JSON token, as the decoder accepted
// it (with the separators before it), for a string that is not UTF-8 text:
// a byte that is not part of a valid UTF-8 sequence, or a \u escape of a
// UTF-16 surrogate that is not half of a pair. encoding/json reads both as
// U+FFFD without an error. It returns "" or what is wrong, naming the column
// (1-based byte offset in the line) where col is the column before src.
func notJSONText(src []byte, col int) string {
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == 'u':
			r := hex4(src[i+2:])
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+12 <= len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
					if lo := hex4(src[i+8:]); 0xDC00 <= lo && lo <= 0xDFFF {
						i += 12
						continue
					}
				}
				return fmt.Sprintf("is not UTF-8 text (%s at column %d is an unpaired UTF-16 surrogate)", src[i:min(i+6, len(src))], col+i+1)
			}
			i += 6
		case c == '\\':
			i += 2 // \" \\ \/ \b \f \n \r \t
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return fmt.Sprintf("is not UTF-8 text (byte 0x%02x at column %d)", c, col+i+1)
			}
			i += size
		}
	}
	return ""
}

// hex4 reads the four hex digits of a \u escape at the start of b, or
// returns -1 if there are none.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
