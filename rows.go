package kvschema

import (
	"database/sql"
	"fmt"
	"reflect"
	"time"

	"github.com/kvschema/kvschema/types"
)

// Rows is the result of a query. It is fully materialized: Close is
// optional. Its values are held unboxed (types.Datum), so Scan copies them
// into typed destinations without allocating, except for the copy a
// *[]byte receives. The bytes of short STRING values are packed into
// shared chunks as they are decoded (types.Strings): a string scanned out
// stays valid and unchanged for good, and keeps its chunk (at most 8 KiB)
// alive while it is referenced.
type Rows struct {
	cols  []string
	types []types.Type // the columns' types (shared: do not modify)
	// chunks hold the rows' values, len(cols) per row, in order: each chunk
	// is filled before the next is made, of minChunkRows, then twice as
	// large up to maxChunkRows, so collecting rows never copies them. Every
	// chunk holds a whole number of rows; all but the last are full, and
	// the last holds used values.
	chunks  [][]types.Datum
	used    int
	n       int             // number of rows
	i       int             // rows Next has passed
	next    rowPos          // where the row after the current one lies
	all     [][]types.Value // All's answer, built on demand
	project []int           // while a query fills the rows: their attributes
	inline  [4][]types.Datum
	// first holds the first row when it is narrow enough: a point lookup's
	// whole result, without a chunk of its own.
	first [4]types.Datum
}

// rowPos is a row's position in Rows.chunks.
type rowPos struct{ chunk, off int }

const (
	minChunkRows = 16
	maxChunkRows = 512
)

func newRows(cols []string, ts []types.Type) *Rows {
	r := &Rows{cols: cols, types: ts}
	r.chunks = r.inline[:0]
	return r
}

// projector is Rows as the sink of a query (exec.Sink): Add appends the
// projection of a tuple, which is only lent to it.
type projector Rows

// Add implements exec.Sink.
func (p *projector) Add(t []types.Datum) bool { return (*Rows)(p).addProjected(t) }

func (r *Rows) addProjected(t []types.Datum) bool {
	out := r.add()
	for i, a := range r.project {
		out[i] = t[a]
	}
	return true
}

// reserve makes room for n more rows (at most maxChunkRows) in one chunk,
// when the rows have none yet: the first chunk is made that large.
func (r *Rows) reserve(n int) {
	w := len(r.cols)
	if len(r.chunks) > 0 || n <= 1 || w == 0 {
		return
	}
	r.chunks = append(r.chunks, make([]types.Datum, min(n, maxChunkRows)*w))
}

// add appends a row of NULLs and returns it, for the caller to fill.
func (r *Rows) add() []types.Datum {
	w := len(r.cols)
	last := len(r.chunks) - 1
	if last < 0 || len(r.chunks[last])-r.used < w {
		rows := minChunkRows
		if last >= 0 {
			rows = min(max(2*len(r.chunks[last])/max(w, 1), minChunkRows), maxChunkRows)
		}
		if last < 0 && w <= len(r.first) {
			r.chunks = append(r.chunks, r.first[:w:w])
		} else {
			r.chunks = append(r.chunks, make([]types.Datum, rows*w))
		}
		last++
		r.used = 0
	}
	// An offset, not a re-sliced chunk: a slice header written per row
	// would cost a write barrier each while the GC marks.
	n := r.used
	r.used += w
	r.n++
	return r.chunks[last][n : n+w : n+w]
}

// rowAt returns the row at *p and moves *p past it.
func (r *Rows) rowAt(p *rowPos) []types.Datum {
	w := len(r.cols)
	for p.off+w > len(r.chunks[p.chunk]) {
		p.chunk, p.off = p.chunk+1, 0
	}
	row := r.chunks[p.chunk][p.off : p.off+w : p.off+w]
	p.off += w
	return row
}

// Columns names the result columns.
func (r *Rows) Columns() []string { return r.cols }

// Next advances to the next row.
func (r *Rows) Next() bool {
	if r.i >= r.n {
		return false
	}
	r.rowAt(&r.next)
	r.i++
	return true
}

