package txnstore

import (
	"reflect"
	"testing"

	"github.com/kvschema/kvschema/store"
)

// FuzzDecodeIntent: decoding never panics, and what it accepts encodes
// back to an intent that decodes to the same mutations.
func FuzzDecodeIntent(f *testing.F) {
	f.Add(encodeIntent([]store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("v")},
		{Kind: store.DeleteCell, Table: "u", Row: []byte{0, 1}, Family: "f", Qualifier: []byte("q")},
		{Kind: store.DeleteRow, Table: "t", Row: []byte("b")},
	}))
	f.Add([]byte{legacyFormat})
	f.Add([]byte{intentFormat, 1, 1})
	f.Add([]byte{9})
	f.Fuzz(func(t *testing.T, b []byte) {
		format, muts, err := decodeIntent(b)
		if err != nil {
			return
		}
		again, muts2, err := decodeIntent(appendIntent([]byte{format}, muts))
		if err != nil || again != format || !reflect.DeepEqual(normalize(muts), normalize(muts2)) {
			t.Fatalf("re-encoded intent decodes to %d %v, %v; want %d %v", again, muts2, err, format, muts)
		}
	})
}

// normalize makes empty and nil byte slices alike.
func normalize(muts []store.Mutation) []store.Mutation {
	out := make([]store.Mutation, len(muts))
	for i, m := range muts {
		for _, b := range []*[]byte{&m.Row, &m.Qualifier, &m.Value} {
			if len(*b) == 0 {
				*b = nil
			}
		}
		out[i] = m
	}
	return out
}
