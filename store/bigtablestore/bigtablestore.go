// Package bigtablestore owns kvschema's raw Store on Google Cloud Bigtable
// (and on its emulators): tables, families and pre-splits through the admin
// API, reads and writes through the data API of cloud.google.com/go/bigtable.
//
// Bigtable is atomic per row only, so this store does not claim atomic
// batches; store URLs "bigtable://…" open it under package txnstore, which
// makes multi-row writes all-or-nothing for readers. Use this package
// directly only for what needs the raw engine (repair, tests).
//
// Invariants, besides those of package store:
//   - Every kvschema table is one Bigtable table of the same name; names must
//     be valid Bigtable table IDs ([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50
//     bytes) and family names valid family IDs ([-_.a-zA-Z0-9]+, at most
//     64 bytes), else CreateTable fails naming the rule.
//   - Split points given to CreateTable pre-split the table and are recorded
//     in the table "_kvschema_tables" (the admin API cannot report them), so
//     Tables reports them; that table is hidden from Tables. Its row of a
//     table (family "t") has the column "splits" (JSON) and, for a table
//     that keeps cell expiry, the column "expiry" = "1".
//   - Cell expiry (Mutation.Expires) is Bigtable's own: cell timestamps and
//     a GC policy. A table created by CreateTable since this version keeps
//     it, and says so itself: every family's GC policy is the union of
//     maxversions=1 and maxage=1s (families added later too), set when the
//     table is created, in the same admin call. The store reads the
//     policies once per table and store value (one TableInfo call, on the
//     first use of a table): a table keeps expiry when one of its
//     families has that policy. (An earlier version recorded a flag in the
//     registry before creating the table; a failed creation then left a
//     flag that a table created later by an older binary would have
//     inherited, hiding its timestamp-0 cells. The flag is no longer read.)
//     A table found keeping no expiry is read again after 2 s
//     (oldTableRecheck): another process may have dropped it and created
//     it anew, keeping expiry, where a cell at timestamp 0 would be
//     collected. A cell without expiry is written at the greatest whole
//     millisecond (9223372036854775000 µs), which is never that old, and a
//     cell with Expires at Expires rounded up to the millisecond
//     (Bigtable's timestamp granularity): the cell lives until that
//     millisecond, and the server removes it some time after it is a
//     second old by its clock. An Expires at or before the epoch writes no
//     cell. Every SetCell is followed, in the same row mutation, by the
//     deletion of the column's other versions (the timestamp ranges before
//     and after its own), so the newest write wins whatever the
//     timestamps. Every read — ReadRow, ReadRows, and the condition of
//     ApplyIf (and so txnstore's conditions and guards) — keeps only cells
//     whose timestamp is later than store.Now(ctx) (a timestamp-range
//     filter before the latest-version filter), so on the server an
//     expired cell is absent, a row whose cells all expired is not
//     returned and limits count live rows. No Sweeper is needed: the GC
//     policy sweeps.
//   - A table created by an earlier version (no flag) keeps its format:
//     families keep one version (GC policy maxversions=1), every cell is
//     written at timestamp 0, so a later write of a cell replaces it at
//     once, and reads take the latest version with no timestamp filter. A
//     SetCell with Expires of such a table fails with store.ErrNoExpiry
//     naming the table, before anything is written (CheckMutations once
//     the flag is known, CheckMutationsContext always; txnstore calls the
//     latter before it writes its intent).
//   - ReadRows is one ReadRows call: exact keys and ranges go together in
//     one row-range list, with the limit and reverse order done by the
//     server. ReadRow is one ReadRows of one row.
//   - Apply groups the mutations by row, keeping their order within a row
//     (Bigtable applies a row's mutations in order, atomically), and sends
//     each table's rows with one ApplyBulk per 100,000 mutations (one
//     MutateRows request each); several tables are written in parallel.
//     Rows are applied independently: after an error some rows may
//     be written and others not (Capabilities().AtomicBatch is false).
//   - ApplyIf is one CheckAndMutateRow (store.Conditional).
//   - Each mutation is one of Bigtable's: SetCell a SetCell (at timestamp 0
//     in a table without expiry, else a SetCell at the timestamps above
//     and DeleteFromColumns of time ranges), DeleteCell a DeleteFromColumn, DeleteFamily a
//     DeleteFromFamily, DeleteRow a DeleteFromRow.
//   - Row keys must be 1 byte to 4 KiB long, qualifiers at most 16 KiB
//     (Bigtable's limits): Apply and ApplyIf check every mutation before
//     sending any (store.MutationChecker) and fail with ErrRowKey.
//
// Deadlines: the client library retries UNAVAILABLE, DEADLINE_EXCEEDED and
// ABORTED with backoff until the call's context ends, and offers no setting
// to bound that, so every RPC this store makes runs under a context with a
// limit (the caller's context still applies; if it ends first, its error is
// returned):
//   - a data call (ReadRow, one bulk write of at most 100,000 mutations, a
//     conditional write, the split registry's reads and writes) must
//     complete within Options.Timeout (default 30s);
//   - a scan (ReadRows) is not limited as a whole: Timeout bounds each wait
//     for the server, until its first message and from one message to the
//     next, while time spent in the caller's callback does not count. A
//     scan of many rows runs as long as the server keeps sending them;
//   - an admin call (list tables, table info, create a table or a family,
//     delete a table) must complete within Options.AdminTimeout (default
//     twice Timeout);
//   - Open lists the tables once, within Options.ConnectTimeout (default
//     10s; gRPC connects lazily, so this is what finds an unreachable
//     server), and on connections it dials itself gives up early after 3
//     failed attempts in a row (as connection refused gives). It then
//     fails with "cannot reach Bigtable at HOST:PORT (…)" (ErrUnreachable).
//
// A call its limit ends fails with a *TimeoutError naming the operation,
// the table, the endpoint and the limit, and, on connections this package
// dials itself (?emulator=, and Cloud Bigtable unless ClientOptions bring
// their own connection), the number of failed attempts and the last one's
// error; it is a context.DeadlineExceeded. A write that timed out may or
// may not have taken effect. A call the library does not retry (a
// conditional write) fails at once on UNAVAILABLE, naming the endpoint.
//
// URLs: "bigtable://PROJECT/INSTANCE" connects to Cloud Bigtable with the
// environment's credentials, or to the emulator BIGTABLE_EMULATOR_HOST
// names; "bigtable://PROJECT/INSTANCE?emulator=HOST:PORT" to that emulator.
// Parameters "timeout", "admin_timeout", "connect_timeout" and
// "lock_timeout" (Go durations: 500ms, 10s, 2m) set Options.Timeout,
// AdminTimeout, ConnectTimeout and LockTimeout, e.g.
// "bigtable://p/i?emulator=127.0.0.1:8086&timeout=10s".
package bigtablestore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/txnstore"
)

