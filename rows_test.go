package kvschema

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/kvschema/kvschema/types"
)

// TestRowsChunks: rows collected across chunks come back in order through
// Next/Values and All, each row its own slice (appending to one does not
// touch the next), with a first chunk reserved smaller or larger than the
// rows or none.
func TestRowsChunks(t *testing.T) {
	for _, width := range []int{1, 2, 3, 4, 5} { // 4 fits Rows.first, 5 does not
		for _, c := range []struct{ n, reserve int }{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {64, 0}, {65, 0}, {200, 0}, {0, 10}, {3, 2}, {100, 100}, {101, 100}, {40, 100}, {600, maxChunkRows + 7}} {
			n := c.n
			cols := make([]string, width)
			r := newRows(cols, nil)
			r.reserve(c.reserve)
			r.project = make([]int, width)
			for i := range width {
				r.project[i] = width - 1 - i // reversed
			}
			tuple := make([]types.Datum, width)
			for i := range n {
				for j := range tuple {
					tuple[j] = types.StringDatum(fmt.Sprint(i, "/", width-1-j))
				}
				r.addProjected(tuple)
			}
			want := func(i int) []types.Value {
				row := make([]types.Value, width)
				for j := range row {
					row[j] = fmt.Sprint(i, "/", j)
				}
				return row
			}
			if r.Len() != n || len(r.All()) != n {
				t.Fatalf("width %d, %d rows: Len %d, All %d", width, n, r.Len(), len(r.All()))
			}
			if r.Values() != nil {
				t.Fatalf("width %d: Values before Next = %v", width, r.Values())
			}
			for i := 0; r.Next(); i++ {
				if got := r.Values(); fmt.Sprint(got) != fmt.Sprint(want(i)) || cap(got) != width {
					t.Fatalf("width %d, row %d: %v (cap %d), want %v", width, i, got, cap(got), want(i))
				}
				if got := r.All()[i]; fmt.Sprint(got) != fmt.Sprint(want(i)) || cap(got) != width {
					t.Fatalf("width %d, All()[%d] = %v", width, i, got)
				}
			}
			r.Close()
			if r.Len() != 0 || r.Values() != nil || r.All() != nil || r.Next() {
				t.Fatalf("width %d: rows remain after Close", width)
			}
		}
	}
}

// TestValuesCopiesOnlyToConvert: canonical arguments are used in place;
// others are converted in a copy, never in the caller's slice.
func TestValuesCopiesOnlyToConvert(t *testing.T) {
	args := []any{int64(7), "x", nil}
	got, err := values(args)
	if err != nil || &got[0] != &args[0] {
		t.Fatalf("canonical args: %v, copied %v", err, err == nil && &got[0] != &args[0])
	}
	args = []any{int64(7), 8, float32(0.5)}
	got, err = values(args)
	if err != nil {
		t.Fatal(err)
	}
	if got[1] != int64(8) || got[2] != float64(0.5) || args[1] != 8 || args[2] != float32(0.5) {
		t.Fatalf("converted %#v, caller's args now %#v", got, args)
	}
	if _, err := values([]any{int64(1), struct{}{}}); err == nil {
		t.Fatal("unsupported type accepted")
	}
}

// TestScanTyped: Scan stores every type in its Go destinations and the
// database/sql Null types, refuses NULL where it cannot go, and gives
// *[]byte a copy.
func TestScanTyped(t *testing.T) {
	ts := time.Date(2026, 11, 25, 1, 2, 3, 4000, time.UTC)
	row := []types.Datum{
		types.StringDatum("s"), types.BytesDatum([]byte("b")), types.IntDatum(types.Int, -7),
		types.IntDatum(types.BigInt, 1<<40), types.FloatDatum(types.Double, 2.5), types.BoolDatum(true),
		types.TimestampDatum(ts.UnixMicro()), types.Null,
	}
	r := newRows(make([]string, len(row)), nil)
	copy(r.add(), row)
	if !r.Next() {
		t.Fatal("no row")
	}
	var (
		s   string
		b   []byte
		i   int
		i64 int64
		f   float64
		ok  bool
		tm  time.Time
		a   any
	)
	if err := r.Scan(&s, &b, &i, &i64, &f, &ok, &tm, &a); err != nil {
		t.Fatal(err)
	}
	if s != "s" || string(b) != "b" || i != -7 || i64 != 1<<40 || f != 2.5 || !ok || !tm.Equal(ts) || a != nil {
		t.Fatalf("Scan: %q %q %d %d %g %v %v %v", s, b, i, i64, f, ok, tm, a)
	}
	b[0] = 'x'
	if got := r.Datums()[1].Str(); got != "b" {
		t.Fatalf("*[]byte shares the row's memory: row now %q", got)
	}
	var (
		ns  sql.NullString
		nb  []byte
		ni  sql.NullInt32
		n64 sql.NullInt64
		nf  sql.NullFloat64
		nok sql.NullBool
		nt  sql.NullTime
		nn  sql.NullInt64
	)
	if err := r.Scan(&ns, &nb, &ni, &n64, &nf, &nok, &nt, &nn); err != nil {
		t.Fatal(err)
	}
	if ns != (sql.NullString{String: "s", Valid: true}) || ni != (sql.NullInt32{Int32: -7, Valid: true}) ||
		n64 != (sql.NullInt64{Int64: 1 << 40, Valid: true}) || nf != (sql.NullFloat64{Float64: 2.5, Valid: true}) ||
		nok != (sql.NullBool{Bool: true, Valid: true}) || !nt.Valid || !nt.Time.Equal(ts) || nn.Valid {
		t.Fatalf("Scan into Null types: %v %v %v %v %v %v %v", ns, ni, n64, nf, nok, nt, nn)
	}
	for _, c := range []struct {
		dest any
		col  int
	}{{new(int64), 7}, {new(string), 2}, {new(int64), 0}, {new(float64), 3}, {new(sql.NullString), 2}, {new(bool), 0}} {
		dest := make([]any, len(row))
		for j := range dest {
			dest[j] = new(any)
		}
		dest[c.col] = c.dest
		if err := r.Scan(dest...); err == nil {
			t.Errorf("column %d (%v) scanned into %T", c.col, row[c.col].Value(), c.dest)
		}
	}
	// BYTES into *[]byte copies, into *any boxes: here column 1 is NULL.
	dest := []any{&s, new(any), &i, &i64, &f, &ok, &tm, &nn}
	row[1] = types.Null
	r = newRows(make([]string, len(row)), nil)
	copy(r.add(), row)
	r.Next()
	if allocs := testing.AllocsPerRun(100, func() {
		if err := r.Scan(dest...); err != nil {
			t.Fatal(err)
		}
	}); allocs > 0 {
		// Scan's own work; the destinations are set up outside.
		t.Errorf("Scan of unboxed values allocates %.0f times", allocs)
	}
}
