package driver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// The conformance tests follow the generic database/sql driver suites
// (bradfitz/go-sql-test's blobs, many QueryRow, prepared statements
// shared by goroutines, transactions): what any program written against
// database/sql assumes of a driver, checked on Pebble and mem:.

func conformanceDBs(t *testing.T) map[string]*sql.DB {
	return map[string]*sql.DB{"pebble": openDB(t, dsn(t)), "mem": openDB(t, "mem:")}
}

func defineKV(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, s := range []string{
		`DEFINE RELATION kv { k BIGINT KEY, v BYTES, s STRING }`,
		`DEFINE PRIMARY SCHEMA kv_p FOR kv { TABLE 'kv', ROW ordered{k}, QUALIFIER attr_name['k'], VALUE attr_value['k'] }`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConformanceBlobs: BYTES values of every size round-trip exactly,
// zero bytes and all, and the slice a Scan gives is the caller's.
func TestConformanceBlobs(t *testing.T) {
	for name, db := range conformanceDBs(t) {
		t.Run(name, func(t *testing.T) {
			defineKV(t, db)
			for i, n := range []int{0, 1, 255, 4096, 1 << 20} {
				blob := make([]byte, n)
				for j := range blob {
					blob[j] = byte(j * 7)
				}
				if _, err := db.Exec("INSERT INTO kv VALUES (?, ?, ?)", i, blob, "x"); err != nil {
					t.Fatal(err)
				}
				var got []byte
				if err := db.QueryRow("SELECT v FROM kv WHERE k = ?", i).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, blob) {
					t.Fatalf("blob of %d bytes read back as %d bytes", n, len(got))
				}
				if n > 0 {
					got[0]++ // the caller's copy: the next read is unchanged
					var again []byte
					if err := db.QueryRow("SELECT v FROM kv WHERE k = ?", i).Scan(&again); err != nil || !bytes.Equal(again, blob) {
						t.Fatalf("a changed Scan result changed the stored blob: %v", err)
					}
				}
			}
		})
	}
}

// TestConformanceManyQueryRow: thousands of QueryRow calls reuse
// connections (none leak: each QueryRow closes its rows).
func TestConformanceManyQueryRow(t *testing.T) {
	for name, db := range conformanceDBs(t) {
		t.Run(name, func(t *testing.T) {
			defineKV(t, db)
			db.SetMaxOpenConns(2)
			if _, err := db.Exec("INSERT INTO kv VALUES (1, x'00', 'one')"); err != nil {
				t.Fatal(err)
			}
			for i := range 5000 {
				var s string
				if err := db.QueryRow("SELECT s FROM kv WHERE k = ?", 1).Scan(&s); err != nil || s != "one" {
					t.Fatalf("query %d: %q %v", i, s, err)
				}
			}
			if st := db.Stats(); st.OpenConnections > 2 || st.InUse != 0 {
				t.Errorf("connections after the loop: %+v", st)
			}
		})
	}
}

// TestConformancePreparedConcurrent: one prepared statement used by many
// goroutines at once (database/sql prepares it on each connection it
// meets) gives every goroutine its own rows.
func TestConformancePreparedConcurrent(t *testing.T) {
	for name, db := range conformanceDBs(t) {
		t.Run(name, func(t *testing.T) {
			defineKV(t, db)
			db.SetMaxOpenConns(4)
			ins, err := db.Prepare("INSERT INTO kv VALUES (?, ?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			defer ins.Close()
			sel, err := db.Prepare("SELECT s FROM kv WHERE k = ?")
			if err != nil {
				t.Fatal(err)
			}
			defer sel.Close()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 200 {
						k := g*1000 + i
						if _, err := ins.Exec(k, nil, fmt.Sprint("v", k)); err != nil {
							errs <- err
							return
						}
						var s string
						if err := sel.QueryRow(k).Scan(&s); err != nil || s != fmt.Sprint("v", k) {
							errs <- fmt.Errorf("key %d read %q: %v", k, s, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			rows, err := db.Query("SELECT k FROM kv")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			if rows.Close(); n != 1600 {
				t.Errorf("%d rows, want 1600", n)
			}
		})
	}
}

// TestConformanceNullsAndTypes: NULL scans into the sql.Null types and
// *any; scanning NULL into a plain type is database/sql's error, and the
// connection stays usable.
func TestConformanceNullsAndTypes(t *testing.T) {
	for name, db := range conformanceDBs(t) {
		t.Run(name, func(t *testing.T) {
			defineKV(t, db)
			if _, err := db.Exec("INSERT INTO kv (k) VALUES (7)"); err != nil {
				t.Fatal(err)
			}
			var ns sql.NullString
			var nb []byte
			var anyv any
			if err := db.QueryRow("SELECT s, v, s FROM kv WHERE k = 7").Scan(&ns, &nb, &anyv); err != nil {
				t.Fatal(err)
			}
			if ns.Valid || nb != nil || anyv != nil {
				t.Errorf("NULLs read as %+v, %v, %v", ns, nb, anyv)
			}
			var s string
			if err := db.QueryRow("SELECT s FROM kv WHERE k = 7").Scan(&s); err == nil {
				t.Error("NULL scanned into a string")
			}
			if err := db.QueryRow("SELECT k FROM kv WHERE k = 7").Scan(&s); err != nil || s != "7" {
				t.Errorf("BIGINT into a string (database/sql converts): %q %v", s, err)
			}
		})
	}
}

// TestConformanceContext: a cancelled context fails the statement at once
// with context.Canceled, and the pool goes on serving.
func TestConformanceContext(t *testing.T) {
	for name, db := range conformanceDBs(t) {
		t.Run(name, func(t *testing.T) {
			defineKV(t, db)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES (1, x'01', 'a')"); !errors.Is(err, context.Canceled) {
				t.Errorf("Exec with a cancelled context: %v", err)
			}
			if _, err := db.QueryContext(ctx, "SELECT * FROM kv"); !errors.Is(err, context.Canceled) {
				t.Errorf("Query with a cancelled context: %v", err)
			}
			var n int
			if err := db.QueryRow("SELECT k FROM kv WHERE k = 1").Scan(&n); !errors.Is(err, sql.ErrNoRows) {
				t.Errorf("after cancelled statements: %v (the cancelled INSERT must not have written)", err)
			}
		})
	}
}

// TestConformanceRowsLifecycle: rows closed early free their connection;
// a query may run while another's rows are open (rows are materialized);
// Rows.Err is nil after a full iteration.
func TestConformanceRowsLifecycle(t *testing.T) {
	for name, db := range conformanceDBs(t) {
		t.Run(name, func(t *testing.T) {
			defineKV(t, db)
			db.SetMaxOpenConns(1)
			for i := range 10 {
				if _, err := db.Exec("INSERT INTO kv VALUES (?, NULL, ?)", i, fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := db.Query("SELECT k FROM kv")
			if err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatal("no first row")
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			// With one connection, this waits forever if Close leaked it.
			rows, err = db.Query("SELECT k, s FROM kv")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var k int
				var s string
				if err := rows.Scan(&k, &s); err != nil || s != fmt.Sprint(k) {
					t.Fatalf("row %d: %d %q %v", n, k, s, err)
				}
				n++
			}
			if err := rows.Err(); err != nil || n != 10 {
				t.Errorf("%d rows, Err %v", n, err)
			}
			rows.Close()
		})
	}
}
