package driver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "github.com/kvschema/kvschema/store/pebblestore" // pebble: DSNs
)

// fig6 is seed 003's Fig. 6, one statement per element.
var fig6 = []string{
	`DEFINE RELATION r { k1 STRING key, k2 STRING key, v1 STRING, v2 INT }`,
	`DEFINE PRIMARY SCHEMA s1 FOR r {
  TABLE 's1', ROW suffix('-'){k1}:k2, FAMILY 'f', QUALIFIER '', VALUE suffix('-'){v1}:v2
}`,
	`DEFINE SCHEMA s2 FOR r {
  TABLE 's2', ROW size{k2}:k1, FAMILY 'f', QUALIFIER attr_name['k1','k2'], VALUE attr_value['k1','k2']
};`,
}

// typed covers every attribute type.
var typedDefs = []string{
	`DEFINE RELATION typed {
  id STRING KEY, i INT, b BIGINT, f FLOAT, d DOUBLE, ok BOOL, ts TIMESTAMP, raw BYTES
}`,
	`DEFINE PRIMARY SCHEMA typed_p FOR typed {
  TABLE 'typed', ROW ordered{id}, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id']
}`,
}

func dsn(t *testing.T) string {
	return "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"
}

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("kvschema", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func execAll(t *testing.T, db *sql.DB, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func affected(t *testing.T, res sql.Result, err error, want int64) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("RowsAffected = %d, want %d", n, want)
	}
}

// openShared reports how many DSNs have a shared store open.
func openShared() int {
	mu.Lock()
	defer mu.Unlock()
	return len(open)
}

func TestFig6AndRowsAffected(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, fig6)

	res, err := db.Exec("INSERT INTO r VALUES ('a1', 'b', 'x', 100), ('a2', 'b', 'y', 200), ('a3', 'c', 'z', 300)")
	affected(t, res, err, 3)
	// An INSERT is an upsert: the same key again counts as one row.
	res, err = db.Exec("INSERT INTO r VALUES (?, ?, ?, ?)", "a1", "b", "x2", 101)
	affected(t, res, err, 1)

	res, err = db.Exec("UPDATE r SET v1 = ? WHERE k2 = ?", "u", "b")
	affected(t, res, err, 2)
	res, err = db.Exec("UPDATE r SET v1 = 'none' WHERE k1 = 'zz'")
	affected(t, res, err, 0)
	res, err = db.Exec("DELETE FROM r WHERE k1 = ? AND k2 = ?", "a3", "c")
	affected(t, res, err, 1)
	res, err = db.Exec("DELETE FROM r WHERE k1 = 'a3'")
	affected(t, res, err, 0)

	rows, err := db.Query("SELECT k1, k2, v1, v2 FROM r WHERE k2 = ?", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || strings.Join(cols, ",") != "k1,k2,v1,v2" {
		t.Errorf("Columns = %v, %v", cols, err)
	}
	var got []string
	for rows.Next() {
		var k1, k2, v1 string
		var v2 int
		if err := rows.Scan(&k1, &k2, &v1, &v2); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(k1, k2, v1, v2))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1bu101", "a2bu200"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows = %v, want %v", got, want)
	}

	// LastInsertId is refused clearly.
	res, err = db.Exec("INSERT INTO r VALUES ('a9', 'b', 'x', 1)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.LastInsertId(); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("LastInsertId error = %v", err)
	}
}

