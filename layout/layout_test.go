package layout_test

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// defs covers every element kind: natural with separators and size prefix
// (seed 003 Fig. 6), ordered, desc, salt, wide rows and attr_name branches.
const defs = `
DEFINE RELATION r { k1 STRING key, k2 STRING key, v1 STRING, v2 INT };
DEFINE PRIMARY SCHEMA s1 FOR r { TABLE 's1', ROW suffix('-'){k1}:k2, FAMILY 'f', QUALIFIER '', VALUE suffix('-'){v1}:v2 };
DEFINE SCHEMA s2 FOR r { TABLE 's2', ROW size{k2}:k1, FAMILY 'f', QUALIFIER attr_name['k1','k2'], VALUE attr_value['k1','k2'] };

DEFINE RELATION t { a BIGINT key, b STRING key, c DOUBLE, d BYTES, e TIMESTAMP, f BOOL };
DEFINE PRIMARY SCHEMA t_asc FOR t { TABLE 't_asc', ROW ordered{a}:desc{b}, VALUE ordered{c}:ordered{d}:ordered{e}:ordered{f} };
DEFINE SCHEMA t_salted FOR t { TABLE 't_salted', ROW salt(8){ordered{a}}:ordered{a}:ordered{b}, QUALIFIER prefix('q'){attr_name['a','b']}, VALUE attr_value['a','b'] };
DEFINE SCHEMA t_wide FOR t { TABLE 't_wide', ROW ordered{a}, QUALIFIER ordered{b}:suffix('/'){attr_name['a','b']}, VALUE attr_value['a','b'] };
DEFINE SCHEMA t_index FOR t { TABLE 't_index', ROW desc{c}:ordered{a}:ordered{b}, VALUE size(2){ordered{d}}:ordered{e}:ordered{f} };
`

func mustCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	c, err := catalog.CatalogFromScript("defs", []byte(defs))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var tricky = []string{"", "a", "\x00", "\x00\xff", "\xff", "\x00\x01", "a\x00b", "-", "ab"}

func genT(rt *rapid.T) []types.Value {
	null := func(label string) bool { return rapid.IntRange(0, 4).Draw(rt, label) == 0 }
	tu := []types.Value{
		rapid.Int64().Draw(rt, "a"),
		rapid.SampledFrom(tricky).Draw(rt, "b"),
		rapid.Float64().Filter(func(f float64) bool { return f == f }).Draw(rt, "c"),
		[]byte(rapid.SampledFrom(tricky).Draw(rt, "d")),
		time.UnixMicro(rapid.Int64Range(-1e15, 1e15).Draw(rt, "e")).UTC(),
		rapid.Bool().Draw(rt, "f"),
	}
	for i, label := range []string{"", "", "cnull", "dnull", "enull", "fnull"} {
		if label != "" && null(label) {
			tu[i] = nil
		}
	}
	if c, ok := tu[2].(float64); ok && c == 0 {
		tu[2] = 0.0 // -0 is stored as +0
	}
	return tu
}

// rowOf groups cells as the store would return them: one row, cells sorted.
func rowOf(cells []layout.Cell) store.Row {
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].Family != cells[j].Family {
			return cells[i].Family < cells[j].Family
		}
		return bytes.Compare(cells[i].Qualifier, cells[j].Qualifier) < 0
	})
	r := store.Row{Key: cells[0].Row}
	for _, c := range cells {
		r.Cells = append(r.Cells, c.Cell)
	}
	return r
}

// TestLayoutRoundTrip: decoding the cells a tuple is written as gives the
// tuple back, in every layout, for values full of separators, 0x00 and 0xFF.
func TestLayoutRoundTrip(t *testing.T) {
	c := mustCatalog(t)
	rel := c.Relation("t")
	rapid.Check(t, func(rt *rapid.T) {
		tu := genT(rt)
		for _, l := range rel.Layouts() {
			puts, _, err := l.PutCells(tu)
			if err != nil {
				rt.Fatalf("%s: %v", l.Name, err)
			}
			var got [][]types.Value
			if err := l.DecodeRow(puts[0].Table, rowOf(puts), func(v []types.Value) bool { got = append(got, v); return true }); err != nil {
				rt.Fatalf("%s: %v", l.Name, err)
			}
			if len(got) != 1 || !types.EqualTuples(got[0], tu) {
				rt.Fatalf("%s: decoded %v, want %v", l.Name, got, tu)
			}
		}
	})
}

