package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
)

// The element indexes of these tests: on every cell of e, of ee (a family
// whose name extends e's), and a single-cell index on one cell of e.
var (
	byE  = store.IndexSpec{Name: "bye", Family: "e", Qualifier: []byte{}, Elements: true}
	byEE = store.IndexSpec{Name: "byee", Family: "ee", Qualifier: []byte{}, Elements: true}
	byE1 = store.IndexSpec{Name: "bye1", Family: "e", Qualifier: []byte("1")}
)

// entries renders what ReadIndex of each of values (one exact value per
// read) returns, as `"VALUE":"KEY","KEY" …`, values without rows left
// out, and checks each read against the function of the rows.
func entries(t testing.TB, s store.Store, table string, ix store.IndexSpec, values ...string) string {
	t.Helper()
	rows := readRows(t, s, table, store.All(), store.ReadOptions{})
	var parts []string
	for _, v := range values {
		got := readIndex(t, s, table, ix.Name, exact(v), store.ReadOptions{})
		if want := IndexFunction(rows, ix, exact(v), store.ReadOptions{}); format(got) != format(want) {
			t.Fatalf("ReadIndex(%q, %q, %q) =\n%s\nwant, from the rows,\n%s", table, ix.Name, v, format(got), format(want))
		}
		if len(got) == 0 {
			continue
		}
		ks := make([]string, len(got))
		for i, r := range got {
			ks[i] = fmt.Sprintf("%q", r.Key)
		}
		parts = append(parts, fmt.Sprintf("%q:%s", v, strings.Join(ks, ",")))
	}
	return strings.Join(parts, " ")
}

func wantEntries(t testing.TB, s store.Store, table string, ix store.IndexSpec, want string, values ...string) {
	t.Helper()
	if got := entries(t, s, table, ix, values...); got != want {
		t.Errorf("entries of %q for %q =\n%s\nwant\n%s", ix.Name, values, got, want)
	}
}

// testElementRead checks ReadIndex through an element index: a row comes
// once per selected element, in (element, row key) order, reversed,
// limited by rows delivered, whatever the cells' values; a single-cell
// index of the same table reads as ever.
func testElementRead(t *testing.T, s store.Store) {
	createIndexed(t, s, "t", []string{"e", "f"}, byE, byV)
	apply(t, s,
		set("t", "a", "e", "1", "x"), set("t", "a", "e", "2", ""), set("t", "a", "e", "3", "y"), set("t", "a", "f", "v", "1"),
		set("t", "b", "e", "2", "z"),
		set("t", "c", "e", "", ""), set("t", "c", "e", "2\x00", "w"), // sorts between 2 and 3
		set("t", "d", "f", "v", "2"), // no element
		set("t", "a\x00", "e", "1", "q"),
	)
	const (
		a  = `"a" e:"1"="x" e:"2"="" e:"3"="y" f:"v"="1"`
		a0 = `"a\x00" e:"1"="q"`
		b  = `"b" e:"2"="z"`
		c  = `"c" e:""="" e:"2\x00"="w"`
		d  = `"d" f:"v"="2"`
	)
	lines := func(rows ...string) string { return strings.Join(rows, "\n") }
	fwd, rev := store.ReadOptions{}, store.ReadOptions{Reverse: true}
	rng := func(start, end string, bounded bool) store.RowSet {
		r := store.Range{Start: []byte(start)}
		if bounded {
			r.End = []byte(end)
		}
		return store.RowSet{Ranges: []store.Range{r}}
	}
	wantIndex(t, s, "t", byE, exact("2"), fwd, lines(a, b))
	wantIndex(t, s, "t", byE, exact("2"), rev, lines(b, a))
	wantIndex(t, s, "t", byE, exact(""), fwd, lines(c))
	wantIndex(t, s, "t", byE, exact("9"), fwd, "")
	// A row once per value it holds among those read.
	wantIndex(t, s, "t", byE, exact("2", "1"), fwd, lines(a, a0, a, b))
	wantIndex(t, s, "t", byE, exact("3", "1"), store.ReadOptions{Limit: 2}, lines(a, a0))
	wantIndex(t, s, "t", byE, exact("3", "1"), store.ReadOptions{Limit: 2, Reverse: true}, lines(a, a0))
	wantIndex(t, s, "t", byE, store.All(), fwd, lines(c, a, a0, a, b, c, a))
	wantIndex(t, s, "t", byE, store.All(), rev, lines(a, c, b, a, a0, a, c))
	wantIndex(t, s, "t", byE, store.All(), store.ReadOptions{Limit: 4}, lines(c, a, a0, a))
	wantIndex(t, s, "t", byE, store.All(), store.ReadOptions{Limit: 3, Reverse: true}, lines(a, c, b))
	wantIndex(t, s, "t", byE, rng("1", "2", true), fwd, lines(a, a0))
	wantIndex(t, s, "t", byE, rng("2", "", false), fwd, lines(a, b, c, a))
	wantIndex(t, s, "t", byE, rng("2", "", false), rev, lines(a, c, b, a))
	wantIndex(t, s, "t", byE, rng("2\x00", "3\x00", true), store.ReadOptions{Limit: 1, Reverse: true}, lines(a))
	wantIndex(t, s, "t", byE, rng("", "1", true), fwd, lines(c))
	// Overlapping values and ranges select each entry once.
	wantIndex(t, s, "t", byE, store.RowSet{Keys: keys("2", "3"), Ranges: []store.Range{{Start: []byte("2"), End: []byte("3")}}}, fwd, lines(a, b, c, a))
	// The single-cell index of the same table.
	wantIndex(t, s, "t", byV, store.All(), fwd, lines(a, d))

	// Stopping early.
	n := 0
	if err := indexer(t, s).ReadIndex(t.Context(), "t", byE.Name, store.All(), fwd, func(store.Row) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("ReadIndex stopped by fn: %d rows, %v; want 2", n, err)
	}
	CheckIndexes(t, s, "t")
}

