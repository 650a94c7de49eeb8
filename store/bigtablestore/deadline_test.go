package bigtablestore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
)

// hang bounds how long a call may take before the test calls it hung: far
// above the limits the tests configure (1s–2s), so only a call that does
// not end by itself reaches it.
const hang = 20 * time.Second

// within runs f and fails the test if it has not returned after hang.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatalf("%s did not return within %v: it hangs", what, hang)
	}
}

// closedPort returns 127.0.0.1:PORT where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// blackhole listens, accepts connections and never answers: a server that
// is up at the TCP level but does not respond (or a dropped network path
// after the handshake).
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// freezingProxy forwards TCP connections to target until freeze is
// called; from then on it forwards nothing either way and answers nothing,
// keeping the connections open: the server has stopped answering mid-run.
type freezingProxy struct {
	addr   string
	frozen atomic.Bool
}

func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{addr: l.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if err != nil {
				return
			}
			if p.frozen.Load() {
				continue // dropped
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			keep(c)
			if p.frozen.Load() {
				go io.Copy(io.Discard, c)
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			keep(up)
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return p
}

func (p *freezingProxy) freeze() { p.frozen.Store(true) }

// TestOpenUnreachable: opening a store whose endpoint does not answer fails
// at once, saying so, instead of succeeding and hanging at the first call.
func TestOpenUnreachable(t *testing.T) {
	for _, c := range []struct {
		name string
		addr string
		o    bigtablestore.Options
	}{
		// Connection refused: the default limits.
		{name: "refused", addr: closedPort(t)},
		// Accepted, never answered: ConnectTimeout ends it.
		{name: "blackhole", addr: blackhole(t), o: bigtablestore.Options{ConnectTimeout: 2 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Project, o.Instance, o.Emulator = "p", "i", c.addr
			var s *bigtablestore.Store
			var err error
			within(t, "Open", func() { s, err = bigtablestore.Open(t.Context(), o) })
			if err == nil {
				s.Close()
				t.Fatalf("Open(%s) succeeded with nothing answering there", c.addr)
			}
			want := fmt.Sprintf("cannot reach Bigtable at %s (", c.addr)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Open: %v\nwant the message to start with %q", err, want)
			}
			if !errors.Is(err, bigtablestore.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Open: %v is not ErrUnreachable and context.DeadlineExceeded", err)
			}
			t.Log(err)
		})
	}
}

// stoppedServer is a store whose server answered while the test set up a
// table of three rows, and then stopped answering (stop).
type stoppedServer struct {
	s        *bigtablestore.Store
	endpoint string
	stop     func()
}

// opCalls are the store calls that must fail in time once the server
// stopped answering; each returns the call's error.
func opCalls(s *bigtablestore.Store) []struct {
	name, op string
	f        func(ctx context.Context) error
} {
	return []struct {
		name, op string
		f        func(ctx context.Context) error
	}{
		{"ReadRow", "read t", func(ctx context.Context) error {
			_, _, err := s.ReadRow(ctx, "t", []byte("a"))
			return err
		}},
		{"ReadRows", "read t", func(ctx context.Context) error {
			return s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
		}},
		{"Apply", "write t", func(ctx context.Context) error {
			return s.Apply(ctx, []store.Mutation{
				{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("2")},
				{Kind: store.SetCell, Table: "t", Row: []byte("d"), Family: "f", Qualifier: []byte("q"), Value: []byte("2")},
			})
		}},
		{"ApplyIf", "conditional write t", func(ctx context.Context) error {
			_, err := s.ApplyIf(ctx, "t", []byte("a"), store.Cond{Family: "f", Qualifier: []byte("q"), Min: []byte("1")},
				[]store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("3")}}, nil)
			return err
		}},
		{"CreateTable", "table info u", func(ctx context.Context) error {
			return s.CreateTable(ctx, store.TableSpec{Name: "u", Families: []string{"f"}})
		}},
		{"Tables", "list tables", func(ctx context.Context) error {
			_, err := s.Tables(ctx)
			return err
		}},
	}
}