// TestRowDecoderReuse: one RowDecoder decoding row after row returns each
// tuple exactly, with no value left over from an earlier row (NULLs are
// absent cells), and lends its tuple only: what emit copied stays intact.
func TestRowDecoderReuse(t *testing.T) {
	c := mustCatalog(t)
	rel := c.Relation("t")
	decs := make([]layout.RowDecoder, len(rel.Layouts()))
	for i, l := range rel.Layouts() {
		decs[i].Init(l, nil)
	}
	rapid.Check(t, func(rt *rapid.T) {
		tuples := rapid.SliceOfN(rapid.Custom(genT), 1, 5).Draw(rt, "tuples")
		for i, l := range rel.Layouts() {
			var got [][]types.Value
			for _, tu := range tuples {
				puts, _, err := l.PutCells(tu)
				if err != nil {
					rt.Fatalf("%s: %v", l.Name, err)
				}
				err = decs[i].Decode(puts[0].Table, rowOf(puts), func(v []types.Value) bool {
					got = append(got, append([]types.Value(nil), v...))
					return true
				})
				if err != nil {
					rt.Fatalf("%s: %v", l.Name, err)
				}
			}
			if len(got) != len(tuples) {
				rt.Fatalf("%s: decoded %d tuples from %d rows", l.Name, len(got), len(tuples))
			}
			for j := range got {
				if !types.EqualTuples(got[j], tuples[j]) {
					rt.Fatalf("%s: row %d decoded %v, want %v", l.Name, j, got[j], tuples[j])
				}
			}
		}
	})
}

// TestKeyOrder: row keys sort like the tuples they encode: (a ASC, b DESC)
// for t_asc; within one salt bucket, (a, b) for t_salted, whose first byte
// is the bucket; (c DESC NULLS LAST, a, b) for t_index.
func TestKeyOrder(t *testing.T) {
	c := mustCatalog(t)
	rel := c.Relation("t")
	asc, salted, index := c.Layout("t_asc"), c.Layout("t_salted"), c.Layout("t_index")
	sign := func(x int) int {
		switch {
		case x < 0:
			return -1
		case x > 0:
			return 1
		}
		return 0
	}
	rapid.Check(t, func(rt *rapid.T) {
		x, y := genT(rt), genT(rt)
		if rapid.Bool().Draw(rt, "samea") {
			y[0] = x[0]
		}
		key := func(l *layout.Layout, tu []types.Value) []byte {
			k, err := l.RowKey(tu)
			if err != nil {
				rt.Fatal(err)
			}
			return k
		}
		want := types.Compare(x[0], y[0])
		if want == 0 {
			want = -types.Compare(x[1], y[1])
		}
		if got := bytes.Compare(key(asc, x), key(asc, y)); sign(got) != sign(want) {
			rt.Fatalf("t_asc: key order %d, tuple order %d", got, want)
		}
		kx, ky := key(salted, x), key(salted, y)
		if int(kx[0]) >= 8 {
			rt.Fatalf("salt byte %d out of 8 buckets", kx[0])
		}
		if kx[0] == ky[0] {
			want := types.Compare(x[0], y[0])
			if want == 0 {
				want = types.Compare(x[1], y[1])
			}
			if got := bytes.Compare(kx[1:], ky[1:]); sign(got) != sign(want) {
				rt.Fatalf("t_salted: key order %d, tuple order %d", got, want)
			}
		}
		if x[0] == y[0] && kx[0] != ky[0] {
			rt.Fatalf("same salted attribute, different buckets")
		}
		// NULL c sorts last descending (SQL's DESC NULLS LAST).
		want = -types.Compare(x[2], y[2])
		if want == 0 {
			want = types.Compare(x[0], y[0])
		}
		if want == 0 {
			want = types.Compare(x[1], y[1])
		}
		if got := bytes.Compare(key(index, x), key(index, y)); sign(got) != sign(want) {
			rt.Fatalf("t_index: key order %d, tuple order %d (%v vs %v)", got, want, x[2], y[2])
		}
		_ = rel
	})
}