func TestAllTypesRoundTrip(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, typedDefs)

	ins, err := db.Prepare("INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	ts := time.Date(2026, 11, 1, 10, 0, 0, 123456000, time.FixedZone("CET", 3600))
	raw := []byte{0, 1, 0xff, '-', 0}
	type row struct {
		id  string
		i   int
		b   int64
		f   float64
		d   float64
		ok  bool
		ts  time.Time
		raw []byte
	}
	full := row{"full", -7, 1 << 40, 1.5, 0.1, true, ts, raw}
	if _, err := ins.Exec(full.id, full.i, full.b, full.f, full.d, full.ok, full.ts, full.raw); err != nil {
		t.Fatal(err)
	}
	// Every non-key attribute NULL.
	if _, err := ins.Exec("nulls", nil, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	// Extremes, and conversions database/sql does before the driver
	// (int32, float32, uint8) and kvschema does (string to TIMESTAMP, string
	// to BYTES).
	if _, err := ins.Exec("edge", int32(-2147483648), int64(-1<<63), float32(-0.25), -1e300, false, "2026-11-02 09:30:00", "text"); err != nil {
		t.Fatal(err)
	}
	// A timestamp finer than a microsecond is refused, not cut.
	if _, err := ins.Exec("bad", 0, 0, 0.0, 0.0, false, ts.Add(789), raw); err == nil || !strings.Contains(err.Error(), "has 789 ns below the microsecond") {
		t.Errorf("nanoseconds: err = %v", err)
	}
	// Out of range INT is refused.
	if _, err := ins.Exec("bad", int64(1)<<31, 0, 0.0, 0.0, false, ts, raw); err == nil || !strings.Contains(err.Error(), "out of range for INT") {
		t.Errorf("INT out of range: err = %v", err)
	}
	// A wrong type is refused with the attribute named.
	if _, err := ins.Exec("bad", "seven", 0, 0.0, 0.0, false, ts, raw); err == nil || !strings.Contains(err.Error(), "attribute i") {
		t.Errorf("STRING into INT: err = %v", err)
	}

	q, err := db.Prepare("SELECT id, i, b, f, d, ok, ts, raw FROM typed WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var got row
	if err := q.QueryRow("full").Scan(&got.id, &got.i, &got.b, &got.f, &got.d, &got.ok, &got.ts, &got.raw); err != nil {
		t.Fatal(err)
	}
	wantTS := ts.UTC().Truncate(time.Microsecond)
	if got.id != full.id || got.i != full.i || got.b != full.b || got.f != full.f || got.d != full.d || got.ok != full.ok || !bytes.Equal(got.raw, full.raw) {
		t.Errorf("got %+v\nwant %+v", got, full)
	}
	if !got.ts.Equal(wantTS) || got.ts.Location() != time.UTC || got.ts.Nanosecond() != 123456000 {
		t.Errorf("ts = %v (%v), want %v in UTC", got.ts, got.ts.Location(), wantTS)
	}

	// NULLs scan into sql.Null* and *any as nil.
	var (
		i  sql.NullInt32
		b  sql.NullInt64
		f  sql.NullFloat64
		d  any
		ok sql.NullBool
		tn sql.NullTime
		rb []byte
		id string
	)
	if err := q.QueryRow("nulls").Scan(&id, &i, &b, &f, &d, &ok, &tn, &rb); err != nil {
		t.Fatal(err)
	}
	if i.Valid || b.Valid || f.Valid || d != nil || ok.Valid || tn.Valid || rb != nil {
		t.Errorf("NULLs came back as %v %v %v %v %v %v %v", i, b, f, d, ok, tn, rb)
	}
	// A NULL into a plain string is database/sql's error.
	var s string
	if err := db.QueryRow("SELECT i FROM typed WHERE id = 'nulls'").Scan(&s); err == nil {
		t.Error("NULL scanned into *string")
	}

	// The edge row, scanned into *any: the canonical Go types.
	vals := make([]any, 8)
	ptrs := make([]any, 8)
	for k := range vals {
		ptrs[k] = &vals[k]
	}
	if err := q.QueryRow("edge").Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	want := []any{"edge", int64(-2147483648), int64(-1 << 63), float64(-0.25), -1e300, false,
		time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC), []byte("text")}
	for k := range want {
		if fmt.Sprintf("%T %v", vals[k], vals[k]) != fmt.Sprintf("%T %v", want[k], want[k]) {
			t.Errorf("column %d = %T %v, want %T %v", k, vals[k], vals[k], want[k], want[k])
		}
	}

	// FLOAT has float32 precision.
	if _, err := db.Exec("INSERT INTO typed (id, f) VALUES ('pi', ?)", 3.141592653589793); err != nil {
		t.Fatal(err)
	}
	var pi float64
	if err := db.QueryRow("SELECT f FROM typed WHERE id = 'pi'").Scan(&pi); err != nil {
		t.Fatal(err)
	}
	if pi != float64(float32(3.141592653589793)) {
		t.Errorf("FLOAT 3.14159…: got %v", pi)
	}

	// Rows come back in key order (ordered{id}).
	rows, err := db.Query("SELECT id FROM typed")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if fmt.Sprint(ids) != "[edge full nulls pi]" {
		t.Errorf("ids = %v", ids)
	}
}

func TestErrors(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, fig6)

	_, err := db.Exec("SELEC * FROM r")
	if err == nil || !regexp.MustCompile(`^1:1: `).MatchString(err.Error()) {
		t.Errorf("syntax error = %v, want 1:1: …", err)
	}
	_, err = db.Exec("INSERT INTO r\n  VALUES ('a', 'b', 'c', 'not a number')")
	if err == nil || !regexp.MustCompile(`^2:\d+: attribute v2: `).MatchString(err.Error()) {
		t.Errorf("type error = %v, want 2:N: attribute v2: …", err)
	}
	_, err = db.Query("SELECT * FROM nope")
	if err == nil || !strings.Contains(err.Error(), "1:15: unknown relation nope") {
		t.Errorf("unknown relation: %v", err)
	}
	if _, err := db.Prepare("SELECT k1, nope FROM r WHERE k1 = ?"); err == nil || !strings.Contains(err.Error(), "1:12: relation r has no attribute nope") {
		t.Errorf("Prepare of an unknown attribute: %v", err)
	}
	if _, err := db.Prepare("SELECT * FROM r WHERE"); err == nil || !regexp.MustCompile(`^1:\d+: `).MatchString(err.Error()) {
		t.Errorf("Prepare of a bad statement: %v", err)
	}
	// One statement per call.
	if _, err := db.Exec("INSERT INTO r VALUES ('a', 'b', 'c', 1); INSERT INTO r VALUES ('d', 'e', 'f', 2)"); err == nil {
		t.Error("two statements in one Exec were accepted")
	}
	// Query reads; a write through it is refused before it runs.
	if _, err := db.Query("INSERT INTO r VALUES ('q', 'q', 'q', 9)"); err == nil || !strings.Contains(err.Error(), "1:1: Query runs SELECT and EXPLAIN; run INSERT with Exec") {
		t.Errorf("INSERT through Query: %v", err)
	}
	var count int
	if err := db.QueryRow("SELECT v2 FROM r WHERE k1 = 'q'").Scan(&count); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("the INSERT given to Query ran: %v", err)
	}
	// Too few arguments.
	if _, err := db.Exec("INSERT INTO r VALUES (?, ?, ?, ?)", "a", "b", "c"); err == nil || !strings.Contains(err.Error(), "parameter 4") {
		t.Errorf("missing argument: %v", err)
	}

	// A failed statement leaves the connection usable.
	var n int
	if err := db.QueryRow("SELECT v2 FROM r WHERE k1 = 'a'").Scan(&n); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("after errors: %v", err)
	}

	// A bad DSN.
	bad, err := sql.Open("kvschema", "nosuch:x")
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Ping(); err == nil || !strings.Contains(err.Error(), `unknown scheme "nosuch"`) {
		t.Errorf("bad DSN: %v", err)
	}
}

