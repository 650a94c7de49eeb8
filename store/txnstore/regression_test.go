package txnstore_test

// Regression tests for the defects a reliability review found in the first
// intent log (writes rolled forward per row version; waiters of a failed
// roll-forward told nothing of the failure). They make no assumption about
// the protocol: faults are injected by row and by the order of the write
// calls that reach that row.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
)

var errRow = errors.New("row unavailable (injected)")

// rowFaults fails the write calls (a row of an Apply, an ApplyIf) that
// reach one row, by their number among the calls reaching it (1-based):
// fail[n] set fails the n-th. With value set, only the calls that would
// write that value count. Rows of an Apply besides the failed one are
// written. block, if set, is called (outside the lock) before a failed
// call returns.
type rowFaults struct {
	txnstore.Inner
	table, key string
	value      string

	mu    sync.Mutex
	n     int
	fail  map[int]bool
	block func()
}

func (f *rowFaults) hit(table string, key []byte, muts ...[]store.Mutation) bool {
	if table != f.table || string(key) != f.key {
		return false
	}
	if f.value != "" {
		writes := false
		for _, ms := range muts {
			for _, m := range ms {
				writes = writes || (m.Kind == store.SetCell && string(m.Value) == f.value)
			}
		}
		if !writes {
			return false
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return f.fail[f.n]
}

func (f *rowFaults) Apply(ctx context.Context, muts []store.Mutation) error {
	var failed bool
	for _, r := range store.GroupByRow(muts) {
		if f.hit(r[0].Table, r[0].Row, r) {
			failed = true
			continue
		}
		if err := f.Inner.Apply(ctx, r); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("%s/%s: %w", f.table, f.key, errRow)
	}
	return nil
}

func (f *rowFaults) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	if f.hit(table, row, then, otherwise) {
		if f.block != nil {
			f.block()
		}
		return false, fmt.Errorf("%s/%s: %w", table, row, errRow)
	}
	return f.Inner.ApplyIf(ctx, table, row, cond, then, otherwise)
}

func calls(ns ...int) map[int]bool {
	m := map[int]bool{}
	for _, n := range ns {
		m[n] = true
	}
	return m
}

// TestPendingThenPartialWrite: a write W0 of t/a and u/x fails at u/x
// (the k-th to k+2-th write calls reaching u/x fail, whatever they are: a
// lock, an apply, a roll-forward), and the client goes on with W1, which
// writes one other cell of u/x. Whatever W0's Apply returned, and once
// anyone has read the rows, t/a and u/x agree about W0: both hold it or
// neither; W0 is in both if Apply returned nil or ErrPending; W1 is in
// u/x. (The first intent log rolled W0 forward per row version: it
// skipped u/x, whose version was W1's, and the copies diverged for good.)
func TestPendingThenPartialWrite(t *testing.T) {
	for k := 1; k <= 4; k++ {
		t.Run(fmt.Sprintf("fail%d-%d", k, k+2), func(t *testing.T) {
			ctx := t.Context()
			raw := memstore.New()
			setup(t, raw) // t/a {q=1}, u/x {q=1, r=1}
			f := &rowFaults{Inner: raw, table: "u", key: "x", fail: calls(k, k+1, k+2)}
			w := txnstore.New(f)
			if _, err := w.Tables(ctx); err != nil {
				t.Fatal(err)
			}
			err0 := w.Apply(ctx, []store.Mutation{set("t", "a", "q", "W0"), set("u", "x", "q", "W0")})
			t.Logf("W0: %v", err0)
			f.mu.Lock()
			f.fail = nil
			f.mu.Unlock()
			if err := w.Apply(ctx, []store.Mutation{set("u", "x", "r", "W1")}); err != nil {
				t.Fatal(err)
			}
			// Another process reads, then the writer's own.
			for _, s := range []*txnstore.Store{txnstore.New(raw), w} {
				checkW0(t, content(t, s), err0)
			}
		})
	}
}

// checkW0 checks the content after W0 (q=W0 on t/a and u/x; Apply
// returned err0) then W1 (r=W1 on u/x): the rows agree about W0, W0 is
// there if Apply said so, and W1 is on top of W0 or of the state before.
func checkW0(t *testing.T, got map[string]string, err0 error) {
	t.Helper()
	inA, inX := got["t/a"] == "f:q=W0", got["u/x"] == "f:q=W0,f:r=W1"
	switch {
	case inA != inX:
		t.Errorf("W0 is in one row and not the other: %v", got)
	case !inA && (err0 == nil || errors.Is(err0, txnstore.ErrPending)):
		t.Errorf("W0 returned %v but is not in the store: %v", err0, got)
	case !inX && got["u/x"] != "f:q=1,f:r=W1":
		t.Errorf("u/x = %q, want W1's cell on the state before W0", got["u/x"])
	}
}

// TestWaiterSeesFailedFinish: W0 is left half applied (t/a holds it, u/x
// not yet). In a reader process whose first write of W0's value to u/x
// fails slowly, two readers read t/a then u/x at the same time: the one that
// finds another's finishing of W0 in progress must not take the failure
// of that finishing for success. Each reader that read t/a with W0 must
// read u/x with W0 too (or fail). (The first intent log returned u/x in
// the state before W0 to the second reader: monotonic reads broken.)
func TestWaiterSeesFailedFinish(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	setup(t, raw)
	// The reader's process, started before W0.
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	rf := &rowFaults{Inner: raw, table: "u", key: "x", value: "W0", fail: calls(1), block: func() {
		entered <- struct{}{}
		<-release
	}}
	r := txnstore.New(rf)
	content(t, r)
	// Every write of W0's value to u/x fails: W0 reaches t/a only.
	f := &rowFaults{Inner: raw, table: "u", key: "x", value: "W0", fail: calls(1, 2, 3, 4, 5, 6, 7, 8)}
	w := txnstore.New(f)
	if _, err := w.Tables(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(ctx, []store.Mutation{set("t", "a", "q", "W0"), set("u", "x", "q", "W0")}); err == nil {
		t.Skip("W0 succeeded: nothing half applied to test") // cannot happen: u/x's later calls fail
	} else {
		t.Logf("W0: %v", err)
	}
	if r, _, _ := raw.ReadRow(ctx, "t", []byte("a")); len(r.Cells) == 0 {
		t.Fatal("t/a is gone")
	}

	type result struct {
		a, x string
		err  error
	}
	read := func() (res result) {
		ra, _, err := r.ReadRow(ctx, "t", []byte("a"))
		if err != nil {
			return result{err: err}
		}
		rx, _, err := r.ReadRow(ctx, "u", []byte("x"))
		if err != nil {
			return result{err: err}
		}
		return result{a: string(ra.Cells[0].Value), x: string(rx.Cells[0].Value)}
	}
	var wg sync.WaitGroup
	results := make([]result, 2)
	wg.Go(func() { results[0] = read() })
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		// The protocol reached u/x without a write call from this reader:
		// release and check what the readers saw all the same.
	}
	wg.Go(func() { results[1] = read() })
	time.Sleep(100 * time.Millisecond) // the second reader meets the first's work
	close(release)
	wg.Wait()
	for i, res := range results {
		t.Logf("reader %d: t/a %q, u/x %q, err %v", i+1, res.a, res.x, res.err)
		if res.err == nil && res.a == "W0" && res.x != "W0" {
			t.Errorf("reader %d read t/a after W0, then u/x before it (%q): monotonic reads broken", i+1, res.x)
		}
	}
	got := content(t, r)
	if got["t/a"] != "f:q=W0" || got["u/x"] != "f:q=W0,f:r=1" {
		t.Errorf("content afterwards: %v; want W0 in both rows", got)
	}
}

// cancelAt cancels the context of the write calls once n of them
// reached the store (the n-th is written first, as an RPC whose reply
// arrives after the client's deadline), then fails every call made with
// a cancelled context, as an RPC client does.
type cancelAt struct {
	txnstore.Inner
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

// step counts a write call; the n-th cancels the context, and is made
// with a context not cancelled (it reaches the store; its reply does not).
func (c *cancelAt) step(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		if c.n--; c.n == 0 {
			c.cancel()
			c.cancel = nil
			return context.WithoutCancel(ctx), nil
		}
	}
	return ctx, nil
}

func (c *cancelAt) Apply(ctx context.Context, muts []store.Mutation) error {
	inner, err := c.step(ctx)
	if err != nil {
		return err
	}
	if err := c.Inner.Apply(inner, muts); err != nil {
		return err
	}
	return ctx.Err()
}

func (c *cancelAt) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	inner, err := c.step(ctx)
	if err != nil {
		return false, err
	}
	ok, err := c.Inner.ApplyIf(inner, table, row, cond, then, otherwise)
	if err != nil {
		return ok, err
	}
	return ok, ctx.Err()
}