func init() {
	store.Register("bigtable", func(ctx context.Context, rest string) (store.Store, error) {
		o, err := ParseURL(rest)
		if err != nil {
			return nil, err
		}
		raw, err := Open(ctx, o)
		if err != nil {
			return nil, err
		}
		return txnstore.New(raw, txnstore.Options{LockTimeout: o.LockTimeout}), nil
	})
}

// registry is the table recording each table's split points.
const registry = "_kvschema_tables"

// registryFamily and splitsColumn hold a table's splits, JSON-encoded.
const (
	registryFamily = "t"
	splitsColumn   = "splits"
)

// permanentTS is the timestamp of a cell without expiry in a table that
// keeps expiry: the greatest whole millisecond, later than any expiry
// instant, never older than the GC policy's age.
const permanentTS = bigtable.Timestamp(math.MaxInt64 - math.MaxInt64%1000)

// expiryGCAge is the MaxAge of the GC policy of the families of a table
// that keeps expiry: a cell whose timestamp (its expiry instant) is that
// far behind the server's clock is removed by the server.
const expiryGCAge = time.Second

// expiryTS is the timestamp of a cell written with Mutation.Expires e in a
// table that keeps expiry: e rounded up to the millisecond (Bigtable
// timestamps' granularity), at most permanentTS; ok is false when the
// cell has expired at every instant from the epoch on (e <= 0).
func expiryTS(e int64) (ts bigtable.Timestamp, ok bool) {
	if e <= 0 {
		return 0, false
	}
	if e > int64(permanentTS)-1000 {
		return permanentTS, true
	}
	return bigtable.Timestamp((e + 999) / 1000 * 1000), true
}

// liveFrom is the least timestamp a cell alive at now has in a table that
// keeps expiry: the first whole millisecond after now.
func liveFrom(now time.Time) bigtable.Timestamp {
	n := now.UnixMicro()
	ms := n / 1000
	if n%1000 < 0 {
		ms-- // floor
	}
	return bigtable.Timestamp(max(ms+1, 0) * 1000)
}

// readFilter is the filter of every read of a table: the latest version of
// each cell and, in a table that keeps expiry, only cells alive at
// store.Now(ctx).
func readFilter(ctx context.Context, expiry bool) bigtable.Filter {
	if !expiry {
		return bigtable.LatestNFilter(1)
	}
	return bigtable.ChainFilters(bigtable.TimestampRangeFilterMicros(liveFrom(store.Now(ctx)), 0), bigtable.LatestNFilter(1))
}

// gcPolicy is the GC policy of the families of a table.
func gcPolicy(expiry bool) bigtable.GCPolicy {
	if !expiry {
		return bigtable.MaxVersionsPolicy(1)
	}
	return bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(1), bigtable.MaxAgePolicy(expiryGCAge))
}

var (
	tableID  = regexp.MustCompile(`^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}$`)
	familyID = regexp.MustCompile(`^[-_.a-zA-Z0-9]{1,64}$`)
)

// ErrRowKey is returned (wrapped) for a row key Bigtable does not accept:
// empty, or longer than 4 KiB.
var ErrRowKey = errors.New("row key not accepted by Bigtable (empty, or longer than 4 KiB)")

// maxRowKey and maxQualifier are Bigtable's limits.
const (
	maxRowKey    = 4 << 10
	maxQualifier = 16 << 10
)

