package txnstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/store"
)

// An intent is the list of mutations of one multi-row write, every one of
// them already expanded with the write's bookkeeping cells. It is stored as
// one cell: a format byte, then per mutation its kind byte and the
// uvarint-length-prefixed table, row, family, qualifier and value.
const intentFormat = 1

func encodeIntent(muts []store.Mutation) []byte {
	out := []byte{intentFormat}
	for _, m := range muts {
		out = append(out, byte(m.Kind))
		for _, b := range [][]byte{[]byte(m.Table), m.Row, []byte(m.Family), m.Qualifier, m.Value} {
			out = binary.AppendUvarint(out, uint64(len(b)))
			out = append(out, b...)
		}
	}
	return out
}

var errIntent = errors.New("malformed intent")

func decodeIntent(b []byte) ([]store.Mutation, error) {
	if len(b) == 0 || b[0] != intentFormat {
		return nil, fmt.Errorf("%w: unknown format", errIntent)
	}
	b = b[1:]
	var out []store.Mutation
	for len(b) > 0 {
		m := store.Mutation{Kind: store.MutationKind(b[0])}
		if m.Kind < store.SetCell || m.Kind > store.DeleteRow {
			return nil, fmt.Errorf("%w: mutation %d: kind %d", errIntent, len(out), b[0])
		}
		b = b[1:]
		var parts [5][]byte
		for i := range parts {
			n, w := binary.Uvarint(b)
			if w <= 0 || n > uint64(len(b)-w) {
				return nil, fmt.Errorf("%w: mutation %d: bad length", errIntent, len(out))
			}
			parts[i] = b[w : w+int(n) : w+int(n)]
			b = b[w+int(n):]
		}
		m.Table, m.Row, m.Family, m.Qualifier, m.Value = string(parts[0]), parts[1], string(parts[2]), parts[3], parts[4]
		if m.Table == "" {
			return nil, fmt.Errorf("%w: mutation %d: no table", errIntent, len(out))
		}
		out = append(out, m)
	}
	return out, nil
}
