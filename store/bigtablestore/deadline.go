package bigtablestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The default limits (see Options).
const (
	DefaultTimeout        = 30 * time.Second
	DefaultConnectTimeout = 10 * time.Second
)

// probeAttempts is how many failed attempts of Open's probe mean nobody is
// there (connection refused fails each attempt at once; with a server that
// never answers the ConnectTimeout ends the probe instead).
const probeAttempts = 3

// callKind says which limit a call runs under.
type callKind uint8

const (
	dataCall   callKind = iota // one data RPC: Timeout in total
	dataWrite                  // the same, writing
	scanCall                   // a ReadRows stream: Timeout while waiting for the server
	adminCall                  // one admin RPC: AdminTimeout in total
	adminWrite                 // the same, changing the schema
	probeCall                  // Open's probe: ConnectTimeout, probeAttempts failed attempts
)

// TimeoutError is the error of a call the server did not complete within
// its limit (or, for Open's probe, that failed probeAttempts times in a
// row). errors.Is(err, context.DeadlineExceeded) holds for it.
type TimeoutError struct {
	Op       string        // what was done: "read", "write", "list tables", …
	Table    string        // the table, if any
	Endpoint string        // where: the emulator's HOST:PORT, or Cloud Bigtable's endpoint
	Limit    time.Duration // the limit that passed
	Idle     bool          // Limit bounded the wait between messages of a scan, not the whole call
	Write    bool          // the call wrote: whether it took effect is unknown
	GaveUp   bool          // ended by the number of failed attempts, not by Limit
	Attempts int           // failed attempts seen, 0 if unknown
	Last     error         // the last failed attempt's error, if one was seen
}

// Reason says what happened, without the operation.
func (e *TimeoutError) Reason() string {
	var b strings.Builder
	switch {
	case e.GaveUp:
		fmt.Fprintf(&b, "%d attempts failed", e.Attempts)
	case e.Idle:
		fmt.Fprintf(&b, "no answer for %v (the timeout between rows of a scan)", e.Limit)
	default:
		fmt.Fprintf(&b, "no answer within %v", e.Limit)
	}
	if !e.GaveUp && e.Attempts > 0 {
		fmt.Fprintf(&b, "; %d attempts failed", e.Attempts)
	}
	if e.Last != nil {
		st := status.Convert(e.Last)
		fmt.Fprintf(&b, "; last error: %v: %s", st.Code(), st.Message())
	}
	return b.String()
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("bigtable: %s at %s: %s", what(e.Op, e.Table), e.Endpoint, e.Reason())
	if e.Write {
		msg += "; the write may or may not have taken effect"
	}
	return msg
}

// Unwrap makes a TimeoutError a context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

func what(op, table string) string {
	if table == "" {
		return op
	}
	return op + " " + table
}

// unavailableError is an UNAVAILABLE error the client library did not
// retry (a conditional write is not idempotent), naming the endpoint.
type unavailableError struct {
	op, table, endpoint string
	err                 error
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("bigtable: %s at %s: %v", what(e.op, e.table), e.endpoint, e.err)
}

func (e *unavailableError) Unwrap() error { return e.err }

// A call is one client-library call (one RPC and the library's retries of
// it) under this store's limits. Its context carries it, so that the gRPC
// interceptors of connections this package dials can report each attempt.
type call struct {
	err     *TimeoutError
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stop    context.CancelFunc // the deadline's, for a total limit
	expired error              // the cause when the limit passes
	gaveUp  error              // the cause when maxAttempts attempts failed
	max     int                // 0: no cap on failed attempts

	mu     sync.Mutex
	timer  *time.Timer // scans: fires after Limit without a message
	paused bool        // a scan's callback is running: the server is not awaited
	failed int         // failed attempts since the last message received
	last   error
}

type callKey struct{}

