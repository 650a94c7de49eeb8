package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
)

// expiryT is the instant the cells of the expiry tests expire at.
var expiryT = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

// expiryUnit is the granularity at which s keeps Mutation.Expires:
// Bigtable's timestamps are whole milliseconds (it rounds Expires up, see
// Mutation.Expires), the other stores keep microseconds.
func expiryUnit(s store.Store) time.Duration {
	if s.Capabilities().Engine == "bigtable" {
		return time.Millisecond
	}
	return time.Microsecond
}

// expiring is a SetCell whose cell expires at t.
func expiring(table, row, family, qualifier, value string, t time.Time) store.Mutation {
	m := set(table, row, family, qualifier, value)
	m.Expires = t.UnixMicro()
	return m
}

// readAt is what reads see at instant at, as rows.
func readAt(t *testing.T, s store.Store, at time.Time, table string, rs store.RowSet, opts store.ReadOptions) string {
	t.Helper()
	ctx := store.WithNow(t.Context(), at)
	var rows []store.Row
	if err := s.ReadRows(ctx, table, rs, opts, func(r store.Row) bool {
		rows = append(rows, store.CloneRow(r))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	got := format(rows)
	// ReadCells (the store's, or assembled from ReadRows) agrees.
	rows = nil
	if err := store.ReadCells(ctx, s, table, rs, opts, func(row []byte, c store.Cell, first bool) bool {
		if first {
			rows = append(rows, store.Row{Key: append([]byte(nil), row...)})
		}
		last := &rows[len(rows)-1]
		last.Cells = append(last.Cells, store.CloneRow(store.Row{Cells: []store.Cell{c}}).Cells[0])
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if cells := format(sortCells(rows)); cells != got {
		t.Errorf("at %s, ReadCells(%s, %+v) =\n%s\nReadRows =\n%s", at.Format(time.RFC3339Nano), formatRowSet(rs), opts, cells, got)
	}
	return got
}

func wantAt(t *testing.T, s store.Store, at time.Time, table string, rs store.RowSet, opts store.ReadOptions, want string) {
	t.Helper()
	if got := readAt(t, s, at, table, rs, opts); got != want {
		t.Errorf("at %s, ReadRows(%s, %+v) =\n%s\nwant\n%s", at.Format(time.RFC3339Nano), formatRowSet(rs), opts, got, want)
	}
}

func wantRowAt(t *testing.T, s store.Store, at time.Time, table, key, want string) {
	t.Helper()
	r, ok, err := s.ReadRow(store.WithNow(t.Context(), at), table, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	if ok {
		got = format([]store.Row{r})
	} else if r.Key != nil || r.Cells != nil {
		t.Errorf("ReadRow(%q) not ok, with a row %v", key, r)
	}
	if got != want {
		t.Errorf("at %s, ReadRow(%q) =\n%s\nwant\n%s", at.Format(time.RFC3339Nano), key, got, want)
	}
}

// testExpiry checks cell expiry (Mutation.Expires) on a store with
// Capabilities().Expiry, and its refusal on any other.
func testExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f", "g")
	if !s.Capabilities().Expiry {
		err := s.Apply(ctx, []store.Mutation{set("t", "a", "f", "q", "1"), expiring("t", "b", "f", "q", "2", expiryT)})
		if !errors.Is(err, store.ErrNoExpiry) {
			t.Fatalf("Apply with Expires on a store without Expiry: err = %v, want ErrNoExpiry", err)
		}
		wantRows(t, s, "t", store.All(), store.ReadOptions{}, "")
		if c, ok := s.(store.Conditional); ok {
			_, err := c.ApplyIf(ctx, "t", []byte("a"), store.Cond{Family: "f"}, nil, []store.Mutation{expiring("t", "a", "f", "q", "2", expiryT)})
			if !errors.Is(err, store.ErrNoExpiry) {
				t.Fatalf("ApplyIf with Expires on a store without Expiry: err = %v, want ErrNoExpiry", err)
			}
		}
		if _, supported, err := store.ApplyGuards(ctx, s, nil, []store.Mutation{expiring("t", "a", "f", "q", "2", expiryT)}); supported && !errors.Is(err, store.ErrNoExpiry) {
			t.Fatalf("ApplyGuards with Expires on a store without Expiry: err = %v, want ErrNoExpiry", err)
		}
		wantRows(t, s, "t", store.All(), store.ReadOptions{}, "")
		return
	}
	before, at, later := expiryT.Add(-time.Microsecond), expiryT, expiryT.Add(time.Hour)
	apply(t, s,
		expiring("t", "a", "f", "q", "1", expiryT), // a row that vanishes
		set("t", "b", "f", "p", "p"),               // a row that keeps a cell
		expiring("t", "b", "f", "q", "2", expiryT),
		set("t", "c", "f", "q", "3"),
		expiring("t", "d", "f", "q", "4", expiryT),
		expiring("t", "d", "g", "", "4", expiryT),
		expiring("t", "e", "f", "q", "5", expiryT.Add(time.Minute)),
	)
	all := store.All()
	wantAt(t, s, before, "t", all, store.ReadOptions{}, `"a" f:"q"="1"`+"\n"+`"b" f:"p"="p" f:"q"="2"`+"\n"+`"c" f:"q"="3"`+"\n"+`"d" f:"q"="4" g:""="4"`+"\n"+`"e" f:"q"="5"`)
	wantAt(t, s, at, "t", all, store.ReadOptions{}, `"b" f:"p"="p"`+"\n"+`"c" f:"q"="3"`+"\n"+`"e" f:"q"="5"`)
	wantAt(t, s, later, "t", all, store.ReadOptions{}, `"b" f:"p"="p"`+"\n"+`"c" f:"q"="3"`)
	wantAt(t, s, at, "t", all, store.ReadOptions{Reverse: true}, `"e" f:"q"="5"`+"\n"+`"c" f:"q"="3"`+"\n"+`"b" f:"p"="p"`)
	// Limits count live rows only.
	wantAt(t, s, at, "t", all, store.ReadOptions{Limit: 1}, `"b" f:"p"="p"`)
	wantAt(t, s, at, "t", store.RowSet{Ranges: []store.Range{{Start: []byte("c"), End: []byte("e")}}}, store.ReadOptions{Limit: 1, Reverse: true}, `"c" f:"q"="3"`)
	wantAt(t, s, later, "t", store.RowSet{Ranges: []store.Range{{Start: []byte("c")}}}, store.ReadOptions{Limit: 1, Reverse: true}, `"c" f:"q"="3"`)
	wantAt(t, s, at, "t", store.RowSet{Keys: keys("a", "b", "d")}, store.ReadOptions{}, `"b" f:"p"="p"`)
	wantAt(t, s, at, "t", store.RowSet{Keys: keys("a", "d", "e")}, store.ReadOptions{Limit: 1}, `"e" f:"q"="5"`)
	wantAt(t, s, at, "t", store.RowSet{Keys: keys("a", "c", "d")}, store.ReadOptions{Limit: 1, Reverse: true}, `"c" f:"q"="3"`)
	wantRowAt(t, s, before, "t", "a", `"a" f:"q"="1"`)
	wantRowAt(t, s, at, "t", "a", "")
	wantRowAt(t, s, at, "t", "d", "")
	wantRowAt(t, s, at, "t", "b", `"b" f:"p"="p"`)

	// A rewrite without Expires makes a cell permanent; one with a later
	// Expires extends it; a deletion removes it as usual.
	apply(t, s, set("t", "a", "f", "q", "1'"), expiring("t", "b", "f", "q", "2'", later), del("t", "e", "f", "q"))
	wantAt(t, s, later.Add(-time.Microsecond), "t", all, store.ReadOptions{}, `"a" f:"q"="1'"`+"\n"+`"b" f:"p"="p" f:"q"="2'"`+"\n"+`"c" f:"q"="3"`)
	wantAt(t, s, later, "t", all, store.ReadOptions{}, `"a" f:"q"="1'"`+"\n"+`"b" f:"p"="p"`+"\n"+`"c" f:"q"="3"`)
	apply(t, s, expiring("t", "c", "f", "q", "3'", at), delFamily("t", "b", "f"))
	wantAt(t, s, before, "t", all, store.ReadOptions{}, `"a" f:"q"="1'"`+"\n"+`"c" f:"q"="3'"`+"\n"+`"d" f:"q"="4" g:""="4"`)
	wantAt(t, s, at, "t", all, store.ReadOptions{}, `"a" f:"q"="1'"`)
	// A cell written after its instant is absent from the start (the
	// instant is the last one the store can keep before T).
	zAt := expiryT.Add(-expiryUnit(s))
	apply(t, s, expiring("t", "z", "f", "q", "late", zAt))
	wantRowAt(t, s, at, "t", "z", "")
	apply(t, s, delRow("t", "d"))
	wantAt(t, s, before, "t", all, store.ReadOptions{}, `"a" f:"q"="1'"`+"\n"+`"c" f:"q"="3'"`)
	wantAt(t, s, zAt.Add(-time.Microsecond), "t", store.RowSet{Keys: keys("z")}, store.ReadOptions{}, `"z" f:"q"="late"`)

	// Conditions and guards see an expired cell as absent. Row c has one
	// cell, expiring at T.
	has := store.Cond{Family: "f", Qualifier: []byte("q")}
	if c, ok := s.(store.Conditional); ok {
		for _, tc := range []struct {
			at   time.Time
			want bool
		}{{before, true}, {at, false}} {
			matched, err := c.ApplyIf(store.WithNow(ctx, tc.at), "t", []byte("c"), has, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if matched != tc.want {
				t.Errorf("at %s, ApplyIf(f:q exists) matched = %v, want %v", tc.at.Format(time.RFC3339Nano), matched, tc.want)
			}
		}
	}
	for _, tc := range []struct {
		at   time.Time
		want int
	}{{before, 1}, {at, 0}} {
		seen := -1
		g := store.Guard{Table: "t", Row: []byte("c"), Holds: func(cells []store.Cell) bool { seen = len(cells); return true }}
		applied, supported, err := store.ApplyGuards(store.WithNow(ctx, tc.at), s, []store.Guard{g}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !supported {
			break
		}
		if !applied || seen != tc.want {
			t.Errorf("at %s, ApplyGuards: applied = %v, the guard saw %d cells, want %d", tc.at.Format(time.RFC3339Nano), applied, seen, tc.want)
		}
	}
}

// testExpiryNow checks store.Now and store.Expired.
func testExpiryNow(t *testing.T, _ store.Store) {
	ctx := context.Background()
	if d := time.Since(store.Now(ctx)); d < 0 || d > time.Minute {
		t.Errorf("Now without WithNow is %v from time.Now()", d)
	}
	if got := store.Now(store.WithNow(ctx, expiryT)); !got.Equal(expiryT) {
		t.Errorf("Now(WithNow(T)) = %v, want %v", got, expiryT)
	}
	e := expiryT.UnixMicro()
	if store.Expired(0, expiryT) || store.Expired(e, expiryT.Add(-time.Microsecond)) || !store.Expired(e, expiryT) {
		t.Error("Expired: wrong at 0, T-1µs or T")
	}
}

// atT is a test whose Context reads at a fixed instant (store.WithNow).
type atT struct {
	*testing.T
	ctx context.Context
}

func (a atT) Context() context.Context { return a.ctx }

// checkIndexAt checks reads through index ix of table at instant at
// against the function of the rows read at that instant, and returns the
// whole index read forward.
func checkIndexAt(t *testing.T, s store.Store, at time.Time, table string, ix store.IndexSpec) string {
	t.Helper()
	tt := atT{t, store.WithNow(t.Context(), at)}
	rows := readRows(tt, s, table, store.All(), store.ReadOptions{})
	for _, values := range []store.RowSet{store.All(), exact("x"), exact("y"), exact("z"), {Ranges: []store.Range{{Start: []byte("x")}}}} {
		for _, opts := range []store.ReadOptions{{}, {Reverse: true}, {Limit: 1}, {Limit: 1, Reverse: true}, {Limit: 2}} {
			got, want := format(readIndex(tt, s, table, ix.Name, values, opts)), format(IndexFunction(rows, ix, values, opts))
			if got != want {
				t.Errorf("at %s, ReadIndex(%q, %s, %+v) =\n%s\nwant, from the rows,\n%s", at.Format(time.RFC3339Nano), ix.Name, formatRowSet(values), opts, got, want)
			}
		}
	}
	return format(readIndex(tt, s, table, ix.Name, store.All(), store.ReadOptions{}))
}

// testIndexExpiry checks, on a store with Capabilities().Expiry, that
// reads through a local index skip the rows whose indexed cell expired,
// that writes keep the entries of expired cells right, and that an index
// added to a table with expired cells reads as one kept all along.
func testIndexExpiry(t *testing.T, s store.Store) {
	if !s.Capabilities().Expiry {
		t.Skip("no cell expiry")
	}
	createIndexed(t, s, "t", []string{"f", "g"}, byV)
	before, at, later := expiryT.Add(-time.Microsecond), expiryT, expiryT.Add(time.Hour)
	apply(t, s,
		expiring("t", "a", "f", "v", "x", expiryT),
		set("t", "b", "f", "v", "x"),
		expiring("t", "c", "f", "v", "y", expiryT), // the row stays, with g
		set("t", "c", "g", "", "z"),
		set("t", "d", "f", "v", "w"),
		expiring("t", "d", "g", "", "y", expiryT),
	)
	want := func(at time.Time, ix store.IndexSpec, rows string) {
		t.Helper()
		if got := checkIndexAt(t, s, at, "t", ix); got != rows {
			t.Errorf("at %s, index %q =\n%s\nwant\n%s", at.Format(time.RFC3339Nano), ix.Name, got, rows)
		}
	}
	want(before, byV, `"d" f:"v"="w" g:""="y"`+"\n"+`"a" f:"v"="x"`+"\n"+`"b" f:"v"="x"`+"\n"+`"c" f:"v"="y" g:""="z"`)
	want(at, byV, `"d" f:"v"="w"`+"\n"+`"b" f:"v"="x"`)
	// Rewriting an expired indexed cell moves its entry; an expiring one
	// with a later instant is read until then.
	apply(t, s, set("t", "a", "f", "v", "y"), expiring("t", "c", "f", "v", "y", later))
	want(at, byV, `"d" f:"v"="w"`+"\n"+`"b" f:"v"="x"`+"\n"+`"a" f:"v"="y"`+"\n"+`"c" f:"v"="y" g:""="z"`)
	want(later, byV, `"d" f:"v"="w"`+"\n"+`"b" f:"v"="x"`+"\n"+`"a" f:"v"="y"`)
	// Deleting an expired indexed cell, and its row, drops its entry.
	apply(t, s, expiring("t", "b", "f", "v", "x", expiryT))
	apply(t, s, delRow("t", "b"), del("t", "c", "f", "v"))
	want(before, byV, `"d" f:"v"="w" g:""="y"`+"\n"+`"a" f:"v"="y"`)
	// An index added now covers the expired cells as the others do.
	createIndexed(t, s, "t", []string{"f", "g"}, byV, byW)
	want(before, byW, `"d" f:"v"="w" g:""="y"`+"\n"+`"c" g:""="z"`)
	want(at, byW, `"c" g:""="z"`)
	CheckIndexes(atT{t, store.WithNow(t.Context(), at)}, s, "t")
}

// testSweep checks store.Sweeper: a sweep at an instant removes for good
// the cells expired then (reads at an earlier instant no longer see them),
// with their index entries, and nothing else.
func testSweep(t *testing.T, s store.Store) {
	sw, ok := s.(store.Sweeper)
	if !ok || !s.Capabilities().Expiry {
		t.Skip("not a Sweeper")
	}
	create(t, s, "t", "f", "g")
	before := expiryT.Add(-time.Microsecond)
	apply(t, s,
		expiring("t", "a", "f", "q", "1", expiryT),
		set("t", "b", "f", "p", "p"),
		expiring("t", "b", "f", "q", "2", expiryT),
		expiring("t", "c", "f", "q", "3", expiryT.Add(time.Hour)), // not yet
		set("t", "d", "g", "", "4"),
	)
	var reported int64
	n, err := sw.SweepExpired(store.WithNow(t.Context(), expiryT), func(table string, cells int64) { reported += cells })
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || reported != 2 {
		t.Fatalf("swept %d cells (reported %d), want 2", n, reported)
	}
	// Read before their expiry: the swept cells are gone all the same.
	wantAt(t, s, before, "t", store.All(), store.ReadOptions{}, `"b" f:"p"="p"`+"\n"+`"c" f:"q"="3"`+"\n"+`"d" g:""="4"`)
	if n, err := sw.SweepExpired(store.WithNow(t.Context(), expiryT), nil); err != nil || n != 0 {
		t.Fatalf("a second sweep removed %d cells (%v)", n, err)
	}
}
