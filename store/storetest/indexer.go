package storetest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/store"
)

// RunIndexer checks, as subtests of t, a store's store.Indexer, for
// single-cell and element indexes (store.IndexSpec.Elements): that
// ReadIndex selects exact values and value ranges, in (value, row key)
// order, reversed, limited, a row once per selected value; that every
// write path keeps the entries (cells and elements set, changed twice in
// one batch, deleted, families and rows deleted, indexes added to tables
// with rows, expired cells swept); that after any sequence of random
// batches each index, read forward and backward with random limits and
// value ranges, is the function of the base rows (a rapid property); and
// that writers racing on the indexed cells of the same rows leave it so,
// while readers see only rows that have the value they read them by. open
// must return a fresh, empty store for each call; the suite closes it.
func RunIndexer(t *testing.T, open func(t *testing.T) store.Store) {
	runCases(t, open, []testCase{
		{"Read", testIndexRead},
		{"Writes", testIndexWrites},
		{"DeleteFamily", testIndexDeleteFamily},
		{"Declare", testIndexDeclare},
		{"Model", testIndexModel},
		{"Concurrent", testIndexConcurrent},
		{"View", testIndexView},
		{"Snapshot", testIndexSnapshot},
		{"Expiry", testIndexExpiry},
		{"ElementRead", testElementRead},
		{"ElementWrites", testElementWrites},
		{"ElementDeclare", testElementDeclare},
		{"ElementExpiry", testElementExpiry},
	})
}

// tb is what the helpers of this suite need of a testing.TB or rapid.T.
type tb interface {
	Context() context.Context
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func helper(t tb) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
}

func indexer(t tb, s store.Store) store.Indexer {
	helper(t)
	ix, ok := s.(store.Indexer)
	if !ok {
		t.Fatalf("%T is no store.Indexer", s)
	}
	return ix
}

// readIndex returns copies of the rows ReadIndex delivers.
func readIndex(t tb, s store.Store, table, index string, values store.RowSet, opts store.ReadOptions) []store.Row {
	helper(t)
	var rows []store.Row
	err := indexer(t, s).ReadIndex(t.Context(), table, index, values, opts, func(r store.Row) bool {
		rows = append(rows, store.CloneRow(r))
		return true
	})
	if err != nil {
		t.Fatalf("ReadIndex(%q, %q): %v", table, index, err)
	}
	return rows
}

