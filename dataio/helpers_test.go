package dataio

import (
	"bytes"
	"io"
	"math"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

const testModel = `
DEFINE RELATION owners ROWS 10 { id BIGINT KEY, name STRING };
DEFINE RELATION items ROWS 100 {
  id BIGINT KEY,
  name STRING,
  quantity BIGINT,
  small INT,
  price FLOAT,
  weight DOUBLE,
  ok BOOL,
  created TIMESTAMP,
  raw BYTES,
  owner BIGINT REFERENCES owners REVERSE items
};
DEFINE RELATION tags ROWS 5 { label STRING KEY };
DEFINE RELATION notes ROWS 5 { n INT KEY, item BIGINT REFERENCES items REVERSE notes, at TIMESTAMP };
DEFINE RELATION posts ROWS 5 {
  id BIGINT KEY, tags FROZEN<SET<STRING>>, scores FROZEN<MAP<STRING, DOUBLE>>, seen FROZEN<LIST<TIMESTAMP>>,
  blobs FROZEN<MAP<INT, BYTES>>, flags FROZEN<SET<BOOL>>, amounts FROZEN<LIST<FLOAT>>, at FROZEN<MAP<TIMESTAMP, BIGINT>>
};
`

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func buildModel(t testing.TB, src string) *catalog.Model {
	t.Helper()
	stmts, err := lang.ParseScript("test.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkRow fails unless row holds, for each column, NULL or a canonical value
// of the column's type (a STRING is UTF-8 text), and a non-NULL key.
func checkRow(t tb, e *catalog.Entity, row []types.Value) {
	t.Helper()
	if len(row) != len(e.Columns) {
		t.Fatalf("row of %d values for %d columns", len(row), len(e.Columns))
	}
	for i, c := range e.Columns {
		v := row[i]
		if v == nil {
			if c.Field == e.ID() {
				t.Fatalf("NULL key %s", c.Name)
			}
			continue
		}
		ok := false
		switch x := v.(type) {
		case string:
			ok = c.Type == types.String && utf8.ValidString(x)
		case int64:
			ok = c.Type == types.BigInt || c.Type == types.Int && x >= math.MinInt32 && x <= math.MaxInt32
		case float64:
			ok = c.Type == types.Double || c.Type == types.Float && (math.IsNaN(x) || float64(float32(x)) == x)
		case bool:
			ok = c.Type == types.Bool
		case time.Time:
			ok = c.Type == types.Timestamp && x.Location() == time.UTC && x.Equal(x.Truncate(time.Microsecond))
		case []byte:
			ok = c.Type == types.Bytes
		case types.Set, types.List, types.Map:
			// Canonical for the column's type: coercing changes nothing.
			cv, err := types.Coerce(x, c.Type)
			ok = c.Type.IsCollection() && err == nil && types.Compare(cv, x) == 0 && types.Format(cv) == types.Format(x)
		}
		if !ok {
			t.Fatalf("column %s (%s) holds %T %v", c.Name, c.Type, v, v)
		}
	}
}

// readAll reads every row (copied) or the first error.
func readAll(t tb, src []byte, file string, f Format, e *catalog.Entity) ([][]types.Value, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(src), file, f, e)
	if err != nil {
		return nil, err
	}
	var rows [][]types.Value
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, append([]types.Value(nil), row...))
	}
}

func writeAll(t tb, f Format, e *catalog.Entity, rows [][]types.Value) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, f, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func negInf() float64 { return math.Inf(-1) }

func sameRows(a, b [][]types.Value) bool { return slices.EqualFunc(a, b, types.EqualTuples) }