// TestSeedSeparators: seed 003's s1 rejects values containing its
// separator instead of writing an ambiguous key, and its size prefix keeps
// k2 apart from k1.
func TestSeedSeparators(t *testing.T) {
	c := mustCatalog(t)
	s1, s2 := c.Layout("s1"), c.Layout("s2")
	if _, _, err := s1.PutCells([]types.Value{"a-", "b", "x", int64(1)}); err == nil {
		t.Error("s1 accepted k1 containing its separator")
	}
	puts, _, err := s2.PutCells([]types.Value{"a-", "b", "x", int64(1)})
	if err != nil || string(puts[0].Row) != "\x01ba-" {
		t.Errorf("s2 row = %q, %v", puts[0].Row, err)
	}
}

// FuzzDecodeRow: arbitrary bytes as a row of any layout never panic, and a
// row that decodes re-encodes to the same row key (salt aside) and cells.
func FuzzDecodeRow(f *testing.F) {
	c := mustCatalog(f)
	var layouts []*layout.Layout
	for _, r := range c.Relations {
		layouts = append(layouts, r.Layouts()...)
	}
	f.Add(uint8(0), []byte("a1-b"), "f", []byte(""), []byte("x-\x00\x00\x00d"))
	f.Add(uint8(1), []byte("\x01ba1"), "f", []byte("v1"), []byte("x"))
	f.Add(uint8(4), []byte("\x03\x80\x00\x00\x00\x00\x00\x00\x01a\x00\x01"), "f", []byte("qc"), []byte("@\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(uint8(5), []byte("\x80\x00\x00\x00\x00\x00\x00\x01"), "f", []byte("a\x00\x01d/"), []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, which uint8, key []byte, fam string, qual, val []byte) {
		l := layouts[int(which)%len(layouts)]
		row := store.Row{Key: key, Cells: []store.Cell{{Family: fam, Qualifier: qual, Value: val}}}
		table := l.StaticTable()
		err := l.DecodeRow(table, row, func(tu []types.Value) bool {
			for _, k := range l.KeyIdx {
				if tu[k] == nil {
					t.Fatalf("%s: decoded a tuple without key %s", l.Name, l.Attrs[k].Name)
				}
			}
			k, err := l.RowKey(tu)
			if err != nil {
				return true // e.g. a decoded value the layout refuses to write
			}
			skip := 0
			if l.SaltBuckets > 0 {
				skip = 1
			}
			if !bytes.Equal(k[skip:], key[skip:]) {
				t.Fatalf("%s: row %q decodes to %v, which encodes to %q", l.Name, key, tu, k)
			}
			return true
		})
		// The cell decoder agrees: the same tuple, or an error.
		var viaRow, viaCells []string
		var rd layout.RowDecoder
		rd.Init(l, nil)
		rerr := rd.DecodeDatums(table, row, func(tu []types.Datum) bool { viaRow = append(viaRow, fmt.Sprint(tu)); return true })
		var cd layout.CellDecoder
		cd.Init(l, nil, table, func(tu []types.Datum) bool { viaCells = append(viaCells, fmt.Sprint(tu)); return true })
		cd.Cell(key, row.Cells[0], true)
		cerr := cd.Flush()
		if (rerr == nil) != (err == nil) || (cerr == nil) != (err == nil) || err == nil && fmt.Sprint(viaRow) != fmt.Sprint(viaCells) {
			t.Fatalf("%s: DecodeRow: %v; DecodeDatums: %v %v; CellDecoder: %v %v", l.Name, err, rerr, viaRow, cerr, viaCells)
		}
	})
}

