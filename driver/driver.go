// Package driver registers kvschema as a database/sql driver named
// "kvschema" (the Go counterpart of seed 003's JDBC driver). The DSN is a
// store URL ("mem:", "pebble:DIR", "bigtable://…") of a backend the program
// imports (store/all imports every one; "mem:" is always there).
//
//	import (
//		_ "github.com/kvschema/kvschema/driver"
//		_ "github.com/kvschema/kvschema/store/pebblestore"
//	)
//	db, err := sql.Open("kvschema", "pebble:/var/lib/app")
//
// Connections to one DSN share one kvschema.DB (an embedded store can be
// opened once per process); it is closed when its last connection closes.
// "mem:" is the exception: each sql.DB opened on it has its own in-memory
// store, shared by its connections and kept until the sql.DB is closed
// ("mem:NAME" names one store shared process-wide).
// Each statement is atomic on its own. Read-only transactions
// (sql.TxOptions{ReadOnly: true}) read one snapshot of the store, taken at
// BeginTx, on stores with point-in-time reads (Pebble, mem:; not
// Bigtable). Other transactions write: their statements see their own
// writes, Commit applies all of them in one atomic batch, and they run
// alone among the store's writers in the process (kvschema.Tx).
//
// Parameters are ? (in order), $n (PostgreSQL's) or :name (sql.Named
// arguments, any letter case; arguments in order fill the names in their
// order of first use), one style per statement. Prepare resolves the
// statement's relation and attribute names at once. TIMESTAMP values keep
// microseconds: a time.Time with a finer part is refused, not cut. A
// collection (FROZEN<SET<…>>, FROZEN<LIST<…>>, FROZEN<MAP<…>>) scans as
// its JSON text (types.JSON: `["a","b"]`, `{"k":1}`), and is passed as JSON
// text or as a Go slice or map.
//
// Every statement kvschema.DB runs is reachable: on relations defined with
// DEFINE RELATION / DEFINE SCHEMA, and on an advised schema loaded into the
// store (kvschema load): model queries along paths (SELECT bids.bid FROM
// bids WHERE bids.item.id = ?), INSERT … AND CONNECT TO, UPDATE, DELETE,
// CONNECT, DISCONNECT.
package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/kvschema/kvschema"
	_ "github.com/kvschema/kvschema/store/memstore" // mem: DSNs
	"github.com/kvschema/kvschema/types"
)

func init() { sql.Register("kvschema", Driver{}) }

// Driver is the database/sql driver.
type Driver struct{}

type shared struct {
	db   *kvschema.DB
	refs int
	// pinned: kept open by its connector (a "mem:" store of one sql.DB)
	// until the sql.DB is closed, even when it has no connections.
	pinned bool
}

var (
	mu   sync.Mutex
	open = map[string]*shared{}
)

// Open implements driver.Driver.
func (Driver) Open(dsn string) (driver.Conn, error) {
	mu.Lock()
	defer mu.Unlock()
	sh := open[dsn]
	if sh == nil {
		db, err := kvschema.Open(context.Background(), dsn, kvschema.Options{})
		if err != nil {
			return nil, err
		}
		sh = &shared{db: db}
		if dsn != "mem:" { // every mem: connection would otherwise share one store
			open[dsn] = sh
		}
	}
	sh.refs++
	return &conn{dsn: dsn, sh: sh}, nil
}

// OpenConnector implements driver.DriverContext, which sql.Open uses: all
// connections of one sql.DB share one store. For "mem:" that store belongs to
// the sql.DB (another sql.DB on "mem:" gets another store) and lives until
// the sql.DB is closed; other DSNs share one store per DSN process-wide.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return &connector{d: d, dsn: dsn}, nil
}

type connector struct {
	d   Driver
	dsn string
	mem *shared // the sql.DB's own store, for "mem:"
}

