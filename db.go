// Package kvschema is the Go API of kvschema. A store holds two kinds of
// schema, and a DB runs statements on both:
//
//   - relations mapped onto key-value layouts by DEFINE RELATION /
//     DEFINE SCHEMA (seed 003's schema-definition-driven client): SQL-like
//     statements become Put/Delete/Scan operations on the layouts;
//   - an advised schema (seed 000): a conceptual model with the column
//     families and secondary indexes kvschema advise chose for a workload,
//     deployed by Deploy (or kvschema load) and filled by Load. Queries
//     follow paths of the model (SELECT items.name FROM items WHERE
//     items.seller.id = ?), writes (INSERT … AND CONNECT TO, UPDATE,
//     DELETE, CONNECT, DISCONNECT) keep every copy correct, Verify checks
//     them and Repair finishes interrupted writes.
//
// A relation name belongs to one of them; a statement runs on its owner.
//
//	import _ "github.com/kvschema/kvschema/store/pebblestore" // pebble: URLs
//
//	db, err := kvschema.Open(ctx, "pebble:/var/lib/app", kvschema.Options{})
//	_, err = db.Exec(ctx, "INSERT INTO r VALUES (?, ?, ?, ?)", "a1", "b", "x", 100)
//	rows, err := db.Query(ctx, "SELECT * FROM r WHERE k1 = ?", "a1")
//
// Open reaches the backends the program imports: memstore (mem:),
// pebblestore (pebble:), bigtablestore (bigtable://…), or store/all for
// every one; importing this package links none of them.
//
// Definitions of both kinds are kept in the store (package catalog), so
// opening a store restores them. A DB is safe for concurrent use: writers
// through one DB lock the tuples they write (striped locks, one set for
// both kinds of schema), so writes of one tuple are serialized and writes
// of different tuples run in parallel (see package exec for the isolation
// this gives). Begin opens a write transaction (Tx): several statements
// applied in one atomic batch, serialized with the other writers;
// Snapshot, a read-only view of one point in time.
package kvschema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/observe"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/tracestore"
)

// Options configure a DB.
type Options struct {
	// Trace, when set, receives every key-value operation in seed 003's
	// notation (put "s1", "a1-b", "f:", "x-\x00\x00\x00d").
	Trace io.Writer
	// CostModel prices the candidate layouts of a relation's queries; the
	// cheapest is read. nil means seed 003's rule, cost.Prefix (the layout
	// whose key has the longest fixed prefix).
	CostModel cost.Model
	// BusyTimeout is how long a write, or Begin, waits for an open write
	// transaction of the DB to end before failing with ErrBusy (SQLite's
	// busy timeout); 0 means 5 s.
	BusyTimeout time.Duration
	// NoWorkloadCounts turns off counting the statements run on the
	// advised schema (see DB.ObservedWorkload).
	NoWorkloadCounts bool
	// SchemaGrace is how long an online DEFINE SCHEMA or DROP SCHEMA
	// (layouts.go) waits after saving a catalog version for the writers of
	// other processes sharing the store to see it (each write statement
	// checks the catalog's version first) and finish the statement they
	// began before; < 0 means no wait. 0 means none on a store one
	// process has open (Pebble, mem:), 2 s on others (Bigtable).
	SchemaGrace time.Duration
	// SchemaRate bounds the tuples a second an online DEFINE SCHEMA copies
	// into its new layout, and the rows a second DROP SCHEMA deletes (0:
	// no bound), so that a layout change leaves the store to the
	// application (as MigrateOptions.Rate does for a migration).
	SchemaRate float64
	// SchemaProgress, when set, is told how the copy of an online DEFINE
	// SCHEMA and the deletion of DROP SCHEMA advance.
	SchemaProgress func(SchemaEvent)
}

// SchemaEvent is one report of an online layout change: Step "copy" (the
// tuples copied into a new layout so far) or "drop" (the rows of a dropped
// layout deleted so far); Done once the step is over.
type SchemaEvent struct {
	Schema string
	Step   string
	Rows   int64
	Done   bool
}

