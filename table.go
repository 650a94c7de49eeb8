package kvschema

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/kvschema/kvschema/types"
)

// WriteTable prints the rows as an aligned text table with a row count.
// Column names and values are escaped (types.Display), so no stored value
// can put a control byte or invalid UTF-8 on a terminal, nor a tab or a
// line break into the table.
func (r *Rows) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cells := make([]string, len(r.cols))
	for i, c := range r.cols {
		cells[i] = types.Escape(c)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
	for _, row := range r.All() {
		cells = cells[:0]
		for _, v := range row {
			cells = append(cells, Display(v))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d row%s)\n", r.n, map[bool]string{true: "", false: "s"}[r.n == 1])
	return err
}

// WriteVertical prints each row as a block of "column | value" lines under
// a "-[ RECORD n ]-" line (psql's expanded display), for rows too wide for
// a table, then the row count. Escaped as WriteTable escapes.
func (r *Rows) WriteVertical(w io.Writer) error {
	width := 0
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = types.Escape(c)
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	for n, row := range r.All() {
		if _, err := fmt.Fprintf(w, "-[ RECORD %d ]-\n", n+1); err != nil {
			return err
		}
		for i, v := range row {
			pad := strings.Repeat(" ", width-utf8.RuneCountInString(names[i]))
			if _, err := fmt.Fprintf(w, "%s%s | %s\n", names[i], pad, Display(v)); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "(%d row%s)\n", r.n, map[bool]string{true: "", false: "s"}[r.n == 1])
	return err
}

// Display formats a value for people: strings bare, everything else as a
// literal, with every byte that is not part of a printable UTF-8 rune (and
// every backslash) as \xNN. It is types.Display, the rule every printer of
// kvschema follows.
func Display(v types.Value) string { return types.Display(v) }

// WriteCSV writes the rows as CSV (RFC 4180): a header of column names,
// then one record per row. NULL is the empty field; strings are written
// as they are (CSV quotes what needs quoting); BYTES as hex with a 0x
// prefix; TIMESTAMP in RFC 3339 with microseconds, UTC; numbers and
// booleans as Go writes them (1.5, true).
func (r *Rows) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.cols); err != nil {
		return err
	}
	rec := make([]string, len(r.cols))
	for _, row := range r.All() {
		for i, v := range row {
			rec[i] = plainText(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the rows as JSON: with lines, one object per row per
// line (JSON Lines); without, one array of those objects. Keys are the
// column names; NULL is null, numbers and booleans are JSON's, strings are
// strings (valid UTF-8: invalid bytes are escaped as types.Display does),
// BYTES are hex strings with a 0x prefix, TIMESTAMP RFC 3339 strings (UTC,
// microseconds), a SET or LIST an array and a MAP an object (its keys as
// strings) of such values.
func (r *Rows) WriteJSON(w io.Writer, lines bool) error {
	var b bytes.Buffer
	if !lines {
		b.WriteByte('[')
	}
	for n, row := range r.All() {
		if !lines && n > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for i, v := range row {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(r.cols[i])
			b.Write(k)
			b.WriteByte(':')
			j, err := json.Marshal(jsonValue(v))
			if err != nil {
				return err
			}
			b.Write(j)
		}
		b.WriteByte('}')
		if lines {
			b.WriteByte('\n')
		}
		if b.Len() > 1<<16 {
			if _, err := w.Write(b.Bytes()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	if !lines {
		b.WriteString("]\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// jsonValue is v as WriteJSON writes it, for json.Marshal.
func jsonValue(v types.Value) any {
	switch x := v.(type) {
	case nil, bool, int64:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return plainText(v) // JSON has no NaN or infinity
		}
		return x
	case types.Set:
		return jsonArray(x)
	case types.List:
		return jsonArray(x)
	case types.Map:
		m := make(map[string]any, len(x))
		for _, e := range x {
			m[plainText(e.Key)] = jsonValue(e.Val)
		}
		return m
	}
	return plainText(v)
}

func jsonArray(xs []types.Value) []any {
	out := make([]any, len(xs))
	for i, e := range xs {
		out[i] = jsonValue(e)
	}
	return out
}

// plainText is a value as CSV and JSON strings carry it.
func plainText(v types.Value) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		if utf8.ValidString(x) {
			return x
		}
		return types.Escape(x)
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	case types.Set, types.List, types.Map:
		// JSON text, as database/sql returns it and data files hold it.
		return types.JSON(x)
	}
	return types.Format(v)
}
