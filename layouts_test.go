package kvschema_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/faultstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
)

// The relation of the online layout tests: acct_by_id and acct_wide from
// the start, acct_by_owner (another key order, addressed by non-key
// attributes) added online, acct_by_id dropped online.
const onlineDefs = `
DEFINE RELATION acct { id BIGINT KEY, owner STRING, balance BIGINT };
DEFINE PRIMARY SCHEMA acct_by_id FOR acct { TABLE 'acct', ROW ordered{id}, QUALIFIER attr_name['id'], VALUE attr_value['id'] };
DEFINE SCHEMA acct_wide FOR acct { TABLE 'acct_wide', ROW salt(4){ordered{id}}:ordered{id}, FAMILY 'w', QUALIFIER attr_name['id'], VALUE attr_value['id'] };
`

const (
	addByOwner  = "DEFINE SCHEMA acct_by_owner FOR acct { TABLE 'acct_owner', ROW ordered{owner}:ordered{balance}:ordered{id} }"
	dropByID    = "DROP SCHEMA acct_by_id"
	stableCount = 50
	stableBase  = 1_000_000
)

// acctRow is a tuple of acct but its key.
type acctRow struct {
	owner   string
	balance int64
}

// populate defines acct and inserts n tuples (ids 0..n-1) plus the
// stable ones, which no writer touches; it returns them as a reference.
func populate(t *testing.T, db *kvschema.DB, n int) map[int64]acctRow {
	t.Helper()
	ctx := context.Background()
	if err := db.Script(ctx, "defs", []byte(onlineDefs), nil); err != nil {
		t.Fatal(err)
	}
	ref := map[int64]acctRow{}
	var vals []string
	flush := func() {
		if len(vals) > 0 {
			if _, err := db.Exec(ctx, "INSERT INTO acct VALUES "+strings.Join(vals, ", ")); err != nil {
				t.Fatal(err)
			}
			vals = vals[:0]
		}
	}
	add := func(id int64, r acctRow) {
		ref[id] = r
		vals = append(vals, fmt.Sprintf("(%d, '%s', %d)", id, r.owner, r.balance))
		if len(vals) == 500 {
			flush()
		}
	}
	for id := range int64(n) {
		add(id, acctRow{fmt.Sprintf("o%d", id%5), id})
	}
	for i := range int64(stableCount) {
		add(stableBase+i, acctRow{"stable", 7})
	}
	flush()
	return ref
}

// acctRows reads acct through the one layout a cost model lets it read.
func acctRows(t *testing.T, st store.Store, layout string) map[int64]acctRow {
	t.Helper()
	db, err := kvschema.New(context.Background(), st, kvschema.Options{CostModel: onlyLayout(layout), NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(context.Background(), "SELECT id, owner, balance FROM acct")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]acctRow{}
	for _, r := range rows.All() {
		out[r[0].(int64)] = acctRow{r[1].(string), r[2].(int64)}
	}
	return out
}

// checkAcct checks that every layout of acct holds the reference, and
// that verify finds nothing.
func checkAcct(t *testing.T, db *kvschema.DB, ref map[int64]acctRow) {
	t.Helper()
	ctx := context.Background()
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range rep.Differences {
		if i == 5 {
			t.Errorf("… %d differences in all", len(rep.Differences))
			break
		}
		t.Errorf("verify: %s", d)
	}
	for _, x := range db.Catalog().Relation("acct").Indexes {
		got := acctRows(t, db.Store(), x.Name)
		if diff := cmp.Diff(ref, got, cmp.AllowUnexported(acctRow{})); diff != "" {
			t.Errorf("schema %s differs from the reference (-want +got):\n%s", x.Name, diff)
		}
	}
}

// layoutState is acct's layouts (write-only ones starred) and the
// dropping ones (in brackets).
func layoutState(db *kvschema.DB) string {
	cat := db.Catalog()
	var out []string
	for _, x := range cat.Relation("acct").Indexes {
		n := x.Name
		if x.WriteOnly {
			n += "*"
		}
		out = append(out, n)
	}
	for _, l := range cat.Dropping() {
		out = append(out, "["+l.Name+"]")
	}
	return strings.Join(out, " ")
}

// TestOnlineLayoutChangeConcurrent: writers insert, update and delete
// tuples of acct (each its own keys, checking every statement's count and
// every conditional insert's outcome against a reference it keeps) and a
// reader reads tuples nobody writes through the layout the new one will
// serve, while acct_by_owner is added (DEFINE SCHEMA on the populated
// relation) and acct_by_id dropped (DROP SCHEMA). The reader never misses
// a tuple (no plan reads the layout before it is complete), verify is
// clean in between and at the end, and every layout left holds exactly
// the reference; the dropped layout's table is empty.
func TestOnlineLayoutChangeConcurrent(t *testing.T) {
	for _, tc := range []struct{ name, url string }{
		{"mem", "mem:"},
		{"pebble", "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 6000
			if testing.Short() {
				n = 1000
			}
			onlineLayoutChange(t, tc.url, n)
		})
	}
}

