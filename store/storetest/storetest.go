// Package storetest owns the conformance suite of store.Store. Run checks
// that a backend keeps the invariants listed in package store's doc and the
// documented behaviour of every method, including a model-based test that
// compares every read with a plain map. RunSnapshot checks the optional
// store.Snapshotter.
//
// The suite keeps nothing handed to a callback past it without copying
// (store.CloneRow), as every caller must.
package storetest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kvschema/kvschema/store"
)

// Run runs the suite as subtests of t. open must return a fresh, empty
// store for each call; the suite closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	runCases(t, open, []testCase{
		{"Capabilities", testCapabilities},
		{"Tables", testTables},
		{"NoTable", testNoTable},
		{"PutGetDelete", testPutGetDelete},
		{"DeleteRowIsExact", testDeleteRowIsExact},
		{"DeleteFamilyIsExact", testDeleteFamilyIsExact},
		{"CellOrder", testCellOrder},
		{"ReadRows", testReadRows},
		{"StopEarly", testStopEarly},
		{"Atomicity", testAtomicity},
		{"LaterMutationWins", testLaterMutationWins},
		{"InputsNotRetained", testInputsNotRetained},
		{"ReadRowIsCallersCopy", testReadRowIsCallersCopy},
		{"ReadInsideCallback", testReadInsideCallback},
		{"Concurrent", testConcurrent},
		{"Closed", testClosed},
		{"Expiry", testExpiry},
		{"ExpiryNow", testExpiryNow},
		{"SweepExpired", testSweep},
		{"Model", testModel},
	})
}

// testCapabilities checks that a store claiming local indexes reads
// through them.
func testCapabilities(t *testing.T, s store.Store) {
	if _, ok := s.(store.Indexer); s.Capabilities().LocalIndexes && !ok {
		t.Errorf("%T reports LocalIndexes but is no store.Indexer", s)
	}
}

type testCase struct {
	name string
	test func(*testing.T, store.Store)
}

// runCases runs each case as a subtest on a fresh store, closed after it.
func runCases(t *testing.T, open func(t *testing.T) store.Store, cases []testCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.test(t, s)
		})
	}
}

func testTables(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t2", "f")
	create(t, s, "t1", "f", "g")
	create(t, s, "t1", "g", "h", "h") // adds h once, keeps f and g
	create(t, s, "t2")                // no-op
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range specs {
		fams := slices.Sorted(slices.Values(sp.Families))
		got = append(got, sp.Name+":"+strings.Join(fams, ","))
	}
	if want := []string{"t1:f,g,h", "t2:f"}; !slices.Equal(got, want) {
		t.Errorf("Tables = %q, want %q", got, want)
	}
}

func testNoTable(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f")
	if _, _, err := s.ReadRow(ctx, "nope", []byte("a")); !errors.Is(err, store.ErrNoTable) {
		t.Errorf("ReadRow: err = %v, want ErrNoTable", err)
	}
	err := s.ReadRows(ctx, "nope", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	if !errors.Is(err, store.ErrNoTable) {
		t.Errorf("ReadRows: err = %v, want ErrNoTable", err)
	}
	for _, m := range []store.Mutation{
		set("nope", "a", "f", "q", "v"),
		del("nope", "a", "f", "q"),
		delRow("nope", "a"),
		delFamily("nope", "a", "f"),
	} {
		if err := s.Apply(ctx, []store.Mutation{m}); !errors.Is(err, store.ErrNoTable) {
			t.Errorf("Apply(%v): err = %v, want ErrNoTable", m.Kind, err)
		}
	}
}

func testPutGetDelete(t *testing.T, s store.Store) {
	create(t, s, "t", "f", "g")
	wantRow(t, s, "t", "r1", "")
	apply(t, s) // an empty batch is fine
	apply(t, s, set("t", "r1", "f", "q", "v1"))
	wantRow(t, s, "t", "r1", `"r1" f:"q"="v1"`)
	apply(t, s, set("t", "r1", "f", "q", "v2"), set("t", "r1", "g", "", ""), set("t", "r2", "f", "q", "x"))
	wantRow(t, s, "t", "r1", `"r1" f:"q"="v2" g:""=""`)
	apply(t, s, del("t", "r1", "f", "q"), del("t", "r1", "f", "missing"), del("t", "r9", "f", "q"))
	wantRow(t, s, "t", "r1", `"r1" g:""=""`)
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, `"r1" g:""=""`+"\n"+`"r2" f:"q"="x"`)
	// A row exists exactly while it has a cell.
	apply(t, s, del("t", "r1", "g", ""))
	wantRow(t, s, "t", "r1", "")
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, `"r2" f:"q"="x"`)
	apply(t, s, set("t", "r3", "f", "a", "1"), set("t", "r3", "g", "b", "2"), delRow("t", "r3"), delRow("t", "r8"))
	wantRow(t, s, "t", "r3", "")
	apply(t, s, delRow("t", "r2"))
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, "")
}