// DB is a database: a store plus the catalog of relations and layouts
// defined in it.
type DB struct {
	raw   store.Store // without tracing: catalog I/O
	st    store.Store // raw, traced when Options.Trace is set: statements
	locks exec.Locks  // the writers' tuple locks, shared by every engine
	costs cost.Model
	owns  bool
	opts  Options
	// readOnly: a Snapshot, which refuses writes and definitions.
	readOnly bool
	// tx: the DB of a transaction's statements (see Tx), nil for others.
	tx *Tx

	// ddl serializes the definitions (DEFINE, DROP SCHEMA) run through
	// this DB.
	ddl sync.Mutex
	// defining excludes the client's writes (read-locked) while a
	// definition that stops them is applied (locked; see define).
	defining sync.RWMutex
	// txGate is held by an open write transaction (locked) and by every
	// write statement outside it (read-locked, see waitTx): so writes wait
	// for a transaction, with a timeout, and a transaction for them. It is
	// taken before defining.
	txGate sync.RWMutex
	// writes counts the holders of txGate by the catalog epoch they began
	// in, so that a new catalog version waits for the writes that may
	// have planned with the one before without stopping those after it.
	writes writeEpochs
	// readGate is held (read-locked) by every statement outside a
	// transaction but the definitions, while it runs: the rows of a
	// dropped index or layout are deleted only once the statements that
	// may have planned with it are over (drainReads). Taken before
	// txGate.
	readGate sync.RWMutex

	mu      sync.RWMutex
	cat     *catalog.Catalog
	version uint64
	// en runs cat's plans: its client relations' and its advised
	// schema's (if any). It is kept across versions that deploy the same
	// advised schema (its prepared statements with it).
	en *exec.Engine
	// checked is the catalog table's change number (store.ChangeCounter)
	// when version was last found current; 0 if unknown.
	checked uint64
	// observed counts the statements run on the advised schema by shape
	// (nil: Options.NoWorkloadCounts); a transaction's and a snapshot's
	// DB count into their parent's, which alone flushes (ownsObserved).
	observed     *observe.Counter
	ownsObserved bool
	// shapes caches, by statement text, the count of its shape (nshapes
	// texts at most: see maxShapeTexts).
	shapes  sync.Map
	nshapes atomic.Int64
}

// Open opens a store URL ("mem:", "pebble:DIR") and loads its definitions.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	s, err := store.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	db, err := New(ctx, s, opts)
	if err != nil {
		s.Close()
		return nil, err
	}
	db.owns = true
	return db, nil
}

// New wraps an open store and loads its definitions. Close does not close s.
func New(ctx context.Context, s store.Store, opts Options) (*DB, error) {
	db := &DB{raw: s, costs: opts.CostModel, opts: opts, cat: catalog.NewCatalog()}
	if db.costs == nil {
		db.costs = cost.Prefix{}
	}
	db.st = s
	if opts.Trace != nil {
		db.st = tracestore.New(s, opts.Trace)
	}
	if !opts.NoWorkloadCounts {
		db.observed, db.ownsObserved = observe.New(s), true
	}
	if err := db.reload(ctx); err != nil {
		return nil, err
	}
	return db, nil
}

// reload replaces the catalog by the store's newest version.
func (db *DB) reload(ctx context.Context) error {
	version, _, cat, err := catalog.Read(ctx, db.raw)
	if err != nil {
		return err
	}
	db.install(cat, version)
	return nil
}

// install makes cat, saved as version, the current catalog.
func (db *DB) install(cat *catalog.Catalog, version uint64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	var now *catalog.Advised
	if db.en != nil {
		now = db.en.Advised()
	}
	if a := cat.Advised; db.en == nil || (a == nil) != (now == nil) || a != nil && !now.SameStorage(a) {
		db.en = exec.FromCatalog(db.st, a, &db.locks)
	}
	db.cat, db.version = cat, version
}