func TestExplainThroughQuery(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, fig6)
	rows, err := db.Query("EXPLAIN SELECT * FROM r WHERE k1 = ? AND k2 = ?", "a1", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if len(cols) != 1 || cols[0] != "PLAN" {
		t.Errorf("columns %v", cols)
	}
	var plan []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, l)
	}
	if len(plan) == 0 || plan[0] != "CLIENT PARALLEL 1-WAY RANGE SCAN OVER s1 ['a1','b']" {
		t.Errorf("plan %q", plan)
	}
}

// TestSharedStore: two *sql.DB on one DSN, many connections each, share
// one store; run with -race.
func TestSharedStore(t *testing.T) {
	d := dsn(t)
	before := openShared()
	db1 := openDB(t, d)
	db2 := openDB(t, d)
	db1.SetMaxOpenConns(4)
	db2.SetMaxOpenConns(4)
	execAll(t, db1, fig6)

	const writers, perWriter = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := 0; w < writers; w++ {
		wg.Add(2)
		db := db1
		if w%2 == 1 {
			db = db2
		}
		go func() {
			defer wg.Done()
			st, err := db.Prepare("INSERT INTO r VALUES (?, ?, ?, ?)")
			if err != nil {
				errs <- err
				return
			}
			defer st.Close()
			for i := 0; i < perWriter; i++ {
				if _, err := st.Exec(fmt.Sprintf("w%d", w), fmt.Sprintf("%03d", i), "v", i); err != nil {
					errs <- err
					return
				}
			}
		}()
		// Readers through the other handle see a growing, consistent
		// prefix of this writer's rows.
		other := db2
		if db == db2 {
			other = db1
		}
		go func() {
			defer wg.Done()
			last := 0
			for last < perWriter {
				var n int
				if err := other.QueryRow("SELECT v2 FROM r WHERE k1 = ? AND k2 = ?", fmt.Sprintf("w%d", w), "000").Scan(&n); err != nil && !errors.Is(err, sql.ErrNoRows) {
					errs <- err
					return
				}
				rows, err := other.Query("SELECT k2 FROM r WHERE k1 = ?", fmt.Sprintf("w%d", w))
				if err != nil {
					errs <- err
					return
				}
				var got []string
				for rows.Next() {
					var k2 string
					if err := rows.Scan(&k2); err != nil {
						errs <- err
						return
					}
					got = append(got, k2)
				}
				rows.Close()
				for i, k2 := range got {
					if k2 != fmt.Sprintf("%03d", i) {
						errs <- fmt.Errorf("writer %d: rows %v are not a prefix", w, got)
						return
					}
				}
				if len(got) < last {
					errs <- fmt.Errorf("writer %d: rows went from %d to %d", w, last, len(got))
					return
				}
				last = len(got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := openShared(); got != before+1 {
		t.Errorf("%d shared stores open, want %d (one per DSN)", got, before+1)
	}
	count := func(db *sql.DB) int {
		rows, err := db.Query("SELECT k1 FROM r")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		return n
	}
	if a, b := count(db1), count(db2); a != writers*perWriter || b != a {
		t.Errorf("db1 sees %d rows, db2 %d, want %d", a, b, writers*perWriter)
	}

	// Closing every connection closes the store; reopening finds the
	// definitions (catalog) and the data.
	db1.Close()
	db2.Close()
	if got := openShared(); got != before {
		t.Errorf("after closing: %d shared stores open, want %d", got, before)
	}
	db3 := openDB(t, d)
	if c := count(db3); c != writers*perWriter {
		t.Errorf("after reopening: %d rows, want %d", c, writers*perWriter)
	}
	var v2 int
	if err := db3.QueryRow("SELECT v2 FROM r WHERE k2 = '007' AND k1 = 'w3'").Scan(&v2); err != nil || v2 != 7 {
		t.Errorf("after reopening, through s2: %d, %v", v2, err)
	}
}

// TestNoIdleConnections: every statement opens and closes the store.
func TestNoIdleConnections(t *testing.T) {
	d := dsn(t)
	db := openDB(t, d)
	db.SetMaxIdleConns(0)
	execAll(t, db, fig6)
	for i := 0; i < 3; i++ {
		if _, err := db.Exec("INSERT INTO r VALUES (?, 'b', 'x', ?)", fmt.Sprint("k", i), i); err != nil {
			t.Fatal(err)
		}
	}
	var ks []string
	rows, err := db.Query("SELECT k1 FROM r WHERE k2 = 'b'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		ks = append(ks, k)
	}
	rows.Close()
	sort.Strings(ks)
	if fmt.Sprint(ks) != "[k0 k1 k2]" {
		t.Errorf("got %v", ks)
	}
}

// TestMemDSN: "mem:" gives each connection its own store (documented);
// "mem:NAME" is one shared store.
func TestMemDSN(t *testing.T) {
	name := "mem:drivertest-" + strings.ReplaceAll(t.Name(), "/", "-")
	db := openDB(t, name)
	db.SetMaxOpenConns(1)
	execAll(t, db, fig6)
	if _, err := db.Exec("INSERT INTO r VALUES ('a', 'b', 'c', 1)"); err != nil {
		t.Fatal(err)
	}
	other := openDB(t, name)
	var v string
	if err := other.QueryRow("SELECT v1 FROM r WHERE k1 = 'a' AND k2 = 'b'").Scan(&v); err != nil || v != "c" {
		t.Errorf("second handle on %s: %q, %v", name, v, err)
	}
}

// TestMemPerDB: an sql.DB on "mem:" has one store for all its connections
// (even when none is idle), and another sql.DB on "mem:" has another.
func TestMemPerDB(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "mem:")
	db.SetMaxIdleConns(0)
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fig6 {
		if _, err := c1.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c2.ExecContext(ctx, "INSERT INTO r VALUES ('a', 'b', 'c', 1)"); err != nil {
		t.Fatalf("second connection of the same sql.DB: %v", err)
	}
	c1.Close()
	c2.Close()
	// No connection is left open; the store lives on with the sql.DB.
	var v string
	if err := db.QueryRow("SELECT v1 FROM r WHERE k1 = 'a' AND k2 = 'b'").Scan(&v); err != nil || v != "c" {
		t.Errorf("after all connections closed: %q, %v", v, err)
	}
	// Concurrent use of the pool.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.Exec("INSERT INTO r VALUES (?, 'b', 'c', ?)", fmt.Sprint("k", i), i); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var n int
	rows, err := db.Query("SELECT k1 FROM r WHERE k2 = 'b'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 9 {
		t.Errorf("%d rows, want 9", n)
	}

	other := openDB(t, "mem:")
	if _, err := other.Exec("SELECT * FROM r"); err == nil || !strings.Contains(err.Error(), "unknown relation r") {
		t.Errorf("another sql.DB on mem: sees the first one's store: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestColumnTypes: result columns carry their kvschema type and Go scan
// type, for SELECT and for EXPLAIN's PLAN column.
func TestColumnTypes(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, typedDefs)
	rs, err := db.Query("SELECT raw, id, i, b, f, d, ok, ts FROM typed WHERE id = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	cts, err := rs.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range cts {
		nullable, ok := ct.Nullable()
		got = append(got, fmt.Sprintf("%s %s %s %v/%v", ct.Name(), ct.DatabaseTypeName(), ct.ScanType(), nullable, ok))
	}
	rs.Close()
	want := []string{
		"raw BYTES []uint8 true/true", "id STRING string true/true", "i INT int64 true/true", "b BIGINT int64 true/true",
		"f FLOAT float64 true/true", "d DOUBLE float64 true/true", "ok BOOL bool true/true", "ts TIMESTAMP time.Time true/true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("column types (-want +got):\n%s", diff)
	}
	rs, err = db.Query("EXPLAIN SELECT * FROM typed WHERE id = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if cts, err := rs.ColumnTypes(); err != nil || len(cts) != 1 || cts[0].DatabaseTypeName() != "STRING" {
		t.Errorf("EXPLAIN's column types: %v %v", cts, err)
	}
}

// TestDollarParameters: PostgreSQL-style $n parameters take the n-th
// argument, in any order and more than once.
func TestDollarParameters(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, fig6)
	if _, err := db.Exec("INSERT INTO r VALUES ($2, $1, $2, $3)", "b", "a", 7); err != nil {
		t.Fatal(err)
	}
	var k1, v1 string
	var v2 int64
	if err := db.QueryRow("SELECT k1, v1, v2 FROM r WHERE k2 = $2 AND k1 = $1", "a", "b").Scan(&k1, &v1, &v2); err != nil {
		t.Fatal(err)
	}
	if k1 != "a" || v1 != "a" || v2 != 7 {
		t.Errorf("got %q %q %d", k1, v1, v2)
	}
}

// TestNamedParameters: :name parameters take sql.Named arguments through
// database/sql, in a prepared statement and directly.
func TestNamedParameters(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, fig6)
	if _, err := db.Exec("INSERT INTO r VALUES (:k1, :k2, :k1, :n)", sql.Named("n", 7), sql.Named("k2", "b"), sql.Named("k1", "a")); err != nil {
		t.Fatal(err)
	}
	st, err := db.Prepare("SELECT v1, v2 FROM r WHERE k1 = :k1 AND k2 = :k2")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var v1 string
	var v2 int64
	if err := st.QueryRow(sql.Named("K2", "b"), sql.Named("k1", "a")).Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if v1 != "a" || v2 != 7 {
		t.Errorf("got %q %d", v1, v2)
	}
	if err := st.QueryRow(sql.Named("k1", "a")).Scan(&v1, &v2); err == nil || !strings.Contains(err.Error(), "missing argument :k2") {
		t.Errorf("a missing argument: %v", err)
	}
}

// TestReadOnlyTransaction: a read-only transaction reads the snapshot of
// its BeginTx — rows written since by other connections are not in it,
// through direct queries and statements prepared before it alike — and
// refuses writes; after Commit, the connection reads the store again.
func TestReadOnlyTransaction(t *testing.T) {
	ctx := context.Background()
	onFig6(t, func(t *testing.T, db *sql.DB) {
		if _, err := db.Exec("INSERT INTO r VALUES ('a', 'x', 'v', 1)"); err != nil {
			t.Fatal(err)
		}
		prepared, err := db.Prepare("SELECT k1 FROM r WHERE k2 = 'x'")
		if err != nil {
			t.Fatal(err)
		}
		defer prepared.Close()
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelSnapshot})
		if err != nil {
			t.Fatal(err)
		}
		// Written by another connection after BeginTx.
		if _, err := db.Exec("INSERT INTO r VALUES ('b', 'x', 'v', 2)"); err != nil {
			t.Fatal(err)
		}
		keys := func(q contextQuerier) []string { return queryKeys(t, q) }
		direct := func(tq interface {
			QueryContext(context.Context, string, ...any) (*sql.Rows, error)
		}) queryFunc {
			return func(ctx context.Context, _ ...any) (*sql.Rows, error) {
				return tq.QueryContext(ctx, "SELECT k1 FROM r WHERE k2 = 'x'")
			}
		}
		if got := keys(direct(tx)); fmt.Sprint(got) != "[a]" {
			t.Errorf("in the transaction: %v, want [a]", got)
		}
		if got := keys(tx.StmtContext(ctx, prepared)); fmt.Sprint(got) != "[a]" {
			t.Errorf("a statement prepared before, in the transaction: %v, want [a]", got)
		}
		if got := keys(direct(db)); fmt.Sprint(got) != "[a b]" {
			t.Errorf("outside the transaction: %v, want [a b]", got)
		}
		if _, err := tx.Exec("INSERT INTO r VALUES ('c', 'x', 'v', 3)"); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
			t.Errorf("a write in a read-only transaction: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := keys(prepared); fmt.Sprint(got) != "[a b]" {
			t.Errorf("after Commit: %v, want [a b]", got)
		}
	})
}

// TestWriteTransaction: a write transaction's statements (direct, and
// prepared before it) see its own writes, other connections see none of
// them before Commit and all after; Rollback drops them; a failed
// statement inside leaves the transaction usable.
func TestWriteTransaction(t *testing.T) {
	ctx := context.Background()
	onFig6(t, func(t *testing.T, db *sql.DB) {
		prepared, err := db.Prepare("SELECT k1 FROM r WHERE k2 = 'x'")
		if err != nil {
			t.Fatal(err)
		}
		defer prepared.Close()
		keys := func(q contextQuerier) string { return fmt.Sprint(queryKeys(t, q)) }
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO r VALUES ('a', 'x', 'v', 1), ('b', 'x', 'v', 2)"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO r VALUES ('c', 'x', 'v', 'not a number')"); err == nil {
			t.Error("a bad INSERT in the transaction was taken")
		}
		if _, err := tx.Exec("DELETE FROM r WHERE k1 = 'b'"); err != nil {
			t.Fatal(err)
		}
		inTx := tx.StmtContext(ctx, prepared)
		if got := keys(inTx); got != "[a]" {
			t.Errorf("in the transaction: %s, want [a]", got)
		}
		if got := keys(prepared); got != "[]" {
			t.Errorf("another connection before Commit: %s, want []", got)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := keys(prepared); got != "[a]" {
			t.Errorf("after Commit: %s, want [a]", got)
		}
		tx, err = db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("DELETE FROM r WHERE k1 = 'a'"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if got := keys(prepared); got != "[a]" {
			t.Errorf("after Rollback: %s, want [a]", got)
		}
		if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
			t.Errorf("Commit after Rollback: %v, want sql.ErrTxDone", err)
		}
	})
}

// onFig6 runs test on a store of each embedded backend (Pebble, and mem:)
// holding the Fig. 6 definitions.
func onFig6(t *testing.T, test func(t *testing.T, db *sql.DB)) {
	for _, name := range []string{"pebble", "mem"} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			if name == "mem" {
				d = "mem:"
			}
			db := openDB(t, d)
			execAll(t, db, fig6)
			test(t, db)
		})
	}
}