// CheckMutations reports the first mutation Bigtable would reject: a row key
// that is empty or too long, a bad family name, a qualifier over 16 KiB.
// A SetCell with Expires of a table known not to keep expiry (created by
// an earlier version) fails with store.ErrNoExpiry; Apply and ApplyIf
// also check the tables not known yet (CheckMutationsContext).
func (s *Store) CheckMutations(muts []store.Mutation) error {
	for i, m := range muts {
		if m.Kind == store.SetCell && m.Expires != 0 {
			s.mu.Lock()
			k, known := s.expiry[m.Table]
			s.mu.Unlock()
			if known && !k.expiry && time.Since(k.read) < oldTableRecheck {
				return noExpiry(i, m)
			}
		}
		if len(m.Row) == 0 || len(m.Row) > maxRowKey {
			return fmt.Errorf("bigtable: mutation %d: %s row %q: %w", i, m.Table, truncate(m.Row), ErrRowKey)
		}
		// Every kind but DeleteRow names a family (DeleteFamily too).
		if m.Kind != store.DeleteRow && !familyID.MatchString(m.Family) {
			return fmt.Errorf("bigtable: mutation %d: %s row %q: bad family %q", i, m.Table, truncate(m.Row), m.Family)
		}
		if len(m.Qualifier) > maxQualifier {
			return fmt.Errorf("bigtable: mutation %d: %s row %q: qualifier longer than 16 KiB", i, m.Table, truncate(m.Row))
		}
	}
	return nil
}

func noExpiry(i int, m store.Mutation) error {
	return fmt.Errorf("bigtable: mutation %d: table %s (created before cell expiry) row %q: %w", i, m.Table, truncate(m.Row), store.ErrNoExpiry)
}

// CheckMutationsContext is CheckMutations, reading (once per table) the
// kind (its GC policy) of every table a SetCell with Expires writes: txnstore
// calls it before it writes anything.
func (s *Store) CheckMutationsContext(ctx context.Context, muts []store.Mutation) error {
	if err := s.CheckMutations(muts); err != nil {
		return err
	}
	for i, m := range muts {
		if m.Kind == store.SetCell && m.Expires != 0 {
			expiry, err := s.expiryOf(ctx, m.Table)
			if err != nil {
				return err
			}
			if !expiry {
				return noExpiry(i, m)
			}
		}
	}
	return nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return append(b[:64:64], "…"...)
	}
	return b
}

// Store is a raw Bigtable store.
type Store struct {
	client *bigtable.Client
	admin  *bigtable.AdminClient
	conn   *grpc.ClientConn // the emulator connection this store dialled, if any

	// The limits of calls (see Options) and the endpoints errors name.
	timeout, adminTimeout, connectTimeout time.Duration
	endpoint, adminEndpoint               string

	mu     sync.Mutex
	tables map[string]*bigtable.Table // tables known to exist
	expiry map[string]tableKind       // whether they keep expiry, as read (keepsExpiry)
	closed bool
}

// Options say where to connect, and how long to wait for answers.
type Options struct {
	Project, Instance string
	// Emulator is the host:port of an emulator; empty means the environment
	// decides (BIGTABLE_EMULATOR_HOST, else Cloud Bigtable).
	Emulator string
	// ClientOptions are passed to the Bigtable clients (credentials,
	// endpoints; e.g. option.WithGRPCConn for an in-process emulator).
	ClientOptions []option.ClientOption

	// Timeout bounds each data call (one RPC with the client library's
	// retries: ReadRow, a bulk write, a conditional write); 0 means
	// DefaultTimeout (30s). For a scan (ReadRows) it bounds the wait for
	// the server — until its first message and between messages — not
	// the whole scan, and time spent in the caller's callback does not
	// count, so a long scan runs as long as rows keep arriving.
	Timeout time.Duration
	// AdminTimeout bounds each admin call (list tables, table info, create
	// a table or family, delete a table); 0 means twice Timeout.
	AdminTimeout time.Duration
	// ConnectTimeout bounds the call Open makes to check that the server
	// answers; 0 means DefaultConnectTimeout (10s).
	ConnectTimeout time.Duration
	// LockTimeout is the intent log's (txnstore.Options.LockTimeout) for
	// stores opened by URL: how long a write waits for rows locked by a
	// write that never commits before aborting it; 0 means its default.
	LockTimeout time.Duration
}

// ErrUnreachable is returned (wrapped) by Open when the server does not
// answer: "cannot reach Bigtable at HOST:PORT (what happened)".
var ErrUnreachable = errors.New("cannot reach Bigtable")

type unreachableError struct {
	endpoint, reason string
	cause            error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach Bigtable at %s (%s)", e.endpoint, e.reason)
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.cause} }