// testDeleteRowIsExact checks that deleting a row leaves the rows it is a
// prefix of, and the rows that are its prefixes.
func testDeleteRowIsExact(t *testing.T, s store.Store) {
	create(t, s, "t", "f")
	keys := []string{"a", "a\x00", "a\x00\x00", "a\x01", "a\xff", "ab", "\x00", "\xff", "\xff\xff"}
	for _, k := range keys {
		apply(t, s, set("t", k, "f", "", k))
	}
	for _, k := range []string{"a", "\xff", "\x00"} {
		apply(t, s, delRow("t", k), del("t", k+"\x00", "f", "x"))
	}
	var want []string
	for _, k := range slices.Sorted(slices.Values(keys)) {
		if k != "a" && k != "\xff" && k != "\x00" {
			want = append(want, fmt.Sprintf(`%q f:""=%q`, k, k))
		}
	}
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, strings.Join(want, "\n"))
}

// testDeleteFamilyIsExact checks that DeleteFamily removes exactly the
// cells of one family of one row: not those of its other families (one
// of them named with the family's name as a prefix), nor those of the
// rows its key is a prefix of or that are prefixes of it; that deleting
// what is absent is a no-op; that a SetCell after it in one batch wins;
// and that a row whose last family it deletes stops existing.
func testDeleteFamilyIsExact(t *testing.T, s store.Store) {
	create(t, s, "t", "f", "ff", "g")
	cells := func(row string, fams ...string) (muts []store.Mutation) {
		for _, f := range fams {
			for _, q := range []string{"", "q", "q\x00", "\x00", "\xff"} {
				muts = append(muts, set("t", row, f, q, f+q))
			}
		}
		return muts
	}
	line := func(row string, fams ...string) string {
		l := fmt.Sprintf("%q", row)
		for _, f := range fams {
			for _, q := range []string{"", "\x00", "q", "q\x00", "\xff"} { // sorted
				l += fmt.Sprintf(" %s:%q=%q", f, q, f+q)
			}
		}
		return l
	}
	lines := func(ls ...string) string { return strings.Join(ls, "\n") }
	apply(t, s, cells("ab", "f", "ff", "g")...)
	apply(t, s, cells("a", "f")...)      // a prefix of the row's key
	apply(t, s, cells("ab\x00", "f")...) // keys extending it
	apply(t, s, cells("abc", "f")...)
	apply(t, s, cells("b", "f", "g")...)

	apply(t, s, delFamily("t", "ab", "f"))
	want := lines(line("a", "f"), line("ab", "ff", "g"), line("ab\x00", "f"), line("abc", "f"), line("b", "f", "g"))
	wantRow(t, s, "t", "ab", line("ab", "ff", "g"))
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, want)
	wantRows(t, s, "t", store.RowSet{Ranges: []store.Range{store.PrefixRange([]byte("ab"))}}, store.ReadOptions{Reverse: true},
		lines(line("abc", "f"), line("ab\x00", "f"), line("ab", "ff", "g")))

	// Absent: the family again, a row that does not exist, a family
	// with no cell in the row.
	apply(t, s, delFamily("t", "ab", "f"), delFamily("t", "aa", "f"), delFamily("t", "ab\x01", "g"), delFamily("t", "a", "g"))
	wantRow(t, s, "t", "aa", "")
	wantRow(t, s, "t", "ab\x01", "")
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, want)

	// In one batch: deleted then written again, only the new cell is
	// left of the family; written then deleted, none.
	apply(t, s, delFamily("t", "b", "f"), set("t", "b", "f", "new", "n"), set("t", "ab", "f", "x", "x"), delFamily("t", "ab", "f"))
	wantRow(t, s, "t", "b", `"b" f:"new"="n"`+strings.TrimPrefix(line("b", "g"), `"b"`))
	wantRow(t, s, "t", "ab", line("ab", "ff", "g"))

	// A row whose only family is deleted is gone; so is one whose
	// families are all deleted in one batch.
	apply(t, s, delFamily("t", "a", "f"))
	apply(t, s, delFamily("t", "ab", "g"), delFamily("t", "ab", "ff"))
	wantRow(t, s, "t", "a", "")
	wantRow(t, s, "t", "ab", "")
	want = lines(line("ab\x00", "f"), line("abc", "f"), `"b" f:"new"="n"`+strings.TrimPrefix(line("b", "g"), `"b"`))
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, want)
	wantRows(t, s, "t", store.RowSet{Keys: keys("a", "ab")}, store.ReadOptions{}, "")
	// Written again, such a row has only its new cells.
	apply(t, s, set("t", "a", "g", "q", "again"))
	wantRow(t, s, "t", "a", `"a" g:"q"="again"`)
}