// current reloads the catalog if another client saved newer definitions,
// so that writes maintain every layout defined so far. It costs one small
// read per write statement, none on a store that counts changes
// (store.ChangeCounter) while the catalog has not changed.
func (db *DB) current(ctx context.Context) error {
	changes, counted := uint64(0), false
	if cc, ok := db.raw.(store.ChangeCounter); ok {
		changes, counted = cc.Changed(catalog.Table)
		db.mu.RLock()
		same := counted && changes != 0 && changes == db.checked
		db.mu.RUnlock()
		if same {
			return nil
		}
	}
	v, err := catalog.Version(ctx, db.raw)
	if err != nil {
		return err
	}
	db.mu.Lock()
	stale := v != db.version
	if !stale && counted {
		db.checked = changes // read after changes was taken: current then
	}
	db.mu.Unlock()
	if !stale {
		return nil
	}
	return db.reload(ctx)
}

// Close closes the store if Open opened it.
func (db *DB) Close() error {
	var err error
	if db.observed != nil && db.ownsObserved {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.observed.Close(ctx)
		cancel()
	}
	if db.owns {
		err = errors.Join(err, db.raw.Close())
	}
	return err
}

// ObservedWorkload returns how often each statement shape ran on the
// advised schema — every DB's counts the store keeps, this one's flushed
// first — most frequent first: a shape is the statement with its
// constants made parameters (lang.Parameterize); an INSERT of n tuples
// counts n times the INSERT of one. `kvschema workload` writes them as a
// query log (COUNT<TAB>STATEMENT), which advise reads with
// --workload-log. Counts are flushed to the store every few seconds while
// statements run, and when the DB is closed.
func (db *DB) ObservedWorkload(ctx context.Context) ([]observe.Entry, error) {
	if db.observed != nil {
		if err := db.observed.Flush(ctx); err != nil {
			return nil, err
		}
	}
	return observe.Read(ctx, db.raw)
}