// Open connects to an instance and checks, with one cheap call (listing
// the tables) under ConnectTimeout, that the server answers.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Project == "" || o.Instance == "" {
		return nil, fmt.Errorf("bigtable: project and instance are required")
	}
	if o.Timeout < 0 || o.AdminTimeout < 0 || o.ConnectTimeout < 0 {
		return nil, fmt.Errorf("bigtable: negative timeout")
	}
	s := &Store{
		tables:         map[string]*bigtable.Table{},
		expiry:         map[string]tableKind{},
		timeout:        cmp.Or(o.Timeout, DefaultTimeout),
		connectTimeout: cmp.Or(o.ConnectTimeout, DefaultConnectTimeout),
		endpoint:       "bigtable.googleapis.com:443",
		adminEndpoint:  "bigtableadmin.googleapis.com:443",
	}
	s.adminTimeout = cmp.Or(o.AdminTimeout, 2*s.timeout)
	opts := slices.Clip(o.ClientOptions)
	if o.Emulator != "" {
		s.endpoint, s.adminEndpoint = o.Emulator, o.Emulator
		// The message limits of the client's own connections (Bigtable's
		// server-side limits): intents and bulk writes exceed gRPC's 4 MiB.
		conn, err := grpc.NewClient(o.Emulator, append(dialOptions(),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<28), grpc.MaxCallSendMsgSize(1<<28)))...)
		if err != nil {
			return nil, fmt.Errorf("bigtable: emulator %s: %w", o.Emulator, err)
		}
		s.conn = conn
		opts = append(opts, option.WithGRPCConn(conn))
	} else if env := os.Getenv("BIGTABLE_EMULATOR_HOST"); env != "" {
		// The client library dials it (and ignores dial options).
		s.endpoint, s.adminEndpoint = env, env
	} else {
		opts = append(opts, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(unaryInterceptor)),
			option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(streamInterceptor)))
	}
	cfg := bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}}
	var err error
	if s.client, err = bigtable.NewClientWithConfig(ctx, o.Project, o.Instance, cfg, opts...); err != nil {
		s.closeConn()
		return nil, fmt.Errorf("bigtable: %w", err)
	}
	if s.admin, err = bigtable.NewAdminClient(ctx, o.Project, o.Instance, opts...); err != nil {
		s.client.Close()
		s.closeConn()
		return nil, fmt.Errorf("bigtable: admin: %w", err)
	}
	if err := s.probe(ctx, o); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// probe lists the tables: gRPC connects lazily, so without a call an
// unreachable server would show only at the first operation.
func (s *Store) probe(ctx context.Context, o Options) error {
	c := s.begin(ctx, probeCall, "list tables of", o.Project+"/"+o.Instance)
	_, err := s.admin.Tables(c.ctx)
	err = c.end(err)
	var te *TimeoutError
	var ue *unavailableError
	switch {
	case errors.As(err, &te):
		return &unreachableError{endpoint: s.adminEndpoint, reason: te.Reason(), cause: te}
	case errors.As(err, &ue):
		st := status.Convert(ue.err)
		return &unreachableError{endpoint: s.adminEndpoint, reason: fmt.Sprintf("%v: %s", st.Code(), st.Message()), cause: ue}
	}
	if err != nil {
		return fmt.Errorf("bigtable: open %s/%s at %s: list tables: %w", o.Project, o.Instance, s.adminEndpoint, err)
	}
	return nil
}

func (s *Store) closeConn() {
	if s.conn != nil {
		s.conn.Close()
	}
}

// ParseURL splits the part of a store URL after "bigtable:" into options.
func ParseURL(rest string) (Options, error) {
	bad := func(why string) (Options, error) {
		return Options{}, fmt.Errorf("store URL bigtable:%s: %s (want bigtable://PROJECT/INSTANCE[?emulator=HOST:PORT][&timeout=D][&admin_timeout=D][&connect_timeout=D][&lock_timeout=D], D a duration such as 10s)", rest, why)
	}
	path, ok := strings.CutPrefix(rest, "//")
	if !ok {
		return bad("missing //")
	}
	path, query, _ := strings.Cut(path, "?")
	project, instance, ok := strings.Cut(path, "/")
	if !ok || project == "" || instance == "" || strings.Contains(instance, "/") {
		return bad("want PROJECT/INSTANCE")
	}
	o := Options{Project: project, Instance: instance}
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			var d *time.Duration
			switch k {
			case "emulator":
				if v == "" {
					return bad("empty emulator")
				}
				o.Emulator = v
				continue
			case "timeout":
				d = &o.Timeout
			case "admin_timeout":
				d = &o.AdminTimeout
			case "connect_timeout":
				d = &o.ConnectTimeout
			case "lock_timeout":
				d = &o.LockTimeout
			default:
				return bad(fmt.Sprintf("unknown parameter %q", kv))
			}
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return bad(fmt.Sprintf("%s=%q is not a positive duration", k, v))
			}
			*d = t
		}
	}
	return o, nil
}

func (s *Store) check(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return store.ErrClosed
	}
	return ctx.Err()
}

// wrap turns a gRPC NotFound into store.ErrNoTable; a *TimeoutError or
// an UNAVAILABLE error already says what it was doing and passes through.
func wrap(op, table string, err error) error {
	if err == nil {
		return nil
	}
	if named(err) {
		return err
	}
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("bigtable: %s %s: %w (%v)", op, table, store.ErrNoTable, err)
	}
	return fmt.Errorf("bigtable: %s %s: %w", op, table, err)
}

