package layout_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// staticLayout is a column family's layout with static columns: partition
// key p, clustering key c, static s1 and s2, value v.
func staticLayout(t testing.TB, salt int) *layout.Layout {
	t.Helper()
	l, err := layout.Default("cf", []layout.Attr{
		{Name: "p", Type: types.BigInt, Key: true, Nullable: true},
		{Name: "c", Type: types.String, Key: true, Nullable: true},
		{Name: "s1", Type: types.String, Nullable: true, Static: true},
		{Name: "s2", Type: types.BigInt, Nullable: true, Static: true},
		{Name: "v", Type: types.String, Nullable: true},
	}, 1, 2, salt, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// cellsOf writes tuple's row and its partition row (static columns), as a
// store returns them: rows by key, cells by family and qualifier.
func cellsOf(t testing.TB, l *layout.Layout, tuples ...[]types.Value) []store.Row {
	t.Helper()
	byKey := map[string]*store.Row{}
	var keys [][]byte
	add := func(cs []layout.Cell) {
		for _, c := range cs {
			r := byKey[string(c.Row)]
			if r == nil {
				r = &store.Row{Key: c.Row}
				byKey[string(c.Row)] = r
				keys = append(keys, c.Row)
			}
			r.Cells = append(r.Cells, c.Cell)
		}
	}
	for _, tu := range tuples {
		puts, _, err := l.PutCells(tu)
		if err != nil {
			t.Fatal(err)
		}
		add(puts)
		if puts, _, err = l.StaticCells(tu, nil); err != nil {
			t.Fatal(err)
		}
		add(puts)
	}
	var out []store.Row
	for _, k := range sortedKeys(keys) {
		r := *byKey[string(k)]
		sortCells(r.Cells)
		out = append(out, r)
	}
	return out
}

func sortedKeys(keys [][]byte) [][]byte {
	out := append([][]byte(nil), keys...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if bytes.Compare(out[j], out[i]) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func sortCells(cs []store.Cell) {
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			if cs[j].Family < cs[i].Family || cs[j].Family == cs[i].Family && bytes.Compare(cs[j].Qualifier, cs[i].Qualifier) < 0 {
				cs[i], cs[j] = cs[j], cs[i]
			}
		}
	}
}

// decodeAll runs a CellDecoder over rows (in reverse with preload when
// reverse), returning the tuples it emits.
func decodeAll(t testing.TB, l *layout.Layout, rows []store.Row, reverse bool) []string {
	t.Helper()
	var out []string
	var cd layout.CellDecoder
	cd.Init(l, nil, "cf", func(tu []types.Datum) bool {
		vs := make([]string, len(tu))
		for i, d := range tu {
			vs[i] = types.Format(d.Value())
		}
		out = append(out, "["+strings.Join(vs, " ")+"]")
		return true
	})
	feed := func(rs []store.Row) {
		for _, r := range rs {
			for i, c := range r.Cells {
				if !cd.Cell(r.Key, c, i == 0) {
					t.Fatalf("decoding stopped: %v", cd.Flush())
				}
			}
		}
	}
	if reverse {
		var parts, rev []store.Row
		for i := len(rows) - 1; i >= 0; i-- {
			rev = append(rev, rows[i])
			if l.IsPartitionRow(rows[i]) {
				parts = append(parts, rows[i])
			}
		}
		cd.PreloadPartitions(true)
		feed(parts)
		cd.PreloadPartitions(false)
		rows = rev
	}
	feed(rows)
	if err := cd.Flush(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStaticColumnsDecode: each row gets its own partition's static
// columns, read in key order (the partition row first) or in reverse after
// a preload; a partition row alone yields no tuple; the salt byte is part
// of the partition row's key.
func TestStaticColumnsDecode(t *testing.T) {
	for _, salt := range []int{0, 4} {
		l := staticLayout(t, salt)
		rows := cellsOf(t, l,
			[]types.Value{int64(1), "a", "one", int64(10), "x"},
			[]types.Value{int64(1), "b", "one", int64(10), nil},
			[]types.Value{int64(2), "a", nil, int64(20), "y"},
			[]types.Value{int64(3), nil, "three", nil, nil}, // clustering NULL: still a row
		)
		// A room without rows: its partition row alone.
		lone, _, err := l.StaticCells([]types.Value{int64(4), nil, "four", nil, nil}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, store.Row{Key: lone[0].Row, Cells: []store.Cell{lone[0].Cell, lone[1].Cell}})
		rows = sortRows(rows)
		parts := 0
		for _, r := range rows {
			if l.IsPartitionRow(r) {
				parts++
				vals := make([]types.Value, len(l.Attrs))
				if err := l.DecodePartitionRow(r, vals); err != nil || vals[0] == nil || vals[1] != nil || vals[4] != nil {
					t.Fatalf("salt %d: partition row %q decodes to %v, %v", salt, r.Key, vals, err)
				}
			}
		}
		if parts != 4 {
			t.Fatalf("salt %d: %d partition rows, want 4", salt, parts)
		}
		want := map[string]bool{
			`[1 'a' 'one' 10 'x']`:       true,
			`[1 'b' 'one' 10 NULL]`:      true,
			`[2 'a' NULL 20 'y']`:        true,
			`[3 NULL 'three' NULL NULL]`: true,
		}
		for _, reverse := range []bool{false, true} {
			got := decodeAll(t, l, rows, reverse)
			if len(got) != len(want) {
				t.Fatalf("salt %d, reverse %v: %v", salt, reverse, got)
			}
			for _, g := range got {
				if !want[g] {
					t.Errorf("salt %d, reverse %v: unexpected tuple %s (all: %v)", salt, reverse, g, got)
				}
			}
		}
	}
}

func sortRows(rows []store.Row) []store.Row {
	out := append([]store.Row(nil), rows...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if bytes.Compare(out[j].Key, out[i].Key) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// FuzzPartitionRow decodes arbitrary partition rows: an error or values
// that encode back to the same row key and cells; never a panic. The cell
// decoder, given the same row then a row of the partition, fills that row
// with the same static values.
func FuzzPartitionRow(f *testing.F) {
	l := staticLayout(f, 0)
	rows := cellsOf(f, l, []types.Value{int64(7), "k", "seven", int64(70), "v"})
	for _, r := range rows {
		if l.IsPartitionRow(r) {
			f.Add(r.Key, r.Cells[1].Qualifier, r.Cells[1].Value, r.Cells[2].Qualifier, r.Cells[2].Value)
		}
	}
	f.Add([]byte{0x02}, []byte("s1"), []byte("x"), []byte("zz"), []byte{})
	f.Fuzz(func(t *testing.T, key, q1, v1, q2, v2 []byte) {
		row := store.Row{Key: key, Cells: []store.Cell{{Family: layout.StaticColumnFamily, Qualifier: []byte{}, Value: []byte{}},
			{Family: layout.StaticColumnFamily, Qualifier: q1, Value: v1}, {Family: layout.StaticColumnFamily, Qualifier: q2, Value: v2}}}
		vals := make([]types.Value, len(l.Attrs))
		if err := l.DecodePartitionRow(row, vals); err != nil {
			return
		}
		k, err := l.AppendPartitionKey(nil, vals)
		if err != nil || !bytes.Equal(k, key) {
			t.Fatalf("partition row %q decodes to %v, whose key is %q (%v)", key, vals, k, err)
		}
		// Written back and read again: the same values.
		puts, _, err := l.StaticCells(vals, nil)
		if err != nil {
			t.Fatal(err)
		}
		again := store.Row{Key: puts[0].Row}
		for _, p := range puts {
			again.Cells = append(again.Cells, p.Cell)
		}
		vals2 := make([]types.Value, len(l.Attrs))
		if err := l.DecodePartitionRow(again, vals2); err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			if types.Compare(vals[i], vals2[i]) != 0 {
				t.Fatalf("partition row %v reads back as %v", vals, vals2)
			}
		}
		// A row of the partition, after it: the same static values.
		tu := append([]types.Value(nil), vals...)
		tu[1], tu[4] = "c", "v"
		rs := cellsOf(t, l, tu)
		var got []types.Value
		var cd layout.CellDecoder
		cd.Init(l, nil, "cf", func(d []types.Datum) bool {
			for _, x := range d {
				got = append(got, x.Value())
			}
			return true
		})
		for i, c := range row.Cells {
			cd.Cell(row.Key, c, i == 0)
		}
		for _, r := range rs {
			if l.IsPartitionRow(r) {
				continue
			}
			for i, c := range r.Cells {
				cd.Cell(r.Key, c, i == 0)
			}
		}
		if err := cd.Flush(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tu) {
			t.Fatalf("row decodes to %v, want %v", got, tu)
		}
		for i := range tu {
			if types.Compare(got[i], tu[i]) != 0 {
				t.Fatalf("row decodes to %v, want %v", got, tu)
			}
		}
	})
}
