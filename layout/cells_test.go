package layout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/types"
)

// TestCellDecoder: decoding the cells a store lends (ReadCells, forward
// and reverse, with limits, on a store that lends its iterator's memory
// and on one that does not) yields exactly the tuples RowDecoder yields
// from the assembled rows of ReadRows, in the same order; an emit that
// stops the read gets a prefix of them.
func TestCellDecoder(t *testing.T) {
	ctx := context.Background()
	rel := mustCatalog(t).Relation("t")
	peb, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer peb.Close()
	stores := map[string]store.Store{"mem": memstore.New(), "pebble": peb}
	round := 0
	rapid.Check(t, func(rt *rapid.T) {
		round++
		tuples := rapid.SliceOfN(rapid.Custom(genT), 1, 8).Draw(rt, "tuples")
		for i := range tuples {
			if i > 0 && rapid.Bool().Draw(rt, "same a") {
				tuples[i][0] = tuples[i-1][0] // wide rows hold several tuples
			}
		}
		opts := store.ReadOptions{Limit: rapid.IntRange(0, 3).Draw(rt, "limit"), Reverse: rapid.Bool().Draw(rt, "reverse")}
		stop := rapid.IntRange(0, 4).Draw(rt, "stop after tuples")
		for name, st := range stores {
			for _, l := range rel.Layouts() {
				table := fmt.Sprintf("%s_%d", l.Name, round)
				var muts []store.Mutation
				for _, tu := range tuples {
					puts, _, err := l.PutCells(tu)
					if err != nil {
						rt.Fatal(err)
					}
					for _, c := range puts {
						muts = append(muts, store.Mutation{Kind: store.SetCell, Table: table, Row: c.Row, Family: c.Family, Qualifier: c.Qualifier, Value: c.Value})
					}
				}
				if err := st.CreateTable(ctx, store.TableSpec{Name: table, Families: []string{"f", "0"}}); err != nil {
					rt.Fatal(err)
				}
				if err := st.Apply(ctx, muts); err != nil {
					rt.Fatal(err)
				}
				var want, got [][]types.Datum
				err := st.ReadRows(ctx, table, store.All(), opts, func(r store.Row) bool {
					// A decoder per row: nothing carried over from the
					// row before, which the CellDecoder must not see
					// either (a value a tuple does not set is NULL).
					var rd layout.RowDecoder
					rd.Init(l, nil)
					return rd.DecodeDatums(table, r, func(t []types.Datum) bool {
						want = append(want, append([]types.Datum(nil), t...))
						return true
					}) == nil
				})
				if err != nil {
					rt.Fatal(err)
				}
				var cd layout.CellDecoder
				cd.Init(l, nil, table, func(t []types.Datum) bool {
					got = append(got, append([]types.Datum(nil), t...))
					return len(got) != stop
				})
				if err := store.ReadCells(ctx, st, table, store.All(), opts, cd.Cell); err != nil {
					rt.Fatal(err)
				}
				if err := cd.Flush(); err != nil {
					rt.Fatal(err)
				}
				if stop > 0 && len(want) > stop {
					want = want[:stop]
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					rt.Fatalf("%s, %s, %+v: ReadCells decoded\n%v\nReadRows\n%v", name, l.Name, opts, got, want)
				}
			}
		}
	})
}

// BenchmarkCellDecoder decodes 100 rows of (grp BIGINT, seq BIGINT, val
// STRING) lent cell by cell, as the client's 100-row range query does,
// without the store: the decoder's share of that query.
func BenchmarkCellDecoder(b *testing.B) {
	c, err := catalog.CatalogFromScript("bench", []byte(`
DEFINE RELATION ev { grp BIGINT KEY, seq BIGINT KEY, val STRING };
DEFINE PRIMARY SCHEMA ev_by_grp FOR ev { TABLE 'ev', ROW ordered{grp}:ordered{seq}, FAMILY 'f', VALUE val };`))
	if err != nil {
		b.Fatal(err)
	}
	l := c.Relation("ev").Layouts()[0]
	var rows []store.Row
	for i := range 100 {
		puts, _, err := l.PutCells([]types.Value{int64(7), int64(i), strings.Repeat("v", 100)})
		if err != nil {
			b.Fatal(err)
		}
		rows = append(rows, rowOf(puts))
	}
	benchDecode(b, l, []bool{true, false, false}, rows)
}