// ColumnTypes returns the type of each column (STRING for EXPLAIN's PLAN).
// The slice is shared: do not modify it.
func (r *Rows) ColumnTypes() []types.Type { return r.types }

// Datums is the current row, unboxed, or nil before the first Next or
// after Close. The slice is the Rows' own: read it, do not change it.
func (r *Rows) Datums() []types.Datum {
	if r.i < 1 {
		return nil
	}
	p := r.next // just past the current row
	w := len(r.cols)
	return r.chunks[p.chunk][p.off-w : p.off : p.off]
}

// Values is the current row as canonical Go values (nil for NULL), or nil
// before the first Next or after Close. The slice is the caller's.
func (r *Rows) Values() []types.Value {
	row := r.Datums()
	if row == nil {
		return nil
	}
	out := make([]types.Value, len(row))
	for i, d := range row {
		out[i] = d.Value()
	}
	return out
}

// All returns every row as canonical Go values, regardless of iteration.
func (r *Rows) All() [][]types.Value {
	if r.n == 0 {
		return nil
	}
	if r.all == nil {
		w := len(r.cols)
		vals := make([]types.Value, r.n*w)
		r.all = make([][]types.Value, r.n)
		var p rowPos
		for i := range r.all {
			row := vals[i*w : (i+1)*w : (i+1)*w]
			for j, d := range r.rowAt(&p) {
				row[j] = d.Value()
			}
			r.all[i] = row
		}
	}
	return r.all
}

// Len is the number of rows.
func (r *Rows) Len() int { return r.n }

// Scan copies the current row into pointers: *string, *[]byte (a copy),
// *int64, *int, *float64, *bool, *time.Time, their database/sql Null
// types (sql.NullString, sql.NullInt64, sql.NullInt32, sql.NullFloat64,
// sql.NullBool, sql.NullTime), and *any (the canonical Go value). NULL can
// go only into a Null type or *any. A collection goes into a *[]T (a SET
// or LIST) or *map[K]V (a MAP) of those element types, *types.Set,
// *types.List or *types.Map, or *string and *sql.NullString as JSON text
// (types.JSON); a NULL collection into a slice or map leaves it nil.
func (r *Rows) Scan(dest ...any) error {
	row := r.Datums()
	if row == nil {
		return fmt.Errorf("Scan called without a current row (call Next first)")
	}
	if len(dest) != len(row) {
		return fmt.Errorf("Scan: %d destinations for %d columns", len(dest), len(row))
	}
	for i, d := range dest {
		if err := assign(d, row[i]); err != nil {
			return fmt.Errorf("Scan column %s: %w", r.cols[i], err)
		}
	}
	return nil
}

// Close releases the rows.
func (r *Rows) Close() error {
	*r = Rows{cols: r.cols}
	return nil
}