// IndexFunction is the reference for an index: for each indexed value of
// each row of rows (a whole table, as ReadRows delivers it) that values
// selects (the value of ix's cell; with ix.Elements, each qualifier of the
// row's cells in ix.Family), the row, in (value, row key) order, reversed
// and limited as opts say. A row comes once per selected value.
func IndexFunction(rows []store.Row, ix store.IndexSpec, values store.RowSet, opts store.ReadOptions) []store.Row {
	type hit struct {
		value []byte
		row   store.Row
	}
	var hits []hit
	for _, r := range rows {
		for _, v := range ix.AppendIndexedValues(nil, r.Cells) {
			sel := slices.ContainsFunc(values.Keys, func(k []byte) bool { return bytes.Equal(k, v) }) ||
				slices.ContainsFunc(values.Ranges, func(rg store.Range) bool { return rg.Contains(v) })
			if sel {
				hits = append(hits, hit{v, r})
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := bytes.Compare(a.value, b.value); c != 0 {
			return c
		}
		return bytes.Compare(a.row.Key, b.row.Key)
	})
	if opts.Reverse {
		slices.Reverse(hits)
	}
	if opts.Limit > 0 && len(hits) > opts.Limit {
		hits = hits[:opts.Limit]
	}
	out := make([]store.Row, len(hits))
	for i, h := range hits {
		out[i] = h.row
	}
	return out
}

// CheckIndexes fails t unless every index of table, read whole forward and
// backward, is the function of the table's rows (IndexFunction). Backend
// tests call it after a crash.
func CheckIndexes(t testing.TB, s store.Store, table string) {
	t.Helper()
	specs, err := s.Tables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(specs, func(sp store.TableSpec) bool { return sp.Name == table })
	if i < 0 {
		t.Fatalf("no table %q", table)
	}
	rows := readRows(t, s, table, store.All(), store.ReadOptions{})
	for _, ix := range specs[i].Indexes {
		for _, rev := range []bool{false, true} {
			opts := store.ReadOptions{Reverse: rev}
			got, want := format(readIndex(t, s, table, ix.Name, store.All(), opts)), format(IndexFunction(rows, ix, store.All(), opts))
			if got != want {
				t.Fatalf("index %q of %q (reverse %v) =\n%s\nwant, from the rows,\n%s", ix.Name, table, rev, got, want)
			}
		}
	}
}

var (
	byV = store.IndexSpec{Name: "byv", Family: "f", Qualifier: []byte("v")}
	byW = store.IndexSpec{Name: "byw", Family: "g", Qualifier: []byte{}}
	// byF is an element index on f: beside byV, every cell of f, f:v too.
	byF = store.IndexSpec{Name: "byf", Family: "f", Qualifier: []byte{}, Elements: true}
)

func createIndexed(t tb, s store.Store, name string, families []string, ixs ...store.IndexSpec) {
	helper(t)
	if err := s.CreateTable(t.Context(), store.TableSpec{Name: name, Families: families, Indexes: ixs}); err != nil {
		t.Fatalf("CreateTable(%q with indexes): %v", name, err)
	}
}

// wantIndex checks one ReadIndex against want, and against the function of
// the rows.
func wantIndex(t testing.TB, s store.Store, table string, ix store.IndexSpec, values store.RowSet, opts store.ReadOptions, want string) {
	t.Helper()
	got := format(readIndex(t, s, table, ix.Name, values, opts))
	if got != want {
		t.Errorf("ReadIndex(%q, %q, %s, %+v) =\n%s\nwant\n%s", table, ix.Name, formatRowSet(values), opts, got, want)
	}
	ref := format(IndexFunction(readRows(t, s, table, store.All(), store.ReadOptions{}), ix, values, opts))
	if ref != want {
		t.Fatalf("the suite's expectation %s disagrees with the function of the rows %s", want, ref)
	}
}

func exact(vs ...string) store.RowSet { return store.RowSet{Keys: keys(vs...)} }

func testIndexRead(t *testing.T, s store.Store) {
	createIndexed(t, s, "t", []string{"f", "g"}, byV)
	apply(t, s,
		set("t", "a", "f", "v", "1"),
		set("t", "b", "f", "v", "2"),
		set("t", "c", "f", "v", "1"), // the same value as a
		set("t", "d", "g", "x", "1"), // no indexed cell
		set("t", "d", "f", "w", "1"), // nor this one: another qualifier
		set("t", "e", "f", "v", ""),
		set("t", "e\x00", "f", "v", "1\x00"), // sorts between "1" and "2"
		set("t", "a", "g", "x", "ga"),
	)
	const (
		a  = `"a" f:"v"="1" g:"x"="ga"`
		b  = `"b" f:"v"="2"`
		c  = `"c" f:"v"="1"`
		e  = `"e" f:"v"=""`
		e0 = `"e\x00" f:"v"="1\x00"`
	)
	lines := func(rows ...string) string { return string(bytes.Join(keys(rows...), []byte("\n"))) }
	fwd, rev := store.ReadOptions{}, store.ReadOptions{Reverse: true}
	wantIndex(t, s, "t", byV, exact("1"), fwd, lines(a, c))
	wantIndex(t, s, "t", byV, exact("1"), rev, lines(c, a))
	wantIndex(t, s, "t", byV, exact("1"), store.ReadOptions{Limit: 1}, lines(a))
	wantIndex(t, s, "t", byV, exact("1"), store.ReadOptions{Limit: 1, Reverse: true}, lines(c))
	wantIndex(t, s, "t", byV, exact("2", "1", "9"), fwd, lines(a, c, b))
	wantIndex(t, s, "t", byV, exact(""), fwd, lines(e))
	wantIndex(t, s, "t", byV, store.All(), fwd, lines(e, a, c, e0, b))
	wantIndex(t, s, "t", byV, store.All(), rev, lines(b, e0, c, a, e))
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{Limit: 3, Reverse: true}, lines(b, e0, c))
	rng := func(start, end string, bounded bool) store.RowSet {
		r := store.Range{Start: []byte(start)}
		if bounded {
			r.End = []byte(end)
		}
		return store.RowSet{Ranges: []store.Range{r}}
	}
	wantIndex(t, s, "t", byV, rng("1", "2", true), fwd, lines(a, c, e0))
	wantIndex(t, s, "t", byV, rng("1", "2", true), rev, lines(e0, c, a))
	wantIndex(t, s, "t", byV, rng("1\x00", "", false), fwd, lines(e0, b))
	wantIndex(t, s, "t", byV, rng("", "1", true), fwd, lines(e))
	wantIndex(t, s, "t", byV, rng("2", "1", true), fwd, "") // empty range
	// Overlapping keys and ranges select each row once.
	wantIndex(t, s, "t", byV, store.RowSet{Keys: keys("1", "2"), Ranges: []store.Range{{Start: []byte("1"), End: []byte("3")}}}, rev, lines(b, e0, c, a))
	wantIndex(t, s, "t", byV, store.RowSet{}, fwd, "")

	// Stopping early.
	n := 0
	if err := indexer(t, s).ReadIndex(t.Context(), "t", "byv", store.All(), fwd, func(store.Row) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("ReadIndex stopped by fn: %d rows, %v; want 2", n, err)
	}
	// A read inside the callback, as ReadRows allows.
	if err := indexer(t, s).ReadIndex(t.Context(), "t", "byv", exact("2"), fwd, func(store.Row) bool {
		apply(t, s, set("t", "z", "f", "v", "2"))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	wantIndex(t, s, "t", byV, exact("2"), fwd, lines(b, `"z" f:"v"="2"`))

	err := indexer(t, s).ReadIndex(t.Context(), "t", "nope", store.All(), fwd, func(store.Row) bool { return true })
	if !errors.Is(err, store.ErrNoIndex) {
		t.Errorf("ReadIndex of a missing index: %v, want ErrNoIndex", err)
	}
	err = indexer(t, s).ReadIndex(t.Context(), "missing", "byv", store.All(), fwd, func(store.Row) bool { return true })
	if !errors.Is(err, store.ErrNoTable) {
		t.Errorf("ReadIndex of a missing table: %v, want ErrNoTable", err)
	}
}

func testIndexWrites(t *testing.T, s store.Store) {
	createIndexed(t, s, "t", []string{"f", "g"}, byV, byW)
	create(t, s, "u", "f")
	apply(t, s,
		set("t", "a", "f", "v", "1"), set("t", "a", "g", "", "w1"),
		set("t", "b", "f", "v", "1"),
		set("t", "c", "f", "v", "1"), set("t", "c", "f", "o", "other"),
	)
	fwd := store.ReadOptions{}
	wantIndex(t, s, "t", byV, exact("1"), fwd, `"a" f:"v"="1" g:""="w1"`+"\n"+`"b" f:"v"="1"`+"\n"+`"c" f:"o"="other" f:"v"="1"`)

	// A cell deleted (its row stays), a row deleted, another cell of a row
	// changed, and a table without indexes written in the same batch.
	apply(t, s, del("t", "c", "f", "v"), delRow("t", "b"), set("t", "a", "f", "x", "y"), set("u", "a", "f", "v", "1"))
	wantIndex(t, s, "t", byV, exact("1"), fwd, `"a" f:"v"="1" f:"x"="y" g:""="w1"`)
	wantIndex(t, s, "t", byW, store.All(), fwd, `"a" f:"v"="1" f:"x"="y" g:""="w1"`)

	// A value changed twice in one batch: only the last one is indexed.
	apply(t, s, set("t", "a", "f", "v", "2"), set("t", "a", "f", "v", "3"))
	wantIndex(t, s, "t", byV, store.All(), fwd, `"a" f:"v"="3" f:"x"="y" g:""="w1"`)
	// Set then deleted, deleted then set, a row deleted then written.
	apply(t, s, set("t", "d", "f", "v", "4"), del("t", "d", "f", "v"), set("t", "d", "g", "", "w4"))
	apply(t, s, del("t", "a", "f", "v"), set("t", "a", "f", "v", "5"))
	apply(t, s, set("t", "e", "f", "v", "6"))
	apply(t, s, delRow("t", "e"), set("t", "e", "f", "v", "7"), delRow("t", "e"), set("t", "e", "f", "v", "8"))
	wantIndex(t, s, "t", byV, store.All(), fwd, `"a" f:"v"="5" f:"x"="y" g:""="w1"`+"\n"+`"e" f:"v"="8"`)
	wantIndex(t, s, "t", byW, store.All(), fwd, `"a" f:"v"="5" f:"x"="y" g:""="w1"`+"\n"+`"d" g:""="w4"`)
	// The same value again: still one entry.
	apply(t, s, set("t", "e", "f", "v", "8"))
	wantIndex(t, s, "t", byV, exact("8"), fwd, `"e" f:"v"="8"`)
	// A failed batch (missing table) changes no entry.
	if err := s.Apply(t.Context(), []store.Mutation{set("t", "e", "f", "v", "9"), set("missing", "e", "f", "v", "9")}); err == nil {
		t.Fatal("Apply to a missing table succeeded")
	}
	if s.Capabilities().AtomicBatch {
		wantIndex(t, s, "t", byV, exact("8"), fwd, `"e" f:"v"="8"`)
	}
	// Two rows with one value, then the last row deleted with its cell.
	apply(t, s, set("t", "a", "f", "v", "8"))
	wantIndex(t, s, "t", byV, exact("8"), store.ReadOptions{Reverse: true}, `"e" f:"v"="8"`+"\n"+`"a" f:"v"="8" f:"x"="y" g:""="w1"`)
	apply(t, s, del("t", "e", "f", "v"))
	wantIndex(t, s, "t", byV, exact("8"), fwd, `"a" f:"v"="8" f:"x"="y" g:""="w1"`)
	CheckIndexes(t, s, "t")

	// The other write paths of the store, when it has them.
	if c, ok := s.(store.Conditional); ok {
		if _, err := c.ApplyIf(t.Context(), "t", []byte("a"), store.Cond{Family: "f", Qualifier: []byte("v"), Min: []byte("8")},
			[]store.Mutation{set("t", "a", "f", "v", "9")}, nil); err != nil {
			t.Fatal(err)
		}
		wantIndex(t, s, "t", byV, exact("9"), fwd, `"a" f:"v"="9" f:"x"="y" g:""="w1"`)
	}
	if g, ok := s.(store.Guarded); ok {
		applied, err := g.ApplyGuards(t.Context(), []store.Guard{{Table: "t", Row: []byte("a"), Holds: func([]store.Cell) bool { return true }}},
			[]store.Mutation{set("t", "a", "f", "v", "10"), set("t", "g", "f", "v", "10")})
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			t.Fatal(err)
		}
		if applied {
			wantIndex(t, s, "t", byV, exact("10"), fwd, `"a" f:"v"="10" f:"x"="y" g:""="w1"`+"\n"+`"g" f:"v"="10"`)
		}
	}
	CheckIndexes(t, s, "t")
}

// testIndexDeleteFamily checks that a DeleteFamily changes the entries
// exactly as deleting each cell of the family would: the entries of the
// indexes on its cells go, those on other families' cells stay, a cell of
// the family written after it in the batch is indexed, and a row it
// leaves (or a family it finds) empty changes nothing more.
func testIndexDeleteFamily(t *testing.T, s store.Store) {
	byFW := store.IndexSpec{Name: "byfw", Family: "f", Qualifier: []byte("w")}
	createIndexed(t, s, "t", []string{"f", "g"}, byV, byW, byFW)
	apply(t, s,
		set("t", "a", "f", "v", "1"), set("t", "a", "f", "w", "1"), set("t", "a", "f", "x", "-"), set("t", "a", "g", "", "1"),
		set("t", "b", "f", "v", "1"), set("t", "b", "g", "", "1"),
		set("t", "c", "f", "v", "1"), set("t", "c", "f", "w", "1"),
		set("t", "a\x00", "f", "v", "1"), // rows whose keys extend a's keep theirs
		set("t", "ab", "f", "v", "1"),
	)
	all, fwd := store.All(), store.ReadOptions{}
	const (
		a0 = `"a\x00" f:"v"="1"`
		ab = `"ab" f:"v"="1"`
	)
	apply(t, s, delFamily("t", "a", "f"), delFamily("t", "b", "g"))
	wantIndex(t, s, "t", byV, all, fwd, a0+"\n"+ab+"\n"+`"b" f:"v"="1"`+"\n"+`"c" f:"v"="1" f:"w"="1"`)
	wantIndex(t, s, "t", byFW, all, fwd, `"c" f:"v"="1" f:"w"="1"`)
	wantIndex(t, s, "t", byW, all, fwd, `"a" g:""="1"`)
	// Absent families and rows: nothing changes.
	apply(t, s, delFamily("t", "a", "f"), delFamily("t", "b", "g"), delFamily("t", "none", "f"))
	wantIndex(t, s, "t", byV, all, fwd, a0+"\n"+ab+"\n"+`"b" f:"v"="1"`+"\n"+`"c" f:"v"="1" f:"w"="1"`)
	wantIndex(t, s, "t", byW, all, fwd, `"a" g:""="1"`)
	// Deleted then written in one batch: the new value is indexed; written
	// then deleted: none is.
	apply(t, s, delFamily("t", "c", "f"), set("t", "c", "f", "v", "2"), set("t", "a", "f", "w", "3"), delFamily("t", "a", "f"))
	wantIndex(t, s, "t", byV, all, fwd, a0+"\n"+ab+"\n"+`"b" f:"v"="1"`+"\n"+`"c" f:"v"="2"`)
	wantIndex(t, s, "t", byFW, all, fwd, "")
	// The last family of rows: the rows and their entries are gone.
	apply(t, s, delFamily("t", "b", "f"), delFamily("t", "c", "f"), delFamily("t", "a", "g"))
	wantIndex(t, s, "t", byV, all, fwd, a0+"\n"+ab)
	wantIndex(t, s, "t", byW, all, fwd, "")
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, a0+"\n"+ab)
	CheckIndexes(t, s, "t")

	// The other write paths of the store, when it has them.
	if c, ok := s.(store.Conditional); ok {
		if _, err := c.ApplyIf(t.Context(), "t", []byte("ab"), store.Cond{Family: "f", Qualifier: []byte("v"), Min: []byte("1")},
			[]store.Mutation{delFamily("t", "ab", "f"), set("t", "ab", "g", "", "4")}, nil); err != nil {
			t.Fatal(err)
		}
		wantIndex(t, s, "t", byV, all, fwd, a0)
		wantIndex(t, s, "t", byW, all, fwd, `"ab" g:""="4"`)
	}
	if g, ok := s.(store.Guarded); ok {
		applied, err := g.ApplyGuards(t.Context(), []store.Guard{{Table: "t", Row: []byte("a\x00"), Holds: func([]store.Cell) bool { return true }}},
			[]store.Mutation{delFamily("t", "a\x00", "f"), set("t", "a\x00", "g", "", "5"), delFamily("t", "ab", "f")})
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			t.Fatal(err)
		}
		if applied {
			wantIndex(t, s, "t", byV, exact("1"), fwd, "")
		}
	}
	CheckIndexes(t, s, "t")
}