// CheckNames reports whether spec's table and family names are valid
// Bigtable IDs.
func CheckNames(spec store.TableSpec) error {
	if !tableID.MatchString(spec.Name) {
		return fmt.Errorf("bigtable: table name %q is not a Bigtable table ID ([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 bytes)", spec.Name)
	}
	for _, f := range spec.Families {
		if !familyID.MatchString(f) {
			return fmt.Errorf("bigtable: table %s: family name %q is not a Bigtable family ID ([-_.a-zA-Z0-9]+, at most 64 bytes)", spec.Name, f)
		}
	}
	return nil
}

// CreateTable creates the table pre-split at spec.Splits, or adds the
// families an existing table lacks.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if spec.Name == registry {
		return fmt.Errorf("bigtable: table name %s is reserved", registry)
	}
	if err := CheckNames(spec); err != nil {
		return err
	}
	if err := s.ensureRegistry(ctx); err != nil {
		return err
	}
	// A new table keeps expiry; an existing one keeps its kind.
	expiry := true
	info, err := s.tableInfo(ctx, spec.Name)
	switch {
	case status.Code(err) == codes.NotFound:
	case err != nil:
		return wrap("table info", spec.Name, err)
	default:
		expiry = keepsExpiry(info)
	}
	if err := s.createTable(ctx, spec.Name, spec.Families, spec.Splits, expiry); err != nil {
		return err
	}
	s.mu.Lock()
	s.expiry[spec.Name] = tableKind{expiry, time.Now()}
	s.mu.Unlock()
	if len(spec.Splits) > 0 {
		// The splits a table was created with stay its splits.
		var r bigtable.Row
		err := s.do(ctx, dataCall, "read", registry, func(ctx context.Context) (err error) {
			r, err = s.table(registry).ReadRow(ctx, spec.Name, latest)
			return err
		})
		if err != nil {
			return wrap("read", registry, err)
		}
		if !hasColumn(r, splitsColumn) {
			js, _ := json.Marshal(spec.Splits) // [][]byte marshals as base64 strings
			m := bigtable.NewMutation()
			m.Set(registryFamily, splitsColumn, 0, js)
			err := s.do(ctx, dataWrite, "record splits of", spec.Name, func(ctx context.Context) error {
				return s.table(registry).Apply(ctx, spec.Name, m)
			})
			if err != nil {
				return wrap("record splits of", spec.Name, err)
			}
		}
	}
	return nil
}

// hasColumn reports whether a registry row has the column.
func hasColumn(r bigtable.Row, column string) bool {
	for _, it := range r[registryFamily] {
		if it.Column == registryFamily+":"+column {
			return true
		}
	}
	return false
}

// keepsExpiry reports whether a table keeps cell expiry: one of its
// families has the GC policy gcPolicy(true) (in either order), which only
// a table created to keep expiry has. A table without families has no
// cells: it keeps expiry, as a new one does.
func keepsExpiry(info *bigtable.TableInfo) bool {
	if len(info.FamilyInfos) == 0 {
		return true
	}
	for _, f := range info.FamilyInfos {
		u, ok := f.FullGCPolicy.(bigtable.UnionGCPolicy)
		if !ok || len(u.Children) != 2 {
			continue
		}
		versions, age := false, false
		for _, c := range u.Children {
			switch c := c.(type) {
			case bigtable.MaxVersionsGCPolicy:
				versions = c == 1
			case bigtable.MaxAgeGCPolicy:
				age = time.Duration(c) == expiryGCAge
			}
		}
		if versions && age {
			return true
		}
	}
	return false
}

// tableKind is whether a table keeps expiry, and when the store read so.
type tableKind struct {
	expiry bool
	read   time.Time
}

// oldTableRecheck is how long the store trusts that a table keeps no
// expiry before it reads its GC policy again: another process may have
// dropped it and created it anew, keeping expiry, and a cell written at
// timestamp 0 there would be collected as older than a second. A table
// that keeps expiry stays so (a new one is created keeping it).
var oldTableRecheck = 2 * time.Second

// expiryOf reports whether a table keeps expiry (read once per table and
// store value, then from memory; again after oldTableRecheck for one
// that does not); it fails with store.ErrNoTable for a table that does
// not exist.
func (s *Store) expiryOf(ctx context.Context, name string) (bool, error) {
	s.mu.Lock()
	k, ok := s.expiry[name]
	s.mu.Unlock()
	if ok && (k.expiry || time.Since(k.read) < oldTableRecheck) {
		return k.expiry, nil
	}
	if name == registry {
		return false, nil
	}
	info, err := s.tableInfo(ctx, name)
	if err != nil {
		return false, wrap("table", name, err)
	}
	s.known(name)
	expiry := keepsExpiry(info)
	s.mu.Lock()
	s.expiry[name] = tableKind{expiry, time.Now()}
	s.mu.Unlock()
	return expiry, nil
}

