package rttstore_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/rttstore"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	for _, rtt := range []time.Duration{0, 200 * time.Microsecond} {
		t.Run(rtt.String(), func(t *testing.T) {
			if rtt > 0 {
				fewerModelChecks(t)
			}
			storetest.Run(t, func(*testing.T) store.Store { return rttstore.New(memstore.New(), rtt) })
		})
	}
}

// A ConditionalStore keeps its store's conditional mutations, each a
// round trip, so it can go under an intent log.
func TestConditional(t *testing.T) {
	storetest.RunConditional(t, func(*testing.T) store.Store { return rttstore.NewConditional(memstore.New(), time.Microsecond) })
	s := rttstore.NewConditional(memstore.New(), 0)
	ctx := context.Background()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	before := s.RoundTrips()
	if _, err := s.ApplyIf(ctx, "t", []byte("r"), store.Cond{Family: "f", Qualifier: []byte("q")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := s.RoundTrips() - before; n != 1 {
		t.Errorf("ApplyIf took %d round trips, want 1", n)
	}
}

// fewerModelChecks runs a tenth of rapid's checks until t ends, unless
// their number was chosen (-rapid.checks or RAPID_CHECKS). Go timers wake
// in whole milliseconds when the process is idle (see the package doc), so
// each of the model test's thousands of delayed calls takes about 1ms.
func fewerModelChecks(t *testing.T) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		return
	}
	chosen := false
	flag.Visit(func(g *flag.Flag) { chosen = chosen || g == f })
	if _, env := os.LookupEnv("RAPID_CHECKS"); chosen || env {
		return
	}
	old := f.Value.String()
	n, err := strconv.Atoi(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Value.Set(strconv.Itoa(max(n/10, 1))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}

func TestSnapshot(t *testing.T) {
	storetest.RunSnapshot(t, func(*testing.T) store.Store {
		return rttstore.New(memstore.New(), 100*time.Microsecond)
	})
}

// noSnapshots is a store that is no store.Snapshotter.
type noSnapshots struct{ store.Store }

func TestSnapshotUnsupported(t *testing.T) {
	s := rttstore.New(noSnapshots{memstore.New()}, 0)
	if _, err := s.Snapshot(t.Context()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Snapshot of a store without snapshots: err = %v, want errors.ErrUnsupported", err)
	}
}

// calls are the round trips of store.Store, on a table t with family f.
var calls = []struct {
	name string
	call func(context.Context, store.Store) error
}{
	{"CreateTable", func(ctx context.Context, s store.Store) error {
		return s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}})
	}},
	{"Tables", func(ctx context.Context, s store.Store) error {
		_, err := s.Tables(ctx)
		return err
	}},
	{"ReadRow", func(ctx context.Context, s store.Store) error {
		_, _, err := s.ReadRow(ctx, "t", []byte("r"))
		return err
	}},
	{"ReadRows", func(ctx context.Context, s store.Store) error {
		return s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	}},
	{"Apply", func(ctx context.Context, s store.Store) error {
		return s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r"), Family: "f", Value: []byte("v")}})
	}},
	{"ReadIndex", func(ctx context.Context, s store.Store) error {
		return store.ReadIndex(ctx, s, "t", "byf", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	}},
}

// newCounted returns an rttstore over a countstore over a memstore with
// table t.
func newCounted(t *testing.T, rtt time.Duration) (*rttstore.Store, *countstore.Store) {
	counts := countstore.New(memstore.New())
	if err := counts.CreateTable(t.Context(), store.TableSpec{Name: "t", Families: []string{"f"}, Indexes: []store.IndexSpec{{Name: "byf", Family: "f"}}}); err != nil {
		t.Fatal(err)
	}
	counts.Reset()
	return rttstore.New(counts, rtt), counts
}

