package kvschema_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
)

const txSchema = `
DEFINE RELATION acct { id BIGINT KEY, owner STRING, balance BIGINT };
DEFINE PRIMARY SCHEMA acct_by_id FOR acct { TABLE 'acct', ROW ordered{id}, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id'] };
DEFINE SCHEMA acct_by_owner FOR acct { TABLE 'acct_owner', ROW ordered{owner}:ordered{id}, FAMILY 'f', QUALIFIER attr_name['id','owner'], VALUE attr_value['id','owner'] };
`

func txDB(t *testing.T, s store.Store) *kvschema.DB {
	t.Helper()
	db, err := kvschema.New(t.Context(), s, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Script(t.Context(), "schema.kvs", []byte(txSchema), nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// all reads the relation through both layouts, which must agree.
func all(t *testing.T, db *kvschema.DB) string {
	t.Helper()
	rows, err := db.Query(t.Context(), "SELECT id, owner, balance FROM acct")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rows.All())
	rows, err = db.Query(t.Context(), "SELECT id, owner, balance FROM acct WHERE owner >= '' ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if by := fmt.Sprint(rows.All()); by != got {
		t.Fatalf("the layouts disagree: by id %s, by owner %s", got, by)
	}
	return got
}

// TestTxCommitRollback: a transaction's statements see its own writes,
// nobody else does before Commit, Commit makes them all visible at once
// (every layout), Rollback drops them, and an ended transaction takes
// nothing more.
func TestTxCommitRollback(t *testing.T) {
	ctx := t.Context()
	db := txDB(t, memstore.New())
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'ann', 100), (2, 'bo', 50)"); err != nil {
		t.Fatal(err)
	}
	before := all(t, db)

	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		"UPDATE acct SET balance = 70 WHERE id = 1",
		"UPDATE acct SET balance = 80 WHERE id = 2",
		"INSERT INTO acct VALUES (3, 'cy', 0)",
		"UPDATE acct SET owner = 'cyd' WHERE id = 3", // moves the tuple in acct_by_owner
		"DELETE FROM acct WHERE owner = 'bo'",
	} {
		if _, err := tx.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	const inTx = "[[1 ann 70] [3 cyd 0]]"
	if got := all(t, tx.DB()); got != inTx {
		t.Fatalf("inside the transaction: %s, want %s", got, inTx)
	}
	if got := all(t, db); got != before {
		t.Fatalf("outside the open transaction: %s, want %s", got, before)
	}
	if tx.Pending() == 0 {
		t.Fatal("no pending mutations")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := all(t, db); got != inTx {
		t.Fatalf("after Commit: %s, want %s", got, inTx)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO acct VALUES (4, 'dee', 1)"); !errors.Is(err, kvschema.ErrTxDone) {
		t.Errorf("a statement after Commit: %v, want ErrTxDone", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, kvschema.ErrTxDone) {
		t.Errorf("a second Commit: %v, want ErrTxDone", err)
	}

	tx, err = db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM acct WHERE id >= 0"); err != nil {
		t.Fatal(err)
	}
	if got := all(t, tx.DB()); got != "[]" {
		t.Fatalf("inside: %s, want []", got)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := all(t, db); got != inTx {
		t.Fatalf("after Rollback: %s, want %s", got, inTx)
	}
	// Locks were let go: the DB writes again.
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (5, 'eve', 5)"); err != nil {
		t.Fatal(err)
	}
}

// TestTxRefusals: what a transaction does not take, and a failed
// statement inside one (which writes nothing and leaves the transaction
// usable).
func TestTxRefusals(t *testing.T) {
	ctx := t.Context()
	db := txDB(t, memstore.New())
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(ctx, "DEFINE RELATION other { k BIGINT KEY }"); !errors.Is(err, kvschema.ErrInTx) {
		t.Errorf("DEFINE in a transaction: %v, want ErrInTx", err)
	}
	if _, err := tx.DB().Begin(ctx); !errors.Is(err, kvschema.ErrInTx) {
		t.Errorf("nested Begin: %v, want ErrInTx", err)
	}
	if _, err := tx.DB().Snapshot(ctx); !errors.Is(err, kvschema.ErrInTx) {
		t.Errorf("Snapshot: %v, want ErrInTx", err)
	}
	if _, err := tx.DB().Deploy(ctx, "m", nil, "s", nil, cost.Cassandra); !errors.Is(err, kvschema.ErrInTx) {
		t.Errorf("Deploy: %v, want ErrInTx", err)
	}
	if _, err := tx.DB().Load(ctx, nil, exec.LoadOptions{}); !errors.Is(err, kvschema.ErrInTx) {
		t.Errorf("Load: %v, want ErrInTx", err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO acct VALUES (2, 'bo', 2)"); err != nil {
		t.Fatal(err)
	}
	n := tx.Pending()
	if _, err := tx.Exec(ctx, "INSERT INTO acct VALUES (3, 'cy', 1), (4, 'dee', 'x')"); err == nil {
		t.Error("an INSERT of a STRING into a BIGINT was taken")
	}
	if tx.Pending() != n {
		t.Errorf("a failed INSERT left %d pending mutations", tx.Pending()-n)
	}
	if got := all(t, tx.DB()); got != "[[2 bo 2]]" {
		t.Errorf("after a failed INSERT: %s", got)
	}
	snapDB := txDB(t, txnlessStore{memstore.New()})
	if _, err := snapDB.Begin(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Begin on a store without atomic batches: %v, want errors.ErrUnsupported", err)
	}
}

// txnlessStore applies batches row by row.
type txnlessStore struct{ store.Store }

func (txnlessStore) Capabilities() store.Capabilities { return store.Capabilities{} }

// failCommit fails Apply once armed.
type failCommit struct {
	store.Store
	armed bool
}

func (f *failCommit) Apply(ctx context.Context, muts []store.Mutation) error {
	if f.armed {
		return errors.New("disk full")
	}
	return f.Store.Apply(ctx, muts)
}

// TestTxCommitFails: a commit the store refuses writes nothing and ends the
// transaction.
func TestTxCommitFails(t *testing.T) {
	ctx := t.Context()
	fs := &failCommit{Store: memstore.New()}
	db := txDB(t, fs)
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'ann', 100)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE acct SET balance = 0 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO acct VALUES (2, 'bo', 100)"); err != nil {
		t.Fatal(err)
	}
	fs.armed = true
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("Commit succeeded on a failing store")
	}
	fs.armed = false
	if got := all(t, db); got != "[[1 ann 100]]" {
		t.Fatalf("after a failed commit: %s", got)
	}
	if err := tx.Rollback(); !errors.Is(err, kvschema.ErrTxDone) {
		t.Errorf("Rollback after a failed Commit: %v, want ErrTxDone", err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (3, 'cy', 1)"); err != nil {
		t.Fatal(err)
	}
}