// createTable creates a table or adds its missing families, with the GC
// policy of a table that keeps expiry or not.
func (s *Store) createTable(ctx context.Context, name string, families []string, splits [][]byte, expiry bool) error {
	info, err := s.tableInfo(ctx, name)
	if status.Code(err) == codes.NotFound {
		conf := &bigtable.TableConf{TableID: name, ColumnFamilies: map[string]bigtable.Family{}}
		for _, f := range families {
			conf.ColumnFamilies[f] = bigtable.Family{GCPolicy: gcPolicy(expiry)}
		}
		for _, sp := range splits {
			if len(sp) > 0 {
				conf.SplitKeys = append(conf.SplitKeys, string(sp))
			}
		}
		slices.Sort(conf.SplitKeys)
		conf.SplitKeys = slices.Compact(conf.SplitKeys)
		err = s.do(ctx, adminWrite, "create table", name, func(ctx context.Context) error {
			return s.admin.CreateTableFromConf(ctx, conf)
		})
		if status.Code(err) == codes.AlreadyExists { // created meanwhile
			return s.createTable(ctx, name, families, splits, expiry)
		}
		if err != nil {
			return wrap("create table", name, err)
		}
		s.known(name)
		return nil
	}
	if err != nil {
		return wrap("table info", name, err)
	}
	have := map[string]bool{}
	for _, f := range info.FamilyInfos {
		have[f.Name] = true
	}
	for _, f := range families {
		if have[f] {
			continue
		}
		err := s.do(ctx, adminWrite, "create family "+f+" in", name, func(ctx context.Context) error {
			return s.admin.CreateColumnFamilyWithConfig(ctx, name, f, bigtable.Family{GCPolicy: gcPolicy(expiry)})
		})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return wrap("create family "+f+" in", name, err)
		}
	}
	s.known(name)
	return nil
}

// tableInfo is one TableInfo call.
func (s *Store) tableInfo(ctx context.Context, name string) (info *bigtable.TableInfo, err error) {
	err = s.do(ctx, adminCall, "table info", name, func(ctx context.Context) error {
		info, err = s.admin.TableInfo(ctx, name)
		return err
	})
	return info, err
}

func (s *Store) known(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables[name] == nil {
		s.tables[name] = s.client.Open(name)
	}
}

// ensureRegistry creates the splits registry once per store value.
func (s *Store) ensureRegistry(ctx context.Context) error {
	s.mu.Lock()
	ok := s.tables[registry] != nil
	s.mu.Unlock()
	if ok {
		return nil
	}
	return s.createTable(ctx, registry, []string{registryFamily}, nil, false)
}

// table returns the data-API handle of a table.
func (s *Store) table(name string) *bigtable.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tables[name]; t != nil {
		return t
	}
	return s.client.Open(name)
}

// exists reports (once per table and store value, then from memory)
// whether a table exists, so that writes to a missing table fail with
// store.ErrNoTable before anything is written.
func (s *Store) exists(ctx context.Context, name string) error {
	s.mu.Lock()
	ok := s.tables[name] != nil
	s.mu.Unlock()
	if ok {
		return nil
	}
	if _, err := s.tableInfo(ctx, name); err != nil {
		return wrap("table", name, err)
	}
	s.known(name)
	return nil
}

// splits reads the registry: table name → split points.
func (s *Store) splits(ctx context.Context) (map[string][][]byte, error) {
	out := map[string][][]byte{}
	c := s.begin(ctx, scanCall, "read", registry)
	err := c.end(s.table(registry).ReadRows(c.ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, it := range r[registryFamily] {
			var sp [][]byte
			if it.Column == registryFamily+":"+splitsColumn && json.Unmarshal(it.Value, &sp) == nil {
				out[r.Key()] = sp
			}
		}
		return true
	}, latest))
	if status.Code(err) == codes.NotFound {
		return out, nil // no table was created through kvschema yet
	}
	return out, wrap("read", registry, err)
}

// Tables lists the instance's tables with their families and the splits
// kvschema created them with.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var names []string
	err := s.do(ctx, adminCall, "list tables", "", func(ctx context.Context) (err error) {
		names, err = s.admin.Tables(ctx)
		return err
	})
	if err != nil && !named(err) {
		return nil, fmt.Errorf("bigtable: list tables: %w", err)
	}
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	splits, err := s.splits(ctx)
	if err != nil {
		return nil, err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == registry })
	// One TableInfo per table (the list has no families), several at once.
	specs := make([]*store.TableSpec, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, n := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			info, err := s.tableInfo(ctx, n)
			if status.Code(err) == codes.NotFound {
				return // deleted meanwhile
			}
			if err != nil {
				errs[i] = wrap("table info", n, err)
				return
			}
			spec := &store.TableSpec{Name: n, Splits: splits[n]}
			for _, f := range info.FamilyInfos {
				spec.Families = append(spec.Families, f.Name)
			}
			slices.Sort(spec.Families)
			specs[i] = spec
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []store.TableSpec
	for _, spec := range specs {
		if spec != nil {
			out = append(out, *spec)
		}
	}
	return out, nil
}

// DropTable deletes a table and its recorded splits (used to remove
// scratch tables; kvschema's Store seam has no table deletion).
func (s *Store) DropTable(ctx context.Context, name string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.do(ctx, adminWrite, "delete table", name, func(ctx context.Context) error { return s.admin.DeleteTable(ctx, name) })
	if err != nil && status.Code(err) != codes.NotFound {
		return wrap("delete table", name, err)
	}
	s.mu.Lock()
	delete(s.tables, name)
	delete(s.expiry, name)
	s.mu.Unlock()
	m := bigtable.NewMutation()
	m.DeleteRow()
	err = s.do(ctx, dataWrite, "forget splits of", name, func(ctx context.Context) error { return s.table(registry).Apply(ctx, name, m) })
	if err != nil && status.Code(err) != codes.NotFound {
		return wrap("forget splits of", name, err)
	}
	return nil
}

