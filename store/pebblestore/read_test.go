package pebblestore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
)

// splitTestKeys returns data keys of every shape (escapes, empty parts),
// their truncations, and keys that are not data keys at all.
func splitTestKeys() [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	part := func() []byte {
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = []byte{0, 1, 2, 0xfe, 0xff, 'a'}[rng.IntN(6)]
		}
		return b
	}
	var keys [][]byte
	for range 300 {
		k := appendEnc(appendEnc([]byte{dataPrefix}, part()), part())
		k = append(append(append(k, "fg"[:1+rng.IntN(2)]...), 0), part()...)
		for n := 0; n <= len(k); n++ {
			keys = append(keys, k[:n:n])
		}
		keys = append(keys, append([]byte{'z'}, part()...), append([]byte{metaPrefix}, part()...), part())
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal)
}

// TestComparer checks Pebble's requirements on Split and
// ImmediateSuccessor (see pebble.Comparer) against bytewise order.
func TestComparer(t *testing.T) {
	keys := splitTestKeys()
	prefix := func(k []byte) []byte { return k[:comparer.Split(k)] }
	var prefixes [][]byte
	for i, a := range keys {
		p := prefix(a)
		if comparer.Split(p) != len(p) {
			t.Fatalf("Split(%q) = %d, want its length", p, comparer.Split(p))
		}
		if len(p) == len(a) {
			prefixes = append(prefixes, p)
		}
		if i > 0 {
			b := keys[i-1] // b < a
			if bytes.Compare(prefix(b), p) > 0 {
				t.Fatalf("%q < %q but prefix %q > prefix %q", b, a, prefix(b), p)
			}
		}
	}
	// Prefix order implies key order, checked on all pairs of a sample.
	for i := 0; i < len(keys); i += 7 {
		for j := 0; j < len(keys); j += 5 {
			a, b := keys[i], keys[j]
			if bytes.Compare(prefix(a), prefix(b)) < 0 && bytes.Compare(a, b) >= 0 {
				t.Fatalf("prefix %q < prefix %q but %q >= %q", prefix(a), prefix(b), a, b)
			}
		}
	}
	for _, p := range prefixes {
		succ := comparer.ImmediateSuccessor(nil, p)
		if comparer.Split(succ) != len(succ) || bytes.Compare(p, succ) >= 0 {
			t.Fatalf("ImmediateSuccessor(%q) = %q: not a greater prefix", p, succ)
		}
		for _, q := range prefixes {
			if bytes.Compare(p, q) < 0 && bytes.Compare(q, succ) < 0 {
				t.Fatalf("prefix %q lies between %q and ImmediateSuccessor %q", q, p, succ)
			}
		}
	}
}

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(context.Background(), store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func set(row, value string) store.Mutation {
	return store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: "f", Value: []byte(value)}
}

// TestCachedIteratorsSeeWrites checks that reads after an Apply see it
// although readers cache iterators, and that Close closes those.
func TestCachedIteratorsSeeWrites(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	read := func() string {
		var got []string
		if r, ok, err := s.ReadRow(ctx, "t", []byte("a\x00")); err != nil {
			t.Fatal(err)
		} else if ok {
			got = append(got, "row:"+string(r.Cells[0].Value))
		}
		for _, rs := range []store.RowSet{{Keys: [][]byte{[]byte("a\x00"), []byte("b")}}, store.All()} {
			if err := s.ReadRows(ctx, "t", rs, store.ReadOptions{}, func(r store.Row) bool {
				got = append(got, string(r.Key)+"="+string(r.Cells[0].Value))
				return true
			}); err != nil {
				t.Fatal(err)
			}
		}
		return fmt.Sprint(got)
	}
	steps := []struct {
		muts []store.Mutation
		want string
	}{
		{nil, "[]"},
		{[]store.Mutation{set("a\x00", "1")}, "[row:1 a\x00=1 a\x00=1]"},
		{[]store.Mutation{set("a\x00", "2"), set("b", "3")}, "[row:2 a\x00=2 b=3 a\x00=2 b=3]"},
		{[]store.Mutation{{Kind: store.DeleteRow, Table: "t", Row: []byte("a\x00")}}, "[b=3 b=3]"},
	}
	for i, st := range steps {
		if len(st.muts) > 0 {
			if err := s.Apply(ctx, st.muts); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // the second time from cached iterators
			if got := read(); got != st.want {
				t.Fatalf("step %d: read %q, want %q", i, got, st.want)
			}
		}
	}
	// Writes made through DB() are seen too, once DB() was called (the
	// value with the header of a table with expiry: never expires).
	if err := s.DB().Set(append(appendEnc(tablePrefix("t"), []byte("c")), "f\x00"...), []byte("\x004"), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), "[b=3 b=3 c=4]"; got != want {
		t.Fatalf("after a direct write: read %q, want %q", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close with spare iterators: %v", err)
	}
}

// TestConcurrentReadAfterWrite checks, under -race, that a read started
// after an Apply returned sees it, with readers shared among goroutines.
func TestConcurrentReadAfterWrite(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	defer s.Close()
	const n = 300
	applied := make(chan int, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(applied)
		for i := range n {
			if err := s.Apply(ctx, []store.Mutation{set(fmt.Sprint(i%7), fmt.Sprint(i))}); err != nil {
				t.Error(err)
				return
			}
			applied <- i
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range applied {
				r, ok, err := s.ReadRow(ctx, "t", []byte(fmt.Sprint(i%7)))
				var v int
				if ok {
					fmt.Sscan(string(r.Cells[0].Value), &v)
				}
				if err != nil || !ok || v < i {
					t.Errorf("after Apply %d: read %d, %v, %v", i, v, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestFlushSweepsSpareIterators checks that a flush closes the iterators
// of spare readers, which would keep the flushed memtable alive.
func TestFlushSweepsSpareIterators(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	defer s.Close()
	if err := s.Apply(ctx, []store.Mutation{set("a", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ReadRow(ctx, "t", []byte("a")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	cached := func() (n int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range s.spare {
			if r.it != nil {
				n++
			}
		}
		return n
	}
	if cached() != 1 {
		t.Fatalf("%d spare iterators after a read, want 1", cached())
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; cached() > 0; i++ {
		if i == 100 {
			t.Fatal("the flush left a spare iterator open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, ok, err := s.ReadRow(ctx, "t", []byte("a")); !ok || err != nil || string(r.Cells[0].Value) != "1" {
		t.Fatal(r, ok, err)
	}
}