func onlineLayoutChange(t *testing.T, url string, n int) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, url, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := populate(t, db, n)
	const writers = 4
	refs := make([]map[int64]acctRow, writers)
	for w := range refs {
		refs[w] = map[int64]acctRow{}
	}
	for id, r := range base {
		if id < stableBase {
			refs[id%writers][id] = r
		}
	}
	stop := make(chan struct{})
	var ops atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := refs[w]
			r := rand.New(rand.NewPCG(uint64(w), 7))
			pick := func() int64 { return int64(w) + writers*int64(r.IntN(n/writers+n/40)) }
			owner := func() string { return fmt.Sprintf("o%d", r.IntN(5)) }
			count := func(what string, res kvschema.Result, err error, want int) bool {
				if err == nil && res.RowsAffected != int64(want) {
					err = fmt.Errorf("%d tuples, want %d", res.RowsAffected, want)
				}
				if err != nil {
					fail(fmt.Errorf("writer %d: %s: %w", w, what, err))
					return false
				}
				return true
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := pick()
				_, exists := ref[id]
				switch i % 7 {
				case 0, 1:
					row := acctRow{owner(), r.Int64N(1000)}
					res, err := db.Exec(ctx, "INSERT INTO acct VALUES (?, ?, ?)", id, row.owner, row.balance)
					if !count("insert", res, err, 1) {
						return
					}
					ref[id] = row
				case 2:
					row := acctRow{owner(), -r.Int64N(1000)}
					res, err := db.Exec(ctx, "UPDATE acct SET owner = ?, balance = ? WHERE id = ?", row.owner, row.balance, id)
					if !count("update", res, err, map[bool]int{true: 1}[exists]) {
						return
					}
					if exists {
						ref[id] = row
					}
				case 3, 4:
					res, err := db.Exec(ctx, "DELETE FROM acct WHERE id = ?", id)
					if !count("delete", res, err, map[bool]int{true: 1}[exists]) {
						return
					}
					delete(ref, id)
				case 5:
					ids := []int64{id, pick(), pick()}
					bal := r.Int64N(1000)
					want := 0
					seen := map[int64]bool{}
					for _, k := range ids {
						if _, ok := ref[k]; ok && !seen[k] {
							want++
						}
						seen[k] = true
					}
					res, err := db.Exec(ctx, "UPDATE acct SET balance = ? WHERE id IN (?, ?, ?)", bal, ids[0], ids[1], ids[2])
					if !count("update of three", res, err, want) {
						return
					}
					for k := range seen {
						if row, ok := ref[k]; ok {
							row.balance = bal
							ref[k] = row
						}
					}
				case 6:
					row := acctRow{owner(), r.Int64N(1000)}
					rows, err := db.Query(ctx, "INSERT INTO acct VALUES (?, ?, ?) IF NOT EXISTS", id, row.owner, row.balance)
					if err != nil {
						fail(fmt.Errorf("writer %d: conditional insert: %w", w, err))
						return
					}
					if applied := rows.All()[0][0].(bool); applied == exists {
						fail(fmt.Errorf("writer %d: conditional insert of %d applied %v, but the tuple existed: %v", w, id, applied, exists))
						return
					}
					if !exists {
						ref[id] = row
					}
				}
				ops.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rows, err := db.Query(ctx, "SELECT id FROM acct WHERE owner = 'stable'")
			if err == nil && len(rows.All()) != stableCount {
				err = fmt.Errorf("%d tuples, want %d", len(rows.All()), stableCount)
			}
			if err == nil {
				rows, err = db.Query(ctx, "SELECT balance FROM acct WHERE id = ?", int64(stableBase+i%stableCount))
				if err == nil && (len(rows.All()) != 1 || rows.All()[0][0] != int64(7)) {
					err = fmt.Errorf("stable tuple %d: %v", stableBase+i%stableCount, rows.All())
				}
			}
			if err != nil {
				fail(fmt.Errorf("reader: %w", err))
				return
			}
		}
	}()
	waitOps := func(k int64) {
		for start := ops.Load(); ops.Load() < start+k && len(errs) == 0; {
			time.Sleep(time.Millisecond)
		}
	}
	finish := func() {
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	waitOps(200)
	if _, err := db.Exec(ctx, addByOwner); err != nil {
		finish()
		t.Fatal(err)
	}
	if got := layoutState(db); got != "acct_by_id acct_wide acct_by_owner" {
		t.Errorf("after DEFINE SCHEMA: %s", got)
	}
	waitOps(100)
	// Verify stops this DB's writers while it reads: the three layouts
	// agree at that point.
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		finish()
		t.Fatal(err)
	}
	if len(rep.Differences) > 0 {
		t.Errorf("verify after the add, writers running: %d differences, the first %s", len(rep.Differences), rep.Differences[0])
	}
	if _, err := db.Exec(ctx, dropByID); err != nil {
		finish()
		t.Fatal(err)
	}
	waitOps(200)
	finish()
	t.Logf("%d writes", ops.Load())
	if got := layoutState(db); got != "acct_wide acct_by_owner" {
		t.Errorf("after DROP SCHEMA: %s", got)
	}
	ref := map[int64]acctRow{}
	for id, r := range base {
		if id >= stableBase {
			ref[id] = r
		}
	}
	for _, m := range refs {
		for id, r := range m {
			ref[id] = r
		}
	}
	checkAcct(t, db, ref)
	if k := storetest.CountRows(t, db.Store(), "acct"); k != 0 {
		t.Errorf("the dropped layout's table has %d rows", k)
	}
	// Reopened, the store has the same layouts, none in motion.
	again, err := kvschema.New(ctx, db.Store(), kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := layoutState(again); got != "acct_wide acct_by_owner" {
		t.Errorf("reopened: %s", got)
	}
	if s := again.Catalog().Stored().Script; strings.Contains(s, "-- kvschema") {
		t.Errorf("directives left in the stored definitions:\n%s", s)
	}
}