// benchDecode times decoding rows of l, lent cell by cell as a store's
// ReadCells lends them, skipping the attributes skip marks, per row.
func benchDecode(b *testing.B, l *layout.Layout, skip []bool, rows []store.Row) {
	var cd layout.CellDecoder
	n := 0
	emit := func(t []types.Datum) bool { n++; return true }
	for b.Loop() {
		cd.Init(l, skip, "ev", emit)
		for _, r := range rows {
			for i, c := range r.Cells {
				cd.Cell(r.Key, c, i == 0)
			}
		}
		if err := cd.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/row")
}

// BenchmarkCellDecoderPlain decodes 100 rows of five values, a cell
// each named by its attribute (QUALIFIER attr_name[], VALUE
// attr_value[]: the cells of a column family).
func BenchmarkCellDecoderPlain(b *testing.B) {
	c, err := catalog.CatalogFromScript("bench", []byte(`
DEFINE RELATION ev { grp BIGINT KEY, seq BIGINT KEY, qty BIGINT, price DOUBLE, note STRING, day BIGINT, tag STRING };
DEFINE PRIMARY SCHEMA ev_by_grp FOR ev { TABLE 'ev', ROW ordered{grp}:ordered{seq}, FAMILY 'f', QUALIFIER attr_name[], VALUE attr_value[] };`))
	if err != nil {
		b.Fatal(err)
	}
	l := c.Relation("ev").Layouts()[0]
	var rows []store.Row
	for i := range 100 {
		puts, _, err := l.PutCells([]types.Value{int64(7), int64(i), int64(i % 5), float64(i) / 4, "n", int64(19000 + i), "t"})
		if err != nil {
			b.Fatal(err)
		}
		rows = append(rows, rowOf(puts))
	}
	if len(rows[0].Cells) < 5 {
		b.Fatalf("%d cells a row, want a cell a value", len(rows[0].Cells))
	}
	benchDecode(b, l, nil, rows)
}

// TestDecodeErrorNamesField: a key or value that does not match its layout
// is reported with the layout, the field it is in and a copy of that
// field's bytes (the store lends them), whichever element failed.
func TestDecodeErrorNamesField(t *testing.T) {
	c, err := catalog.CatalogFromScript("t", []byte(`
DEFINE RELATION ev { grp BIGINT KEY, seq BIGINT KEY, n BIGINT };
DEFINE PRIMARY SCHEMA ev_by_grp FOR ev { TABLE 'ev', ROW ordered{grp}:ordered{seq}, FAMILY 'f', VALUE n };`))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Relation("ev").Layouts()[0]
	puts, _, err := l.PutCells([]types.Value{int64(7), int64(9), int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	good := rowOf(puts)
	for _, tc := range []struct {
		name, field string
		row         store.Row
	}{
		{"short row key", "ROW", store.Row{Key: good.Key[:len(good.Key)-1], Cells: good.Cells}},
		{"trailing bytes", "ROW", store.Row{Key: append(append([]byte(nil), good.Key...), '#'), Cells: good.Cells}},
		{"short value", "VALUE", store.Row{Key: good.Key, Cells: []store.Cell{{Family: good.Cells[0].Family, Qualifier: good.Cells[0].Qualifier, Value: []byte{1, 2}}}}},
	} {
		lent := store.Row{Key: append([]byte(nil), tc.row.Key...)}
		for _, c := range tc.row.Cells {
			lent.Cells = append(lent.Cells, store.Cell{Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Value: append([]byte(nil), c.Value...)})
		}
		var cd layout.CellDecoder
		cd.Init(l, nil, "ev", func([]types.Datum) bool { return true })
		for i, c := range lent.Cells {
			cd.Cell(lent.Key, c, i == 0)
		}
		err := cd.Flush()
		var de *layout.DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: got %v, want a DecodeError", tc.name, err)
		}
		want := tc.row.Key
		if tc.field == "VALUE" {
			want = tc.row.Cells[0].Value
		}
		if de.Layout != "ev_by_grp" || de.Field != tc.field || !bytes.Equal(de.Bytes, want) {
			t.Fatalf("%s: got layout %q field %q bytes %x; want ev_by_grp, %s, %x", tc.name, de.Layout, de.Field, de.Bytes, tc.field, want)
		}
		// The bytes are the error's own: the store may reuse what it lent.
		clear(lent.Key)
		for _, c := range lent.Cells {
			clear(c.Value)
		}
		if !bytes.Equal(de.Bytes, want) {
			t.Fatalf("%s: the error's bytes alias the lent ones", tc.name)
		}
	}
}