func testCellOrder(t *testing.T, s store.Store) {
	create(t, s, "t", "g", "ff", "f")
	apply(t, s,
		set("t", "r", "g", "", "1"),
		set("t", "r", "f", "\xff", "2"),
		set("t", "r", "ff", "a", "3"),
		set("t", "r", "f", "", "4"),
		set("t", "r", "f", "\x00", "5"),
		set("t", "r", "f", "a\x00", "6"),
		set("t", "r", "f", "a", "7"),
		set("t", "r", "g", "\x00\x01", "8"),
	)
	want := `"r" f:""="4" f:"\x00"="5" f:"a"="7" f:"a\x00"="6" f:"\xff"="2" ff:"a"="3" g:""="1" g:"\x00\x01"="8"`
	wantRow(t, s, "t", "r", want)
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, want)
	wantRows(t, s, "t", store.All(), store.ReadOptions{Reverse: true}, want)
}

// edgeKeys are sorted row keys around the bytes 0x00 and 0xFF, where escaping and
// successor computations go wrong.
var edgeKeys = []string{
	"\x00", "\x00\x00", "\x00\xff", "a", "a\x00", "a\x00\x00", "a\x01", "ab", "a\xff",
	"b", "\xff", "\xff\x00", "\xff\xff",
}

func testReadRows(t *testing.T, s store.Store) {
	create(t, s, "t", "f")
	for _, k := range edgeKeys {
		apply(t, s, set("t", k, "f", "q", "v"+k))
	}
	r := func(start, end string) store.Range { return store.Range{Start: []byte(start), End: []byte(end)} }
	from := func(start string) store.Range { return store.Range{Start: []byte(start)} }
	upTo := func(end string) store.Range { return store.Range{End: []byte(end)} }
	cases := []struct {
		name string
		rs   store.RowSet
	}{
		{"all", store.All()},
		{"nothing", store.RowSet{}},
		{"key", store.RowSet{Keys: keys("a")}},
		{"missing key", store.RowSet{Keys: keys("a\x02")}},
		{"duplicate keys", store.RowSet{Keys: keys("b", "a", "b", "a")}},
		{"edge keys", store.RowSet{Keys: keys("\xff\xff", "\x00", "a\x00")}},
		{"range", store.RowSet{Ranges: []store.Range{r("a", "b")}}},
		{"unbounded start", store.RowSet{Ranges: []store.Range{upTo("a")}}},
		{"unbounded end", store.RowSet{Ranges: []store.Range{from("a\xff")}}},
		{"unbounded both", store.RowSet{Ranges: []store.Range{{}}}},
		{"empty ranges", store.RowSet{Ranges: []store.Range{r("b", "a"), r("a", "a")}}},
		{"below every key", store.RowSet{Ranges: []store.Range{upTo("\x00")}}},
		{"single-row range", store.RowSet{Ranges: []store.Range{r("a", "a\x00")}}},
		{"prefix a", store.RowSet{Ranges: []store.Range{store.PrefixRange([]byte("a"))}}},
		{"prefix 00", store.RowSet{Ranges: []store.Range{store.PrefixRange([]byte("\x00"))}}},
		{"prefix ff", store.RowSet{Ranges: []store.Range{store.PrefixRange([]byte("\xff"))}}},
		{"adjacent", store.RowSet{Ranges: []store.Range{r("a", "a\x01"), r("a\x01", "b")}}},
		{"overlapping", store.RowSet{
			Keys:   keys("a\xff", "\xff", "a"),
			Ranges: []store.Range{r("a", "ab"), r("a\x00", "b"), r("\x00", "\x00\xff"), from("\xff\x00")},
		}},
		{"key inside range", store.RowSet{Keys: keys("ab"), Ranges: []store.Range{r("a", "b")}}},
		{"sparse", store.RowSet{Keys: keys("\x00\x00", "b"), Ranges: []store.Range{r("a\x00", "a\x01"), from("\xff\xff")}}},
	}
	for _, c := range cases {
		for _, opts := range []store.ReadOptions{{}, {Reverse: true}, {Limit: 1}, {Limit: 3}, {Limit: 3, Reverse: true}, {Limit: 100}} {
			t.Run(fmt.Sprintf("%s/limit=%d,reverse=%v", c.name, opts.Limit, opts.Reverse), func(t *testing.T) {
				var want []string
				for _, k := range selectKeys(edgeKeys, c.rs, opts) {
					want = append(want, fmt.Sprintf(`%q f:"q"=%q`, k, "v"+k))
				}
				wantRows(t, s, "t", c.rs, opts, strings.Join(want, "\n"))
			})
		}
	}
}

