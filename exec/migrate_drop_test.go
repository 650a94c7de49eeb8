package exec_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
)

// holdingStore holds the first read of one table, once armed, until
// released: a reader that planned with an index before a migration
// dropped it.
type holdingStore struct {
	*memstore.Store
	table   string
	armed   atomic.Bool
	held    chan struct{}
	release chan struct{}
}

func (s *holdingStore) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if table == s.table && s.armed.CompareAndSwap(true, false) {
		s.held <- struct{}{}
		<-s.release
	}
	return s.Store.ReadRows(ctx, table, rs, opts, fn)
}

// TestMigrateDropWaitsForReaders: a migration deletes the rows of an index
// it drops only once a query that planned with it before has read them.
func TestMigrateDropWaitsForReaders(t *testing.T) {
	ctx := context.Background()
	m, _ := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	const dropped = "cf_users_by_rating"
	st := &holdingStore{Store: memstore.New(), table: dropped, held: make(chan struct{}, 1), release: make(chan struct{})}
	db := deployedDB(t, st, from)
	if _, err := db.Load(ctx, source(gen.Generate(m, tinyRUBiS, 2, 0)), exec.LoadOptions{Identity: "drop-readers"}); err != nil {
		t.Fatal(err)
	}
	const query = "SELECT users.id FROM users WHERE users.rating = ?"
	count := func() int {
		rows, err := db.Query(ctx, query, int64(3))
		if err != nil {
			t.Fatal(err)
		}
		return len(rows.All())
	}
	want := count()
	if want == 0 {
		t.Fatal("no user has rating 3: pick another")
	}
	st.armed.Store(true)
	type answer struct {
		n   int
		err error
	}
	read := make(chan answer, 1)
	go func() {
		rows, err := db.Query(ctx, query, int64(3))
		if err != nil {
			read <- answer{err: err}
			return
		}
		read <- answer{n: len(rows.All())}
	}()
	<-st.held
	done := make(chan error, 1)
	go func() {
		_, err := migrateRUBiS(db, to, kvschema.MigrateOptions{})
		done <- err
	}()
	ended := func() {
		select {
		case err := <-done:
			t.Fatalf("the migration ended (%v) while a reader of %s was under way", err, dropped)
		default:
		}
	}
	gone := func() bool {
		a := db.Catalog().Advised
		return a != nil && a.Schema.Index(dropped) == nil
	}
	for deadline := time.Now().Add(time.Minute); !gone(); time.Sleep(time.Millisecond) {
		ended()
		if time.Now().After(deadline) {
			t.Fatalf("the migration did not take %s out of the schema in a minute", dropped)
		}
	}
	time.Sleep(50 * time.Millisecond)
	ended()
	if n := storetest.CountRows(t, st.Store, dropped); n == 0 {
		t.Fatalf("the rows of %s were deleted while a reader of it was under way", dropped)
	}
	close(st.release)
	if a := <-read; a.err != nil || a.n != want {
		t.Errorf("the reader of %s: %d rows (want %d), %v", dropped, a.n, want, a.err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := storetest.CountRows(t, st.Store, dropped); n != 0 {
		t.Errorf("%s has %d rows after the migration", dropped, n)
	}
	if n := count(); n != want {
		t.Errorf("after the migration: %d rows, want %d", n, want)
	}
}

// droppingStore loses the first rows a backfill writes to one table.
type droppingStore struct {
	*memstore.Store
	table  string
	family string // only cells of this family, if set
	lose   atomic.Int64
}

func (s *droppingStore) Apply(ctx context.Context, muts []store.Mutation) error {
	kept := muts[:0:0]
	for _, m := range muts {
		if m.Table == s.table && m.Kind == store.SetCell && (s.family == "" || m.Family == s.family) && s.lose.Add(-1) >= 0 {
			continue
		}
		kept = append(kept, m)
	}
	return s.Store.Apply(ctx, kept)
}

// TestMigrateVerifyCatchesLoss: a migration that built an index with cells
// missing leaves it write-only and says so: the verify before a wave is
// made readable derives the new index's rows (and, for static columns, its
// partition rows) from the indexes they are built from.
func TestMigrateVerifyCatchesLoss(t *testing.T) {
	ctx := context.Background()
	m, _ := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	for _, c := range []struct{ table, family, want string }{
		{"cf_regions_users_items", "", "]"},
		{"cf_items_bids_static", "", "]"},
		{"cf_items_bids_static", layout.StaticColumnFamily, "] (the partition's static columns)"},
	} {
		table := c.table
		st := &droppingStore{Store: memstore.New(), table: table, family: c.family}
		db := deployedDB(t, st, from)
		if _, err := db.Load(ctx, source(gen.Generate(m, tinyRUBiS, 2, 0)), exec.LoadOptions{Identity: "loss"}); err != nil {
			t.Fatal(err)
		}
		st.lose.Store(3)
		_, err := migrateRUBiS(db, to, kvschema.MigrateOptions{})
		if err == nil || !strings.Contains(err.Error(), "the new indexes disagree with the data") || !strings.Contains(err.Error(), table+": missing row [") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("migrating with 3 cells of %s lost (family %q): %v", table, c.family, err)
		}
	}
}