func setUp(t *testing.T, s *bigtablestore.Store) {
	t.Helper()
	ctx := t.Context()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}, Splits: [][]byte{[]byte("b")}}); err != nil {
		t.Fatal(err)
	}
	var muts []store.Mutation
	for _, k := range []string{"a", "b", "c"} {
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(k), Family: "f", Qualifier: []byte("q"), Value: []byte("1")})
	}
	if err := s.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tables(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestServerStopsAnswering: once the server stops answering, every call
// returns, within its timeout, an error naming the operation, the table
// and the endpoint, instead of waiting forever.
func TestServerStopsAnswering(t *testing.T) {
	const limit = time.Second
	limits := bigtablestore.Options{Timeout: limit, AdminTimeout: limit}
	for _, c := range []struct {
		name string
		// lastErr is a part of the last attempt's error the message must
		// report ("" if the attempts never end by themselves).
		lastErr string
		// notRetried are the calls the client library does not retry
		// (not idempotent): they fail at once, UNAVAILABLE.
		notRetried map[string]bool
		start      func(t *testing.T) stoppedServer
	}{
		{
			// The realistic blackhole: connections stay open, nothing comes back.
			name: "blackhole",
			start: func(t *testing.T) stoppedServer {
				addr, err := bttestserver.Addr()
				if err != nil {
					t.Fatal(err)
				}
				p := newFreezingProxy(t, addr)
				o := limits
				o.Project, o.Instance, o.Emulator = "test", bttestserver.Instance(), p.addr
				s, err := bigtablestore.Open(t.Context(), o)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return stoppedServer{s: s, endpoint: p.addr, stop: p.freeze}
			},
		},
		{
			// The server process ended: every attempt is refused, and the
			// client library retries them.
			name:       "server closed",
			lastErr:    "Unavailable",
			notRetried: map[string]bool{"ApplyIf": true},
			start: func(t *testing.T) stoppedServer {
				srv, err := bttest.NewServer("127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				o := limits
				o.Project, o.Instance, o.Emulator = "test", "i", srv.Addr
				s, err := bigtablestore.Open(t.Context(), o)
				if err != nil {
					srv.Close()
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return stoppedServer{s: s, endpoint: srv.Addr, stop: srv.Close}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := c.start(t)
			setUp(t, srv.s)
			srv.stop()
			for _, call := range opCalls(srv.s) {
				t.Run(call.name, func(t *testing.T) {
					var err error
					within(t, call.name, func() { err = call.f(t.Context()) })
					if err == nil {
						t.Fatalf("%s succeeded with the server stopped", call.name)
					}
					msg := err.Error()
					if c.notRetried[call.name] {
						want := fmt.Sprintf("bigtable: %s at %s: ", call.op, srv.endpoint)
						if !strings.HasPrefix(msg, want) || status.Code(err) != codes.Unavailable {
							t.Errorf("%s: %q\nwant UNAVAILABLE, starting with %q", call.name, msg, want)
						}
						return
					}
					var te *bigtablestore.TimeoutError
					if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("%s: %v (%T) is not a *TimeoutError", call.name, err, err)
					}
					want := fmt.Sprintf("bigtable: %s at %s: no answer ", call.op, srv.endpoint)
					if !strings.HasPrefix(msg, want) || !strings.Contains(msg, limit.String()) {
						t.Errorf("%s: %q\nwant it to start with %q and name the limit %v", call.name, msg, want, limit)
					}
					if c.lastErr != "" && !strings.Contains(msg, c.lastErr) {
						t.Errorf("%s: %q does not report the last attempt's error (%s)", call.name, msg, c.lastErr)
					}
					t.Log(msg)
				})
			}
		})
	}
}

// TestCallerDeadlineFirst: when the caller's context ends first, the error
// is the caller's, not a timeout of the store.
func TestCallerDeadlineFirst(t *testing.T) {
	addr, err := bttestserver.Addr()
	if err != nil {
		t.Fatal(err)
	}
	p := newFreezingProxy(t, addr)
	s, err := bigtablestore.Open(t.Context(), bigtablestore.Options{Project: "test", Instance: bttestserver.Instance(), Emulator: p.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setUp(t, s)
	p.freeze()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	within(t, "ReadRow", func() { _, _, err = s.ReadRow(ctx, "t", []byte("a")) })
	var te *bigtablestore.TimeoutError
	if err == nil || errors.As(err, &te) || ctx.Err() == nil {
		t.Errorf("ReadRow under the caller's deadline: %v, want the caller's deadline's error", err)
	}
}

// TestLongScan: the timeout of a scan bounds the wait for the server, not
// the scan: a scan whose callback takes longer in all than the timeout
// still reads every row.
func TestLongScan(t *testing.T) {
	o := bttestserver.Options(t)
	o.Timeout = time.Second
	s, err := bigtablestore.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setUp(t, s)
	var n int
	err = s.ReadRows(t.Context(), "t", store.All(), store.ReadOptions{}, func(store.Row) bool {
		n++
		time.Sleep(600 * time.Millisecond) // 3 rows: 1.8s in all
		return true
	})
	if err != nil || n != 3 {
		t.Errorf("ReadRows: %d rows, %v; want 3 rows", n, err)
	}
}

func TestParseURLTimeouts(t *testing.T) {
	o, err := bigtablestore.ParseURL("//p/i?emulator=127.0.0.1:9000&timeout=5s&admin_timeout=1m&connect_timeout=1500ms&lock_timeout=200ms")
	if err != nil || o.Emulator != "127.0.0.1:9000" || o.Timeout != 5*time.Second || o.AdminTimeout != time.Minute || o.ConnectTimeout != 1500*time.Millisecond || o.LockTimeout != 200*time.Millisecond {
		t.Errorf("ParseURL = %+v, %v", o, err)
	}
	for _, bad := range []string{"//p/i?timeout=", "//p/i?timeout=5", "//p/i?timeout=-1s", "//p/i?timeout=0s", "//p/i?connect_timeout=x", "//p/i?Timeout=1s"} {
		if o, err := bigtablestore.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) = %+v, want an error", bad, o)
		}
	}
}
