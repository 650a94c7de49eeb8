package exec

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Locks are the write locks of one store's writers in one process: striped
// locks on tuple identities (a relation or entity and its encoded key),
// shared by the writes of the client's relations and of the advised
// schema. A writer locks the stripes of the tuples it writes and reads in
// increasing stripe order, so writers cannot deadlock; it may add stripes
// later only with TryLock, or by letting go of all and taking all (All),
// which also serves definitions that must exclude every writer.
//
// The zero Locks is ready to use.
type Locks struct {
	once    sync.Once
	seed    maphash.Seed
	stripes [1024]sync.Mutex
	// released counts the releases of stripes (Unlock); last holds, per
	// stripe, the count at its latest release. A writer that read tuples
	// before locking them need not read them again if none of their
	// stripes was released since it began reading (Unchanged): no writer
	// of this process held one in between.
	released atomic.Uint64
	last     [1024]atomic.Uint64
	// marks numbers the migration markers the writers under these locks
	// make (exec/migrate.go): a random prefix, then a counter.
	marks struct {
		once   sync.Once
		prefix [8]byte
		n      atomic.Uint64
	}
}

// TupleKey identifies one tuple for locking: the name of its relation or
// entity (case-insensitive) and its key, encoded.
type TupleKey struct {
	Rel string
	Key string
}

// Held is the set of stripes a writer holds, in increasing order.
type Held []int

func (l *Locks) stripe(k TupleKey) int {
	return l.Rel(k.Rel).Stripe([]byte(k.Key))
}

// RelStripes maps the keys of one relation's tuples to stripes.
type RelStripes struct {
	seed maphash.Seed
	rel  uint64
}

// Rel returns the stripes of the tuples of rel.
func (l *Locks) Rel(rel string) RelStripes {
	l.once.Do(func() { l.seed = maphash.MakeSeed() })
	return RelStripes{seed: l.seed, rel: maphash.String(l.seed, strings.ToLower(rel))}
}

// Stripe is the stripe of the tuple with encoded key key.
func (r RelStripes) Stripe(key []byte) int {
	const n = uint64(len(Locks{}.stripes))
	return int((maphash.Bytes(r.seed, key) ^ r.rel*0x9e3779b97f4a7c15) % n)
}

// Lock takes the stripes of keys, in increasing order, waiting for them.
// The caller holds no stripe.
func (l *Locks) Lock(keys []TupleKey) Held {
	idx := make([]int, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, l.stripe(k))
	}
	return l.LockStripes(idx)
}

// LockStripes takes stripes (from Stripe; sorted and de-duplicated in
// place), in increasing order, waiting for them. The caller holds no
// stripe.
func (l *Locks) LockStripes(idx []int) Held {
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		l.stripes[i].Lock()
	}
	return idx
}

// TryLock adds the stripes of keys to held without waiting; if one is busy
// it takes none and reports false.
func (l *Locks) TryLock(held Held, keys []TupleKey) (Held, bool) {
	if l.Full(held) {
		return held, true
	}
	var got []int
	for _, k := range keys {
		i := l.stripe(k)
		if slices.Contains(held, i) || slices.Contains(got, i) {
			continue
		}
		if !l.stripes[i].TryLock() {
			l.unlock(got)
			return held, false
		}
		got = append(got, i)
	}
	held = append(held[:len(held):len(held)], got...) // never into a caller's array
	slices.Sort(held)
	return held, true
}

// All takes every stripe, in increasing order. The caller holds no stripe.
// The Held it returns is shared: it must not be modified.
func (l *Locks) All() Held {
	for i := range l.stripes {
		l.stripes[i].Lock()
	}
	return allStripes
}

// allStripes is every stripe index, in order.
var allStripes = func() Held {
	h := make(Held, len(Locks{}.stripes))
	for i := range h {
		h[i] = i
	}
	return h
}()

// Full reports whether h is every stripe (nothing more to lock).
func (l *Locks) Full(h Held) bool { return len(h) == len(l.stripes) }

// Unlock lets go of the stripes held.
func (l *Locks) Unlock(h Held) { l.unlock(h) }

func (l *Locks) unlock(idx []int) {
	if len(idx) == 0 {
		return
	}
	// Stamped before the stripes are let go: whoever takes one next sees
	// its stamp (the mutex orders the two).
	n := l.released.Add(1)
	for _, i := range idx {
		l.last[i].Store(n)
		l.stripes[i].Unlock()
	}
}

// Epoch is the count of releases so far: taken before a read of tuples
// not yet locked, and passed to Unchanged once they are.
func (l *Locks) Epoch() uint64 { return l.released.Load() }

// Unchanged reports whether no stripe of keys was released after epoch
// (from Epoch). The caller holds those stripes: then no writer of this
// process held one after epoch, so none changed those tuples since, and
// what was read of them after Epoch returned is still what is stored.
// (A writer releases after its batch applies: one that applied before
// the read began released before it too, or is counted after epoch and
// makes this report false — which only costs a second read.)
func (l *Locks) Unchanged(epoch uint64, keys []TupleKey) bool {
	for _, k := range keys {
		if l.last[l.stripe(k)].Load() > epoch {
			return false
		}
	}
	return true
}