func (c *cancelAt) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if err := ctx.Err(); err != nil {
		return store.Row{}, false, err
	}
	return c.Inner.ReadRow(ctx, table, key)
}

// TestCancelledThenUpdate: the client's context ends during a write W0 of
// t/a and u/x, at each of its write calls in turn; the client goes on
// with a fresh context and writes one cell of u/x. Then t/a and u/x agree
// about W0, which is in both if Apply returned nil or ErrPending.
func TestCancelledThenUpdate(t *testing.T) {
	for n := 1; n <= 8; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			raw := memstore.New()
			setup(t, raw)
			c := &cancelAt{Inner: raw}
			w := txnstore.New(c)
			if _, err := w.Tables(t.Context()); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			c.mu.Lock()
			c.n, c.cancel = n, cancel
			c.mu.Unlock()
			err0 := w.Apply(ctx, []store.Mutation{set("t", "a", "q", "W0"), set("u", "x", "q", "W0")})
			t.Logf("W0 with its context cancelled at write call %d: %v", n, err0)
			if err := w.Apply(t.Context(), []store.Mutation{set("u", "x", "r", "W1")}); err != nil {
				t.Fatal(err)
			}
			checkW0(t, content(t, txnstore.New(raw)), err0)
		})
	}
}

// skewed is a clock off by d.
func skewed(d time.Duration) txnstore.Options {
	return txnstore.Options{LockTimeout: 50 * time.Millisecond, Now: func() time.Time { return time.Now().Add(d) }}
}