// fromContext returns the call a context belongs to, if any.
func fromContext(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// begin starts a call under the limit of its kind. The caller's context
// still applies; if its deadline comes first, that is the error, not ours.
func (s *Store) begin(ctx context.Context, kind callKind, op, table string) *call {
	c := &call{
		err:     &TimeoutError{Op: op, Table: table, Endpoint: s.endpoint},
		expired: errors.New("bigtablestore: limit passed"),
		gaveUp:  errors.New("bigtablestore: attempts failed"),
	}
	switch kind {
	case dataCall, dataWrite:
		c.err.Limit, c.err.Write = s.timeout, kind == dataWrite
	case scanCall:
		c.err.Limit, c.err.Idle = s.timeout, true
	case adminCall, adminWrite:
		c.err.Limit, c.err.Endpoint, c.err.Write = s.adminTimeout, s.adminEndpoint, kind == adminWrite
	case probeCall:
		c.err.Limit, c.err.Endpoint, c.max = s.connectTimeout, s.adminEndpoint, probeAttempts
	}
	base, cancel := context.WithCancelCause(ctx)
	c.cancel = cancel
	if kind == scanCall {
		// A scan may take long as a whole; it is cut off only when the
		// server keeps it waiting Limit for its next message.
		c.ctx = base
		c.timer = time.AfterFunc(c.err.Limit, func() { cancel(c.expired) })
	} else {
		// A deadline (not a timer) so that gRPC sends it to the server.
		c.ctx, c.stop = context.WithTimeoutCause(base, c.err.Limit, c.expired)
	}
	c.ctx = context.WithValue(c.ctx, callKey{}, c)
	return c
}

// end releases the call and returns err, or a *TimeoutError if the call's
// own limit ended it.
func (c *call) end(err error) error {
	cause := context.Cause(c.ctx)
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stop != nil {
		c.stop()
	}
	c.cancel(nil)
	if err == nil {
		return nil
	}
	if cause != c.expired && cause != c.gaveUp {
		if cause == nil && status.Code(err) == codes.Unavailable {
			return &unavailableError{op: c.err.Op, table: c.err.Table, endpoint: c.err.Endpoint, err: err}
		}
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := *c.err
	e.GaveUp = cause == c.gaveUp
	e.Attempts, e.Last = c.failed, c.last
	return &e
}

// do runs f as one call: its context ends at the call's limit.
func (s *Store) do(ctx context.Context, kind callKind, op, table string, f func(ctx context.Context) error) error {
	c := s.begin(ctx, kind, op, table)
	return c.end(f(c.ctx))
}

// received notes a message from the server: the scan's wait starts again
// and failed attempts before it no longer count.
func (c *call) received() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed, c.last = 0, nil
	if c.timer != nil && !c.paused {
		c.timer.Reset(c.err.Limit)
	}
}

// failure notes a failed attempt. Errors of an attempt whose context ended
// are this call's own cancellation (or the caller's), not the server's.
func (c *call) failure(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	c.failed++
	c.last = err
	n := c.failed
	c.mu.Unlock()
	if c.max > 0 && n >= c.max {
		c.cancel(c.gaveUp)
	}
}

// pause and resume bracket a scan's callback: time spent there is the
// caller's, not the server's.
func (c *call) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = true
	c.timer.Stop()
}

func (c *call) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = false
	c.timer.Reset(c.err.Limit)
}

// The interceptors of the connections this package dials: they report
// each attempt of a call to it (the client library retries inside its
// call and keeps the errors of the attempts to itself).

func unaryInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if c := fromContext(ctx); c != nil {
		if err != nil {
			c.failure(ctx, err)
		} else {
			c.received()
		}
	}
	return err
}

func streamInterceptor(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	c := fromContext(ctx)
	if c == nil {
		return cs, err
	}
	if err != nil {
		c.failure(ctx, err)
		return cs, err
	}
	return &reportingStream{ClientStream: cs, c: c, ctx: ctx}, nil
}

type reportingStream struct {
	grpc.ClientStream
	c   *call
	ctx context.Context
}

func (s *reportingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err == nil:
		s.c.received()
	case err != io.EOF:
		s.c.failure(s.ctx, err)
	}
	return err
}

// dialOptions install the interceptors.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(unaryInterceptor),
		grpc.WithChainStreamInterceptor(streamInterceptor),
	}
}

// named reports whether err already names its operation and endpoint.
func named(err error) bool {
	var te *TimeoutError
	var ue *unavailableError
	return errors.As(err, &te) || errors.As(err, &ue)
}