func (c *connector) Driver() driver.Driver { return c.d }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.dsn != "mem:" {
		return c.d.Open(c.dsn)
	}
	mu.Lock()
	defer mu.Unlock()
	if c.mem == nil {
		db, err := kvschema.Open(ctx, c.dsn, kvschema.Options{})
		if err != nil {
			return nil, err
		}
		c.mem = &shared{db: db, pinned: true}
	}
	c.mem.refs++
	return &conn{dsn: c.dsn, sh: c.mem}, nil
}

// Close is called by sql.DB.Close.
func (c *connector) Close() error {
	mu.Lock()
	defer mu.Unlock()
	sh := c.mem
	if sh == nil {
		return nil
	}
	c.mem = nil
	sh.pinned = false
	if sh.refs > 0 {
		return nil // the last conn.Close closes it
	}
	return sh.db.Close()
}

type conn struct {
	dsn string
	sh  *shared
	// inTx is the DB of the transaction open on the connection, nil if
	// none: every statement of the connection runs on it. It is a
	// snapshot (read-only transactions) or a write transaction's (tx).
	inTx *kvschema.DB
	tx   *kvschema.Tx
}

// db is the DB the connection's statements run on.
func (c *conn) db() *kvschema.DB {
	if c.inTx != nil {
		return c.inTx
	}
	return c.sh.db
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	st, err := c.db().Prepare(query)
	if err != nil {
		return nil, err
	}
	return &stmt{c: c, st: st, query: query, on: c.db()}, nil
}

func (c *conn) Close() error {
	if c.inTx != nil { // a transaction left open
		tx{c}.Rollback()
	}
	mu.Lock()
	defer mu.Unlock()
	c.sh.refs--
	if c.sh.refs > 0 || c.sh.pinned {
		return nil
	}
	if open[c.dsn] == c.sh {
		delete(open, c.dsn)
	}
	return c.sh.db.Close()
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx implements driver.ConnBeginTx, at any isolation level (both
// kinds of transaction satisfy them all).
//
// A read-only transaction reads a snapshot of the store taken at BeginTx
// (DB.Snapshot); it needs a store with point-in-time reads (Pebble, mem:).
//
// Any other transaction is a write transaction (DB.Begin, see
// kvschema.Tx): its statements see its own writes, Commit applies all of
// them in one atomic batch, and it runs alone among the writers of its
// store in this process (their writes wait for it to end, at most 5 s,
// then fail with kvschema.ErrBusy; readers do not wait).
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.inTx != nil {
		return nil, errors.New("kvschema: a transaction is already open on this connection")
	}
	if opts.ReadOnly {
		snap, err := c.sh.db.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		c.inTx = snap
		return tx{c}, nil
	}
	t, err := c.sh.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	c.inTx, c.tx = t.DB(), t
	return tx{c}, nil
}

// tx is the transaction open on a connection.
type tx struct{ c *conn }

// Commit commits a write transaction; it ends a read-only one.
func (t tx) Commit() error {
	c := t.c
	if c.inTx == nil {
		return driver.ErrBadConn
	}
	var err error
	if c.tx != nil {
		err = c.tx.Commit(context.Background())
	} else {
		err = c.inTx.Close()
	}
	c.inTx, c.tx = nil, nil
	return err
}

// Rollback drops a write transaction's writes; it ends a read-only one.
func (t tx) Rollback() error {
	c := t.c
	if c.inTx == nil {
		return driver.ErrBadConn
	}
	var err error
	if c.tx != nil {
		err = c.tx.Rollback()
	} else {
		err = c.inTx.Close()
	}
	c.inTx, c.tx = nil, nil
	return err
}

// CheckNamedValue implements driver.NamedValueChecker: a collection
// argument may be a Go slice or map (or a types.Set, List or Map), passed
// to kvschema as it is, besides JSON text (a string), which any
// database/sql driver passes. Other values take database/sql's default
// conversion.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch nv.Value.(type) {
	case types.Set, types.List, types.Map:
		return nil
	case []byte:
		return driver.ErrSkip
	}
	if isCollection(nv.Value) {
		return nil
	}
	return driver.ErrSkip
}

