package dataio

import (
	"bufio"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// Writer writes the rows of one entity in one format. Output is buffered:
// call Flush at the end.
type Writer struct {
	format Format
	ent    *catalog.Entity
	key    int

	cw  *csv.Writer
	rec []string

	bw  *bufio.Writer
	buf []byte
}

// NewWriter returns a Writer of entity e's rows to w in format f. For CSV it
// writes (into its buffer) a header naming every column in Entity.Columns
// order. An entity with a column whose name holds a '.' (which catalog.Build
// never makes) is refused: a Reader would not read the file.
func NewWriter(w io.Writer, f Format, e *catalog.Entity) (*Writer, error) {
	if !f.valid() {
		return nil, &Error{Msg: "unknown data file format " + f.String()}
	}
	for _, c := range e.Columns {
		if strings.Contains(c.Name, ".") {
			return nil, &Error{Msg: "entity " + e.Name + ": column " + dottedColumn(c.Name)}
		}
	}
	wr := &Writer{format: f, ent: e, key: e.Column(e.ID())}
	if wr.key < 0 {
		return nil, &Error{Msg: "entity " + e.Name + " has no key column"}
	}
	if f == JSONL {
		wr.bw = bufio.NewWriterSize(w, 64<<10)
		return wr, nil
	}
	wr.cw = csv.NewWriter(w)
	wr.rec = make([]string, len(e.Columns))
	for i, c := range e.Columns {
		wr.rec[i] = c.Name
	}
	if err := wr.cw.Write(wr.rec); err != nil {
		return nil, &Error{Msg: "write error: " + err.Error(), Err: err}
	}
	return wr, nil
}

// Write writes one row: a value per entry of Entity.Columns, in that order,
// nil for NULL. A value not of its column's canonical type is converted by
// types.Coerce or refused; so is a NULL key, a timestamp whose year is not
// in 0..9999 and a STRING that is not UTF-8 text. Nothing of a refused row
// is written. Errors are *Error.
func (w *Writer) Write(row []types.Value) error {
	if len(row) != len(w.ent.Columns) {
		return &Error{Msg: fmt.Sprintf("row of %d values, entity %s has %d columns", len(row), w.ent.Name, len(w.ent.Columns))}
	}
	if row[w.key] == nil {
		return &Error{Msg: "missing key " + w.ent.Columns[w.key].Name}
	}
	if w.format == JSONL {
		return w.writeJSON(row)
	}
	for i, v := range row {
		col := &w.ent.Columns[i]
		v, err := canonical(v, col)
		if err != nil {
			return err
		}
		w.rec[i] = formatCSV(v, col.Type, len(row) == 1)
	}
	if err := w.cw.Write(w.rec); err != nil {
		return &Error{Msg: "write error: " + err.Error(), Err: err}
	}
	return nil
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error {
	var err error
	if w.cw != nil {
		w.cw.Flush()
		err = w.cw.Error()
	} else {
		err = w.bw.Flush()
	}
	if err != nil {
		return &Error{Msg: "write error: " + err.Error(), Err: err}
	}
	return nil
}

// canonical checks (and if needed converts) a value for its column.
func canonical(v types.Value, col *catalog.Column) (types.Value, error) {
	if v == nil {
		return nil, nil
	}
	v, err := types.Coerce(v, col.Type)
	if err != nil {
		return nil, &Error{Field: col.Name, Msg: err.Error()}
	}
	switch x := v.(type) {
	case time.Time:
		if y := x.Year(); y < 0 || y > 9999 {
			return nil, &Error{Field: col.Name, Msg: fmt.Sprintf("timestamp year %d is outside 0..9999", y)}
		}
	case string:
		if !utf8.ValidString(x) {
			return nil, &Error{Field: col.Name, Msg: "string is not UTF-8 text; " + textOnly}
		}
	case types.Set, types.List, types.Map:
		// JSON text holds the collection: its strings must be text too.
		if !utf8.ValidString(types.JSON(x)) {
			return nil, &Error{Field: col.Name, Msg: "a string in the collection is not UTF-8 text; " + textOnly}
		}
	}
	return v, nil
}

// formatCSV writes a canonical value as a CSV field (see the package doc).
func formatCSV(v types.Value, t types.Type, alone bool) string {
	switch x := v.(type) {
	case nil:
		return `\N`
	case string:
		if x == "" && alone {
			return `\`
		}
		if len(x) > 0 && x[0] == '\\' || strings.IndexByte(x, '\r') >= 0 {
			return escape(x)
		}
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, floatBits(t))
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return types.FormatTimestamp(x)
	case []byte:
		return `\x` + hex.EncodeToString(x)
	case types.Set, types.List, types.Map:
		return types.JSON(x)
	}
	return fmt.Sprint(v) // unreachable: canonical values only
}

// floatBits is the precision of a float type: a FLOAT holds a float32
// exactly, and its shortest float32 form reads back to the same value.
func floatBits(t types.Type) int {
	if t == types.Float {
		return 32
	}
	return 64
}

func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\\')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (w *Writer) writeJSON(row []types.Value) error {
	b := append(w.buf[:0], '{')
	for i, v := range row {
		col := &w.ent.Columns[i]
		v, err := canonical(v, col)
		if err != nil {
			return err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, col.Name)
		b = append(b, ':')
		switch x := v.(type) {
		case nil:
			b = append(b, "null"...)
		case string:
			b = appendJSONString(b, x) // UTF-8: canonical checked
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case float64:
			switch {
			case math.IsNaN(x):
				b = append(b, `"NaN"`...)
			case math.IsInf(x, 1):
				b = append(b, `"+Inf"`...)
			case math.IsInf(x, -1):
				b = append(b, `"-Inf"`...)
			default:
				b = strconv.AppendFloat(b, x, 'g', -1, floatBits(col.Type))
			}
		case bool:
			b = strconv.AppendBool(b, x)
		case time.Time:
			b = append(b, '"')
			b = append(b, types.FormatTimestamp(x)...)
			b = append(b, '"')
		case []byte:
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, x)
			b = append(b, '"')
		case types.Set, types.List, types.Map:
			b = append(b, types.JSON(x)...)
		}
	}
	b = append(b, '}', '\n')
	w.buf = b
	if _, err := w.bw.Write(b); err != nil {
		return &Error{Msg: "write error: " + err.Error(), Err: err}
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s, valid UTF-8, as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