// TestOnlineLayoutCrashResume stops the store (store/faultstore) at
// several row mutations of an online DEFINE SCHEMA, then of an online
// DROP SCHEMA, on a populated relation. A new client writes through
// whatever state the stop left — reads give the reference all along —
// and runs the statement again, which finishes it: the new layout is
// complete and readable, or the dropped one gone with its rows; verify is
// clean and every layout holds the reference.
func TestOnlineLayoutCrashResume(t *testing.T) {
	ctx := context.Background()
	raw := memstore.New()
	open := func(s store.Store) *kvschema.DB {
		db, err := kvschema.New(ctx, s, kvschema.Options{NoWorkloadCounts: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	n := 600
	base := populate(t, open(raw), n)
	before, err := raw.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Release()
	// How many row mutations each statement makes.
	f := faultstore.New(raw)
	if _, err := open(f).Exec(ctx, addByOwner); err != nil {
		t.Fatal(err)
	}
	addTotal := f.Count()
	added, err := raw.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer added.Release()
	f = faultstore.New(raw)
	if _, err := open(f).Exec(ctx, dropByID); err != nil {
		t.Fatal(err)
	}
	dropTotal := f.Count()
	t.Logf("the add makes %d row mutations, the drop %d", addTotal, dropTotal)
	points := func(total int, seed uint64) []int {
		r := rand.New(rand.NewPCG(seed, seed))
		ks := []int{1, 2, 3, total / 2, total - 1, total}
		for len(ks) < 10 {
			ks = append(ks, 1+r.IntN(total))
		}
		slices.Sort(ks)
		return slices.Compact(ks)
	}
	for _, tc := range []struct {
		name, stmt string
		snap       store.Snapshot
		total      int
		// during: the states a stop may leave (acct's layouts), want: the
		// state after the statement runs again.
		during []string
		want   string
	}{
		{"add", addByOwner, before, addTotal,
			[]string{"acct_by_id acct_wide", "acct_by_id acct_wide acct_by_owner*"}, "acct_by_id acct_wide acct_by_owner"},
		{"drop", dropByID, added, dropTotal,
			[]string{"acct_by_id acct_wide acct_by_owner", "acct_by_id* acct_wide acct_by_owner", "acct_wide acct_by_owner [acct_by_id]"}, "acct_wide acct_by_owner"},
	} {
		for _, k := range points(tc.total, uint64(tc.total)) {
			t.Run(fmt.Sprintf("%s/k%d", tc.name, k), func(t *testing.T) {
				if err := tc.snap.Restore(ctx); err != nil {
					t.Fatal(err)
				}
				f := faultstore.New(raw)
				f.Arm(k, faultstore.Stop)
				if _, err := open(f).Exec(ctx, tc.stmt); err == nil {
					t.Fatalf("%s succeeded although the store stopped at row mutation %d of %d", tc.stmt, k, tc.total)
				}
				// A new client: reads are right in the state left, and its
				// writes keep every layout there.
				db := open(raw)
				defer db.Close()
				state := layoutState(db)
				if !slices.Contains(tc.during, state) {
					t.Fatalf("state after the stop: %s", state)
				}
				ref := map[int64]acctRow{}
				for id, r := range base {
					ref[id] = r
				}
				r := rand.New(rand.NewPCG(uint64(k), 1))
				for i := range 40 {
					id := int64(r.IntN(n + 20))
					var err error
					switch i % 3 {
					case 0:
						row := acctRow{fmt.Sprintf("o%d", r.IntN(5)), r.Int64N(1000)}
						_, err = db.Exec(ctx, "INSERT INTO acct VALUES (?, ?, ?)", id, row.owner, row.balance)
						ref[id] = row
					case 1:
						_, err = db.Exec(ctx, "DELETE FROM acct WHERE id = ?", id)
						delete(ref, id)
					case 2:
						_, err = db.Exec(ctx, "UPDATE acct SET owner = 'moved' WHERE id = ?", id)
						if row, ok := ref[id]; ok {
							row.owner = "moved"
							ref[id] = row
						}
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				rows, err := db.Query(ctx, "SELECT id, owner, balance FROM acct WHERE owner = 'stable'")
				if err != nil {
					t.Fatal(err)
				}
				if len(rows.All()) != stableCount {
					t.Errorf("state %s: %d stable tuples, want %d", state, len(rows.All()), stableCount)
				}
				if strings.Contains(state, "*") {
					plan, err := db.Explain(ctx, "SELECT * FROM acct WHERE owner = 'stable'")
					if err != nil || !strings.Contains(plan, "IS WRITE-ONLY (BEING ADDED OR DROPPED ONLINE): NOT READ") {
						t.Errorf("EXPLAIN in state %s does not say which layout is write-only (%v):\n%s", state, err, plan)
					}
					if d, err := db.Describe(ctx, "acct"); err != nil || !strings.Contains(d, "-- write-only: being added or dropped online") {
						t.Errorf("DESCRIBE in state %s (%v):\n%s", state, err, d)
					}
				}
				if _, err := db.Exec(ctx, tc.stmt); err != nil {
					t.Fatalf("running %s again: %v", tc.stmt, err)
				}
				if got := layoutState(db); got != tc.want {
					t.Errorf("state after running it again: %s, want %s", got, tc.want)
				}
				checkAcct(t, db, ref)
				if tc.name == "drop" {
					if k := storetest.CountRows(t, raw, "acct"); k != 0 {
						t.Errorf("the dropped layout's table has %d rows", k)
					}
				}
				// The store's definitions say the same to a new client.
				if got := layoutState(open(raw)); got != tc.want {
					t.Errorf("reopened: %s", got)
				}
			})
		}
	}
}

// TestDropSchemaRules: DROP SCHEMA of no layout names it; the last
// readable layout of a relation goes only when the relation is empty; a
// layout added to an empty relation takes one catalog version.
func TestDropSchemaRules(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Script(ctx, "defs", []byte(onlineDefs), nil); err != nil {
		t.Fatal(err)
	}
	version := func() uint64 {
		v, err := catalog.Version(ctx, db.Store())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := version()
	if _, err := db.Exec(ctx, addByOwner); err != nil {
		t.Fatal(err)
	}
	if got := version(); got != v+1 {
		t.Errorf("a layout of an empty relation took versions %d to %d", v, got)
	}
	_, err = db.Exec(ctx, "\n  DROP SCHEMA nope")
	var le interface{ Unwrap() error }
	if err == nil || !strings.Contains(err.Error(), "2:3: unknown schema nope") || !errors.As(err, &le) {
		t.Errorf("dropping an unknown schema: %v", err)
	}
	for _, s := range []string{"acct_by_id", "acct_wide"} {
		if _, err := db.Exec(ctx, "DROP SCHEMA "+s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'a', 2)"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(ctx, "DROP SCHEMA acct_by_owner")
	if err == nil || !strings.Contains(err.Error(), "cannot drop schema acct_by_owner: it is the last readable schema of relation acct, which holds tuples, so they would be lost") {
		t.Errorf("dropping the last layout of a relation with tuples: %v", err)
	}
	if _, err := db.Exec(ctx, "DELETE FROM acct WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "DROP SCHEMA acct_by_owner"); err != nil {
		t.Errorf("dropping the last layout of an empty relation: %v", err)
	}
	if got := layoutState(db); got != "" {
		t.Errorf("layouts left: %q", got)
	}
	for _, table := range []string{"acct", "acct_wide", "acct_owner"} {
		if k := storetest.CountRows(t, db.Store(), table); k != 0 {
			t.Errorf("table %s has %d rows", table, k)
		}
	}
	if _, err := db.Exec(ctx, "INSERT INTO acct VALUES (1, 'a', 2)"); err == nil || !strings.Contains(err.Error(), "has no schema") {
		t.Errorf("insert into a relation without layouts: %v", err)
	}
}

// TestDropSchemaSharedTables: a dropped layout that shares its table with
// another (each its own family) loses only its cells there; one whose
// TABLE is an attribute loses every table it wrote.
func TestDropSchemaSharedTables(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Script(ctx, "defs", []byte(`
DEFINE RELATION ev { k BIGINT KEY, kind STRING, v BIGINT };
DEFINE PRIMARY SCHEMA ev_a FOR ev { TABLE 'ev', ROW ordered{k}, FAMILY 'a', QUALIFIER attr_name['k'], VALUE attr_value['k'] };
DEFINE SCHEMA ev_b FOR ev { TABLE 'ev', ROW ordered{k}, FAMILY 'b', QUALIFIER attr_name['k'], VALUE attr_value['k'] };
DEFINE SCHEMA ev_kind FOR ev { TABLE prefix('ev_'){kind}, ROW ordered{k}, FAMILY 'f', QUALIFIER attr_name['k', 'kind'], VALUE attr_value['k', 'kind'] };
INSERT INTO ev VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30);
`), nil); err != nil {
		t.Fatal(err)
	}
	families := func(table string) map[string]int {
		out := map[string]int{}
		err := db.Store().ReadRows(ctx, table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			for _, c := range r.Cells {
				out[c.Family]++
			}
			return true
		})
		if err != nil && !errors.Is(err, store.ErrNoTable) {
			t.Fatal(err)
		}
		return out
	}
	if got := families("ev"); got["a"] != 6 || got["b"] != 6 {
		t.Fatalf("table ev before: %v", got)
	}
	for _, s := range []string{"ev_b", "ev_kind"} {
		if _, err := db.Exec(ctx, "DROP SCHEMA "+s); err != nil {
			t.Fatal(err)
		}
	}
	if got := families("ev"); got["a"] != 6 || got["b"] != 0 {
		t.Errorf("table ev after dropping ev_b: %v", got)
	}
	for _, table := range []string{"ev_x", "ev_y"} {
		if k := storetest.CountRows(t, db.Store(), table); k != 0 {
			t.Errorf("table %s of the dropped ev_kind has %d rows", table, k)
		}
	}
	rows, err := db.Query(ctx, "SELECT k FROM ev WHERE kind = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows.All()); got != "[[1] [3]]" {
		t.Errorf("through ev_a: %s", got)
	}
}

// blockingStore blocks the first read of a table of acct, once armed,
// until released: a reader that planned with a layout before its drop.
type blockingStore struct {
	*memstore.Store
	armed   atomic.Bool
	blocked chan string
	release chan struct{}
}

func (s *blockingStore) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if (table == "acct" || table == "acct_wide") && s.armed.CompareAndSwap(true, false) {
		s.blocked <- table
		<-s.release
	}
	return s.Store.ReadRows(ctx, table, rs, opts, fn)
}

// TestDropSchemaWaitsForReaders: the rows of a dropped layout are deleted
// only once a reader that chose it before the drop has read them.
func TestDropSchemaWaitsForReaders(t *testing.T) {
	ctx := context.Background()
	st := &blockingStore{Store: memstore.New(), blocked: make(chan string, 1), release: make(chan struct{})}
	db, err := kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	populate(t, db, 100)
	st.armed.Store(true)
	type answer struct {
		rows [][]any
		err  error
	}
	read := make(chan answer, 1)
	go func() {
		rows, err := db.Query(ctx, "SELECT balance FROM acct WHERE id = ?", int64(stableBase))
		if err != nil {
			read <- answer{err: err}
			return
		}
		read <- answer{rows: rows.All()}
	}()
	table := <-st.blocked
	name := map[string]string{"acct": "acct_by_id", "acct_wide": "acct_wide"}[table]
	dropped := make(chan error, 1)
	go func() {
		_, err := db.Exec(ctx, "DROP SCHEMA "+name)
		dropped <- err
	}()
	// Once the drop is saved, it waits for the reader.
	stillRunning(t, dropped, "DROP SCHEMA "+name, "while a reader of it was under way", func() bool { return strings.Contains(layoutState(db), "["+name+"]") })
	if k := storetest.CountRows(t, st.Store, table); k == 0 {
		t.Fatalf("the rows of %s were deleted while a reader of it was under way", name)
	}
	close(st.release)
	if a := <-read; a.err != nil || len(a.rows) != 1 || a.rows[0][0] != int64(7) {
		t.Errorf("the reader of %s: %v, %v", name, a.rows, a.err)
	}
	if err := <-dropped; err != nil {
		t.Fatal(err)
	}
	if k := storetest.CountRows(t, st.Store, table); k != 0 {
		t.Errorf("table %s has %d rows after the drop", table, k)
	}
}

// stillRunning waits until reached (a minute at most), then 50 ms more,
// and fails t if statement, whose outcome done delivers, ended meanwhile
// (why says what it should have waited for).
func stillRunning(t *testing.T, done <-chan error, statement, why string, reached func() bool) {
	t.Helper()
	ended := func() {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("%s ended (%v) %s", statement, err, why)
		default:
		}
	}
	for deadline := time.Now().Add(time.Minute); !reached(); time.Sleep(time.Millisecond) {
		ended()
		if time.Now().After(deadline) {
			t.Fatalf("%s: the state awaited not reached in a minute", statement)
		}
	}
	time.Sleep(50 * time.Millisecond)
	ended()
}

// holdingWrites holds, once each is armed, the creation of table
// acct_owner and the first Apply to table acct, until released.
type holdingWrites struct {
	*memstore.Store
	createArmed, applyArmed atomic.Bool
	held                    chan string
	releaseCreate, release  chan struct{}
}

func (s *holdingWrites) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if spec.Name == "acct_owner" && s.createArmed.CompareAndSwap(true, false) {
		s.held <- "create"
		<-s.releaseCreate
	}
	return s.Store.CreateTable(ctx, spec)
}

func (s *holdingWrites) Apply(ctx context.Context, muts []store.Mutation) error {
	if slices.ContainsFunc(muts, func(m store.Mutation) bool { return m.Table == "acct" }) && s.applyArmed.CompareAndSwap(true, false) {
		s.held <- "apply"
		<-s.release
	}
	return s.Store.Apply(ctx, muts)
}

// defineDuringWrite runs DEFINE SCHEMA acct_by_owner on a populated
// relation while write (begun after the definition checked the relation
// for tuples, before it saved the layout write-only) is held at its
// Apply, and returns once the layout is write-only, the definition
// waiting for the write: close st.release to let the write go; defined
// and wrote receive their errors.
func defineDuringWrite(t *testing.T, write string) (db *kvschema.DB, st *holdingWrites, defined, wrote chan error) {
	t.Helper()
	ctx := context.Background()
	st = &holdingWrites{Store: memstore.New(), held: make(chan string, 1), releaseCreate: make(chan struct{}), release: make(chan struct{})}
	db, err := kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	populate(t, db, 100)
	st.createArmed.Store(true)
	defined = make(chan error, 1)
	go func() {
		_, err := db.Exec(ctx, addByOwner)
		defined <- err
	}()
	if h := <-st.held; h != "create" {
		t.Fatalf("held %s, want the creation of acct_owner", h)
	}
	st.applyArmed.Store(true)
	wrote = make(chan error, 1)
	go func() {
		_, err := db.Exec(ctx, write)
		wrote <- err
	}()
	if h := <-st.held; h != "apply" {
		t.Fatalf("held %s, want the write", h)
	}
	close(st.releaseCreate)
	stillRunning(t, defined, "DEFINE SCHEMA", "while a write that does not keep the new layout was under way", func() bool { return strings.Contains(layoutState(db), "acct_by_owner*") })
	return db, st, defined, wrote
}

// TestDefineSchemaWaitsForWriters: a layout added to a relation that holds
// tuples is copied only once the writes that planned without it are over —
// here one that began after DEFINE SCHEMA checked the relation for tuples
// and before it saved the layout write-only.
func TestDefineSchemaWaitsForWriters(t *testing.T) {
	ctx := context.Background()
	db, st, defined, wrote := defineDuringWrite(t, "INSERT INTO acct VALUES (5000, 'late', 3)")
	close(st.release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := <-defined; err != nil {
		t.Fatal(err)
	}
	plan, err := db.Explain(ctx, "SELECT id FROM acct WHERE owner = 'late'")
	if err != nil || !strings.Contains(plan, "acct_by_owner CHOSEN") {
		t.Fatalf("the query by owner does not read the new layout: %v\n%s", err, plan)
	}
	rows, err := db.Query(ctx, "SELECT id FROM acct WHERE owner = 'late'")
	if err != nil || len(rows.All()) != 1 || rows.All()[0][0] != int64(5000) {
		t.Errorf("the tuple written during the DEFINE, by owner: %v, %v", rows, err)
	}
}

// TestDefineSchemaDoesNotStopLaterWriters: while an online DEFINE SCHEMA
// waits for a write that planned without the new layout, writes that
// begin after the layout was saved write-only run at once (and keep it):
// the wait holds back no one but the definition.
func TestDefineSchemaDoesNotStopLaterWriters(t *testing.T) {
	ctx := context.Background()
	db, st, defined, early := defineDuringWrite(t, "INSERT INTO acct VALUES (5000, 'early', 3)")
	late := make(chan error, 1)
	go func() {
		_, err := db.Exec(ctx, "INSERT INTO acct VALUES (5001, 'late', 4)")
		late <- err
	}()
	select {
	case err := <-late:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a write that began after the layout was saved write-only waited for one that began before")
	}
	select {
	case err := <-defined:
		t.Fatalf("DEFINE SCHEMA ended (%v) while a write that does not keep the new layout was under way", err)
	default:
	}
	close(st.release)
	if err := <-early; err != nil {
		t.Fatal(err)
	}
	if err := <-defined; err != nil {
		t.Fatal(err)
	}
	for id, owner := range map[int64]string{5000: "early", 5001: "late"} {
		rows, err := db.Query(ctx, "SELECT id FROM acct WHERE owner = ?", owner)
		if err != nil || len(rows.All()) != 1 || rows.All()[0][0] != id {
			t.Errorf("the tuple written by %s, by owner: %v, %v", owner, rows, err)
		}
	}
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil || len(rep.Differences) > 0 {
		t.Fatalf("verify: %v %v", err, rep)
	}
}

// TestSchemaRate: Options.SchemaRate paces an online DEFINE SCHEMA's copy,
// and Options.SchemaProgress follows it to the number of tuples copied.
func TestSchemaRate(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var events []kvschema.SchemaEvent
	const rate = 1000
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{NoWorkloadCounts: true, SchemaRate: rate, SchemaProgress: func(ev kvschema.SchemaEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ref := populate(t, db, 600)
	start := time.Now()
	if _, err := db.Exec(ctx, addByOwner); err != nil {
		t.Fatal(err)
	}
	// The pacing is a lower bound: the copy cannot be faster.
	if least := time.Duration(float64(len(ref)) / rate * 0.9 * float64(time.Second)); time.Since(start) < least {
		t.Errorf("copied %d tuples in %v at %d a second: the rate does not hold (at least %v)", len(ref), time.Since(start), rate, least)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) < 2 {
		t.Fatalf("progress: %+v", events)
	}
	last := events[len(events)-1]
	if last != (kvschema.SchemaEvent{Schema: "acct_by_owner", Step: "copy", Rows: int64(len(ref)), Done: true}) {
		t.Errorf("last event %+v, want the copy of %d tuples into acct_by_owner, done", last, len(ref))
	}
	for i, ev := range events[:len(events)-1] {
		if ev.Done || ev.Step != "copy" || i > 0 && ev.Rows < events[i-1].Rows {
			t.Errorf("event %d: %+v (after %+v)", i, ev, events[max(i-1, 0)])
		}
	}
}
