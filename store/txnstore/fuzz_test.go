package txnstore

import (
	"errors"
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
		{Kind: store.DeleteFamily, Table: "t", Row: []byte("c"), Family: "g"},
		{Kind: store.SetCell, Table: "t", Row: []byte("d"), Family: "f", Qualifier: []byte("q"), Value: []byte("v"), Expires: 1 << 50},
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

// TestIntentKinds: the kind bytes of the intent log are fixed — an intent
// written before DeleteFamily existed (kinds 1 to 3) decodes to the same
// mutations, DeleteFamily is 4, a SetCell with Expires is 0x81 followed
// by the instant — and a kind no build knows makes the intent malformed
// instead of being skipped.
func TestIntentKinds(t *testing.T) {
	// Format 2; per mutation: kind, then table, row, family, qualifier
	// and value, each uvarint-length-prefixed.
	old := []byte{intentFormat,
		1, 1, 't', 1, 'a', 1, 'f', 1, 'q', 1, 'v',
		2, 1, 't', 1, 'a', 1, 'f', 1, 'r', 0,
		3, 1, 'u', 1, 'b', 0, 0, 0,
	}
	format, muts, err := decodeIntent(old)
	want := []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("v")},
		{Kind: store.DeleteCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("r")},
		{Kind: store.DeleteRow, Table: "u", Row: []byte("b")},
	}
	if err != nil || format != intentFormat || !reflect.DeepEqual(normalize(muts), want) {
		t.Fatalf("decodeIntent(an intent of kinds 1-3) = %d, %v, %v; want %v", format, muts, err, want)
	}
	df := store.Mutation{Kind: store.DeleteFamily, Table: "t", Row: []byte("a"), Family: "g"}
	enc := encodeIntent([]store.Mutation{df})
	if want := []byte{intentFormat, 4, 1, 't', 1, 'a', 1, 'g', 0, 0}; !reflect.DeepEqual(enc, want) {
		t.Fatalf("encodeIntent(DeleteFamily) = %v, want %v", enc, want)
	}
	if _, muts, err := decodeIntent(enc); err != nil || !reflect.DeepEqual(normalize(muts), []store.Mutation{df}) {
		t.Fatalf("decodeIntent(DeleteFamily) = %v, %v", muts, err)
	}
	// A SetCell with Expires: kind 0x81, its Expires as 8 bytes
	// big-endian, then the parts of a SetCell. One without stays kind 1.
	ex := []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("v"), Expires: 0x0102030405060708},
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("p"), Value: []byte("w")},
	}
	enc = encodeIntent(ex)
	if want := []byte{intentFormat,
		0x81, 1, 2, 3, 4, 5, 6, 7, 8, 1, 't', 1, 'a', 1, 'f', 1, 'q', 1, 'v',
		1, 1, 't', 1, 'a', 1, 'f', 1, 'p', 1, 'w',
	}; !reflect.DeepEqual(enc, want) {
		t.Fatalf("encodeIntent(SetCell with Expires) = %v, want %v", enc, want)
	}
	if _, muts, err := decodeIntent(enc); err != nil || !reflect.DeepEqual(normalize(muts), ex) {
		t.Fatalf("decodeIntent(SetCell with Expires) = %v, %v", muts, err)
	}
	for _, bad := range [][]byte{
		{intentFormat, 0x81, 1, 2, 3},                                         // short expiry
		{intentFormat, 0x81, 0, 0, 0, 0, 0, 0, 0, 0, 1, 't', 1, 'a', 0, 0, 0}, // expiry 0
	} {
		if _, _, err := decodeIntent(bad); !errors.Is(err, errIntent) {
			t.Errorf("decodeIntent(%v) = %v, want errIntent", bad, err)
		}
	}
	for _, kind := range []byte{0, 5, 0x80, 0x82, 0xff} {
		if _, _, err := decodeIntent([]byte{intentFormat, kind, 1, 't', 1, 'a', 0, 0, 0}); !errors.Is(err, errIntent) {
			t.Errorf("decodeIntent(kind %d) = %v, want errIntent", kind, err)
		}
	}
}
