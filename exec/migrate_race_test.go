package exec_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
)

// migrationTarget is testdata/rubis_schema.kvs changed in every way a
// migration handles: a column family dropped (cf_users_by_rating), one
// whose clustering key changes (cf_comments_users_by_rating: the new one
// takes the old name, so the store names it otherwise until the old one
// is gone), a secondary index added (on users' rating, in place of the
// dropped family), a column family with static columns added, and one
// over a three-entity path added.
func migrationTarget(t testing.TB) (from, to []byte) {
	t.Helper()
	src, err := os.ReadFile("testdata/rubis_schema.kvs")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	cut := func(name string) {
		i := strings.Index(s, "DEFINE COLUMN FAMILY "+name+" ")
		j := strings.Index(s[i:], "};\n")
		s = s[:i] + s[i+j+3:]
	}
	cut("cf_users_by_rating")
	old := "PARTITION KEY (comments.rating),\n  CLUSTERING KEY (comments.id, comments.from_user.id)"
	if !strings.Contains(s, old) {
		t.Fatal("testdata/rubis_schema.kvs changed: update migrationTarget")
	}
	s = strings.Replace(s, old, "PARTITION KEY (comments.rating),\n  CLUSTERING KEY (comments.from_user.id, comments.id)", 1)
	s += `
DEFINE SECONDARY INDEX si_users_by_rating ON cf_users_by_id (users.rating);

DEFINE COLUMN FAMILY cf_items_bids_static FOR items {
  PARTITION KEY (items.id),
  CLUSTERING KEY (items.bids.id),
  STATIC (items.max_bid, items.name),
  VALUES (items.bids.bid, items.bids.qty)
};

DEFINE COLUMN FAMILY cf_regions_users_items FOR regions {
  PARTITION KEY (regions.id),
  CLUSTERING KEY (regions.users.id, regions.users.items_sold.id),
  VALUES (regions.users.nickname, regions.users.items_sold.name)
};
`
	return src, []byte(s)
}

// deployedDB is a DB on st with the RUBiS model and schema deployed,
// closed when the test ends.
func deployedDB(t testing.TB, st store.Store, schema []byte) *kvschema.DB {
	t.Helper()
	db, err := kvschema.New(context.Background(), st, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Deploy(context.Background(), "model.kvs", []byte(examples.RUBiSModel), "schema.kvs", schema, cost.Cassandra); err != nil {
		t.Fatal(err)
	}
	return db
}

// migrateRUBiS migrates db's RUBiS schema to target.
func migrateRUBiS(db *kvschema.DB, target []byte, opt kvschema.MigrateOptions) (*kvschema.Migration, error) {
	return db.Migrate(context.Background(), "model.kvs", []byte(examples.RUBiSModel), "target.kvs", target, cost.Cassandra, opt)
}

// TestMigrateRace runs a migration (migrationTarget) while writers insert
// bids and update items and users through the same DB — the paths the
// race detector watches: the writes' markers, the backfill's catch-up
// under the writers' locks, the catalog switches — and checks the store
// verifies clean on its own after it. (TestMigrateUnderLoad, which also
// compares with SQLite, is left out of race builds.)
func TestMigrateRace(t *testing.T) {
	ctx := context.Background()
	m, _ := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	db := deployedDB(t, memstore.New(), from)
	d := gen.Generate(m, tinyRUBiS, 2, 0)
	if _, err := db.Load(ctx, source(d), exec.LoadOptions{Identity: "race"}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var nextBid atomic.Int64
	nextBid.Store(1_000_000)
	errs := make(chan error, 4)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for !stop.Load() {
				item, user := int64(1+r.IntN(tinyRUBiS(m.Entity("items")))), int64(1+r.IntN(tinyRUBiS(m.Entity("users"))))
				var err error
				switch r.IntN(3) {
				case 0:
					_, err = db.Exec(ctx, "INSERT INTO bids SET id=?, qty=?, bid=?, date=? AND CONNECT TO item(?), user(?)",
						nextBid.Add(1), int64(1), 2.5, time.Date(2024, 1, 1+r.IntN(9), 0, 0, 0, 0, time.UTC), item, user)
				case 1:
					_, err = db.Exec(ctx, "UPDATE items SET max_bid = ?, name = ? WHERE items.id = ?", float64(r.IntN(100)), "n"+strings.Repeat("x", r.IntN(3)), item)
				default:
					_, err = db.Exec(ctx, "UPDATE users SET rating = ?, nickname = ? WHERE users.id = ?", int64(r.IntN(5)), "u", user)
				}
				if err != nil {
					errs <- err
					stop.Store(true)
					return
				}
			}
		}()
	}
	_, err := migrateRUBiS(db, to, kvschema.MigrateOptions{Rate: 3000})
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err != nil {
		t.Fatal(err)
	}
	en, _ := db.Advised(ctx)
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Fatalf("verify after the migration:\n%s", rep)
	}
}
