package lang

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Shorthands for building expected ASTs; positions are left zero because
// comparisons ignore them.

func col(name string) *ColumnRef { return &ColumnRef{Name: name} }

// cols is a select list of unqualified columns.
func cols(names ...string) []ColumnRef {
	cs := make([]ColumnRef, len(names))
	for i, n := range names {
		cs[i] = ColumnRef{Name: n}
	}
	return cs
}
func lit(v any) *Literal           { return &Literal{Value: v} }
func prm(i int) *Param             { return &Param{Index: i} }
func bin(op Op, l, r Expr) *Binary { return &Binary{Op: op, L: l, R: r} }
func and(l, r Expr) *Binary        { return bin(OpAnd, l, r) }
func or(l, r Expr) *Binary         { return bin(OpOr, l, r) }
func eq(l, r Expr) *Binary         { return bin(OpEq, l, r) }
func not(x Expr) *Not              { return &Not{X: x} }
func ref(name string) *AttrRef     { return &AttrRef{Name: name} }
func cnst(s string) *Const         { return &Const{Value: []byte(s)} }

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return t
}

// diffIgnoringPos describes how two ASTs differ, for test failures.
func diffIgnoringPos(a, b any) string {
	return cmp.Diff(a, b, equalOptions)
}

// roundTrip checks that printing s and parsing the text gives s back, and
// returns the text.
func roundTrip(t testing.TB, s Statement) string {
	t.Helper()
	text := Print(s)
	again, err := ParseStatement("print", text)
	if err != nil {
		t.Fatalf("reparse of printed statement failed: %v\n%s", err, text)
	}
	if !EqualIgnoringPos(s, again) {
		t.Fatalf("reparse differs (-original +reparsed):\n%s\ntext:\n%s", diffIgnoringPos(s, again), text)
	}
	return text
}
