package kvschema

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store/overlaystore"
)

// Tx is a write transaction: several statements that take effect together
// or not at all.
//
//   - Its statements read the store as the DB's writers left it at Begin,
//     plus the transaction's own writes; nobody else sees those writes
//     before Commit, which applies all of them in one atomic batch (so a
//     reader sees the whole transaction or none of it). A failed Commit
//     writes nothing and ends the transaction, as Rollback does.
//   - Write transactions are serialized with the DB's other writers:
//     Begin waits until no write of this DB is running and then holds
//     every write lock until Commit or Rollback, so writes outside the
//     transaction (and other transactions' Begin) wait for it to end —
//     the isolation of SQLite's exclusive transactions. A write that waits
//     longer than Options.BusyTimeout (5 s) fails with ErrBusy, as does a
//     Begin that waits that long for another transaction — so a goroutine
//     that writes through the DB while its own transaction is open gets an
//     error, not a hang. Readers never wait.
//   - The writes wait in memory (package overlaystore) until Commit.
//   - Definitions (DEFINE …), Deploy, Load, Repair, Snapshot and Begin
//     are refused inside it (ErrInTx): definitions are not transactional.
//
// It needs a store whose batches are atomic (Pebble, mem:; and Bigtable
// through txnstore's multi-row writes); elsewhere Begin fails with an
// error wrapping errors.ErrUnsupported. A Tx is for one goroutine at a
// time.
type Tx struct {
	db     *DB // the transaction's own: statements run here
	parent *DB
	ov     *overlaystore.Store
	held   exec.Held
	gate   func() // lets go of the parent's txGate

	mu   sync.Mutex
	done bool
}

// ErrInTx is the error of an operation a transaction does not take:
// definitions, Deploy, Load, Verify, Repair, Snapshot and Begin.
var ErrInTx = errors.New("kvschema: not inside a transaction: definitions, deploying, loading, verifying, repairing, snapshots and nested transactions run outside one")

// ErrTxDone is the error of a statement, Commit or Rollback on a
// transaction that has ended.
var ErrTxDone = errors.New("kvschema: the transaction has already been committed or rolled back")

// Begin starts a write transaction (see Tx).
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	switch {
	case db.tx != nil:
		return nil, fmt.Errorf("Begin: %w", ErrInTx)
	case db.readOnly:
		return nil, fmt.Errorf("Begin: %w", ErrReadOnly)
	case !db.raw.Capabilities().AtomicBatch:
		return nil, fmt.Errorf("kvschema: this store does not apply a batch atomically (%T), so a transaction could not commit all or nothing; each statement is atomic on its own: %w", db.raw, errors.ErrUnsupported)
	}
	// No other write of this DB runs while it is open (writes wait for it,
	// as it waits for them: txGate, with a timeout), no definition may
	// change the catalog under it, and, for writers that bypass
	// statements, it holds every write stripe.
	gate, err := db.waitTx(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("Begin: %w", err)
	}
	db.defining.RLock()
	held := db.locks.All()
	release := func() {
		db.locks.Unlock(held)
		db.defining.RUnlock()
		gate()
	}
	ov := overlaystore.New(db.raw)
	txdb, err := New(ctx, ov, db.opts)
	if err != nil {
		release()
		return nil, err
	}
	txdb.owns = true
	txdb.observed, txdb.ownsObserved = db.observed, false
	tx := &Tx{db: txdb, parent: db, ov: ov, held: held, gate: gate}
	txdb.tx = tx
	return tx, nil
}

// DB is the DB the transaction's statements run on (for the statements of
// a database/sql connection or a shell session in a transaction). It ends
// with the transaction; see Tx for what it refuses.
func (tx *Tx) DB() *DB { return tx.db }

// Exec runs one statement in the transaction (see DB.Exec).
func (tx *Tx) Exec(ctx context.Context, src string, args ...any) (Result, error) {
	return tx.db.Exec(ctx, src, args...)
}

// Query runs one SELECT in the transaction (see DB.Query): it sees the
// transaction's own writes.
func (tx *Tx) Query(ctx context.Context, src string, args ...any) (*Rows, error) {
	return tx.db.Query(ctx, src, args...)
}

// Prepare prepares a statement that runs in the transaction (see
// DB.Prepare).
func (tx *Tx) Prepare(src string) (*Stmt, error) { return tx.db.Prepare(src) }

// Pending is the number of store mutations Commit would apply.
func (tx *Tx) Pending() int { return tx.ov.Pending() }

// Commit applies the transaction's writes in one atomic batch and ends it.
// If the batch fails, nothing is written and the transaction ends all the
// same.
func (tx *Tx) Commit(ctx context.Context) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return ErrTxDone
	}
	err := tx.ov.Commit(ctx)
	tx.end()
	if err != nil {
		return fmt.Errorf("kvschema: commit failed, nothing of the transaction was written: %w", err)
	}
	return nil
}

// Rollback drops the transaction's writes and ends it.
func (tx *Tx) Rollback() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return ErrTxDone
	}
	tx.end()
	return nil
}

// end closes the transaction's DB (dropping what is pending) and lets the
// DB's writers go on.
func (tx *Tx) end() {
	tx.done = true
	tx.db.Close()
	tx.parent.locks.Unlock(tx.held)
	tx.parent.defining.RUnlock()
	tx.gate()
}

// ended reports whether the transaction has ended.
func (tx *Tx) ended() bool {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.done
}

// ErrBusy is the error of a write, or a Begin, that waited Options.BusyTimeout
// for an open write transaction of the same DB to end.
var ErrBusy = errors.New("kvschema: the database is busy: a write transaction is open (it holds every write until it commits or rolls back)")

// waitTx takes db.txGate, shared or exclusive, waiting at most the busy
// timeout (and while ctx lasts); release lets it go.
func (db *DB) waitTx(ctx context.Context, exclusive bool) (release func(), err error) {
	try, unlock := db.txGate.TryRLock, db.txGate.RUnlock
	if exclusive {
		try, unlock = db.txGate.TryLock, db.txGate.Unlock
	}
	timeout := db.opts.BusyTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; !try(); wait = min(2*wait, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (waited %v)", ErrBusy, timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	epoch := db.writes.enter()
	return func() {
		db.writes.exit(epoch)
		unlock()
	}, nil
}

// definition reports whether st changes the catalog.
func definition(st lang.Statement) bool {
	switch st.(type) {
	case *lang.DefineRelation, *lang.DefineSchema, *lang.DropSchema:
		return true
	}
	return false
}

// writes reports whether st changes tuples.
func writes(st lang.Statement) bool {
	switch st.(type) {
	case *lang.Insert, *lang.Update, *lang.Delete, *lang.Connect:
		return true
	}
	return false
}