// assignCollection stores the collection d in dest (see Scan).
func assignCollection(dest any, d types.Datum) error {
	v := d.Value()
	switch p := dest.(type) {
	case *any:
		*p = v
		return nil
	case *string:
		*p = types.JSON(v)
		return nil
	case *sql.NullString:
		*p = sql.NullString{String: types.JSON(v), Valid: true}
		return nil
	case *types.Set:
		if x, ok := v.(types.Set); ok {
			*p = x
			return nil
		}
	case *types.List:
		if x, ok := v.(types.List); ok {
			*p = x
			return nil
		}
	case *types.Map:
		if x, ok := v.(types.Map); ok {
			*p = x
			return nil
		}
	}
	rv := reflect.ValueOf(dest)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("cannot store %s in %T", d.Type, dest)
	}
	out := rv.Elem()
	// elem converts one element through assign, as a column's value.
	elem := func(e types.Value, t reflect.Type) (reflect.Value, error) {
		ed, _ := types.DatumOf(e)
		ptr := reflect.New(t)
		if err := assign(ptr.Interface(), ed); err != nil {
			return reflect.Value{}, fmt.Errorf("element: %w", err)
		}
		return ptr.Elem(), nil
	}
	switch x := v.(type) {
	case types.Set, types.List:
		if out.Kind() != reflect.Slice || out.Type().Elem().Kind() == reflect.Uint8 {
			break
		}
		var xs []types.Value
		if s, ok := x.(types.Set); ok {
			xs = s
		} else {
			xs = x.(types.List)
		}
		s := reflect.MakeSlice(out.Type(), len(xs), len(xs))
		for i, e := range xs {
			ev, err := elem(e, out.Type().Elem())
			if err != nil {
				return err
			}
			s.Index(i).Set(ev)
		}
		out.Set(s)
		return nil
	case types.Map:
		if out.Kind() != reflect.Map {
			break
		}
		m := reflect.MakeMapWithSize(out.Type(), len(x))
		for _, e := range x {
			k, err := elem(e.Key, out.Type().Key())
			if err != nil {
				return err
			}
			val, err := elem(e.Val, out.Type().Elem())
			if err != nil {
				return err
			}
			m.SetMapIndex(k, val)
		}
		out.Set(m)
		return nil
	}
	return fmt.Errorf("cannot store %s (%s) in %T", types.DisplayLiteral(v), d.Type, dest)
}

// assign stores d in dest without boxing it.
func assign(dest any, d types.Datum) error {
	t := d.Type
	if t.IsCollection() {
		return assignCollection(dest, d)
	}
	isInt := t == types.Int || t == types.BigInt
	isFloat := t == types.Float || t == types.Double
	switch p := dest.(type) {
	case *any:
		*p = d.Value()
		return nil
	case *string:
		if t == types.String {
			*p = d.Str()
			return nil
		}
	case *[]byte:
		if t == types.Bytes {
			*p = d.AppendBytes(make([]byte, 0, len(d.Str())))
			return nil
		}
	case *int64:
		if isInt {
			*p = d.Int()
			return nil
		}
	case *int:
		if isInt {
			*p = int(d.Int())
			return nil
		}
	case *float64:
		if isFloat {
			*p = d.Float()
			return nil
		}
	case *bool:
		if t == types.Bool {
			*p = d.Bool()
			return nil
		}
	case *time.Time:
		if t == types.Timestamp {
			*p = d.Time()
			return nil
		}
	case *sql.NullString:
		if t == types.String || d.IsNull() {
			*p = sql.NullString{String: d.Str(), Valid: !d.IsNull()}
			return nil
		}
	case *sql.NullInt64:
		if isInt || d.IsNull() {
			*p = sql.NullInt64{Int64: d.Int(), Valid: !d.IsNull()}
			return nil
		}
	case *sql.NullInt32:
		if t == types.Int || d.IsNull() {
			*p = sql.NullInt32{Int32: int32(d.Int()), Valid: !d.IsNull()}
			return nil
		}
	case *sql.NullFloat64:
		if isFloat || d.IsNull() {
			*p = sql.NullFloat64{Float64: d.Float(), Valid: !d.IsNull()}
			return nil
		}
	case *sql.NullBool:
		if t == types.Bool || d.IsNull() {
			*p = sql.NullBool{Bool: d.Bool(), Valid: !d.IsNull()}
			return nil
		}
	case *sql.NullTime:
		if t == types.Timestamp {
			*p = sql.NullTime{Time: d.Time(), Valid: true}
			return nil
		}
		if d.IsNull() {
			*p = sql.NullTime{}
			return nil
		}
	}
	if rv := reflect.ValueOf(dest); d.IsNull() && rv.Kind() == reflect.Pointer && !rv.IsNil() {
		// A NULL collection: no elements.
		if out := rv.Elem(); out.Kind() == reflect.Map || out.Kind() == reflect.Slice && out.Type().Elem().Kind() != reflect.Uint8 {
			out.SetZero()
			return nil
		}
	}
	v := d.Value()
	return fmt.Errorf("cannot store %s (%s) in %T", types.DisplayLiteral(v), types.KindName(v), dest)
}