// testElementWrites checks that every write path keeps an element index's
// entries: one per cell of the family, whatever its value; a SetCell of
// an element again changes none; a DeleteCell removes its element's, a
// DeleteFamily of the family and a DeleteRow all of the row's (and no
// other row's, nor another family's, even one whose name extends it);
// several mutations of a row in one batch leave the entries of its final
// state. A single-cell index on a cell of the family follows its cell
// beside it.
func testElementWrites(t *testing.T, s store.Store) {
	createIndexed(t, s, "t", []string{"e", "ee", "f"}, byE, byEE, byE1, byV)
	all := []string{"", "1", "2", "3", "4", "5", "6", "7", "8", "9", "x", "y", "z"}
	apply(t, s,
		set("t", "a", "e", "1", "x"), set("t", "a", "e", "2", "y"), set("t", "a", "ee", "1", "n"), set("t", "a", "f", "v", "1"),
		set("t", "b", "e", "1", "z"),
		set("t", "a\x00", "e", "1", ""), // rows whose keys extend a's keep theirs
		set("t", "ab", "e", "1", ""),
	)
	wantEntries(t, s, "t", byE, `"1":"a","a\x00","ab","b" "2":"a"`, all...)
	wantEntries(t, s, "t", byEE, `"1":"a"`, all...)
	wantEntries(t, s, "t", byE1, `"":"a\x00","ab" "x":"a" "z":"b"`, all...)
	wantIndex(t, s, "t", byE, exact("2"), store.ReadOptions{}, `"a" e:"1"="x" e:"2"="y" ee:"1"="n" f:"v"="1"`)

	// An element set again, with other values: still one entry; the
	// single-cell index on it follows its value.
	apply(t, s, set("t", "a", "e", "1", "y"), set("t", "a", "e", "1", "z"))
	wantEntries(t, s, "t", byE, `"1":"a","a\x00","ab","b" "2":"a"`, all...)
	wantEntries(t, s, "t", byE1, `"":"a\x00","ab" "z":"a","b"`, all...)
	// An element deleted, an absent one deleted, a family of no element.
	apply(t, s, del("t", "a", "e", "2"), del("t", "b", "e", "9"), del("t", "a", "ee", "2"), delFamily("t", "b", "ee"))
	wantEntries(t, s, "t", byE, `"1":"a","a\x00","ab","b"`, all...)
	wantEntries(t, s, "t", byEE, `"1":"a"`, all...)
	// A DeleteFamily: every entry of the row in the family's index goes,
	// the other indexes' stay (ee's name extends e's: its cells stay).
	apply(t, s, set("t", "a", "e", "3", ""), delFamily("t", "a", "e"))
	wantEntries(t, s, "t", byE, `"1":"a\x00","ab","b"`, all...)
	wantEntries(t, s, "t", byE1, `"":"a\x00","ab" "z":"b"`, all...)
	wantEntries(t, s, "t", byEE, `"1":"a"`, all...)
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{}, `"a" ee:"1"="n" f:"v"="1"`)

	// Several mutations of one row in a batch: the final state wins.
	apply(t, s, set("t", "g", "e", "4", ""), set("t", "h", "e", "5", ""))
	apply(t, s,
		set("t", "c", "e", "1", ""), set("t", "c", "e", "2", ""), del("t", "c", "e", "1"), // set then deleted
		set("t", "d", "e", "1", ""), delFamily("t", "d", "e"), set("t", "d", "e", "3", ""), // deleted with its family, then another set
		set("t", "g", "e", "5", ""), delRow("t", "g"), set("t", "g", "e", "6", ""), // stored, set, the row deleted, then set
		delFamily("t", "b", "e"), set("t", "b", "e", "1", "again"), // deleted, then set again
		del("t", "h", "e", "5"), set("t", "h", "e", "5", "back"), del("t", "h", "e", "5"), // deleted, set, deleted
		set("t", "i", "e", "7", ""), delRow("t", "i"), // set, then its row deleted
	)
	wantEntries(t, s, "t", byE, `"1":"a\x00","ab","b" "2":"c" "3":"d" "6":"g"`, all...)
	wantEntries(t, s, "t", byE1, `"":"a\x00","ab" "again":"b"`, append(all, "again")...)
	wantRows(t, s, "t", store.RowSet{Keys: keys("g", "h", "i")}, store.ReadOptions{}, `"g" e:"6"=""`)
	CheckIndexes(t, s, "t")

	// A DeleteRow: every entry of the row, in every index, goes.
	apply(t, s, delRow("t", "a"), delRow("t", "ab"))
	wantEntries(t, s, "t", byE, `"1":"a\x00","b" "2":"c" "3":"d" "6":"g"`, all...)
	wantEntries(t, s, "t", byEE, "", all...)
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{}, "")
	// A failed batch (missing table) changes no entry.
	if err := s.Apply(t.Context(), []store.Mutation{set("t", "c", "e", "9", ""), delRow("t", "b"), set("missing", "c", "e", "9", "")}); err == nil {
		t.Fatal("Apply to a missing table succeeded")
	}
	if s.Capabilities().AtomicBatch {
		wantEntries(t, s, "t", byE, `"1":"a\x00","b" "2":"c" "3":"d" "6":"g"`, all...)
	}
	CheckIndexes(t, s, "t")

	// The other write paths of the store, when it has them.
	if c, ok := s.(store.Conditional); ok {
		if _, err := c.ApplyIf(t.Context(), "t", []byte("c"), store.Cond{Family: "e", Qualifier: []byte("2")},
			[]store.Mutation{delFamily("t", "c", "e"), set("t", "c", "e", "8", "")}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ApplyIf(t.Context(), "t", []byte("d"), store.Cond{Family: "e", Qualifier: []byte("9")},
			nil, []store.Mutation{set("t", "d", "e", "9", ""), del("t", "d", "e", "3")}); err != nil {
			t.Fatal(err)
		}
		wantEntries(t, s, "t", byE, `"1":"a\x00","b" "6":"g" "8":"c" "9":"d"`, all...)
	}
	if g, ok := s.(store.Guarded); ok {
		applied, err := g.ApplyGuards(t.Context(), []store.Guard{{Table: "t", Row: []byte("g"), Holds: func([]store.Cell) bool { return true }}},
			[]store.Mutation{delRow("t", "g"), set("t", "j", "e", "x", ""), set("t", "j", "e", "y", ""), del("t", "b", "e", "1")})
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			t.Fatal(err)
		}
		if applied {
			wantEntries(t, s, "t", byE, `"1":"a\x00" "x":"j" "y":"j"`, "1", "6", "x", "y")
		}
	}
	CheckIndexes(t, s, "t")
}