func testStopEarly(t *testing.T, s store.Store) {
	create(t, s, "t", "f")
	for _, k := range edgeKeys {
		apply(t, s, set("t", k, "f", "", ""))
	}
	rs := store.RowSet{Keys: keys("\x00", "a", "b", "\xff")}
	for _, reverse := range []bool{false, true} {
		var got []string
		err := s.ReadRows(t.Context(), "t", rs, store.ReadOptions{Reverse: reverse}, func(r store.Row) bool {
			got = append(got, string(r.Key))
			return len(got) < 2
		})
		want := []string{"\x00", "a"}
		if reverse {
			want = []string{"\xff", "b"}
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("reverse=%v: got %q, %v; want %q, nil", reverse, got, err, want)
		}
	}
}

func testAtomicity(t *testing.T, s store.Store) {
	if !s.Capabilities().AtomicBatch {
		t.Skip("backend does not claim atomic batches")
	}
	create(t, s, "t", "f")
	create(t, s, "u", "f")
	apply(t, s, set("t", "r0", "f", "q", "old"))
	err := s.Apply(t.Context(), []store.Mutation{
		set("t", "r0", "f", "q", "new"),
		delFamily("t", "r0", "f"),
		delRow("u", "x"),
		set("t", "r1", "f", "q", "x"),
		set("missing", "r1", "f", "q", "x"),
		set("u", "r1", "f", "q", "x"),
	})
	if !errors.Is(err, store.ErrNoTable) {
		t.Fatalf("Apply: err = %v, want ErrNoTable", err)
	}
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, `"r0" f:"q"="old"`)
	wantRows(t, s, "u", store.All(), store.ReadOptions{}, "")
}

func testLaterMutationWins(t *testing.T, s store.Store) {
	create(t, s, "t", "f")
	apply(t, s, set("t", "a", "f", "q", "1"), set("t", "a", "f", "q", "2"))
	wantRow(t, s, "t", "a", `"a" f:"q"="2"`)
	apply(t, s, set("t", "b", "f", "q", "1"), del("t", "b", "f", "q"))
	wantRow(t, s, "t", "b", "")
	apply(t, s, set("t", "c", "f", "x", "1"), delRow("t", "c"), set("t", "c", "f", "y", "2"))
	wantRow(t, s, "t", "c", `"c" f:"y"="2"`)
	apply(t, s, delRow("t", "d"), set("t", "d", "f", "x", "1"), delRow("t", "d"))
	wantRow(t, s, "t", "d", "")
	apply(t, s, del("t", "a", "f", "q"), set("t", "a", "f", "q", "3"))
	wantRow(t, s, "t", "a", `"a" f:"q"="3"`)
}

func testInputsNotRetained(t *testing.T, s store.Store) {
	create(t, s, "t", "f")
	// A new row, a new cell of it, and an overwritten cell.
	muts := []store.Mutation{set("t", "row", "f", "qual", "value"), set("t", "row", "f", "q2", "v2"), set("t", "row", "f", "qual", "value2")}
	for _, m := range muts {
		apply(t, s, m)
	}
	for _, m := range muts {
		for _, b := range [][]byte{m.Row, m.Qualifier, m.Value} {
			copy(b, "XXXX")
		}
	}
	wantRow(t, s, "t", "row", `"row" f:"q2"="v2" f:"qual"="value2"`)
}

