package stats

import (
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"

	_ "modernc.org/sqlite" // the SQLite data source
)

// MeasureSQLite measures the relations of m from the SQLite database file
// path, opened read-only: each relation from the table of the same name,
// each attribute from the column of the same name (names compared without
// letter case, as SQLite does). A relation without a table is not measured
// (absent from the result, as a relation without a data file is); a
// column the model lacks is ignored, and an attribute without a column is
// NULL throughout, but the key's column must be there. Values are read as
// SQLite stores them — TIMESTAMP as microseconds since 1970 (as kvschema's
// own SQLite copies hold them), a time or a timestamp text; BOOL as an
// integer — and one that is not of its attribute's type is an error naming
// the table, the row and the column.
func MeasureSQLite(path string, m *catalog.Model, opt Options) ([]Relation, error) {
	u := url.URL{Scheme: "file", Opaque: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	defer db.Close()
	tables := map[string]string{}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, fmt.Errorf("%s: not a SQLite database: %v", path, err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		tables[strings.ToLower(name)] = name
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var out []Relation
	for _, e := range m.Entities {
		table, ok := tables[strings.ToLower(e.Name)]
		if !ok {
			continue
		}
		r, err := measureTable(db, path, table, e, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// measureTable measures relation e from its table.
func measureTable(db *sql.DB, path, table string, e *catalog.Entity, opt Options) (Relation, error) {
	fail := func(format string, args ...any) (Relation, error) {
		return Relation{}, fmt.Errorf("%s: table %s: %s", path, table, fmt.Sprintf(format, args...))
	}
	cols, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return fail("%v", err)
	}
	have := map[string]string{}
	for cols.Next() {
		var name string
		if err := cols.Scan(&name); err != nil {
			cols.Close()
			return fail("%v", err)
		}
		have[strings.ToLower(name)] = name
	}
	if err := cols.Close(); err != nil {
		return fail("%v", err)
	}
	var sel []string
	var at []int // model column of each selected column
	for i, c := range e.Columns {
		if name, ok := have[strings.ToLower(c.Name)]; ok {
			sel = append(sel, quote(name))
			at = append(at, i)
		} else if c.Field != nil && c.Field.Key {
			return fail("no column %s, the key of relation %s", c.Name, e.Name)
		}
	}
	rows, err := db.Query("SELECT " + strings.Join(sel, ", ") + " FROM " + quote(table))
	if err != nil {
		return fail("%v", err)
	}
	defer rows.Close()
	t := NewTable(e, opt)
	raw := make([]any, len(sel))
	ptrs := make([]any, len(sel))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	row := make([]types.Value, len(e.Columns))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fail("row %d: %v", t.rel.Rows+1, err)
		}
		for j, i := range at {
			c := e.Columns[i]
			v, ok := fromSQLite(raw[j], c.Type)
			if !ok {
				return fail("row %d: column %s holds %s, not a %s", t.rel.Rows+1, c.Name, describe(raw[j]), c.Type)
			}
			row[i] = v
		}
		t.Add(row)
		if opt.Progress != nil && t.rel.Rows%progressEvery == 0 {
			opt.Progress(e.Name, t.rel.Rows, false)
		}
	}
	if err := rows.Err(); err != nil {
		return fail("%v", err)
	}
	if opt.Progress != nil {
		opt.Progress(e.Name, t.rel.Rows, true)
	}
	return t.Result(), nil
}

// describe shows a SQLite value in an error, shortened if long.
func describe(v any) string {
	s := fmt.Sprintf("%T %v", v, v)
	if b, ok := v.([]byte); ok {
		s = fmt.Sprintf("a blob of %d bytes", len(b))
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// fromSQLite converts a value as SQLite returns it to the canonical value
// of type t (package types), or says it cannot.
func fromSQLite(v any, t types.Type) (types.Value, bool) {
	if v == nil {
		return nil, true
	}
	if t.IsCollection() {
		// JSON text, as data files hold collections.
		c, err := types.Coerce(v, t)
		return c, err == nil
	}
	switch t {
	case types.String:
		switch x := v.(type) {
		case string:
			return x, true
		case []byte:
			return string(x), true
		}
	case types.Bytes:
		switch x := v.(type) {
		case []byte:
			return x, true
		case string:
			return []byte(x), true
		}
	case types.Int, types.BigInt:
		switch x := v.(type) {
		case int64:
			return x, true
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), true
			}
		}
	case types.Float, types.Double:
		switch x := v.(type) {
		case float64:
			return x, true
		case int64:
			return float64(x), true
		}
	case types.Bool:
		switch x := v.(type) {
		case int64:
			return x != 0, true
		case bool:
			return x, true
		}
	case types.Timestamp:
		switch x := v.(type) {
		case int64:
			return time.UnixMicro(x).UTC(), true
		case time.Time:
			return x.UTC(), true
		case string:
			if ts, err := types.ParseTimestamp(x); err == nil {
				return ts, true
			}
		}
	}
	return nil, false
}