func testIndexDeclare(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f", "g")
	apply(t, s, set("t", "a", "f", "v", "2"), set("t", "b", "f", "v", "1"), set("t", "c", "g", "", "x"))
	readRows(t, s, "t", store.All(), store.ReadOptions{}) // a store may keep its state for the next read
	// An index added to a table with rows is built from them.
	createIndexed(t, s, "t", nil, byV)
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{}, `"b" f:"v"="1"`+"\n"+`"a" f:"v"="2"`)
	// Declared again, with a new family and a second index on it.
	byH := store.IndexSpec{Name: "byh", Family: "h", Qualifier: []byte("q")}
	createIndexed(t, s, "t", []string{"h"}, byV, byH)
	createIndexed(t, s, "t", nil) // keeps both
	apply(t, s, set("t", "c", "h", "q", "hq"))
	wantIndex(t, s, "t", byH, store.All(), store.ReadOptions{}, `"c" g:""="x" h:"q"="hq"`)
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || fmt.Sprint(specs[0].Indexes) != fmt.Sprint([]store.IndexSpec{byV, byH}) {
		t.Errorf("Tables = %+v, want indexes %v", specs, []store.IndexSpec{byV, byH})
	}
	for _, bad := range []store.IndexSpec{
		{Name: "", Family: "f"},
		{Name: "x", Family: "nofamily"},
		{Name: "x", Family: ""},
		{Name: "byv", Family: "f", Qualifier: []byte("other")}, // a name means one cell
		{Name: "byv", Family: "f", Elements: true},             // and one kind of index
		{Name: "x", Family: "f", Qualifier: []byte("v"), Elements: true},
	} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Indexes: []store.IndexSpec{bad}}); err == nil {
			t.Errorf("CreateTable with index %+v succeeded", bad)
		}
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "new", Families: []string{"f"}, Indexes: []store.IndexSpec{{Name: "x", Family: "f"}, {Name: "x", Family: "f", Qualifier: []byte("q")}}}); err == nil {
		t.Error("CreateTable with two indexes named alike on different cells succeeded")
	}
	if specs, _ := s.Tables(ctx); len(specs) != 1 {
		t.Errorf("a refused CreateTable created a table: %+v", specs)
	}
	CheckIndexes(t, s, "t")
}

