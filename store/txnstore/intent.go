package txnstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/store"
)

// An intent is the list of mutations of one multi-row write, stored as one
// cell: a format byte, then per mutation its kind byte and the
// uvarint-length-prefixed table, row, family, qualifier and value.
//
// The kind byte is the store.MutationKind value: 1 SetCell, 2 DeleteCell,
// 3 DeleteRow, 4 DeleteFamily (whose family is stored, its qualifier and
// value empty). The values never change, so logs written before a kind was
// added decode alike; a kind this build does not know makes the intent
// malformed. DeleteFamily came later than the format: a build from before
// it refuses an intent holding one, rather than misapply it.
//
// A SetCell with Mutation.Expires has the kind byte 0x81 (kindSetExpires,
// never a store.MutationKind: those count up from 1), then its Expires as
// 8 bytes big-endian, then its parts as any SetCell; a SetCell without
// Expires is written as before, so intents of writes without expiry are
// byte for byte those of earlier builds, which refuse one with expiry as
// malformed rather than write the cell for ever.
//
// Format 2 holds the caller's mutations only; the intent row's status cell
// says whether the write is prepared or committed. Format 1 (written by
// kvschema before row locks) holds the mutations expanded with that
// protocol's bookkeeping cells and has no status cell: such an intent is
// committed (see finishLegacy).
const (
	legacyFormat = 1
	intentFormat = 2
)

// kindSetExpires is the kind byte of a SetCell with Expires.
const kindSetExpires = 0x80 | byte(store.SetCell)

func encodeIntent(muts []store.Mutation) []byte {
	return appendIntent([]byte{intentFormat}, muts)
}

func appendIntent(out []byte, muts []store.Mutation) []byte {
	for _, m := range muts {
		if m.Kind == store.SetCell && m.Expires != 0 {
			out = append(out, kindSetExpires)
			out = binary.BigEndian.AppendUint64(out, uint64(m.Expires))
		} else {
			out = append(out, byte(m.Kind))
		}
		for _, b := range [][]byte{[]byte(m.Table), m.Row, []byte(m.Family), m.Qualifier, m.Value} {
			out = binary.AppendUvarint(out, uint64(len(b)))
			out = append(out, b...)
		}
	}
	return out
}

var errIntent = errors.New("malformed intent")

// decodeIntent returns an intent's format and mutations.
func decodeIntent(b []byte) (format byte, muts []store.Mutation, err error) {
	if len(b) == 0 || (b[0] != intentFormat && b[0] != legacyFormat) {
		return 0, nil, fmt.Errorf("%w: unknown format", errIntent)
	}
	format, b = b[0], b[1:]
	for len(b) > 0 {
		m := store.Mutation{Kind: store.MutationKind(b[0])}
		if b[0] == kindSetExpires {
			if len(b) < 9 {
				return 0, nil, fmt.Errorf("%w: mutation %d: short expiry", errIntent, len(muts))
			}
			m.Kind, m.Expires = store.SetCell, int64(binary.BigEndian.Uint64(b[1:9]))
			if m.Expires == 0 {
				return 0, nil, fmt.Errorf("%w: mutation %d: expiry 0", errIntent, len(muts))
			}
			b = b[8:]
		} else if !m.Kind.Valid() {
			return 0, nil, fmt.Errorf("%w: mutation %d: kind %d", errIntent, len(muts), b[0])
		}
		b = b[1:]
		var parts [5][]byte
		for i := range parts {
			n, w := binary.Uvarint(b)
			if w <= 0 || n > uint64(len(b)-w) {
				return 0, nil, fmt.Errorf("%w: mutation %d: bad length", errIntent, len(muts))
			}
			parts[i] = b[w : w+int(n) : w+int(n)]
			b = b[w+int(n):]
		}
		m.Table, m.Row, m.Family, m.Qualifier, m.Value = string(parts[0]), parts[1], string(parts[2]), parts[3], parts[4]
		if m.Table == "" {
			return 0, nil, fmt.Errorf("%w: mutation %d: no table", errIntent, len(muts))
		}
		muts = append(muts, m)
	}
	return format, muts, nil
}