func testReadRowIsCallersCopy(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f")
	apply(t, s, set("t", "a", "f", "q", "one"), set("t", "b", "f", "q", "two"))
	a, _, err := s.ReadRow(ctx, "t", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadRow(ctx, "t", []byte("b")); err != nil {
		t.Fatal(err)
	}
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, `"a" f:"q"="one"`+"\n"+`"b" f:"q"="two"`)
	apply(t, s, set("t", "a", "f", "q", "ONE"))
	if got := format([]store.Row{a}); got != `"a" f:"q"="one"` {
		t.Errorf("row from ReadRow changed to %s by later calls", got)
	}
}

// testReadInsideCallback checks that a callback may read the same store, as
// an index scan looking up the rows it finds does.
func testReadInsideCallback(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "idx", "f")
	create(t, s, "t", "f")
	apply(t, s, set("idx", "1", "f", "", "b"), set("idx", "2", "f", "", "a"), set("t", "a", "f", "", "A"), set("t", "b", "f", "", "B"))
	var got []string
	err := s.ReadRows(ctx, "idx", store.All(), store.ReadOptions{}, func(r store.Row) bool {
		row, ok, err := s.ReadRow(ctx, "t", r.Cells[0].Value)
		if err != nil || !ok {
			t.Errorf("ReadRow inside callback: %v, %v", ok, err)
			return false
		}
		got = append(got, string(row.Cells[0].Value))
		return true
	})
	if err != nil || strings.Join(got, ",") != "B,A" {
		t.Errorf("got %q, %v; want B,A", got, err)
	}
}

// testConcurrent runs writers and readers together (meant for -race). Each
// batch gives cells a and b of a row the same value, so with atomic batches
// a reader never sees them differ.
func testConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f")
	atomic := s.Capabilities().AtomicBatch
	checkRow := func(r store.Row) {
		if atomic && (len(r.Cells) != 2 || !bytes.Equal(r.Cells[0].Value, r.Cells[1].Value)) {
			t.Errorf("torn row %s", format([]store.Row{store.CloneRow(r)}))
		}
	}
	const writers, readers, rounds = 3, 3, 30
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				k := fmt.Sprintf("k%d", (w*7+i)%10)
				v := fmt.Sprintf("w%d-%d", w, i)
				muts := []store.Mutation{set("t", k, "f", "a", v), set("t", k, "f", "b", v)}
				if i%5 == 4 {
					muts = append(muts, delRow("t", fmt.Sprintf("k%d", i%10)))
				}
				if err := s.Apply(ctx, muts); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for r := range readers {
		wg.Go(func() {
			for i := range rounds {
				var prev []byte
				reverse := r%2 == 1
				err := s.ReadRows(ctx, "t", store.All(), store.ReadOptions{Reverse: reverse}, func(row store.Row) bool {
					c := bytes.Compare(prev, row.Key)
					if reverse {
						c = -c
					}
					if prev != nil && c >= 0 {
						t.Errorf("rows out of order: %q then %q (reverse=%v)", prev, row.Key, reverse)
					}
					prev = append(prev[:0], row.Key...)
					checkRow(row)
					return true
				})
				if err != nil {
					t.Error(err)
					return
				}
				row, ok, err := s.ReadRow(ctx, "t", fmt.Appendf(nil, "k%d", i%10))
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					checkRow(row)
				}
			}
		})
	}
	wg.Wait()
}

func testClosed(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(op string, err error) {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", op, err)
		}
	}
	check("CreateTable", s.CreateTable(ctx, store.TableSpec{Name: "u"}))
	_, err := s.Tables(ctx)
	check("Tables", err)
	_, _, err = s.ReadRow(ctx, "t", []byte("a"))
	check("ReadRow", err)
	check("ReadRows", s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(store.Row) bool { return true }))
	check("Apply", s.Apply(ctx, []store.Mutation{set("t", "a", "f", "", "")}))
}

