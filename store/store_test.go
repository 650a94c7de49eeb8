package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/store"
)

// TestMergeIndexes: indexes declared again must be on the same cells and
// of the same kind, an element index has no qualifier, and the errors say
// which index and how it differs.
func TestMergeIndexes(t *testing.T) {
	fams := []string{"e", "f"}
	byE := store.IndexSpec{Name: "bye", Family: "e", Elements: true}
	byV := store.IndexSpec{Name: "byv", Family: "f", Qualifier: []byte("v")}
	all, added, err := store.MergeIndexes(fams, nil, []store.IndexSpec{byE, byV})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || len(added) != 2 || !all[0].Elements || all[0].Qualifier == nil || all[1].Elements {
		t.Fatalf("MergeIndexes = %+v, %+v", all, added)
	}
	// Declared again alike: nothing added.
	if again, added, err := store.MergeIndexes(fams, all, []store.IndexSpec{byE, byV}); err != nil || len(again) != 2 || len(added) != 0 {
		t.Fatalf("MergeIndexes of the same indexes = %+v, %+v, %v", again, added, err)
	}
	for _, tc := range []struct {
		add  store.IndexSpec
		want []string // in the error
	}{
		{store.IndexSpec{Name: "bye", Family: "e"}, []string{`"bye"`, "every cell of e", `e:""`}},
		{store.IndexSpec{Name: "bye", Family: "e", Qualifier: []byte("q")}, []string{`"bye"`, "every cell of e", `e:"q"`}},
		{store.IndexSpec{Name: "byv", Family: "f", Elements: true}, []string{`"byv"`, `f:"v"`, "every cell of f"}},
		{store.IndexSpec{Name: "bye", Family: "f", Elements: true}, []string{`"bye"`, "every cell of e", "every cell of f"}},
		{store.IndexSpec{Name: "x", Family: "e", Qualifier: []byte("q"), Elements: true}, []string{`"x"`, "no qualifier", `"q"`}},
		{store.IndexSpec{Name: "x", Family: "g", Elements: true}, []string{`"x"`, `"g"`}},
	} {
		_, _, err := store.MergeIndexes(fams, all, []store.IndexSpec{tc.add})
		if err == nil {
			t.Errorf("MergeIndexes(%+v) succeeded", tc.add)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("MergeIndexes(%+v): %v, want it to say %s", tc.add, err, w)
			}
		}
	}
}

// TestCloneIndexes: clones keep the kind and share no qualifier bytes.
func TestCloneIndexes(t *testing.T) {
	in := []store.IndexSpec{{Name: "bye", Family: "e", Qualifier: []byte{}, Elements: true}, {Name: "byv", Family: "f", Qualifier: []byte("v")}}
	out := store.CloneIndexes(in)
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("CloneIndexes = %+v, want %+v", out, in)
	}
	out[1].Qualifier[0] = 'w'
	if string(in[1].Qualifier) != "v" {
		t.Error("the clone shares its qualifier with the original")
	}
	if store.CloneIndexes(nil) != nil {
		t.Error("CloneIndexes(nil) is not nil")
	}
}

// TestIndexedValues: a single-cell index has the value of its cell, an
// element index the qualifiers of its family's cells (whatever their
// values), and HasValue agrees with them.
func TestIndexedValues(t *testing.T) {
	cells := []store.Cell{
		{Family: "d", Qualifier: []byte("1"), Value: []byte("d1")},
		{Family: "e", Qualifier: []byte(""), Value: []byte("e")},
		{Family: "e", Qualifier: []byte("1"), Value: []byte("e1")},
		{Family: "e", Qualifier: []byte("2"), Value: []byte("e2")},
		{Family: "ee", Qualifier: []byte("3"), Value: []byte("ee3")},
	}
	for _, tc := range []struct {
		ix   store.IndexSpec
		want string
	}{
		{store.IndexSpec{Family: "e", Elements: true}, `["" "1" "2"]`},
		{store.IndexSpec{Family: "ee", Elements: true}, `["3"]`},
		{store.IndexSpec{Family: "f", Elements: true}, `[]`},
		{store.IndexSpec{Family: "e", Qualifier: []byte("1")}, `["e1"]`},
		{store.IndexSpec{Family: "e", Qualifier: []byte("3")}, `[]`},
	} {
		values := tc.ix.AppendIndexedValues([][]byte{[]byte("kept")}, cells)[1:]
		if got := fmt.Sprintf("%q", values); got != tc.want {
			t.Errorf("%+v: AppendIndexedValues = %s, want %s", tc.ix, got, tc.want)
		}
		for _, v := range []string{"", "1", "2", "3", "e1", "e2", "d1"} {
			want := strings.Contains(tc.want, fmt.Sprintf("%q", v))
			if got := tc.ix.HasValue(cells, []byte(v)); got != want {
				t.Errorf("%+v: HasValue(%q) = %v, want %v", tc.ix, v, got, want)
			}
		}
	}
}
