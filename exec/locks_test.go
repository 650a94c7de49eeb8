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