// isCollection reports whether v is a Go map or a slice of other than
// bytes (a named []byte, json.RawMessage say, is BYTES or text).
func isCollection(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.db().Exec(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return result{n: res.RowsAffected}, nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.db().Query(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return &rows{r: r}, nil
}

// values passes arguments on: sql.Named ones by name (for :name
// parameters), the others in order.
func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if a.Name != "" {
			out[i] = sql.Named(a.Name, a.Value)
		} else {
			out[i] = a.Value
		}
	}
	return out
}

// stmt is a prepared statement of a connection. Prepared on the store, it
// runs on the transaction's snapshot while one is open (and the other way
// round): run prepares it again on the connection's current DB if needed.
type stmt struct {
	c     *conn
	st    *kvschema.Stmt
	query string
	on    *kvschema.DB // the DB st was prepared on
}

// current returns the statement prepared on the connection's current DB.
func (s *stmt) current() (*kvschema.Stmt, error) {
	db := s.c.db()
	if s.on != db {
		st, err := db.Prepare(s.query)
		if err != nil {
			return nil, err
		}
		s.st, s.on = st, db
	}
	return s.st, nil
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	st, err := s.current()
	if err != nil {
		return nil, err
	}
	res, err := st.Exec(ctx, values(args)...)
	if err != nil {
		return nil, err
	}
	return result{n: res.RowsAffected}, nil
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	st, err := s.current()
	if err != nil {
		return nil, err
	}
	r, err := st.Query(ctx, values(args)...)
	if err != nil {
		return nil, err
	}
	return &rows{r: r}, nil
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

type result struct{ n int64 }

func (r result) LastInsertId() (int64, error) {
	return 0, errors.New("kvschema: LastInsertId is not supported")
}
func (r result) RowsAffected() (int64, error) { return r.n, nil }

type rows struct{ r *kvschema.Rows }

func (r *rows) Columns() []string { return r.r.Columns() }

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName:
// the kvschema type name (BIGINT, STRING, …).
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if ts := r.r.ColumnTypes(); i < len(ts) {
		return ts[i].String()
	}
	return ""
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType: the Go type
// of the column's values (NULL scans into the sql.Null* of that type).
func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if ts := r.r.ColumnTypes(); i < len(ts) {
		if ts[i].IsCollection() {
			return reflect.TypeFor[string]() // JSON text
		}
		return scanTypes[ts[i]]
	}
	return reflect.TypeFor[any]()
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable: any column
// of a result may be NULL (an outer path, an attribute not set), so it
// reports nullable, as known.
func (r *rows) ColumnTypeNullable(int) (nullable, ok bool) { return true, true }

// scanTypes are the Go types of each kvschema type's values.
var scanTypes = map[types.Type]reflect.Type{
	types.String:    reflect.TypeFor[string](),
	types.Int:       reflect.TypeFor[int64](),
	types.BigInt:    reflect.TypeFor[int64](),
	types.Float:     reflect.TypeFor[float64](),
	types.Double:    reflect.TypeFor[float64](),
	types.Bool:      reflect.TypeFor[bool](),
	types.Timestamp: reflect.TypeFor[time.Time](),
	types.Bytes:     reflect.TypeFor[[]byte](),
}

func (r *rows) Close() error { return r.r.Close() }
func (r *rows) Next(dest []driver.Value) error {
	if !r.r.Next() {
		return io.EOF
	}
	for i, d := range r.r.Datums() {
		// Canonical kvschema values are driver.Values, but for
		// collections: they go as JSON text.
		if d.Type.IsCollection() {
			dest[i] = types.JSON(d.Value())
			continue
		}
		dest[i] = d.Value()
	}
	return nil
}