// TestCancelDuringDelay checks that a call cancelled while it waits
// returns promptly, without reaching the inner store.
func TestCancelDuringDelay(t *testing.T) {
	const rtt = 20 * time.Millisecond
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			s, counts := newCounted(t, rtt)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			time.AfterFunc(time.Millisecond, cancel)
			start := time.Now()
			err := c.call(ctx, s)
			elapsed := time.Since(start)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if elapsed >= 15*time.Millisecond {
				t.Errorf("returned after %v, want well before the rtt of %v", elapsed, rtt)
			}
			if st := counts.Stats(); st.RoundTrips != 0 {
				t.Errorf("inner store reached: %v", st)
			}
			if n := s.RoundTrips(); n != 1 {
				t.Errorf("RoundTrips = %d, want 1 (counted when it starts)", n)
			}
		})
	}
}

func TestCancelledBefore(t *testing.T) {
	for _, rtt := range []time.Duration{0, time.Hour} {
		s, counts := newCounted(t, rtt)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for _, c := range calls {
			if err := c.call(ctx, s); !errors.Is(err, context.Canceled) {
				t.Errorf("rtt %v: %s with a cancelled ctx: err = %v, want context.Canceled", rtt, c.name, err)
			}
		}
		// With no delay, the call goes through, to fail in the inner store.
		if st := counts.Stats(); rtt != 0 && st.RoundTrips != 0 {
			t.Errorf("rtt %v: inner store reached: %v", rtt, st)
		}
	}
}

// TestDelayAndCount checks that every round trip waits at least rtt, once,
// and is counted, and that Capabilities and Close are no round trips.
func TestDelayAndCount(t *testing.T) {
	const rtt = 2 * time.Millisecond
	s, counts := newCounted(t, rtt)
	if s.Delay() != rtt {
		t.Errorf("Delay() = %v, want %v", s.Delay(), rtt)
	}
	var total time.Duration
	for i, c := range calls {
		start := time.Now()
		if err := c.call(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		elapsed := time.Since(start)
		total += elapsed
		if elapsed < rtt {
			t.Errorf("%s took %v, less than the rtt of %v", c.name, elapsed, rtt)
		}
		// Waited counts the realized waits: at least rtt each, and never
		// more than the calls took.
		if w := s.Waited(); w < time.Duration(i+1)*rtt || w > total {
			t.Errorf("after %s: Waited = %v, want between %v and %v", c.name, w, time.Duration(i+1)*rtt, total)
		}
		if n := s.RoundTrips(); n != int64(i+1) {
			t.Errorf("after %s: RoundTrips = %d, want %d", c.name, n, i+1)
		}
	}
	s.Capabilities()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.RoundTrips(); n != int64(len(calls)) {
		t.Errorf("after Capabilities and Close: RoundTrips = %d, want %d", n, len(calls))
	}
	if got, want := counts.Stats().RoundTrips, int64(len(calls)); got != want {
		t.Errorf("inner store saw %d round trips, want %d", got, want)
	}
}

// TestZeroDelay checks that rtt 0 counts round trips and forwards them.
func TestZeroDelay(t *testing.T) {
	s, counts := newCounted(t, 0)
	for _, c := range calls {
		if err := c.call(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	if n, inner := s.RoundTrips(), counts.Stats().RoundTrips; n != int64(len(calls)) || inner != n {
		t.Errorf("RoundTrips = %d, inner store saw %d; want %d", n, inner, len(calls))
	}
}

func TestIndexer(t *testing.T) {
	storetest.RunIndexer(t, func(*testing.T) store.Store { return rttstore.New(memstore.New(), time.Microsecond) })
	type plain struct{ store.Store }
	err := rttstore.New(plain{memstore.New()}, 0).ReadIndex(t.Context(), "t", "i", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ReadIndex over a store without it: %v", err)
	}
}

func TestGuarded(t *testing.T) {
	storetest.RunGuarded(t, func(*testing.T) []store.Store { return []store.Store{rttstore.New(memstore.New(), time.Microsecond)} })
}

// ApplyRows is a round trip reaching the inner store's.
func TestApplyRows(t *testing.T) {
	ctx := context.Background()
	inner := &storetest.RowWriter{Store: memstore.New()}
	s := rttstore.New(inner, 0)
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	before := s.RoundTrips()
	if err := store.ApplyRows(ctx, s, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r"), Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if n := s.RoundTrips() - before; n != 1 || inner.Calls != 1 {
		t.Errorf("%d round trips, %d inner ApplyRows calls; want 1 and 1", n, inner.Calls)
	}
}