// TestSplitOn: a layout's SPLIT ON keys are raw row keys, kept sorted; they
// need a constant TABLE and no salt.
func TestSplitOn(t *testing.T) {
	c, err := catalog.CatalogFromScript("s.kvs", []byte(`DEFINE RELATION r { k STRING KEY, v INT };
DEFINE SCHEMA s FOR r { TABLE 's', ROW k, VALUE v, SPLIT ON ('m', x'00ff', 'g') };`))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", c.Layout("s").Splits); got != `["\x00\xff" "g" "m"]` {
		t.Errorf("splits %s", got)
	}
	for _, tc := range []struct{ schema, want string }{
		{`DEFINE SCHEMA s FOR r { TABLE 's', ROW salt(4){k}:k, VALUE v, SPLIT ON ('a') }`,
			"s.kvs:2:73: schema s: SPLIT ON cannot be used with salt(N){…} in ROW"},
		{`DEFINE SCHEMA s FOR r { TABLE prefix('t'){k}, ROW k, VALUE v, SPLIT ON ('a') }`,
			"s.kvs:2:73: schema s: SPLIT ON needs a constant TABLE"},
		{`DEFINE SCHEMA s FOR r { TABLE 's', ROW k, VALUE v, SPLIT ON ('a', x'') }`,
			"s.kvs:2:67: schema s: a split key cannot be empty"},
		{`DEFINE SCHEMA s FOR r { TABLE 's', ROW k, VALUE v, SPLIT ON ('a', 'b', x'61') }`,
			"s.kvs:2:72: schema s: split key 'a' is listed twice (first at 2:62)"},
	} {
		_, err := catalog.CatalogFromScript("s.kvs", []byte("DEFINE RELATION r { k STRING KEY, v INT };\n"+tc.schema))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\ngot  %v\nwant %s…", tc.schema, err, tc.want)
		}
	}
}

// TestArenaReset: an arena reset between batches hands out the same cells
// as fresh encodings (nothing left over from the batch before), and, once
// warm, encodes a batch without allocating.
func TestArenaReset(t *testing.T) {
	c := mustCatalog(t)
	rel := c.Relation("t")
	var a layout.Arena
	rapid.Check(t, func(rt *rapid.T) {
		tuples := rapid.SliceOfN(rapid.Custom(genT), 1, 300).Draw(rt, "tuples")
		var got []layout.Cell
		for _, l := range rel.Layouts() {
			for _, tu := range tuples {
				puts, _, err := l.PutCellsArena(tu, &a)
				if err != nil {
					rt.Fatalf("%s: %v", l.Name, err)
				}
				got = append(got, puts...)
			}
		}
		var want []layout.Cell
		for _, l := range rel.Layouts() {
			for _, tu := range tuples {
				puts, _, _ := l.PutCells(tu)
				want = append(want, puts...)
			}
		}
		if len(got) != len(want) {
			rt.Fatalf("%d cells, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].Row, want[i].Row) || !bytes.Equal(got[i].Qualifier, want[i].Qualifier) || !bytes.Equal(got[i].Value, want[i].Value) {
				rt.Fatalf("cell %d: %q %q %q, want %q %q %q", i, got[i].Row, got[i].Qualifier, got[i].Value, want[i].Row, want[i].Qualifier, want[i].Value)
			}
		}
		a.Reset()
	})
	l := c.Relation("r").Layouts()[0]
	tu := []types.Value{"a1", "b", "x", int64(100)}
	batch := func() {
		for range 2000 { // 2000 × ~12 bytes: several chunks
			if _, _, err := l.PutCellsArena(tu, &a); err != nil {
				t.Fatal(err)
			}
		}
		a.Reset()
	}
	batch()
	if n := testing.AllocsPerRun(20, batch); n > 0 {
		t.Errorf("a warm arena allocates %v times per batch", n)
	}
}