// convert turns a Bigtable row into a store row, cells sorted by (family,
// qualifier).
func convert(r bigtable.Row) store.Row {
	out := store.Row{}
	for fam, items := range r {
		for _, it := range items {
			if out.Key == nil {
				out.Key = []byte(it.Row)
			}
			q := strings.TrimPrefix(it.Column, fam+":")
			out.Cells = append(out.Cells, store.Cell{Family: fam, Qualifier: []byte(q), Value: it.Value})
		}
	}
	slices.SortFunc(out.Cells, func(a, b store.Cell) int {
		return cmp.Or(strings.Compare(a.Family, b.Family), bytes.Compare(a.Qualifier, b.Qualifier))
	})
	return out
}

var latest = bigtable.RowFilter(bigtable.LatestNFilter(1))

// ReadRow reads one row.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if err := s.check(ctx); err != nil {
		return store.Row{}, false, err
	}
	expiry, err := s.expiryOf(ctx, table)
	if err != nil {
		return store.Row{}, false, err
	}
	filter := bigtable.RowFilter(readFilter(ctx, expiry))
	var r bigtable.Row
	err = s.do(ctx, dataCall, "read", table, func(ctx context.Context) (err error) {
		r, err = s.table(table).ReadRow(ctx, string(key), filter)
		return err
	})
	if err != nil {
		return store.Row{}, false, wrap("read", table, err)
	}
	row := convert(r)
	if len(row.Cells) == 0 {
		return store.Row{}, false, nil
	}
	return row, true, nil
}

// rowSet turns a store RowSet into one Bigtable row-range list.
func rowSet(rs store.RowSet) bigtable.RowRangeList {
	ranges := rs.Normalize()
	out := make(bigtable.RowRangeList, 0, len(ranges))
	for _, r := range ranges {
		if r.End == nil {
			out = append(out, bigtable.InfiniteRange(string(r.Start)))
		} else {
			out = append(out, bigtable.NewRange(string(r.Start), string(r.End)))
		}
	}
	return out
}

// ReadRows streams the selected rows in one ReadRows call.
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	set := rowSet(rs)
	if len(set) == 0 {
		return nil
	}
	expiry, err := s.expiryOf(ctx, table)
	if err != nil {
		return err
	}
	ro := []bigtable.ReadOption{bigtable.RowFilter(readFilter(ctx, expiry))}
	if opts.Limit > 0 {
		ro = append(ro, bigtable.LimitRows(int64(opts.Limit)))
	}
	if opts.Reverse {
		ro = append(ro, bigtable.ReverseScan())
	}
	// The callback may call the store; it must not run on the stream's
	// goroutine holding anything, and it does not: the client calls fn
	// synchronously between messages. The time it takes is not the
	// server's: the scan's timeout waits meanwhile.
	c := s.begin(ctx, scanCall, "read", table)
	err = s.table(table).ReadRows(c.ctx, set, func(r bigtable.Row) bool {
		c.pause()
		defer c.resume()
		return fn(convert(r))
	}, ro...)
	return wrap("read", table, c.end(err))
}

// rowMutation is the mutations of one row, in order.
type rowMutation struct {
	key string
	m   *bigtable.Mutation
	n   int // mutations in m
}

// bulkMutations is the most mutations one bulk write (MutateRows request)
// carries: Bigtable's limit, also the client library's group size.
const bulkMutations = 100_000

// mutation adds m, of a table that keeps expiry or not, to bm and returns
// the number of Bigtable mutations it added; it reports a bad kind or
// family.
func mutation(bm *bigtable.Mutation, m store.Mutation, expiry bool) (int, error) {
	if m.Kind != store.DeleteRow && !familyID.MatchString(m.Family) {
		return 0, fmt.Errorf("bigtable: %s %q: bad family %q", m.Table, m.Row, m.Family)
	}
	switch m.Kind {
	case store.SetCell:
		if !expiry {
			if m.Expires != 0 {
				return 0, noExpiry(0, m)
			}
			bm.Set(m.Family, string(m.Qualifier), 0, slices.Clone(m.Value))
			break
		}
		ts, ok := permanentTS, true
		if m.Expires != 0 {
			ts, ok = expiryTS(m.Expires)
		}
		q := string(m.Qualifier)
		if !ok {
			bm.DeleteCellsInColumn(m.Family, q)
			return 1, nil
		}
		// The cell at ts replaces a version at ts; the column's other
		// versions, before and after, are deleted, so that this write wins
		// whatever their timestamps. (Deleting them all first would do
		// alike, but bttest, which shares a row's column list with the
		// reads running, races when a mutation empties a column and then
		// fills it again.)
		bm.Set(m.Family, q, ts, slices.Clone(m.Value))
		bm.DeleteTimestampRange(m.Family, q, 0, ts)
		if ts == permanentTS {
			return 2, nil
		}
		bm.DeleteTimestampRange(m.Family, q, ts+1000, 0)
		return 3, nil
	case store.DeleteCell:
		bm.DeleteCellsInColumn(m.Family, string(m.Qualifier))
	case store.DeleteRow:
		bm.DeleteRow()
	case store.DeleteFamily:
		bm.DeleteCellsInFamily(m.Family)
	default:
		return 0, fmt.Errorf("bigtable: unknown mutation kind %v", m.Kind)
	}
	return 1, nil
}