// testElementDeclare checks declaring element indexes: one added to a
// table with rows is built from them (an entry per cell of the family)
// and kept by later writes; Tables reports it; a name declared again must
// be of the same kind, and an element index has no qualifier.
func testElementDeclare(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "e", "f")
	apply(t, s,
		set("t", "a", "e", "1", "x"), set("t", "a", "e", "2", "y"),
		set("t", "b", "e", "2", ""),
		set("t", "c", "f", "v", "1"),
		set("t", "d", "e", "", "z"),
	)
	readRows(t, s, "t", store.All(), store.ReadOptions{}) // a store may keep its state for the next read
	createIndexed(t, s, "t", nil, byE)
	const (
		a = `"a" e:"1"="x" e:"2"="y"`
		b = `"b" e:"2"=""`
		d = `"d" e:""="z"`
	)
	wantIndex(t, s, "t", byE, store.All(), store.ReadOptions{}, d+"\n"+a+"\n"+a+"\n"+b)
	apply(t, s, set("t", "c", "e", "3", ""), del("t", "a", "e", "1"))
	wantIndex(t, s, "t", byE, store.All(), store.ReadOptions{}, d+"\n"+`"a" e:"2"="y"`+"\n"+b+"\n"+`"c" e:"3"="" f:"v"="1"`)
	// Declared again, beside a single-cell index on one of its cells.
	createIndexed(t, s, "t", nil, byE, byE1)
	apply(t, s, set("t", "b", "e", "1", "w"))
	wantIndex(t, s, "t", byE1, store.All(), store.ReadOptions{}, `"b" e:"1"="w" e:"2"=""`)
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]store.IndexSpec{byE, byE1}); len(specs) != 1 || fmt.Sprint(specs[0].Indexes) != want {
		t.Errorf("Tables = %+v, want indexes %s", specs, want)
	}
	for _, bad := range []store.IndexSpec{
		{Name: "bye", Family: "e"},                                       // a name means one kind of index
		{Name: "bye1", Family: "e", Elements: true},                      // either way
		{Name: "bye", Family: "f", Elements: true},                       // and one family
		{Name: "x", Family: "e", Qualifier: []byte("q"), Elements: true}, // an element index has no qualifier
		{Name: "x", Family: "nofamily", Elements: true},
	} {
		err := s.CreateTable(ctx, store.TableSpec{Name: "t", Indexes: []store.IndexSpec{bad}})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad.Name)) {
			t.Errorf("CreateTable with index %+v: %v, want an error naming the index", bad, err)
		}
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "new", Families: []string{"e"}, Indexes: []store.IndexSpec{{Name: "x", Family: "e", Elements: true}, {Name: "x", Family: "e"}}}); err == nil {
		t.Error("CreateTable with two indexes named alike of different kinds succeeded")
	}
	if specs, _ := s.Tables(ctx); len(specs) != 1 || len(specs[0].Indexes) != 2 {
		t.Errorf("a refused CreateTable changed the tables: %+v", specs)
	}
	CheckIndexes(t, s, "t")
}

