package exec

import (
	"sync"
	"testing"
	"time"
)

// TestLocks: a held stripe excludes other lockers of the same tuple (names
// fold case), TryLock never waits, All excludes every locker, and writers
// locking overlapping sets in any order all finish.
func TestLocks(t *testing.T) {
	var l Locks
	a := TupleKey{Rel: "Acct", Key: "k1"}
	if l.stripe(a) != l.stripe(TupleKey{Rel: "acct", Key: "k1"}) {
		t.Fatal("relation names that differ in case lock different stripes")
	}
	held := l.Lock([]TupleKey{a})
	got := make(chan bool)
	go func() {
		h := l.Lock([]TupleKey{{Rel: "ACCT", Key: "k1"}})
		l.Unlock(h)
		got <- true
	}()
	select {
	case <-got:
		t.Fatal("a second writer locked a held tuple")
	case <-time.After(20 * time.Millisecond):
	}
	if _, ok := l.TryLock(nil, []TupleKey{a}); ok {
		t.Fatal("TryLock took a held stripe")
	}
	l.Unlock(held)
	<-got

	all := l.All()
	if !l.Full(all) {
		t.Fatal("All does not hold every stripe")
	}
	go func() {
		h := l.Lock([]TupleKey{{Rel: "x", Key: "anything"}})
		l.Unlock(h)
		got <- true
	}()
	select {
	case <-got:
		t.Fatal("a writer ran while All was held")
	case <-time.After(20 * time.Millisecond):
	}
	l.Unlock(all)
	<-got

	// Overlapping sets, growing by TryLock or falling back to All: no
	// deadlock.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				first := []TupleKey{{Rel: "r", Key: string(rune('a' + (w+i)%13))}}
				more := []TupleKey{{Rel: "r", Key: string(rune('a' + (w*3+i)%13))}, {Rel: "s", Key: "z"}}
				h := l.Lock(first)
				h2, ok := l.TryLock(h, more)
				if !ok {
					l.Unlock(h)
					h2 = l.All()
				}
				l.Unlock(h2)
			}
		}()
	}
	wg.Wait()
}

// Unchanged tells whether a stripe was let go since an epoch: a tuple read
// before its lock was taken is still as read only if no writer held it in
// between.
func TestLocksUnchanged(t *testing.T) {
	var l Locks
	a, b := TupleKey{Rel: "r", Key: "a"}, TupleKey{Rel: "r", Key: "b"}
	for l.stripe(b) == l.stripe(a) {
		b.Key += "x"
	}
	held := l.Lock([]TupleKey{a}) // a writer holding a since before the epoch
	epoch := l.Epoch()
	done := make(chan struct{})
	go func() { // another writer, of b, between the read and the lock
		h := l.Lock([]TupleKey{b})
		l.Unlock(h)
		close(done)
	}()
	<-done
	if !l.Unchanged(epoch, []TupleKey{a}) {
		t.Error("a, held throughout, reported changed")
	}
	if l.Unchanged(epoch, []TupleKey{a, b}) {
		t.Error("b, held and let go after the epoch, reported unchanged")
	}
	l.Unlock(held)
	if l.Unchanged(epoch, []TupleKey{a}) {
		t.Error("a, let go after the epoch, reported unchanged")
	}
	if !l.Unchanged(l.Epoch(), []TupleKey{a, b}) {
		t.Error("nothing let go since the epoch, reported changed")
	}
	all := l.All()
	l.Unlock(all)
	if l.Unchanged(epoch+2, []TupleKey{b}) {
		t.Error("every stripe let go: b reported unchanged")
	}
}
