package layout_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/types"
)

// genDefault draws a column family's layout: key attributes of every
// type, values, salt buckets, partition buckets or neither.
func genDefault(rt *rapid.T) *layout.Layout {
	typs := []types.Type{types.Int, types.BigInt, types.Double, types.String, types.Bytes, types.Bool, types.Timestamp}
	nkey := rapid.IntRange(1, 3).Draw(rt, "nkey")
	nhash := rapid.IntRange(1, nkey).Draw(rt, "nhash")
	n := nkey + rapid.IntRange(0, 3).Draw(rt, "nvalues")
	attrs := make([]layout.Attr, n)
	for i := range attrs {
		attrs[i] = layout.Attr{Name: fmt.Sprintf("r.a%d", i), Type: rapid.SampledFrom(typs).Draw(rt, "type"), Key: i < nkey, Nullable: true}
	}
	salt := rapid.SampledFrom([]int{0, 0, 3}).Draw(rt, "salt")
	buckets := 0
	if salt == 0 && nkey > nhash {
		buckets = rapid.SampledFrom([]int{0, 4}).Draw(rt, "buckets")
	}
	l, err := layout.Default("cf", attrs, nhash, nkey, salt, buckets, nil)
	if err != nil {
		rt.Fatal(err)
	}
	return l
}

func genValue(rt *rapid.T, t types.Type, label string) types.Value {
	if rapid.IntRange(0, 5).Draw(rt, label+"null") == 0 {
		return nil
	}
	switch t {
	case types.Int:
		return int64(rapid.Int32().Draw(rt, label))
	case types.BigInt:
		return rapid.Int64().Draw(rt, label)
	case types.Double:
		f := rapid.Float64().Filter(func(f float64) bool { return f == f && f != 0 }).Draw(rt, label)
		return f
	case types.String:
		return rapid.SampledFrom(tricky).Draw(rt, label)
	case types.Bytes:
		return []byte(rapid.SampledFrom(tricky).Draw(rt, label))
	case types.Bool:
		return rapid.Bool().Draw(rt, label)
	}
	return time.UnixMicro(rapid.Int64Range(-1e15, 1e15).Draw(rt, label)).UTC()
}

func genTuple(rt *rapid.T, l *layout.Layout) []types.Value {
	tu := make([]types.Value, len(l.Attrs))
	for i, a := range l.Attrs {
		tu[i] = genValue(rt, a.Type, a.Name)
	}
	return tu
}

// TestDefaultRoundTrip: a column family's cells decode to the tuple; a key
// prefix is a prefix of the row key, which (unsalted) sorts as the key
// values do; updating some cells then reading gives the updated tuple.
func TestDefaultRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		l := genDefault(rt)
		nkey := len(l.KeyIdx)
		tu := genTuple(rt, l)
		puts, _, err := l.PutCells(tu)
		if err != nil {
			rt.Fatal(err)
		}
		got := decodeOne(rt, l, puts)
		if !types.EqualTuples(got, tu) {
			rt.Fatalf("decoded %v, want %v", got, tu)
		}
		key, err := l.RowKey(tu)
		if err != nil {
			rt.Fatal(err)
		}
		for n := 0; n <= nkey; n++ {
			if open := l.OpenSalt(n); (open > 0) != (n > 0 && n < nhashOf(l)) || open > 0 && open != l.SaltBuckets {
				rt.Fatalf("OpenSalt(%d) = %d; the salt hashes %d attributes into %d buckets", n, open, nhashOf(l), l.SaltBuckets)
			}
			if l.SaltBuckets > 0 && n < nhashOf(l) && n > 0 {
				// The prefix in each bucket: the row key's is a prefix of
				// it, the others differ in the bucket byte alone.
				ds := make([]types.Datum, n)
				for i := range ds {
					ds[i], _ = types.DatumOf(tu[i])
				}
				for b := range l.SaltBuckets {
					p, err := l.AppendKeyPrefixDatumsIn(nil, ds, n, b)
					if err != nil {
						rt.Fatal(err)
					}
					if int(p[0]) != b || (b == int(key[0])) != bytes.HasPrefix(key, p) || !bytes.HasPrefix(key[1:], p[1:]) {
						rt.Fatalf("prefix %q in bucket %d of %d attributes; row key %q", p, b, n, key)
					}
				}
				continue
			}
			p, err := l.AppendKeyPrefix(nil, tu, n)
			if err != nil {
				rt.Fatal(err)
			}
			if n == 0 && l.SaltBuckets == 0 && len(p) != 0 {
				rt.Fatalf("prefix of 0 attributes is %q", p)
			}
			if !bytes.HasPrefix(key, p) {
				rt.Fatalf("prefix %q of %d attributes is not a prefix of the row key %q", p, n, key)
			}
			ds := make([]types.Datum, n) // only the prefix's attributes
			for i := range ds {
				ds[i], _ = types.DatumOf(tu[i])
			}
			if pd, err := l.AppendKeyPrefixDatums(nil, ds, n); err != nil || !bytes.Equal(pd, p) {
				rt.Fatalf("prefix of %d attributes from Datums: %q (%v), from Values %q", n, pd, err, p)
			}
		}
		// Another tuple: row keys sort as the key values do.
		other := genTuple(rt, l)
		if l.SaltBuckets == 0 {
			k2, err := l.RowKey(other)
			if err != nil {
				rt.Fatal(err)
			}
			if want := compareKeys(rt, l, tu, other); bytes.Compare(key, k2) != want {
				rt.Fatalf("row keys %q, %q compare %d; key values %v, %v compare %d", key, k2, bytes.Compare(key, k2), tu[:nkey], other[:nkey], want)
			}
		}
		// Update some values in place.
		changed := make([]bool, len(tu))
		next := slices.Clone(tu)
		for i := nkey; i < len(tu); i++ {
			if changed[i] = rapid.Bool().Draw(rt, "change"); changed[i] {
				next[i] = other[i]
			}
		}
		up, del, err := l.UpdateCells(next, changed)
		if err != nil {
			rt.Fatal(err)
		}
		cells := map[string]layout.Cell{}
		for _, c := range puts {
			cells[string(c.Qualifier)] = c
		}
		for _, c := range del {
			delete(cells, string(c.Qualifier))
		}
		for _, c := range up {
			cells[string(c.Qualifier)] = c
		}
		if got := decodeOne(rt, l, slices.Collect(mapValues(cells))); !types.EqualTuples(got, next) {
			rt.Fatalf("after the update: %v, want %v", got, next)
		}
	})
}

func nhashOf(l *layout.Layout) int {
	if l.SaltBuckets == 0 {
		return 0
	}
	return len(l.Row.Elems[0].Body)
}

func mapValues(m map[string]layout.Cell) func(func(layout.Cell) bool) {
	return func(yield func(layout.Cell) bool) {
		for _, c := range m {
			if !yield(c) {
				return
			}
		}
	}
}

func decodeOne(rt *rapid.T, l *layout.Layout, cells []layout.Cell) []types.Value {
	var got []types.Value
	if err := l.DecodeRow(l.StaticTable(), rowOf(cells), func(t []types.Value) bool { got = t; return true }); err != nil {
		rt.Fatal(err)
	}
	if got == nil {
		rt.Fatal("no tuple decoded")
	}
	return got
}

// compareKeys compares the key values of two tuples, NULL first.
func compareKeys(rt *rapid.T, l *layout.Layout, a, b []types.Value) int {
	for _, i := range l.KeyIdx {
		if c := types.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}
