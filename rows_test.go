package kvschema

import (
	"fmt"
	"testing"

	"github.com/kvschema/kvschema/types"
)

// TestRowsChunks: rows collected across chunks come back in order through
// Next/Values and All, each row its own slice (appending to one does not
// touch the next).
func TestRowsChunks(t *testing.T) {
	for _, width := range []int{1, 2, 3, 4, 5} { // 4 fits Rows.first, 5 does not
		for _, n := range []int{0, 1, 2, 3, 64, 65, 200} {
			cols := make([]string, width)
			r := newRows(cols)
			r.project = make([]int, width)
			for i := range width {
				r.project[i] = width - 1 - i // reversed
			}
			tuple := make([]types.Value, width)
			for i := range n {
				for j := range tuple {
					tuple[j] = fmt.Sprint(i, "/", width-1-j)
				}
				r.addProjected(tuple)
			}
			want := func(i int) []types.Value {
				row := make([]types.Value, width)
				for j := range row {
					row[j] = fmt.Sprint(i, "/", j)
				}
				return row
			}
			if r.Len() != n || len(r.All()) != n {
				t.Fatalf("width %d, %d rows: Len %d, All %d", width, n, r.Len(), len(r.All()))
			}
			if r.Values() != nil {
				t.Fatalf("width %d: Values before Next = %v", width, r.Values())
			}
			for i := 0; r.Next(); i++ {
				if got := r.Values(); fmt.Sprint(got) != fmt.Sprint(want(i)) || cap(got) != width {
					t.Fatalf("width %d, row %d: %v (cap %d), want %v", width, i, got, cap(got), want(i))
				}
				if got := r.All()[i]; fmt.Sprint(got) != fmt.Sprint(want(i)) || cap(got) != width {
					t.Fatalf("width %d, All()[%d] = %v", width, i, got)
				}
			}
			r.Close()
			if r.Len() != 0 || r.Values() != nil || r.All() != nil || r.Next() {
				t.Fatalf("width %d: rows remain after Close", width)
			}
		}
	}
}

// TestValuesCopiesOnlyToConvert: canonical arguments are used in place;
// others are converted in a copy, never in the caller's slice.
func TestValuesCopiesOnlyToConvert(t *testing.T) {
	args := []any{int64(7), "x", nil}
	got, err := values(args)
	if err != nil || &got[0] != &args[0] {
		t.Fatalf("canonical args: %v, copied %v", err, err == nil && &got[0] != &args[0])
	}
	args = []any{int64(7), 8, float32(0.5)}
	got, err = values(args)
	if err != nil {
		t.Fatal(err)
	}
	if got[1] != int64(8) || got[2] != float64(0.5) || args[1] != 8 || args[2] != float32(0.5) {
		t.Fatalf("converted %#v, caller's args now %#v", got, args)
	}
	if _, err := values([]any{int64(1), struct{}{}}); err == nil {
		t.Fatal("unsupported type accepted")
	}
}
