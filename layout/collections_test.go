package layout_test

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// elemValue draws a scalar of type t from a small domain full of edge
// cases (empty strings, zero bytes, NaN, signed zeros, infinities).
func elemValue(t *rapid.T, typ types.Type, label string) types.Value {
	switch typ {
	case types.String:
		return rapid.SampledFrom([]string{"", "a", "b", "a\x00", "\x00", "é"}).Draw(t, label)
	case types.Bytes:
		return []byte(rapid.SampledFrom([]string{"", "\x00", "\xff", "ab"}).Draw(t, label))
	case types.Int, types.BigInt:
		return rapid.Int64Range(-3, 3).Draw(t, label)
	case types.Float, types.Double:
		return rapid.SampledFrom([]float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1), 0, -2.5, 1}).Draw(t, label)
	case types.Bool:
		return rapid.Bool().Draw(t, label)
	}
	return time.UnixMicro(rapid.Int64Range(-2, 2).Draw(t, label)).UTC()
}

// TestElementOpsProperty: any sequence of operations on the elements of a
// collection stored one cell per element (add, remove, prepend, put, delete
// a key, replace whole), each written as its cells alone into a store,
// reads back as the same operations applied to Go values
// (oracle.ApplyElements), for sets, lists and maps of every element type.
func TestElementOpsProperty(t *testing.T) {
	scalars := []types.Type{types.String, types.Bytes, types.Int, types.BigInt, types.Float, types.Double, types.Bool, types.Timestamp}
	rapid.Check(t, func(t *rapid.T) {
		elem := rapid.SampledFrom(scalars).Draw(t, "elem")
		var ct types.Type
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			ct = types.SetOf(elem)
		case 1:
			ct = types.ListOf(elem)
		default:
			ct = types.MapOf(rapid.SampledFrom(scalars).Draw(t, "key"), elem)
		}
		l, err := layout.Default("cf", []layout.Attr{
			{Name: "k", Type: types.BigInt, Key: true, Nullable: true},
			{Name: "v", Type: types.String, Nullable: true},
			{Name: "c", Type: ct, Nullable: true},
		}, 1, 1, 0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		st := memstore.New()
		if err := st.CreateTable(ctx, l.TableSpec()); err != nil {
			t.Fatal(err)
		}
		collection := func(label string, typ types.Type) types.Value {
			n := rapid.IntRange(0, 3).Draw(t, label+" size")
			switch typ.Kind() {
			case types.MapKind:
				m := types.Map{}
				for range n {
					m = append(m, types.Entry{Key: elemValue(t, typ.Key(), label+" key"), Val: elemValue(t, typ.Elem(), label+" val")})
				}
				c, err := types.Coerce(m, typ)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			xs := types.List{}
			for range n {
				xs = append(xs, elemValue(t, typ.Elem(), label+" elem"))
			}
			var raw types.Value = xs
			if typ.Kind() == types.SetKind {
				raw = types.Set(xs)
			}
			c, err := types.Coerce(raw, typ)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		key := types.Value(int64(7))
		var want types.Value
		// The row exists with a value, so element cells come and go
		// beside it.
		puts, deletes, err := l.PutCells([]types.Value{key, "x", nil})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Apply(ctx, layout.AppendMutations(nil, puts, deletes)); err != nil {
			t.Fatal(err)
		}
		steps := rapid.IntRange(1, 12).Draw(t, "steps")
		for range steps {
			ops := []lang.AssignOp{lang.AssignValue, lang.AssignAdd, lang.AssignAdd}
			switch ct.Kind() {
			case types.ListKind:
				ops = append(ops, lang.AssignPrepend, lang.AssignPrepend)
			default:
				ops = append(ops, lang.AssignRemove, lang.AssignRemove)
			}
			op := rapid.SampledFrom(ops).Draw(t, "op")
			var operand types.Value
			switch {
			case op == lang.AssignRemove && ct.Kind() == types.MapKind:
				operand = collection("keys", types.SetOf(ct.Key()))
			case op == lang.AssignValue && rapid.IntRange(0, 4).Draw(t, "null") == 0:
				operand = nil
			default:
				operand = collection("operand", ct)
			}
			puts, deletes, err := l.ElementCells([]types.Value{key, nil, nil}, 2, op, operand)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Apply(ctx, layout.AppendMutations(nil, puts, deletes)); err != nil {
				t.Fatal(err)
			}
			if want, err = oracle.ApplyElements(ct, want, op, operand, nil); err != nil {
				t.Fatal(err)
			}
			row, _, err := st.ReadRow(ctx, "cf", mustKey(t, l, key))
			if err != nil {
				t.Fatal(err)
			}
			var got []types.Value
			if err := l.DecodeRow("cf", row, func(tu []types.Value) bool { got = tu; return true }); err != nil {
				t.Fatal(err)
			}
			if got == nil || got[1] != "x" {
				t.Fatalf("after %v %s: the row is %v", op, types.Format(operand), got)
			}
			if types.Format(got[2]) != types.Format(want) {
				t.Fatalf("after %v %s: %s, want %s", op, types.Format(operand), types.Format(got[2]), types.Format(want))
			}
		}
	})
}

func mustKey(t *rapid.T, l *layout.Layout, key types.Value) []byte {
	k, err := l.RowKey([]types.Value{key, nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A hand-written layout cannot hold a collection stored one cell per
// element: DEFINE SCHEMA says so at its position.
func TestCompileRefusesElementCollections(t *testing.T) {
	ss, err := lang.ParseScript("s.kvs", []byte("DEFINE SCHEMA s FOR r { ROW id, QUALIFIER attr_name[], VALUE attr_value[] };"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = layout.Compile([]layout.Attr{{Name: "id", Type: types.BigInt, Key: true}, {Name: "tags", Type: types.SetOf(types.String)}}, ss[0].(*lang.DefineSchema))
	if err == nil || !strings.Contains(err.Error(), "s.kvs:1:1: schema s: attribute tags is a SET<STRING>, stored one cell per element, which only the advisor's column families hold: declare it FROZEN<SET<STRING>>") {
		t.Fatalf("got %v", err)
	}
}

// FuzzElementCells decodes rows whose element cells are arbitrary: an
// error or collections that, written back, read the same; never a panic,
// and never an element of one row left in the next (a good row decoded
// after any row reads exactly its own elements).
func FuzzElementCells(f *testing.F) {
	l, err := layout.Default("cf", []layout.Attr{
		{Name: "k", Type: types.BigInt, Key: true, Nullable: true},
		{Name: "m", Type: types.MapOf(types.String, types.Int), Nullable: true},
		{Name: "l", Type: types.ListOf(types.BigInt), Nullable: true},
	}, 1, 1, 0, 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	good := []types.Value{int64(1), types.Map{{Key: "a", Val: int64(1)}, {Key: "b", Val: int64(-2)}}, types.List{int64(3), int64(3)}}
	puts, _, err := l.PutCells(good)
	if err != nil {
		f.Fatal(err)
	}
	goodRow := store.Row{Key: puts[0].Row}
	for _, p := range puts {
		goodRow.Cells = append(goodRow.Cells, p.Cell)
	}
	slices.SortFunc(goodRow.Cells, func(a, b store.Cell) int {
		if c := strings.Compare(a.Family, b.Family); c != 0 {
			return c
		}
		return bytes.Compare(a.Qualifier, b.Qualifier)
	})
	for _, c := range goodRow.Cells {
		if c.Family != layout.DefaultCFFamily {
			f.Add(c.Qualifier, c.Value, c.Qualifier, c.Value, c.Family == layout.CollectionFamily(1))
		}
	}
	f.Fuzz(func(t *testing.T, q1, v1, q2, v2 []byte, inMap bool) {
		fam := layout.CollectionFamily(2)
		if inMap {
			fam = layout.CollectionFamily(1)
		}
		row := store.Row{Key: goodRow.Key, Cells: []store.Cell{
			{Family: fam, Qualifier: q1, Value: v1}, {Family: fam, Qualifier: q2, Value: v2},
			{Family: layout.DefaultCFFamily, Qualifier: []byte{}, Value: []byte{}}}}
		var rd layout.RowDecoder
		rd.Init(l, nil)
		vals := make([]types.Value, len(l.Attrs))
		found, err := rd.DecodeInto("cf", row, vals)
		if err == nil && found {
			// Written back and read again: the same values.
			puts, _, err := l.PutCells(vals)
			if err != nil {
				t.Fatalf("%v decodes, but does not encode: %v", vals, err)
			}
			again := store.Row{Key: row.Key}
			for _, p := range puts {
				again.Cells = append(again.Cells, p.Cell)
			}
			vals2 := make([]types.Value, len(l.Attrs))
			if _, err := rd.DecodeInto("cf", again, vals2); err != nil {
				t.Fatal(err)
			}
			for i := range vals {
				if types.Format(vals[i]) != types.Format(vals2[i]) {
					t.Fatalf("%v reads back as %v", vals, vals2)
				}
			}
		}
		// The same decoder, then a good row: its values alone.
		if _, err := rd.DecodeInto("cf", goodRow, vals); err != nil {
			t.Fatal(err)
		}
		for i := range good {
			if types.Format(vals[i]) != types.Format(good[i]) {
				t.Fatalf("after the fuzzed row, the good row reads %v, want %v", vals, good)
			}
		}
	})
}

// TestDecoderReusedAcrossCollectionLayouts: a decoder (pooled, as the
// executor's are) readied for a layout of one collection and then for one
// of three decodes the second layout's rows whole. It kept the first
// layout's per-collection slots and indexed past them (a Bigtable CI run,
// a union's members sharing a pool).
func TestDecoderReusedAcrossCollectionLayouts(t *testing.T) {
	one, err := layout.Default("one", []layout.Attr{
		{Name: "k", Type: types.BigInt, Key: true, Nullable: true},
		{Name: "a", Type: types.SetOf(types.String), Nullable: true},
	}, 1, 1, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	three, err := layout.Default("three", []layout.Attr{
		{Name: "k", Type: types.BigInt, Key: true, Nullable: true},
		{Name: "a", Type: types.SetOf(types.String), Nullable: true},
		{Name: "b", Type: types.ListOf(types.BigInt), Nullable: true},
		{Name: "c", Type: types.MapOf(types.String, types.BigInt), Nullable: true},
	}, 1, 1, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := func(l *layout.Layout, vals []types.Value) store.Row {
		t.Helper()
		puts, _, err := l.PutCells(vals)
		if err != nil {
			t.Fatal(err)
		}
		r := store.Row{Key: puts[0].Row}
		for _, c := range puts {
			r.Cells = append(r.Cells, store.Cell{Family: c.Family, Qualifier: c.Qualifier, Value: c.Value})
		}
		return r
	}
	var rd layout.RowDecoder
	rd.Init(one, nil)
	got := make([]types.Value, 2)
	if _, err := rd.DecodeInto("one", row(one, []types.Value{int64(1), types.Set{"x"}}), got); err != nil {
		t.Fatal(err)
	}
	rd.Init(three, nil)
	want := []types.Value{int64(2), types.Set{"y"}, types.List{int64(5)}, types.Map{{Key: "m", Val: int64(6)}}}
	got = make([]types.Value, 4)
	if _, err := rd.DecodeInto("three", row(three, want), got); err != nil {
		t.Fatal(err)
	}
	if types.Format(types.List(got)) != types.Format(types.List(want)) {
		t.Fatalf("got %s, want %s", types.Format(types.List(got)), types.Format(types.List(want)))
	}
}