// Snapshot returns a read-only DB that sees the store as it is now — its
// definitions and its rows — whatever is written after, until it is
// closed: the view of a read-only transaction. Statements that write or
// define fail on it (ErrReadOnly). It needs a store that reads from a
// point in time (store.Viewer: Pebble and mem:); on others (Bigtable) it
// fails with an error wrapping errors.ErrUnsupported. Close releases what
// it pins (an embedded store waits for its snapshots before it closes).
func (db *DB) Snapshot(ctx context.Context) (*DB, error) {
	if db.tx != nil {
		return nil, fmt.Errorf("Snapshot: %w", ErrInTx)
	}
	vr, ok := db.raw.(store.Viewer)
	if !ok {
		return nil, fmt.Errorf("kvschema: this store cannot read from a point in time, so it has no snapshots or read-only transactions (%T): %w", db.raw, errors.ErrUnsupported)
	}
	v, err := vr.View(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := New(ctx, v, db.opts)
	if err != nil {
		v.Close()
		return nil, err
	}
	snap.owns, snap.readOnly = true, true
	snap.observed, snap.ownsObserved = db.observed, false
	return snap, nil
}

// ErrReadOnly is the error of a write or a definition on a Snapshot.
var ErrReadOnly = errors.New("kvschema: a snapshot (read-only transaction) takes no writes or definitions")

// Store is the store statements run on (traced when Options.Trace is set).
func (db *DB) Store() store.Store { return db.st }

// engine is the engine of the current catalog.
func (db *DB) engine() *exec.Engine {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.en
}

// Catalog is the current set of relations and layouts. It must not be
// modified.
func (db *DB) Catalog() *catalog.Catalog {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.cat
}

// Result is what a statement returns besides rows.
type Result struct {
	// Statement is the statement's kind: DEFINE, DROP SCHEMA, INSERT,
	// UPDATE, DELETE, SELECT or EXPLAIN.
	Statement    string
	RowsAffected int64
	// Plan is the EXPLAIN text (EXPLAIN statements, or any statement when
	// requested with ExecOptions.Explain).
	Plan string
}

// Exec runs one statement that returns no rows (or discards them).
func (db *DB) Exec(ctx context.Context, src string, args ...any) (Result, error) {
	st, err := db.prepare(src)
	if err != nil {
		return Result{}, err
	}
	return st.Exec(ctx, args...)
}

// Query runs one SELECT (or EXPLAIN, whose plan lines come back as rows).
func (db *DB) Query(ctx context.Context, src string, args ...any) (*Rows, error) {
	st, err := db.prepare(src)
	if err != nil {
		return nil, err
	}
	return st.Query(ctx, args...)
}

// Prepare parses a statement once for repeated execution.
//
// The statement is checked against the current catalog: an unknown
// relation, attribute or relationship is an error now, not at the first
// run (errors.Is(err, lang.ErrUnknownName)). Exec and Query, which run a
// statement once, skip that check.
func (db *DB) Prepare(src string) (*Stmt, error) {
	st, err := db.prepare(src)
	if err != nil {
		return nil, err
	}
	if err := st.checkNames(context.Background()); err != nil {
		return nil, err
	}
	return st, nil
}

// prepare parses a statement.
func (db *DB) prepare(src string) (*Stmt, error) {
	ast, err := lang.ParseStatement("", src)
	if err != nil {
		return nil, err
	}
	return newStmt(db, ast, src), nil
}

// Script runs every statement of a script in order in one Session (BEGIN …
// COMMIT groups statements into a transaction), calling each (if not nil)
// with the result of every statement. It stops at the first error, which
// names file:line:col; a transaction open then, or at the end of the
// script, is rolled back (ErrTxOpen at the end).
func (db *DB) Script(ctx context.Context, file string, src []byte, each func(st lang.Statement, res Result, rows *Rows) error) error {
	stmts, err := lang.ParseScript(file, src)
	if err != nil {
		return err
	}
	s := db.Session()
	for _, ast := range stmts {
		res, rows, err := s.Run(ctx, ast)
		if err == nil && each != nil {
			err = each(ast, res, rows)
		}
		if err != nil {
			s.Close()
			return err
		}
	}
	return s.Close()
}

// positioned prefixes an error that carries no position with the
// statement's.
func positioned(st lang.Statement, err error) error {
	if _, ok := err.(*lang.Error); ok {
		return err
	}
	return &lang.Error{Pos: st.Pos(), Msg: err.Error(), Err: err}
}

// Explain returns the plan of a statement without running it.
func (db *DB) Explain(ctx context.Context, src string, args ...any) (string, error) {
	st, err := db.prepare(src)
	if err != nil {
		return "", err
	}
	return st.Explain(ctx, args...)
}

func (db *DB) relation(name string, at lang.Pos) (*catalog.Relation, error) {
	r := db.Catalog().Relation(name)
	if r == nil {
		return nil, lang.UnknownAt(at, "unknown relation %s", name)
	}
	return r, nil
}

// define applies a DEFINE or DROP SCHEMA statement. A new layout of a
// relation that holds tuples, and a dropped layout, go through the online
// states of layouts.go: writers keep running. Other definitions — a
// relation, a layout of a relation that holds no tuple — are checked,
// their tables created and the new catalog version saved while no write
// of this DB runs. An identical re-definition is a no-op
// (or finishes an interrupted one), so a definition script can be run
// again on an existing store.
func (db *DB) define(ctx context.Context, st lang.Statement) error {
	db.ddl.Lock()
	defer db.ddl.Unlock()
	if err := db.current(ctx); err != nil {
		return err
	}
	switch d := st.(type) {
	case *lang.DropSchema:
		return db.dropSchema(ctx, d)
	case *lang.DefineSchema:
		if err := db.finishDrops(ctx); err != nil {
			return err
		}
		cat := db.Catalog()
		if x, _ := cat.LayoutIndex(d.Name); x != nil && lang.Print(x.Layout().Def) == lang.Print(d) {
			if !x.WriteOnly {
				return nil
			}
			return db.buildLayout(ctx, d.Relation, d.Name) // an interrupted DEFINE SCHEMA
		}
		if r := cat.Relation(d.Relation); r != nil && len(r.Indexes) > 0 {
			// A relation with no tuple takes the layout at once, as below;
			// else online.
			db.defining.Lock()
			some, err := db.holdsTuples(ctx, r)
			if err != nil || some {
				db.defining.Unlock()
				if err != nil {
					return err
				}
				return db.addLayout(ctx, d)
			}
			defer db.defining.Unlock()
			return db.defineStopped(ctx, st)
		}
	}
	// No write runs meanwhile: each holds defining from resolving its
	// relation to applying its batch.
	db.defining.Lock()
	defer db.defining.Unlock()
	return db.defineStopped(ctx, st)
}

// defineStopped applies a definition that needs no backfill, while no
// write of this DB runs (the caller holds defining).
func (db *DB) defineStopped(ctx context.Context, st lang.Statement) error {
	old, version := db.catalogVersion()
	if existing := existingDef(old, st); existing != nil {
		if lang.Print(existing) == lang.Print(st) {
			return nil
		}
	}
	cat := old.Clone()
	if err := cat.Define(st); err != nil {
		return err
	}
	if ds, ok := st.(*lang.DefineSchema); ok {
		if err := createTables(ctx, db.raw, cat.Layout(ds.Name)); err != nil {
			return err
		}
	}
	return db.saveDefs(ctx, version, cat, false)
}

func existingDef(c *catalog.Catalog, st lang.Statement) lang.Statement {
	switch d := st.(type) {
	case *lang.DefineRelation:
		if r := c.Relation(d.Name); r != nil {
			return r.Def
		}
	case *lang.DefineSchema:
		if l := c.Layout(d.Name); l != nil {
			return l.Def
		}
	}
	return nil
}

// createTables creates a layout's table with its family; a salted layout is
// pre-split at every bucket boundary (as Phoenix does), another at its SPLIT
// ON keys.
func createTables(ctx context.Context, s store.Store, l *layout.Layout) error {
	if l.StaticTable() == "" {
		return nil // created on first write, per table name
	}
	return s.CreateTable(ctx, l.TableSpec())
}

// kindOf names a statement kind for Result.Statement.
func kindOf(st lang.Statement) string {
	switch st.(type) {
	case *lang.DefineRelation, *lang.DefineSchema:
		return "DEFINE"
	case *lang.DropSchema:
		return "DROP SCHEMA"
	case *lang.AlterTable:
		return "ALTER TABLE"
	case *lang.Insert:
		return "INSERT"
	case *lang.Select:
		return "SELECT"
	case *lang.Update:
		return "UPDATE"
	case *lang.Delete:
		return "DELETE"
	case *lang.Explain:
		return "EXPLAIN"
	case *lang.Transaction:
		return st.(*lang.Transaction).Op.String()
	case *lang.Connect:
		if st.(*lang.Connect).Disconnect {
			return "DISCONNECT"
		}
		return "CONNECT"
	}
	return strings.ToUpper(fmt.Sprintf("%T", st))
}

// writeEpochs counts the writes under way (statements, transactions,
// loads: the holders of txGate) by the epoch they began in. A catalog
// switch installs the new version, then waits (wait) for the writes that
// began before: those that begin after plan with the new version. Taking
// txGate exclusively instead would also stop every write that begins
// meanwhile, for as long as the slowest one under way runs (writes
// waited 22–77 ms at each wave of a migration so).
type writeEpochs struct {
	mu     sync.Mutex
	cond   *sync.Cond
	epoch  uint64
	active map[uint64]int // writes under way by the epoch they began in
}

// enter registers a write beginning now; exit(epoch) ends it.
func (w *writeEpochs) enter() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active == nil {
		w.active = map[uint64]int{}
	}
	w.active[w.epoch]++
	return w.epoch
}

func (w *writeEpochs) exit(epoch uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active[epoch]--; w.active[epoch] == 0 {
		delete(w.active, epoch)
		if w.cond != nil {
			w.cond.Broadcast()
		}
	}
}

// wait begins a new epoch and returns once every write of the epochs
// before it has ended.
func (w *writeEpochs) wait() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cond == nil {
		w.cond = sync.NewCond(&w.mu)
	}
	before := w.epoch
	w.epoch++
	for {
		busy := false
		for e := range w.active {
			if e <= before {
				busy = true
				break
			}
		}
		if !busy {
			return
		}
		w.cond.Wait()
	}
}