type queryFunc func(context.Context, ...any) (*sql.Rows, error)

// contextQuerier is a prepared statement, or a query bound to its text.
type contextQuerier interface {
	QueryContext(context.Context, ...any) (*sql.Rows, error)
}

// queryKeys runs q and returns the one STRING column of its rows.
func queryKeys(t *testing.T, q contextQuerier) []string {
	t.Helper()
	rows, err := q.QueryContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f queryFunc) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return f(ctx, args...)
}

// TestDefineAndDropSchemaOnline: DEFINE SCHEMA of a second layout on a
// populated relation and DROP SCHEMA run through database/sql as any
// statement does; a prepared query follows the layouts that are left.
func TestDefineAndDropSchemaOnline(t *testing.T) {
	db := openDB(t, dsn(t))
	execAll(t, db, fig6[:2])
	res, err := db.Exec("INSERT INTO r VALUES ('a1', 'b', 'x', 100), ('a2', 'b', 'y', 200), ('a3', 'c', 'z', 300)")
	affected(t, res, err, 3)
	sel, err := db.Prepare("SELECT k1 FROM r WHERE k2 = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	check := func(when string) {
		t.Helper()
		rows, err := sel.Query("b")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			got = append(got, k)
		}
		if fmt.Sprint(got) != "[a1 a2]" {
			t.Errorf("%s: %v", when, got)
		}
	}
	execAll(t, db, fig6[2:]) // s2, backfilled online
	check("with s1 and s2")
	if _, err := db.Exec("DROP SCHEMA s1"); err != nil {
		t.Fatal(err)
	}
	check("with s2 alone")
	if _, err := db.Exec("DROP SCHEMA s1"); err == nil || !strings.Contains(err.Error(), "1:1: unknown schema s1") {
		t.Errorf("dropping s1 again: %v", err)
	}
	if _, err := db.Exec("DROP SCHEMA s2"); err == nil || !strings.Contains(err.Error(), "would be lost") {
		t.Errorf("dropping the last layout of a relation with tuples: %v", err)
	}
}