// TestClockSkew: processes whose clocks disagree by an hour write the same
// rows one after the other, each write of two rows cut short after its
// first row mutation reaching u/x fails (it is then finished by whoever
// meets it); every write lands on both rows, in the order the writes were
// made, and none is lost. (The first intent log ordered writes by each
// process's clock: with 50 ms of skew, a committed write landed on one row
// and not the other, and Apply returned nil.)
func TestClockSkew(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	setup(t, raw)
	ahead := txnstore.New(raw, skewed(time.Hour))
	// A process whose clock runs an hour ahead writes u/x alone.
	if err := ahead.Apply(ctx, []store.Mutation{set("u", "x", "q", "A")}); err != nil {
		t.Fatal(err)
	}
	for i, d := range []time.Duration{0, -time.Hour, time.Hour, 0, -time.Hour} {
		v := fmt.Sprint("B", i)
		// This write's apply of u/x fails (and its retries): it returns
		// ErrPending or nil, and must land on both rows either way.
		f := &rowFaults{Inner: raw, table: "u", key: "x", value: v, fail: calls(1, 2, 3)}
		b := txnstore.New(f, skewed(d))
		err := b.Apply(ctx, []store.Mutation{set("t", "a", "q", v), set("u", "x", "q", v)})
		if err != nil && !errors.Is(err, txnstore.ErrPending) {
			t.Fatalf("write %d: %v", i, err)
		}
		// The next process (another skew) reads.
		got := content(t, txnstore.New(raw, skewed(-d)))
		if got["t/a"] != "f:q="+v || got["u/x"] != "f:q="+v+",f:r=1" {
			t.Fatalf("after write %d (clock %v, Apply = %v): %v; want %s in t/a and u/x", i, d, err, got, v)
		}
	}
}
