package kvschema_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"

	_ "github.com/kvschema/kvschema/driver"
	"github.com/kvschema/kvschema/store/memstore"
	_ "github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/txnstore"
)

// deployRUBiS deploys testdata/rubis_schema.kvs (advised for the RUBiS
// workload, mix write_heavy) through the DB and loads generated data.
func deployRUBiS(t testing.TB, db *kvschema.DB) (*workload.Workload, map[*catalog.Entity][][]types.Value) {
	t.Helper()
	ctx := context.Background()
	schemaSrc, err := os.ReadFile("exec/testdata/rubis_schema.kvs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Deploy(ctx, "model.kvs", []byte(examples.RUBiSModel), "exec/testdata/rubis_schema.kvs", schemaSrc, cost.Cassandra); err != nil {
		t.Fatal(err)
	}
	en, err := db.Advised(ctx)
	if err != nil || en == nil {
		t.Fatalf("advised schema after Deploy: %v %v", en, err)
	}
	m := en.Model()
	w, err := workload.Parse(m, "workload_secondary.kvs", []byte(examples.RUBiSWorkloadSecondary))
	if err != nil {
		t.Fatal(err)
	}
	data := map[*catalog.Entity][][]types.Value{}
	if err := rubis.Generate(ctx, m, rubis.Config{Scale: 0.0003, Seed: 7}, func(e *catalog.Entity, row []types.Value) error {
		data[e] = append(data[e], append([]types.Value(nil), row...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, func(yield func(exec.Row) error) error {
		for _, name := range rubis.Entities() {
			e := m.Entity(name)
			for _, row := range data[e] {
				if err := yield(exec.Row{Entity: e, Values: row, File: name}); err != nil {
					return err
				}
			}
		}
		return nil
	}, exec.LoadOptions{Identity: "test"}); err != nil {
		t.Fatal(err)
	}
	return w, data
}

// advisedDB opens a Pebble DB in a temporary directory, deployed and loaded
// by deployRUBiS, closed when the test ends.
func advisedDB(t testing.TB) *kvschema.DB {
	t.Helper()
	db, err := kvschema.Open(context.Background(), "pebble:"+filepath.Join(t.TempDir(), "db"), kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	deployRUBiS(t, db)
	return db
}

// goArgs turns values into the Go arguments a program would pass.
func goArgs(vs []types.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// TestAdvisedThroughDB: a store loaded with an advised schema answers every
// workload query through kvschema.DB as the engine itself does (the engine
// is checked against SQLite in its own tests), takes model-level writes
// with Go arguments, verifies clean, and keeps a client-defined relation
// beside it; both survive reopening, and no name can belong to both.
func TestAdvisedThroughDB(t *testing.T) {
	ctx := context.Background()
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	db, err := kvschema.Open(ctx, url, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	w, data := deployRUBiS(t, db)
	en, _ := db.Advised(ctx)
	r := rand.New(rand.NewPCG(3, 4))
	queries, nonEmpty := 0, 0
	for _, st := range w.Statements {
		if st.Query == nil || st.Weight("write_heavy") == 0 {
			continue
		}
		text := lang.Print(st.AST)
		direct, err := en.PrepareAST(st.AST)
		if err != nil {
			t.Fatalf("%s: %v", st.Tag, err)
		}
		prep, err := db.Prepare(text)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			args := direct.Resolved.SampleArgs(r, data)
			want, err := direct.Query(ctx, args...)
			if err != nil {
				t.Fatalf("%s: %v", st.Tag, err)
			}
			rows, err := prep.Query(ctx, goArgs(args)...)
			if err != nil {
				t.Fatalf("%s: %v", st.Tag, err)
			}
			if !reflect.DeepEqual(rows.Columns(), want.Columns) {
				t.Fatalf("%s: columns %v, want %v", st.Tag, rows.Columns(), want.Columns)
			}
			got, wantRows := rows.All(), want.Values()
			if len(got) != len(wantRows) {
				t.Fatalf("%s %v: %d rows, want %d", st.Tag, args, len(got), len(wantRows))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], wantRows[i]) {
					t.Fatalf("%s %v: row %d %v, want %v", st.Tag, args, i, got[i], wantRows[i])
				}
			}
			queries++
			if len(got) > 0 {
				nonEmpty++
			}
		}
	}
	if queries < 50 || nonEmpty < queries/3 {
		t.Fatalf("%d queries ran, %d returned rows: too few to compare", queries, nonEmpty)
	}

	// Model-level writes with Go arguments, then a model query sees them.
	for _, s := range []struct {
		text string
		args []any
		kind string
	}{
		{"INSERT INTO bids SET id = ?, qty = ?, bid = ?, date = ? AND CONNECT TO item(?), user(?)", []any{900001, 2, 7.5, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 3, 2}, "INSERT"},
		{"UPDATE items SET nb_of_bids = ?, max_bid = ? WHERE items.id = ?", []any{41, 7.5, 3}, "UPDATE"},
	} {
		res, err := db.Exec(ctx, s.text, s.args...)
		if err != nil || res.RowsAffected != 1 || res.Statement != s.kind {
			t.Fatalf("%s: %+v %v", s.text, res, err)
		}
	}
	// A write cannot connect to an entity that does not exist (load
	// refuses such a foreign key too), even where no index it maintains
	// reads the entity's fields.
	for _, s := range []string{
		"INSERT INTO bids SET id = 900002, qty = 1, bid = 1.5, date = '2026-01-01 00:00:00' AND CONNECT TO item(424242), user(2)",
		"INSERT INTO bids SET id = 900003, qty = 1, bid = 1.5, date = '2026-01-01 00:00:00' AND CONNECT TO item(3), user(424242)",
	} {
		if _, err := db.Exec(ctx, s); err == nil || !strings.Contains(err.Error(), "has id = 424242") {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rows, err := db.Query(ctx, "SELECT items.nb_of_bids, items.max_bid FROM items WHERE items.id = ?", 3)
	if err != nil {
		t.Fatal(err)
	}
	var nb int64
	var maxBid float64
	if !rows.Next() || rows.Scan(&nb, &maxBid) != nil || nb != 41 || maxBid != 7.5 {
		t.Fatalf("after UPDATE: %v %v", nb, maxBid)
	}
	plan, err := db.Explain(ctx, "SELECT bids.bid FROM bids WHERE bids.item.id = ?", 3)
	if err != nil || !strings.Contains(plan, "cost") {
		t.Fatalf("EXPLAIN on the advised schema: %q %v", plan, err)
	}
	if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", rep, err)
	}

	// A client relation beside it; no name belongs to both.
	for _, s := range []string{
		"DEFINE RELATION notes { id BIGINT KEY, body STRING }",
		"DEFINE SCHEMA notes_by_id FOR notes { TABLE 'notes', ROW ordered{id}, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id'] }",
		"INSERT INTO notes VALUES (1, 'first')",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if _, err := db.Exec(ctx, "DEFINE RELATION Items { id BIGINT KEY }"); err == nil || !strings.Contains(err.Error(), "relation Items is defined by the advised schema deployed in this store (as items)") {
		t.Fatalf("redefining a model relation: %v", err)
	}
	if _, err := db.Exec(ctx, "CONNECT notes(1) TO seller(2)"); err == nil || !strings.Contains(err.Error(), "CONNECT and DISCONNECT change relationships of a conceptual model") {
		t.Fatalf("CONNECT on a client relation: %v", err)
	}

	// Reopened, the store answers both kinds.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = kvschema.Open(ctx, url, kvschema.Options{}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"SELECT items.nb_of_bids FROM items WHERE items.id = 3": "41",
		"SELECT body FROM notes WHERE id = 1":                   "first",
	} {
		rows, err := db.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if all := rows.All(); len(all) != 1 || types.Display(all[0][0]) != want {
			t.Fatalf("%s: %v, want %s", q, all, want)
		}
	}
}

// TestDeployNameConflict: a model cannot take a name the store's
// DEFINE RELATIONs already use, and a store without an advised schema says
// so to Load and Verify.
func TestDeployNameConflict(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "pebble:"+filepath.Join(t.TempDir(), "db"), kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Verify(ctx, exec.VerifyOptions{}); !errors.Is(err, exec.ErrNoSchema) {
		t.Fatalf("verify without an advised schema: %v", err)
	}
	if _, err := db.Exec(ctx, "DEFINE RELATION USERS { id BIGINT KEY }"); err != nil {
		t.Fatal(err)
	}
	schemaSrc, err := os.ReadFile("exec/testdata/rubis_schema.kvs")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Deploy(ctx, "model.kvs", []byte(examples.RUBiSModel), "schema.kvs", schemaSrc, cost.Cassandra)
	if err == nil || !strings.Contains(err.Error(), "relation users is already defined in this store by DEFINE RELATION") {
		t.Fatalf("deploy over a client relation: %v", err)
	}
	if en, err := db.Advised(ctx); en != nil || err != nil {
		t.Fatalf("a refused deploy left a schema: %v %v", en, err)
	}
}

// TestAdvisedThroughDatabaseSQL: database/sql reaches the advised schema:
// model queries scan into typed Go variables, and writes go through.
func TestAdvisedThroughDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	dsn := "pebble:" + filepath.Join(t.TempDir(), "db")
	db, err := kvschema.Open(ctx, dsn, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deployRUBiS(t, db)
	db.Close()

	sdb, err := sql.Open("kvschema", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if _, err := sdb.ExecContext(ctx, "UPDATE items SET nb_of_bids = ?, max_bid = ? WHERE items.id = ?", 12, 3.25, 2); err != nil {
		t.Fatal(err)
	}
	var name string
	var nb int64
	var maxBid sql.NullFloat64
	row := sdb.QueryRowContext(ctx, "SELECT items.name, items.nb_of_bids, items.max_bid FROM items WHERE items.id = ?", 2)
	if err := row.Scan(&name, &nb, &maxBid); err != nil {
		t.Fatal(err)
	}
	if name == "" || nb != 12 || maxBid != (sql.NullFloat64{Float64: 3.25, Valid: true}) {
		t.Fatalf("scanned %q %d %v", name, nb, maxBid)
	}
	n := 0
	rs, err := sdb.QueryContext(ctx, "SELECT bids.id, bids.bid FROM bids WHERE bids.item.id = ?", 2)
	if err != nil {
		t.Fatal(err)
	}
	if cts, err := rs.ColumnTypes(); err != nil || len(cts) != 2 || cts[0].DatabaseTypeName() != "BIGINT" || cts[1].DatabaseTypeName() != "DOUBLE" || cts[1].ScanType() != reflect.TypeFor[float64]() {
		t.Errorf("advised query's column types: %v %v", cts, err)
	}
	for rs.Next() {
		var id int64
		var bid float64
		if err := rs.Scan(&id, &bid); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("item 2 has no bids")
	}
}

// TestAdvisedMultiRowInsert: an INSERT … VALUES of several tuples on an
// advised schema is one atomic write: all tuples land in every index, or a
// failing tuple leaves none of them.
func TestAdvisedMultiRowInsert(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	const ins = "INSERT INTO users (id, nickname, rating, region) VALUES "
	res, err := db.Exec(ctx, ins+"(90001, 'ann', 1, 1), (90002, ?, 2, 1), (90003, 'cy', ?, 1)", "bo", 3)
	if err != nil || res.RowsAffected != 3 {
		t.Fatalf("three tuples: %+v %v", res, err)
	}
	nick := func(id int) string {
		t.Helper()
		rows, err := db.Query(ctx, "SELECT users.nickname FROM users WHERE users.id = ?", id)
		if err != nil {
			t.Fatal(err)
		}
		if all := rows.All(); len(all) == 1 {
			return types.Display(all[0][0])
		}
		return ""
	}
	if nick(90001) != "ann" || nick(90002) != "bo" || nick(90003) != "cy" {
		t.Fatalf("inserted tuples read back as %q %q %q", nick(90001), nick(90002), nick(90003))
	}
	for bad, want := range map[string]string{
		ins + "(90004, 'dee', 1, 1), (90005, 'eve', 1, 1), (90004, 'dup', 1, 1)": "tuples 1 and 3 have the same key id = 90004",
		ins + "(90004, 'dee', 1, 1), (90005, 'eve', 'x', 1)":                     "rating",
	} {
		if _, err := db.Exec(ctx, bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error about %q", bad, err, want)
		}
		if nick(90004) != "" || nick(90005) != "" {
			t.Fatalf("%s: a failed INSERT left tuples", bad)
		}
	}
	res, err = db.Exec(ctx, "EXPLAIN INSERT INTO regions VALUES (60, 'east', 1), (61, 'west', 1)")
	if err != nil || !strings.Contains(res.Plan, "INSERT cf_regions_by_dummy") || !strings.Contains(res.Plan, "each of the 2 tuples, written in one atomic batch") {
		t.Fatalf("EXPLAIN of a multi-tuple INSERT: %v\n%s", err, res.Plan)
	}
	// Without a column list: every attribute in declaration order.
	if res, err := db.Exec(ctx, "INSERT INTO regions VALUES (50, 'north', 1), (51, 'south', 1)"); err != nil || res.RowsAffected != 2 {
		t.Fatalf("INSERT without columns: %+v %v", res, err)
	}
	if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", rep, err)
	}
}

// TestAdvisedConcurrent: goroutines share one DB and one prepared
// statement on the advised schema, reading and writing at once (run under
// the race detector in CI); every write lands and verify stays clean.
func TestAdvisedConcurrent(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	read, err := db.Prepare("SELECT items.nb_of_bids FROM items WHERE items.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := 1 + (g*each+i)%5
				if _, err := db.Exec(ctx, "UPDATE items SET nb_of_bids = ? WHERE items.id = ?", g*1000+i, id); err != nil {
					errs <- err
					return
				}
				if _, err := db.Exec(ctx, "INSERT INTO regions VALUES (?, ?, 1)", 1000+g*each+i, fmt.Sprint("r", g, i)); err != nil {
					errs <- err
					return
				}
				rows, err := read.Query(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				if rows.Len() != 1 {
					errs <- fmt.Errorf("item %d: %d rows", id, rows.Len())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", rep, err)
	}
}

// BenchmarkAdvisedPointLookup compares a prepared point lookup on an
// advised schema through kvschema.DB with the same statement run on the
// engine directly: the cost of the API's routing and result conversion.
//
//	go test -run x -bench AdvisedPointLookup .
func BenchmarkAdvisedPointLookup(b *testing.B) {
	ctx := context.Background()
	db := advisedDB(b)
	const q = "SELECT items.name, items.max_bid FROM items WHERE items.id = ?"
	b.Run("DB", func(b *testing.B) {
		st, err := db.Prepare(q)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			rows, err := st.Query(ctx, int64(1+i%5))
			if err != nil || rows.Len() != 1 {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		en, _ := db.Advised(ctx)
		st, err := en.Prepare(q)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			res, err := st.Query(ctx, types.Value(int64(1+i%5)))
			if err != nil || len(res.Rows) != 1 {
				b.Fatal(err)
			}
		}
	})
}

// TestAdvisedNamesCaseInsensitive: an advised schema's relations and
// attributes answer to any spelling, as a client-defined relation's do.
func TestAdvisedNamesCaseInsensitive(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	if _, err := db.Exec(ctx, "INSERT INTO Regions (ID, Name, DUMMY) VALUES (1, 'north', 0)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO USERS SET Id = 7, NickName = 'ann', rating = 3 AND CONNECT TO Region(1)"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT nickname, rating FROM users WHERE id = 7", "SELECT Users.NICKNAME, USERS.Rating FROM USERS WHERE Users.ID = 7"} {
		rows, err := db.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := rows.All(); len(got) != 1 || got[0][0] != "ann" || got[0][1] != int64(3) {
			t.Fatalf("%s: %v", q, got)
		}
	}
}

// TestSnapshotOfAdvisedSchema: a Snapshot reads the advised schema as it
// was, through model queries, while the store takes writes; it refuses
// writes itself.
func TestSnapshotOfAdvisedSchema(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	if _, err := db.Exec(ctx, "UPDATE items SET nb_of_bids = 1, max_bid = 1.5 WHERE items.id = 3"); err != nil {
		t.Fatal(err)
	}
	snap, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if _, err := db.Exec(ctx, "UPDATE items SET nb_of_bids = 2, max_bid = 9.5 WHERE items.id = 3"); err != nil {
		t.Fatal(err)
	}
	q := "SELECT items.nb_of_bids, items.max_bid FROM items WHERE items.id = 3"
	for _, tc := range []struct {
		db   *kvschema.DB
		want string
	}{{snap, "[[1 1.5]]"}, {db, "[[2 9.5]]"}} {
		rows, err := tc.db.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows.All()); got != tc.want {
			t.Errorf("%s: %s, want %s", q, got, tc.want)
		}
	}
	if _, err := snap.Exec(ctx, "UPDATE items SET nb_of_bids = 3, max_bid = 1.0 WHERE items.id = 3"); !errors.Is(err, kvschema.ErrReadOnly) {
		t.Errorf("a write on a snapshot: %v", err)
	}
}

// TestSnapshotUnsupported: a store without point-in-time reads (here the
// intent-log store every Bigtable store runs through) has no snapshots.
func TestSnapshotUnsupported(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.New(ctx, txnstore.New(memstore.New()), kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Snapshot(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Snapshot: %v, want errors.ErrUnsupported", err)
	}
}

// TestAdvisedOrIn: a query whose WHERE has OR or IN runs on the advised
// schema as a union of plans, each path instance once, sorted and limited
// over the union; NOT IN is a filter; a query no key lookup answers is a
// full scan.
func TestAdvisedOrIn(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	ids := func(q string, args ...any) string {
		t.Helper()
		rows, err := db.Query(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprint(rows.All())
	}
	const q = "SELECT users.id FROM users WHERE users.id IN (?, ?, ?) ORDER BY users.id DESC"
	if got := ids(q, 3, 1, 3); got != "[[3] [1]]" {
		t.Errorf("%s: %s", q, got)
	}
	st, err := db.Prepare("SELECT users.id FROM users WHERE users.id = ? OR users.id = ? OR users.id = 7 ORDER BY users.id LIMIT 2")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Query(ctx, 9, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows.All()); got != "[[2] [7]]" {
		t.Errorf("OR with LIMIT: %s", got)
	}
	if got := ids("SELECT users.id FROM users WHERE users.id IN (1, 2) AND users.id NOT IN (2, 5)"); got != "[[1]]" {
		t.Errorf("IN and NOT IN: %s", got)
	}
	// No equality binds a partition key: a full scan, filtered.
	if got := ids("SELECT users.id FROM users WHERE users.id > ? AND users.id <= 3 ORDER BY users.id DESC", 1); got != "[[3] [2]]" {
		t.Errorf("a range alone: %s", got)
	}
	if scan, err := db.Explain(ctx, "SELECT users.id FROM users WHERE users.id > 1"); err != nil || !strings.Contains(scan, "FULL SCAN OVER") || !strings.Contains(scan, "CLIENT FILTER BY users.id > 1") {
		t.Errorf("EXPLAIN of a scan: %v\n%s", err, scan)
	}
	// Writes whose WHERE has IN or OR: one atomic batch, each tuple once.
	if res, err := db.Exec(ctx, "UPDATE users SET rating = 66 WHERE users.id IN (4, 5, 4) OR users.id = 5"); err != nil || res.RowsAffected != 2 {
		t.Fatalf("UPDATE with IN: %+v %v", res, err)
	}
	if got := ids("SELECT users.id FROM users WHERE users.rating = 66 ORDER BY users.id"); got != "[[4] [5]]" {
		t.Errorf("after the UPDATE with IN: %s", got)
	}
	if plan, err := db.Explain(ctx, "DELETE FROM comments WHERE comments.id IN (1, 2)"); err != nil || !strings.Contains(plan, "THE WRITES OF 2 ALTERNATIVES, IN ONE ATOMIC BATCH") {
		t.Errorf("EXPLAIN DELETE with IN: %v\n%s", err, plan)
	}
	// A write whose WHERE binds no key: its support queries scan.
	if res, err := db.Exec(ctx, "UPDATE users SET rating = 77 WHERE users.id >= 2 AND users.id < 4"); err != nil || res.RowsAffected != 2 {
		t.Fatalf("UPDATE over a range: %+v %v", res, err)
	}
	if got := ids("SELECT users.id FROM users WHERE users.rating = 77 ORDER BY users.id"); got != "[[2] [3]]" {
		t.Errorf("after the UPDATE over a range: %s", got)
	}
	if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", rep, err)
	}
	plan, err := db.Explain(ctx, q, 3, 1, 3)
	if err != nil || !strings.Contains(plan, "POINT LOOKUP ON 3 KEYS OVER cf_users_by_id [users.id = ? OR users.id = ? OR users.id = ?]") || !strings.Contains(plan, "CLIENT SORT BY [users.id DESC]") {
		t.Errorf("EXPLAIN: %v\n%s", err, plan)
	}
}

// TestAggregates: COUNT, MIN, MAX, SUM, AVG and GROUP BY on both kinds of
// schema (the client relations' answers are checked against SQLite by the
// differential test), their EXPLAIN, and the errors of malformed ones.
func TestAggregates(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	if err := db.Script(ctx, "notes.kvs", []byte(`
DEFINE RELATION notes { id BIGINT KEY, kind STRING, n INT };
DEFINE PRIMARY SCHEMA notes_by_id FOR notes { TABLE 'notes', ROW ordered{id}, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id'] };
INSERT INTO notes VALUES (1, 'a', 5), (2, 'b', 7), (3, 'a', NULL), (4, 'a', -2);
`), nil); err != nil {
		t.Fatal(err)
	}
	query := func(q string, args ...any) string {
		t.Helper()
		rows, err := db.Query(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprint(rows.Columns(), rows.All())
	}
	for q, want := range map[string]string{
		"SELECT COUNT(*), COUNT(n), MIN(n), MAX(kind), SUM(n), AVG(n) FROM notes":   "[COUNT(*) COUNT(n) MIN(n) MAX(kind) SUM(n) AVG(n)] [[4 3 -2 b 10 3.3333333333333335]]",
		"SELECT kind, COUNT(*), SUM(n) FROM notes GROUP BY kind ORDER BY kind DESC": "[kind COUNT(*) SUM(n)] [[b 1 7] [a 3 3]]",
		"SELECT COUNT(*), SUM(n) FROM notes WHERE id > 10":                          "[COUNT(*) SUM(n)] [[0 <nil>]]",
		"SELECT kind, COUNT(*) FROM notes WHERE id > 10 GROUP BY kind":              "[kind COUNT(*)] []",
	} {
		if got := query(q); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
	// On the advised schema: the count of a path's rows, and groups.
	rows, err := db.Query(ctx, "SELECT bids.id FROM items.bids WHERE items.id = 3")
	if err != nil || rows.Len() == 0 {
		t.Fatalf("bids of item 3: %v %v", rows.Len(), err)
	}
	if got, want := query("SELECT COUNT(*) FROM items.bids WHERE items.id = 3"), fmt.Sprintf("[COUNT(*)] [[%d]]", rows.Len()); got != want {
		t.Errorf("COUNT(*) along a path: %s, want %s", got, want)
	}
	rows, err = db.Query(ctx, "SELECT users.rating FROM users WHERE users.id <= 3")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int64]int{}
	var lowest int64 = math.MaxInt64
	for _, r := range rows.All() {
		counts[r[0].(int64)]++
		lowest = min(lowest, r[0].(int64))
	}
	if got, want := query("SELECT users.rating, COUNT(*) FROM users WHERE users.id <= 3 GROUP BY users.rating ORDER BY users.rating LIMIT 1"), fmt.Sprintf("[users.rating COUNT(*)] [[%d %d]]", lowest, counts[lowest]); got != want {
		t.Errorf("grouped on the advised schema: %s, want %s", got, want)
	}
	plan, err := db.Explain(ctx, "SELECT kind, COUNT(*) FROM notes GROUP BY kind ORDER BY kind LIMIT 2")
	if err != nil || !strings.Contains(plan, "CLIENT AGGREGATE INTO DISTINCT ROWS BY [kind]\nCLIENT SORT BY [kind]\nCLIENT 2 ROW LIMIT") {
		t.Errorf("EXPLAIN: %v\n%s", err, plan)
	}
	// HAVING, ORDER BY an aggregate, DISTINCT values, a LIMIT parameter
	// (kinds: a has n 5, NULL, -2; b has 7).
	if got, want := query("SELECT kind, COUNT(*) FROM notes GROUP BY kind HAVING COUNT(n) >= ? AND MAX(n) > 0 ORDER BY SUM(n) DESC LIMIT ?", 1, 5), "[kind COUNT(*)] [[b 1] [a 3]]"; got != want {
		t.Errorf("HAVING … ORDER BY SUM(n) DESC: %s, want %s", got, want)
	}
	if got, want := query("SELECT kind FROM notes GROUP BY kind HAVING MIN(n) < 0"), "[kind] [[a]]"; got != want {
		t.Errorf("HAVING MIN(n) < 0: %s, want %s", got, want)
	}
	if got, want := query("SELECT COUNT(DISTINCT kind), COUNT(kind), SUM(DISTINCT id) FROM notes"), "[COUNT(DISTINCT kind) COUNT(kind) SUM(DISTINCT id)] [[2 4 10]]"; got != want {
		t.Errorf("DISTINCT aggregates: %s, want %s", got, want)
	}
	if _, err := db.Query(ctx, "SELECT COUNT(*) FROM notes LIMIT ?", -1); err == nil || !strings.Contains(err.Error(), "1:34: LIMIT takes an integer ≥ 0, not -1") {
		t.Errorf("LIMIT ? of -1: %v", err)
	}
	plan, err = db.Explain(ctx, "SELECT kind FROM notes GROUP BY kind HAVING COUNT(*) > 1 ORDER BY COUNT(*) DESC LIMIT ?", 3)
	if err != nil || !strings.Contains(plan, "CLIENT AGGREGATE INTO DISTINCT ROWS BY [kind]\nCLIENT FILTER BY COUNT(*) > 1\nCLIENT SORT BY [COUNT(*) DESC]\nCLIENT ? ROW LIMIT") {
		t.Errorf("EXPLAIN with HAVING: %v\n%s", err, plan)
	}
	for q, want := range map[string]string{
		"SELECT kind, COUNT(*) FROM notes":                  "1:8: kind must appear in GROUP BY or be used in an aggregate function",
		"SELECT SUM(kind) FROM notes":                       "1:8: SUM(kind) needs a numeric attribute, not STRING",
		"SELECT * FROM notes GROUP BY kind":                 "SELECT * cannot be grouped",
		"SELECT kind FROM notes GROUP BY kind ORDER BY n":   "ORDER BY of a grouped query takes GROUP BY attributes",
		"SELECT kind FROM notes GROUP BY kind HAVING n > 1": "1:45: HAVING: n must appear in GROUP BY or be used in an aggregate function",
		"SELECT COUNT(*) FROM notes HAVING COUNT(*) > 'x'":  "COUNT(*)",
		"SELECT MEDIAN(n) FROM notes":                       "1:8: unknown function MEDIAN",
		"SELECT COUNT(nope) FROM notes":                     "nope",
	} {
		if _, err := db.Query(ctx, q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", q, err, want)
		}
	}
}

// Deploy notes a schema advised for another kind of store than the DB's
// (the target its DDL records), and only then: not on its own kind, not
// on mem:, not without a target.
func TestDeployTargetNote(t *testing.T) {
	ctx := context.Background()
	const model = `DEFINE RELATION users ROWS 100 { id BIGINT KEY, nickname STRING CARDINALITY 100 };`
	const schema = `DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nickname) };`
	withTarget := func(p cost.Profile) []byte {
		dirs, err := catalog.Directives(p)
		if err != nil {
			t.Fatal(err)
		}
		return []byte("-- advised\n" + dirs + schema)
	}
	for _, tc := range []struct {
		url    string
		schema []byte
		want   string
	}{
		{"pebble:" + filepath.Join(t.TempDir(), "a"), withTarget(cost.Pebble), ""},
		{"pebble:" + filepath.Join(t.TempDir(), "b"), []byte(schema), ""},
		{"pebble:" + filepath.Join(t.TempDir(), "c"), withTarget(cost.Bigtable), "the schema was advised for target bigtable, but the store is pebble"},
		{"pebble:" + filepath.Join(t.TempDir(), "d"), withTarget(cost.Cassandra), "the schema was advised for target cassandra, but the store is pebble"},
		{"mem:", withTarget(cost.Bigtable), ""},
	} {
		db, err := kvschema.Open(ctx, tc.url, kvschema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		notes, err := db.Deploy(ctx, "model.kvs", []byte(model), "schema.kvs", tc.schema, cost.Pebble)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(notes, "\n"); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: notes %q, want %q", tc.url, notes, tc.want)
		}
	}
}

// TestExplainLargePartitions: EXPLAIN of a statement on an advised schema
// warns about the indexes it reads or keeps whose partitions are large by
// the model's statistics (over a tenth of Cassandra's 100 MB), and not
// about the others; DESCRIBE of such an index does too.
func TestExplainLargePartitions(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const model = `DEFINE RELATION items ROWS 10000000 { id BIGINT KEY SIZE 8, category BIGINT SIZE 8 CARDINALITY 10, title STRING SIZE 184 };`
	const schema = `DEFINE COLUMN FAMILY items_by_category FOR items { PARTITION KEY (items.category), CLUSTERING KEY (items.id), VALUES (items.title) };
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.category, items.title) };`
	if _, err := db.Deploy(ctx, "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	if text, err := db.Describe(ctx, "items_by_category"); err != nil || !strings.Contains(text, "in 10 partitions") || !strings.Contains(text, "-- warning: partitions average 200MB") {
		t.Errorf("DESCRIBE items_by_category: %v\n%s", err, text)
	}
	if text, err := db.Describe(ctx, "items_by_id"); err != nil || strings.Contains(text, "warning") {
		t.Errorf("DESCRIBE items_by_id: %v\n%s", err, text)
	}
	for _, tc := range []struct{ src, want, not string }{
		{"EXPLAIN SELECT items.title FROM items WHERE items.category = 3", "WARNING items_by_category: partitions average 200MB (1e+06 rows)", ""},
		{"EXPLAIN SELECT items.title FROM items WHERE items.id = 3", "", "WARNING"},
		{"EXPLAIN UPDATE items SET title = 'x' WHERE items.id = 3", "WARNING items_by_category: partitions average 200MB", "WARNING items_by_id"},
	} {
		res, err := db.Exec(ctx, tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if tc.want != "" && !strings.Contains(res.Plan, tc.want) || tc.not != "" && strings.Contains(res.Plan, tc.not) {
			t.Errorf("%s: want %q, not %q, in\n%s", tc.src, tc.want, tc.not, res.Plan)
		}
	}
}

// TestSnapshotPipelinedQueries: every workload query that runs pipelined
// (a LIMIT the first step's order serves: the later steps read the store
// inside the first step's read) answers on a Pebble snapshot as on the
// DB. On a snapshot those reads are nested reads of one view, which
// waited for themselves while a view served one call at a time.
func TestSnapshotPipelinedQueries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := kvschema.Open(ctx, "pebble:"+filepath.Join(t.TempDir(), "db"), kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, data := deployRUBiS(t, db)
	snap, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	r := rand.New(rand.NewPCG(3, 3))
	ran, rows := 0, 0
	for _, s := range w.Statements {
		if s.Query == nil {
			continue
		}
		src := lang.Print(s.AST)
		args := goArgs(s.Query.SampleArgs(r, data))
		plan, err := db.Explain(ctx, src, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "CLIENT PIPELINED") {
			continue
		}
		ran++
		want, err := db.Query(ctx, src, args...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.Query(ctx, src, args...)
		if err != nil {
			t.Fatalf("%s on the snapshot: %v", src, err)
		}
		all := want.All()
		rows += len(all)
		if g, w := fmt.Sprint(got.All()), fmt.Sprint(all); g != w {
			t.Errorf("%s %v: %s on the snapshot, %s on the DB", src, args, g, w)
		}
	}
	if ran == 0 || rows == 0 {
		t.Fatalf("%d workload queries run pipelined, returning %d rows: the test checks nothing", ran, rows)
	}
	t.Logf("%d pipelined queries, %d rows", ran, rows)
}
