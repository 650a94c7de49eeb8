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
	for _, width := range []int{1, 2, 3} {
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