// selectKeys is the reference for ReadRows: the keys of sorted that rs
// selects, in the order and number opts ask for.
func selectKeys(sorted []string, rs store.RowSet, opts store.ReadOptions) []string {
	var out []string
	for _, k := range sorted {
		sel := slices.ContainsFunc(rs.Keys, func(b []byte) bool { return string(b) == k }) ||
			slices.ContainsFunc(rs.Ranges, func(r store.Range) bool { return r.Contains([]byte(k)) })
		if sel {
			out = append(out, k)
		}
	}
	if opts.Reverse {
		slices.Reverse(out)
	}
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out
}

// format renders rows one per line, as `"KEY" FAMILY:"QUALIFIER"="VALUE" …`,
// so comparisons fail with readable diffs.
func format(rows []store.Row) string {
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%q", r.Key)
		for _, c := range r.Cells {
			fmt.Fprintf(&b, " %s:%q=%q", c.Family, c.Qualifier, c.Value)
		}
	}
	return b.String()
}

// readRows returns copies of the rows ReadRows delivers.
func readRows(t testing.TB, s store.Store, table string, rs store.RowSet, opts store.ReadOptions) []store.Row {
	t.Helper()
	var rows []store.Row
	err := s.ReadRows(t.Context(), table, rs, opts, func(r store.Row) bool {
		rows = append(rows, store.CloneRow(r))
		return true
	})
	if err != nil {
		t.Fatalf("ReadRows: %v", err)
	}
	return rows
}

func wantRows(t testing.TB, s store.Store, table string, rs store.RowSet, opts store.ReadOptions, want string) {
	t.Helper()
	if got := format(readRows(t, s, table, rs, opts)); got != want {
		t.Errorf("ReadRows(%q, %s, %+v) =\n%s\nwant\n%s", table, formatRowSet(rs), opts, got, want)
	}
}

// wantRow checks ReadRow; want "" means the row must not exist.
func wantRow(t testing.TB, s store.Store, table, key, want string) {
	t.Helper()
	r, ok, err := s.ReadRow(t.Context(), table, []byte(key))
	if err != nil {
		t.Fatalf("ReadRow(%q, %q): %v", table, key, err)
	}
	got := ""
	if ok {
		got = format([]store.Row{r})
	}
	if got != want {
		t.Errorf("ReadRow(%q, %q) = %s, want %s", table, key, got, want)
	}
}

func formatRowSet(rs store.RowSet) string {
	var parts []string
	for _, k := range rs.Keys {
		parts = append(parts, fmt.Sprintf("%q", k))
	}
	for _, r := range rs.Ranges {
		end := "∞"
		if r.End != nil {
			end = fmt.Sprintf("%q", r.End)
		}
		parts = append(parts, fmt.Sprintf("[%q, %s)", r.Start, end))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func create(t testing.TB, s store.Store, name string, families ...string) {
	t.Helper()
	if err := s.CreateTable(t.Context(), store.TableSpec{Name: name, Families: families}); err != nil {
		t.Fatalf("CreateTable(%q): %v", name, err)
	}
}

func apply(t testing.TB, s store.Store, muts ...store.Mutation) {
	t.Helper()
	if err := s.Apply(t.Context(), muts); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func keys(ks ...string) [][]byte {
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = []byte(k)
	}
	return out
}

func set(table, row, family, qualifier, value string) store.Mutation {
	return store.Mutation{Kind: store.SetCell, Table: table, Row: []byte(row), Family: family, Qualifier: []byte(qualifier), Value: []byte(value)}
}

func del(table, row, family, qualifier string) store.Mutation {
	return store.Mutation{Kind: store.DeleteCell, Table: table, Row: []byte(row), Family: family, Qualifier: []byte(qualifier)}
}

func delRow(table, row string) store.Mutation {
	return store.Mutation{Kind: store.DeleteRow, Table: table, Row: []byte(row)}
}

func delFamily(table, row, family string) store.Mutation {
	return store.Mutation{Kind: store.DeleteFamily, Table: table, Row: []byte(row), Family: family}
}

// compareCells orders cells by (family, qualifier).
func compareCells(a, b store.Cell) int {
	return cmp.Or(strings.Compare(a.Family, b.Family), bytes.Compare(a.Qualifier, b.Qualifier))
}

// CountRows counts the rows of table in s (0 when the table does not
// exist), failing t on any other error.
func CountRows(t testing.TB, s store.Store, table string) int {
	t.Helper()
	n := 0
	err := s.ReadRows(t.Context(), table, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true })
	if err != nil && !errors.Is(err, store.ErrNoTable) {
		t.Fatal(err)
	}
	return n
}
