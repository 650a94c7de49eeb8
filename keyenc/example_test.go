package keyenc_test

import (
	"fmt"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// A composite row key (name ASC, score DESC) is the concatenation of the
// columns' encodings; it sorts like the tuples and decodes column by column.
func Example() {
	key, _ := keyenc.AppendOrdered(nil, types.String, "a\x00b", false)
	key, _ = keyenc.AppendDesc(key, types.Int, int64(7), true)
	fmt.Printf("% X\n", key)

	name, n, _ := keyenc.DecodeOrdered(types.String, key, false)
	score, _, _ := keyenc.DecodeDesc(types.Int, key[n:], true)
	fmt.Printf("%q %d\n", name, score)
	// Output:
	// 61 00 FF 62 00 01 FE 7F FF FF F8
	// "a\x00b" 7
}