// testIndexModel applies random batches and checks, after each, random
// reads of its indexes — two single-cell ones, an element one — against
// the function of the rows.
func testIndexModel(t *testing.T, s store.Store) {
	ctx := t.Context()
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		table := fmt.Sprintf("x%d", run)
		createIndexed(rt, s, table, []string{"f", "g"}, byV, byW, byF)
		// Values are also qualifiers of f: byF's values.
		value := rapid.SampledFrom([]string{"", "\x00", "1", "1\x00", "2", "v", "\xff"})
		rowKey := rapid.SampledFrom([]string{"", "a", "a\x00", "b", "\xff"})
		cell := rapid.SampledFrom([][2]string{{"f", "v"}, {"f", "v"}, {"g", ""}, {"f", "w"}, {"g", "v"}, {"f", "1"}, {"f", "\x00"}, {"f", ""}})
		mutation := rapid.Custom(func(rt *rapid.T) store.Mutation {
			row := rowKey.Draw(rt, "row")
			switch rapid.IntRange(0, 6).Draw(rt, "kind") {
			case 0:
				return delRow(table, row)
			case 1, 2:
				c := cell.Draw(rt, "cell")
				return del(table, row, c[0], c[1])
			case 3:
				return delFamily(table, row, rapid.SampledFrom([]string{"f", "g"}).Draw(rt, "family"))
			}
			c := cell.Draw(rt, "cell")
			return set(table, row, c[0], c[1], value.Draw(rt, "value"))
		})
		bound := func(rt *rapid.T, label string) []byte {
			if rapid.Bool().Draw(rt, label+" bounded") {
				return []byte(value.Draw(rt, label))
			}
			return nil
		}
		for range rapid.IntRange(1, 12).Draw(rt, "batches") {
			if err := s.Apply(ctx, rapid.SliceOfN(mutation, 1, 6).Draw(rt, "batch")); err != nil {
				rt.Fatal(err)
			}
			var rows []store.Row
			if err := s.ReadRows(ctx, table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
				rows = append(rows, store.CloneRow(r))
				return true
			}); err != nil {
				rt.Fatal(err)
			}
			for _, ix := range []store.IndexSpec{byV, byW, byF} {
				for _, rev := range []bool{false, true} {
					all := store.ReadOptions{Reverse: rev}
					if got, want := format(readIndex(rt, s, table, ix.Name, store.All(), all)), format(IndexFunction(rows, ix, store.All(), all)); got != want {
						rt.Fatalf("index %s (reverse %v) =\n%s\nwant\n%s", ix.Name, rev, got, want)
					}
				}
				values := store.RowSet{Ranges: []store.Range{{Start: bound(rt, "start"), End: bound(rt, "end")}}}
				if rapid.Bool().Draw(rt, "exact values") {
					values = store.RowSet{Keys: keys(rapid.SliceOfN(value, 1, 3).Draw(rt, "values")...)}
				}
				opts := store.ReadOptions{Limit: rapid.IntRange(0, 4).Draw(rt, "limit"), Reverse: rapid.Bool().Draw(rt, "reverse")}
				if got, want := format(readIndex(rt, s, table, ix.Name, values, opts)), format(IndexFunction(rows, ix, values, opts)); got != want {
					rt.Fatalf("ReadIndex(%s, %s, %+v) =\n%s\nwant\n%s", ix.Name, formatRowSet(values), opts, got, want)
				}
			}
		}
	})
}

