package observe

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store/memstore"
)

func TestShape(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT users.nick FROM users WHERE users.id = 7", "SELECT users.nick FROM users WHERE users.id = ?"},
		{"SELECT users.nick FROM users WHERE users.id = ? LIMIT 5", "SELECT users.nick FROM users WHERE users.id = ? LIMIT 5"},
		{"UPDATE users SET nick = 'x' WHERE users.id = 1", "UPDATE users SET nick = ? WHERE users.id = ?"},
		{"INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT INTO kv VALUES (?, ?)"},
		{"EXPLAIN SELECT users.nick FROM users WHERE users.id = 7", ""},
	} {
		st, err := lang.ParseStatement("t", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		before := lang.Print(st)
		got, ok := Shape(st)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: shape %q (%v), want %q", tc.src, got, ok, tc.want)
		}
		if lang.Print(st) != before {
			t.Errorf("%s: Shape changed the statement to %s", tc.src, lang.Print(st))
		}
	}
}

// TestCountersShareAStore: two counters (two processes) flush to one
// store; Read adds their totals per shape, a shape too long for a row key
// included; flushing again writes totals, never adds twice.
func TestCountersShareAStore(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	long := "SELECT a FROM t WHERE t.b = ? AND " + strings.Repeat("t.c = ? AND ", 200) + "t.d = ?"
	a, b := New(st), New(st)
	for i := 0; i < 3; i++ {
		a.Count(a.For("q1"), 1)
	}
	a.Count(a.For(long), 2)
	b.Count(b.For("q1"), 4)
	b.Count(b.For("q2"), 1)
	for _, c := range []*Counter{a, b, a} {
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := Read(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"q1", 7}, {long, 2}, {"q2", 1}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entry %d: %q %d, want %q %d", i, got[i].Shape[:min(20, len(got[i].Shape))], got[i].Count, want[i].Shape[:min(20, len(want[i].Shape))], want[i].Count)
		}
	}
	if none, err := Read(ctx, memstore.New()); err != nil || none != nil {
		t.Fatalf("an empty store: %v, %v", none, err)
	}
}

// TestCountWhileFlushing: counts from many goroutines while flushes run
// (and FlushEvery's background flushes, forced by an old last flush) add
// up exactly once closed.
func TestCountWhileFlushing(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	c := New(st)
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := c.For(fmt.Sprint("q", w%3))
			for i := 0; i < each; i++ {
				if i%100 == 0 {
					c.last.Store(0) // due: the next Count starts a flush
				}
				c.Count(n, 1)
				if i%250 == 0 {
					if err := c.Flush(ctx); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := Read(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, e := range got {
		total += e.Count
	}
	if len(got) != 3 || total != workers*each {
		t.Fatalf("%v: %d runs, want %d", got, total, workers*each)
	}
}
