package lang

import (
	"bytes"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// equalOptions make cmp compare ASTs structurally, ignoring positions. A nil
// and an empty []byte are the same constant (an empty literal parses to an
// empty slice, a hand-built AST may say nil); time.Time values compare with
// their Equal method, which cmp uses by default.
var equalOptions = cmp.Options{
	cmpopts.IgnoreTypes(Pos{}),
	cmp.Comparer(bytes.Equal),
}

// EqualIgnoringPos reports whether a and b are the same AST (statements,
// expressions, elements, or slices of them) apart from positions.
func EqualIgnoringPos(a, b any) bool {
	return cmp.Equal(a, b, equalOptions)
}