// testIndexConcurrent races writers on the indexed cells of a few rows —
// the cell of a single-cell index, the elements of an element index on
// the same family — each batch changing several rows, some deleting
// cells, families and rows, while readers check that each row read by a
// value has that value (one consistent state per read); then each index
// must be the function of the rows.
func testIndexConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	createIndexed(t, s, "t", []string{"f"}, byV, byF)
	const writers, batches, rows = 4, 150, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for range batches {
				var muts []store.Mutation
				for range 1 + rnd.IntN(3) {
					row := fmt.Sprint("r", rnd.IntN(rows))
					switch rnd.IntN(12) {
					case 0:
						muts = append(muts, delRow("t", row))
					case 1:
						muts = append(muts, del("t", row, "f", "v"))
					case 2:
						muts = append(muts, delFamily("t", row, "f"))
					case 3, 4:
						muts = append(muts, del("t", row, "f", fmt.Sprint(rnd.IntN(5))))
					case 5, 6, 7:
						muts = append(muts, set("t", row, "f", fmt.Sprint(rnd.IntN(5)), "e"))
					default:
						muts = append(muts, set("t", row, "f", "v", fmt.Sprint(rnd.IntN(5))))
					}
				}
				if err := s.Apply(ctx, muts); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprint(i % 5)
			ix := []store.IndexSpec{byV, byF}[i/5%2]
			var bad error
			err := indexer(t, s).ReadIndex(ctx, "t", ix.Name, exact(v), store.ReadOptions{}, func(r store.Row) bool {
				if !ix.HasValue(r.Cells, []byte(v)) {
					bad = fmt.Errorf("ReadIndex(%s) by value %q gave row %s", ix.Name, v, format([]store.Row{r}))
					return false
				}
				return true
			})
			if err = cmp.Or(err, bad); err != nil {
				errs <- err // one error at most: errs has room for it
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	CheckIndexes(t, s, "t")
}

// testIndexView checks, when the store has views, that a view reads its
// point in time through an index, single-cell or element.
func testIndexView(t *testing.T, s store.Store) {
	vw, ok := s.(store.Viewer)
	if !ok {
		t.Skipf("%T is no store.Viewer", s)
	}
	createIndexed(t, s, "t", []string{"f", "g"}, byV, byF)
	apply(t, s, set("t", "a", "f", "v", "1"), set("t", "b", "f", "v", "2"), set("t", "b", "f", "w", "3"))
	v, err := vw.View(t.Context())
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%T: View: %v", s, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	apply(t, s, set("t", "a", "f", "v", "3"), set("t", "a", "f", "x", "4"), delRow("t", "b"))
	if _, ok := v.(store.Indexer); !ok {
		t.Skipf("the view, %T, is no store.Indexer", v)
	}
	const a, b = `"a" f:"v"="1"`, `"b" f:"v"="2" f:"w"="3"`
	wantIndex(t, v, "t", byV, store.All(), store.ReadOptions{}, a+"\n"+b)
	wantIndex(t, v, "t", byF, store.All(), store.ReadOptions{}, a+"\n"+b+"\n"+b)
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{}, `"a" f:"v"="3" f:"x"="4"`)
	wantIndex(t, s, "t", byF, store.All(), store.ReadOptions{}, `"a" f:"v"="3" f:"x"="4"`+"\n"+`"a" f:"v"="3" f:"x"="4"`)
}

