package layout_test

import (
	"bytes"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/types"
)

// TestKeyRangeProperty: a row key lies in KeyRange(prefix, e, bounds)
// exactly when its value at e is not NULL and satisfies every bound, for
// ordered and descending elements, nullable or not, with key elements
// after e, over types whose encodings differ (integers, strings with
// escaped bytes, doubles with NaN, -0 and infinities).
func TestKeyRangeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		typ := rapid.SampledFrom([]types.Type{types.BigInt, types.String, types.Double}).Draw(t, "type")
		enc := rapid.SampledFrom([]string{"ordered", "desc"}).Draw(t, "enc")
		nullable := rapid.Bool().Draw(t, "nullable")
		attrs := []layout.Attr{
			{Name: "k", Type: types.BigInt, Key: true},
			{Name: "c", Type: typ, Key: true, Nullable: nullable},
			{Name: "d", Type: types.BigInt, Key: true},
			{Name: "x", Type: types.String, Nullable: true},
		}
		src := fmt.Sprintf("DEFINE SCHEMA s FOR r { TABLE 't', ROW ordered{k}:%s{c}:ordered{d}, FAMILY 'f', QUALIFIER attr_name['k','c','d'], VALUE attr_value['k','c','d'] }", enc)
		st, err := lang.ParseStatement("test", src)
		if err != nil {
			t.Fatal(err)
		}
		l, err := layout.Compile(attrs, st.(*lang.DefineSchema))
		if err != nil {
			t.Fatal(err)
		}
		value := func(label string) types.Value {
			switch typ {
			case types.BigInt:
				return rapid.OneOf(rapid.Int64Range(-3, 3), rapid.Int64()).Draw(t, label)
			case types.String:
				return rapid.OneOf(rapid.SampledFrom([]string{"", "a", "a\x00", "a\x00b", "b", "\xff"}), rapid.String()).Draw(t, label)
			}
			return rapid.OneOf(rapid.SampledFrom([]float64{0, -1, 1, 2.5}), rapid.Float64()).Draw(t, label)
		}
		var bounds []layout.Bound
		var ops []string
		for i := range rapid.IntRange(0, 3).Draw(t, "bounds") {
			op := rapid.SampledFrom([]string{"<", "<=", ">", ">="}).Draw(t, fmt.Sprintf("op%d", i))
			var v types.Value = value(fmt.Sprintf("bound%d", i))
			if rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("null%d", i)) == 0 {
				v = nil
			}
			bounds = append(bounds, layout.Bound{Value: v, Upper: op[0] == '<', Inclusive: len(op) == 2})
			ops = append(ops, op)
		}
		var v types.Value = value("v")
		if nullable && rapid.IntRange(0, 4).Draw(t, "vnull") == 0 {
			v = nil
		}
		k := rapid.Int64Range(-2, 2).Draw(t, "k")
		d := rapid.Int64().Draw(t, "d")
		prefix, err := l.AppendKeyPrefix(nil, []types.Value{k, v, d, nil}, 1)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := l.RowElem(1)
		r, err := l.KeyRange(prefix, e, bounds)
		if err != nil {
			t.Fatal(err)
		}
		want := v != nil
		for i, b := range bounds {
			if b.Value == nil {
				want = false
				continue
			}
			c := types.Compare(v, b.Value)
			switch ops[i] {
			case "<":
				want = want && c < 0
			case "<=":
				want = want && c <= 0
			case ">":
				want = want && c > 0
			case ">=":
				want = want && c >= 0
			}
		}
		// A row of this key (with each neighbouring k) is in the range
		// exactly when wanted; rows of other partitions never are.
		for dk := int64(-1); dk <= 1; dk++ {
			key, err := l.AppendKeyPrefix(nil, []types.Value{k + dk, v, d, nil}, 3)
			if err != nil {
				t.Fatal(err)
			}
			in := bytes.Compare(key, r.Start) >= 0 && (r.End == nil || bytes.Compare(key, r.End) < 0)
			if in != (want && dk == 0) {
				t.Fatalf("k%+d, value %v, bounds %v %v: in range %v, want %v (range %x – %x, key %x)", dk, v, ops, bounds, in, want && dk == 0, r.Start, r.End, key)
			}
		}
	})
}
