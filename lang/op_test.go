package lang

import "testing"

func TestOpHolds(t *testing.T) {
	want := map[Op][3]bool{ // cmp -1, 0, +1
		OpEq: {false, true, false}, OpNe: {true, false, true},
		OpLt: {true, false, false}, OpLe: {true, true, false},
		OpGt: {false, false, true}, OpGe: {false, true, true},
		OpAnd: {}, OpOr: {},
	}
	for op, w := range want {
		for i, cmp := range []int{-1, 0, 1} {
			if got := op.Holds(cmp); got != w[i] {
				t.Errorf("%v.Holds(%d) = %v", op, cmp, got)
			}
		}
	}
}