// testIndexSnapshot checks, when the store has snapshots, that Restore
// brings the indexes back with the rows (an index added since is gone),
// and that writes after it keep the restored indexes.
func testIndexSnapshot(t *testing.T, s store.Store) {
	ctx := t.Context()
	createIndexed(t, s, "t", []string{"f", "g"}, byV, byF)
	apply(t, s, set("t", "a", "f", "v", "1"), set("t", "b", "f", "v", "2"), set("t", "c", "g", "", "3"))
	const before = `"a" f:"v"="1"` + "\n" + `"b" f:"v"="2"`
	sn := snapshot(t, s) // or skip
	apply(t, s, set("t", "a", "f", "v", "9"), set("t", "a", "f", "z", "8"), delRow("t", "b"), set("t", "d", "f", "v", "0"))
	createIndexed(t, s, "t", nil, byW)
	wantIndex(t, s, "t", byW, store.All(), store.ReadOptions{}, `"c" g:""="3"`)
	restore(t, sn)
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{}, before)
	wantIndex(t, s, "t", byF, store.All(), store.ReadOptions{}, before)
	if err := indexer(t, s).ReadIndex(ctx, "t", byW.Name, store.All(), store.ReadOptions{}, func(store.Row) bool { return true }); !errors.Is(err, store.ErrNoIndex) {
		t.Errorf("ReadIndex of an index created after the snapshot, after Restore: %v, want ErrNoIndex", err)
	}
	apply(t, s, set("t", "a", "f", "v", "5"))
	CheckIndexes(t, s, "t")
	restore(t, sn)
	wantIndex(t, s, "t", byV, store.All(), store.ReadOptions{}, before)
}