// testElementExpiry checks, on a store with Capabilities().Expiry, that
// reads through an element index skip the entries whose element expired
// (the row stays for its other elements), that writes keep the entries of
// expired elements right, that an element index added to a table with
// expired cells reads as one kept all along, and that a sweep (a
// store.Sweeper) removes the entries of the elements it removes.
func testElementExpiry(t *testing.T, s store.Store) {
	if !s.Capabilities().Expiry {
		t.Skip("no cell expiry")
	}
	createIndexed(t, s, "t", []string{"e", "f"}, byE)
	before, at := expiryT.Add(-time.Microsecond), expiryT
	apply(t, s,
		expiring("t", "a", "e", "x", "1", expiryT), set("t", "a", "e", "y", "1"),
		set("t", "b", "e", "x", "1"),
		expiring("t", "c", "e", "y", "1", expiryT), set("t", "c", "f", "v", "1"), // the row stays, with f
		expiring("t", "d", "e", "z", "1", expiryT), // the row goes
	)
	want := func(at time.Time, ix store.IndexSpec, rows string) {
		t.Helper()
		if got := checkIndexAt(t, s, at, "t", ix); got != rows {
			t.Errorf("at %s, index %q =\n%s\nwant\n%s", at.Format(time.RFC3339Nano), ix.Name, got, rows)
		}
	}
	const (
		a  = `"a" e:"x"="1" e:"y"="1"`
		b  = `"b" e:"x"="1"`
		c  = `"c" e:"y"="1" f:"v"="1"`
		d  = `"d" e:"z"="1"`
		aY = `"a" e:"y"="1"`
		a2 = `"a" e:"x"="2" e:"y"="1"` // a, its expired element rewritten
	)
	want(before, byE, strings.Join([]string{a, b, a, c, d}, "\n"))
	want(at, byE, b+"\n"+aY)
	// Rewriting an expired element for good brings its entry back.
	apply(t, s, set("t", "a", "e", "x", "2"))
	want(at, byE, a2+"\n"+b+"\n"+a2)
	// Deleting an expired element, or its family, drops its entry.
	apply(t, s, del("t", "c", "e", "y"), delFamily("t", "d", "e"))
	want(before, byE, a2+"\n"+b+"\n"+a2)
	// An element index added now covers the expired elements as the
	// others do.
	apply(t, s, expiring("t", "b", "e", "w", "1", expiryT), expiring("t", "e", "e", "x", "1", expiryT), set("t", "e", "e", "y", "1"))
	byE2 := store.IndexSpec{Name: "bye2", Family: "e", Qualifier: []byte{}, Elements: true}
	createIndexed(t, s, "t", nil, byE2)
	const (
		bW = `"b" e:"w"="1" e:"x"="1"`
		eX = `"e" e:"x"="1" e:"y"="1"`
		eY = `"e" e:"y"="1"`
	)
	want(before, byE2, strings.Join([]string{bW, a2, bW, eX, a2, eX}, "\n"))
	want(at, byE2, strings.Join([]string{a2, b, a2, eY}, "\n"))
	CheckIndexes(atT{t, store.WithNow(t.Context(), at)}, s, "t")
	// Elements with 0x00 bytes, expired or not, beside others of the row.
	createIndexed(t, s, "u", []string{"e"}, byE)
	apply(t, s,
		expiring("u", "r", "e", "\x00", "1", expiryT), set("u", "r", "e", "\x00\x00", "1"),
		set("u", "s", "e", "\x00", "1"),
	)
	wantU := func(at time.Time, want string) {
		t.Helper()
		tt := atT{t, store.WithNow(t.Context(), at)}
		if got := format(readIndex(tt, s, "u", byE.Name, store.All(), store.ReadOptions{})); got != want {
			t.Errorf("at %s, index %q of u =\n%s\nwant\n%s", at.Format(time.RFC3339Nano), byE.Name, got, want)
		}
		CheckIndexes(tt, s, "u")
	}
	const r = `"r" e:"\x00"="1" e:"\x00\x00"="1"`
	wantU(before, r+"\n"+`"s" e:"\x00"="1"`+"\n"+r)
	wantU(at, `"s" e:"\x00"="1"`+"\n"+`"r" e:"\x00\x00"="1"`)

	sw, ok := s.(store.Sweeper)
	if !ok {
		return
	}
	n, err := sw.SweepExpired(store.WithNow(t.Context(), at), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("swept %d cells, want 3", n)
	}
	// Read before their expiry: the swept elements' entries are gone.
	for _, ix := range []store.IndexSpec{byE, byE2} {
		want(before, ix, strings.Join([]string{a2, b, a2, eY}, "\n"))
	}
	CheckIndexes(atT{t, store.WithNow(t.Context(), before)}, s, "t")
	wantU(before, `"s" e:"\x00"="1"`+"\n"+`"r" e:"\x00\x00"="1"`)
}