// Apply writes the mutations, one atomic change per row, one ApplyBulk per
// table, the tables in parallel.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := s.CheckMutationsContext(ctx, muts); err != nil {
		return err
	}
	byTable := map[string][]*rowMutation{}
	expiry := map[string]bool{}
	var order []string
	for _, row := range store.GroupByRow(muts) {
		table := row[0].Table
		if _, ok := byTable[table]; !ok {
			if table == registry {
				return fmt.Errorf("bigtable: table %s is reserved", registry)
			}
			e, err := s.expiryOf(ctx, table)
			if err != nil {
				return err
			}
			expiry[table] = e
			order = append(order, table)
			byTable[table] = nil
		}
		rm := &rowMutation{key: string(row[0].Row), m: bigtable.NewMutation()}
		for _, m := range row {
			n, err := mutation(rm.m, m, expiry[table])
			if err != nil {
				return err
			}
			rm.n += n
		}
		byTable[table] = append(byTable[table], rm)
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, name := range order {
		wg.Go(func() { errs[i] = s.applyBulk(ctx, name, byTable[name]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// applyBulk writes a table's rows with one ApplyBulk per request's worth
// of mutations, each a call under its own Timeout.
func (s *Store) applyBulk(ctx context.Context, table string, rows []*rowMutation) error {
	for len(rows) > 0 {
		n, muts := 1, rows[0].n
		for n < len(rows) && muts+rows[n].n <= bulkMutations {
			muts += rows[n].n
			n++
		}
		if err := s.applyChunk(ctx, table, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func (s *Store) applyChunk(ctx context.Context, table string, rows []*rowMutation) error {
	keys := make([]string, len(rows))
	ms := make([]*bigtable.Mutation, len(rows))
	for i, r := range rows {
		keys[i], ms[i] = r.key, r.m
	}
	var rowErrs []error
	err := s.do(ctx, dataWrite, "write", table, func(ctx context.Context) (err error) {
		rowErrs, err = s.table(table).ApplyBulk(ctx, keys, ms)
		return err
	})
	if err != nil {
		return wrap("write", table, err)
	}
	for i, e := range rowErrs {
		if e != nil {
			return wrap(fmt.Sprintf("write row %q of", keys[i]), table, e)
		}
	}
	return nil
}

// ApplyIf is one CheckAndMutateRow: the condition is a filter selecting the
// cell (family, qualifier) with a value in [Min, Max).
func (s *Store) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, err
	}
	both := append(slices.Clip(then), otherwise...)
	if err := store.CheckRowMutations(table, row, both); err != nil {
		return false, fmt.Errorf("bigtable: %w", err)
	}
	if err := s.CheckMutationsContext(ctx, both); err != nil {
		return false, err
	}
	expiry, err := s.expiryOf(ctx, table)
	if err != nil {
		return false, err
	}
	build := func(muts []store.Mutation) (*bigtable.Mutation, error) {
		if len(muts) == 0 {
			return nil, nil
		}
		bm := bigtable.NewMutation()
		for _, m := range muts {
			if _, err := mutation(bm, m, expiry); err != nil {
				return nil, err
			}
		}
		return bm, nil
	}
	mt, err := build(then)
	if err != nil {
		return false, err
	}
	mf, err := build(otherwise)
	if err != nil {
		return false, err
	}
	q := string(cond.Qualifier)
	filter := bigtable.ChainFilters(
		bigtable.ColumnRangeFilter(cond.Family, q, q+"\x00"),
		readFilter(ctx, expiry), // an expired cell is absent
		bigtable.ValueRangeFilter(append([]byte{}, cond.Min...), cond.Max),
	)
	var matched bool
	err = s.do(ctx, dataWrite, "conditional write", table, func(ctx context.Context) error {
		return s.table(table).Apply(ctx, string(row), bigtable.NewCondMutation(filter, mt, mf), bigtable.GetCondMutationResult(&matched))
	})
	return matched, wrap("conditional write", table, err)
}

// Capabilities: Bigtable is atomic per row only; it keeps cell expiry
// (to the millisecond) in the tables created since it does (a SetCell
// with Expires of an older table is refused, store.ErrNoExpiry).
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{Expiry: true, Engine: "bigtable"}
}

// Close closes the clients; it is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// Both clients close the connection they share; the second close then
	// reports Canceled, which is no failure.
	var errs []error
	for _, err := range []error{s.client.Close(), s.admin.Close()} {
		if status.Code(err) != codes.Canceled {
			errs = append(errs, err)
		}
	}
	s.closeConn()
	return errors.Join(errs...)
}