// TestTxSerialized: a write outside an open transaction waits for it, so
// it applies to what the transaction committed (a transfer between two
// accounts never loses the outside update).
func TestTxSerialized(t *testing.T) {
	ctx := t.Context()
	db := txDB(t, memstore.New())
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'ann', 100), (2, 'bo', 0)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE acct SET balance = 40 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	outside := make(chan error, 1)
	go func() {
		_, err := db.Exec(context.Background(), "UPDATE acct SET owner = 'ann2' WHERE id = 1")
		outside <- err
	}()
	select {
	case err := <-outside:
		t.Fatalf("a write outside the open transaction ran (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := tx.Exec(ctx, "UPDATE acct SET balance = 60 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-outside; err != nil {
		t.Fatal(err)
	}
	if got := all(t, db); got != "[[1 ann2 40] [2 bo 60]]" {
		t.Fatalf("after both: %s", got)
	}
}

// TestTxAdvisedSchema: model-level writes on an advised schema in one
// transaction: read back inside it, invisible outside until Commit, and
// every column family and index consistent after it.
func TestTxAdvisedSchema(t *testing.T) {
	ctx := t.Context()
	db := advisedDB(t)
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		"INSERT INTO users (id, nickname, rating, region) VALUES (91001, 'ann', 1, 1)",
		"UPDATE users SET rating = 5 WHERE users.id = 91001",
		"UPDATE items SET nb_of_bids = 7 WHERE items.id = 3",
		"UPDATE items SET quantity = 4242 WHERE items.id = 4", // indexed by si_items_by_quantity
	} {
		if _, err := tx.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	read := func(db *kvschema.DB, q string) string {
		rows, err := db.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(rows.All())
	}
	const user = "SELECT users.nickname, users.rating FROM users WHERE users.id = 91001"
	const item = "SELECT items.nb_of_bids FROM items WHERE items.id = 3"
	if got := read(tx.DB(), user); got != "[[ann 5]]" {
		t.Fatalf("inside: %s", got)
	}
	if got := read(db, user); got != "[]" {
		t.Fatalf("outside before Commit: %s", got)
	}
	// Through the secondary index (on Pebble, the store's local index,
	// read through the transaction's pending writes).
	const byQuantity = "SELECT items.name FROM items WHERE items.quantity = 4242"
	if ex, err := tx.DB().Explain(ctx, byQuantity); err != nil || !strings.Contains(ex, "LOCAL INDEX si_items_by_quantity") {
		t.Fatalf("the query does not read the local index: %v\n%s", err, ex)
	}
	name4 := read(db, "SELECT items.name FROM items WHERE items.id = 4")
	if got := read(tx.DB(), byQuantity); got != name4 {
		t.Fatalf("inside, through the index: %s, want item 4's %s", got, name4)
	}
	if got := read(db, byQuantity); got != "[]" {
		t.Fatalf("outside before Commit, through the index: %s", got)
	}
	itemBefore := read(db, item)
	if itemBefore == "[[7]]" {
		t.Fatal("the item's update shows before Commit")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(db, user); got != "[[ann 5]]" {
		t.Fatalf("after Commit: %s", got)
	}
	if got := read(db, item); got != "[[7]]" {
		t.Fatalf("after Commit: %s", got)
	}
	if got := read(db, byQuantity); got != name4 {
		t.Fatalf("after Commit, through the index: %s", got)
	}
	if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("verify after the transaction: %v %v", rep, err)
	}
}

// TestTxBusy: a write, or a Begin, waits for an open transaction at most
// the busy timeout (a goroutine writing beside its own transaction gets
// ErrBusy, not a hang), and no longer than its context.
func TestTxBusy(t *testing.T) {
	ctx := t.Context()
	db, err := kvschema.New(ctx, memstore.New(), kvschema.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Script(ctx, "schema.kvs", []byte(txSchema), nil); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'ann', 1)"); !errors.Is(err, kvschema.ErrBusy) {
		t.Errorf("a write beside an open transaction: %v, want ErrBusy", err)
	}
	if _, err := db.Begin(ctx); !errors.Is(err, kvschema.ErrBusy) {
		t.Errorf("a second Begin: %v, want ErrBusy", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.Exec(cancelled, "INSERT INTO acct VALUES (1, 'ann', 1)"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled write: %v, want context.Canceled", err)
	}
	if _, err := db.Query(ctx, "SELECT * FROM acct"); err != nil {
		t.Errorf("a read beside an open transaction: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'ann', 1)"); err != nil {
		t.Errorf("a write after the transaction: %v", err)
	}
}
