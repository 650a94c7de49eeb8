package kvschema_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/types"
)

func apiOpen(t *testing.T, url string, opts kvschema.Options) *kvschema.DB {
	t.Helper()
	db, err := kvschema.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func apiExec(t *testing.T, db *kvschema.DB, src string, args ...any) kvschema.Result {
	t.Helper()
	res, err := db.Exec(context.Background(), src, args...)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return res
}

func apiRows(t *testing.T, db *kvschema.DB, src string, args ...any) [][]types.Value {
	t.Helper()
	rows, err := db.Query(context.Background(), src, args...)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return rows.All()
}

func apiLayoutNames(db *kvschema.DB, rel string) []string {
	r := db.Catalog().Relation(rel)
	if r == nil {
		return nil
	}
	var out []string
	for _, l := range r.Layouts() {
		out = append(out, l.Name)
	}
	return out
}

// TestAPIReopenPebble: definitions and data survive Close and reopen.
func TestAPIReopenPebble(t *testing.T) {
	ctx := context.Background()
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	db := apiOpen(t, url, kvschema.Options{})
	if err := db.Script(ctx, "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	res := apiExec(t, db, "INSERT INTO r VALUES ('a1', 'b', 'x', 100), ('a2', 'b', 'y', 200)")
	if res.Statement != "INSERT" || res.RowsAffected != 2 {
		t.Errorf("INSERT result %+v", res)
	}
	defs := lang.PrintScript(db.Catalog().Defs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var trace bytes.Buffer
	db = apiOpen(t, url, kvschema.Options{Trace: &trace})
	defer db.Close()
	if got := lang.PrintScript(db.Catalog().Defs); got != defs {
		t.Errorf("definitions after reopening:\n%s\nwant:\n%s", got, defs)
	}
	if diff := cmp.Diff([]string{"s1", "s2"}, apiLayoutNames(db, "r")); diff != "" {
		t.Errorf("layouts (-want +got):\n%s", diff)
	}
	if p := db.Catalog().Relation("r").Primary(); p == nil || p.Name != "s1" {
		t.Errorf("primary layout %v", p)
	}
	if trace.Len() != 0 {
		t.Errorf("loading the catalog was traced:\n%s", trace.String())
	}
	// Through s1 (key prefix) and s2 (k2 first).
	if diff := cmp.Diff([][]types.Value{{"a1", "b", "x", int64(100)}}, apiRows(t, db, "SELECT * FROM r WHERE k1 = 'a1' AND k2 = 'b'")); diff != "" {
		t.Errorf("through s1 (-want +got):\n%s", diff)
	}
	if !strings.Contains(trace.String(), "scan 's1', {STARTROW=>'a1-b', STOPROW=>'a1-c'}") {
		t.Errorf("trace:\n%s", trace.String())
	}
	trace.Reset()
	if diff := cmp.Diff([][]types.Value{{"a1"}, {"a2"}}, apiRows(t, db, "SELECT k1 FROM r WHERE k2 = 'b'")); diff != "" {
		t.Errorf("through s2 (-want +got):\n%s", diff)
	}
	if !strings.Contains(trace.String(), "scan 's2'") {
		t.Errorf("trace:\n%s", trace.String())
	}

	// The identical definitions again are a no-op (no new version): the
	// script can be rerun.
	if err := db.Script(ctx, "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Errorf("rerunning the definitions: %v", err)
	}
	v, _, err := catalog.Load(ctx, db.Store())
	if err != nil {
		t.Fatal(err)
	}
	if v != 3 {
		t.Errorf("catalog version %d after 3 definitions and a no-op rerun, want 3", v)
	}
	// A conflicting redefinition is refused and changes nothing.
	if _, err := db.Exec(ctx, "DEFINE RELATION r { k1 STRING KEY, v1 STRING }"); err == nil {
		t.Error("redefining r differently succeeded")
	}
	if got := lang.PrintScript(db.Catalog().Defs); got != defs {
		t.Errorf("definitions changed by a refused DEFINE:\n%s", got)
	}
}

// TestAPIPreparedReuse: one parse, many executions with different args.
func TestAPIPreparedReuse(t *testing.T) {
	ctx := context.Background()
	db := apiOpen(t, "mem:", kvschema.Options{})
	defer db.Close()
	if err := db.Script(ctx, "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	ins, err := db.Prepare("INSERT INTO r VALUES (?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "c"} {
		res, err := ins.Exec(ctx, k, "k2", "v"+k, i)
		if err != nil || res.RowsAffected != 1 {
			t.Fatalf("Exec %s: %+v %v", k, res, err)
		}
	}
	sel, err := db.Prepare("SELECT v1, v2 FROM r WHERE k1 = ? AND k2 = ?")
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "c", "zz"} {
		rows, err := sel.Query(ctx, k, "k2")
		if err != nil {
			t.Fatal(err)
		}
		var want [][]types.Value
		if k != "zz" {
			want = [][]types.Value{{"v" + k, int64(i)}}
		}
		if diff := cmp.Diff(want, rows.All()); diff != "" {
			t.Errorf("k1 = %s (-want +got):\n%s", k, diff)
		}
	}
	// Missing arguments are an error naming the parameter.
	if _, err := sel.Query(ctx, "a"); err == nil || !strings.Contains(err.Error(), "parameter 2") {
		t.Errorf("missing argument: %v", err)
	}
	// Unsupported Go types are refused.
	if _, err := sel.Query(ctx, struct{}{}, "k2"); err == nil || !strings.Contains(err.Error(), "unsupported Go type") {
		t.Errorf("struct argument: %v", err)
	}
	// The statement is still usable after errors.
	rows, err := sel.Query(ctx, "b", "k2")
	if err != nil || rows.Len() != 1 {
		t.Errorf("after errors: %v %v", rows, err)
	}
	if sel.AST() == nil {
		t.Error("AST is nil")
	}
}

// TestAPIPreparedConcurrent: goroutines sharing prepared statements (a
// point lookup and a prefix scan, both re-keyed from recycled plan memory,
// and a batched insert encoded in the executor's reused scratch) each get
// their own rows.
func TestAPIPreparedConcurrent(t *testing.T) {
	ctx := context.Background()
	db := apiOpen(t, "pebble:"+t.TempDir(), kvschema.Options{})
	defer db.Close()
	apiExec(t, db, "DEFINE RELATION ev { grp BIGINT KEY, seq BIGINT KEY, val STRING }")
	apiExec(t, db, "DEFINE PRIMARY SCHEMA ev_by_grp FOR ev { TABLE 'ev', ROW ordered{grp}:ordered{seq}, FAMILY 'f', VALUE val }")
	ins, err := db.Prepare("INSERT INTO ev VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	point, err := db.Prepare("SELECT val FROM ev WHERE grp = ? AND seq = ?")
	if err != nil {
		t.Fatal(err)
	}
	scan, err := db.Prepare("SELECT seq, val FROM ev WHERE grp = ?")
	if err != nil {
		t.Fatal(err)
	}
	val := func(g, s int64) string {
		return strings.Repeat(string(rune('a'+g%26)), int(s%7)) + fmt.Sprint(g, "/", s)
	}
	const workers, groups = 4, 50
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- func() error {
				for g := int64(w); g < groups; g += workers {
					if _, err := ins.Exec(ctx, g, 0, val(g, 0), g, 1, val(g, 1), g, 2, val(g, 2)); err != nil {
						return err
					}
					for s := int64(0); s < 3; s++ {
						rows, err := point.Query(ctx, g, s)
						if err != nil {
							return err
						}
						if got := rows.All(); len(got) != 1 || got[0][0] != val(g, s) {
							return fmt.Errorf("point %d/%d: %v", g, s, got)
						}
					}
					rows, err := scan.Query(ctx, g)
					if err != nil {
						return err
					}
					got := rows.All()
					for s, row := range got {
						if row[0] != int64(s) || row[1] != val(g, int64(s)) {
							return fmt.Errorf("scan %d: %v", g, got)
						}
					}
					if len(got) != 3 {
						return fmt.Errorf("scan %d: %v", g, got)
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestAPIPreparedFollowsNewLayout: a statement prepared before a DEFINE
// SCHEMA is planned against the new catalog; the new layout is backfilled
// with the existing rows and then kept up to date.
func TestAPIPreparedFollowsNewLayout(t *testing.T) {
	ctx := context.Background()
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	var trace bytes.Buffer
	db := apiOpen(t, url, kvschema.Options{Trace: &trace})
	apiExec(t, db, "DEFINE RELATION kv { k STRING KEY, v1 STRING, n BIGINT }")
	apiExec(t, db, "DEFINE PRIMARY SCHEMA kv_p FOR kv { TABLE 'kv', ROW ordered{k}, FAMILY 'f', QUALIFIER attr_name['k'], VALUE attr_value['k'] }")
	apiExec(t, db, "INSERT INTO kv VALUES ('k3', 'x', 3), ('k1', 'x', 1), ('k2', 'y', 2), ('k4', NULL, 4)")

	sel, err := db.Prepare("SELECT k, n FROM kv WHERE v1 = ?")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := sel.Explain(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "FULL SCAN OVER kv_p") {
		t.Errorf("plan before the new layout:\n%s", plan)
	}
	want := [][]types.Value{{"k1", int64(1)}, {"k3", int64(3)}}
	rows, err := sel.Query(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rows.All()); diff != "" {
		t.Errorf("before (-want +got):\n%s", diff)
	}

	res := apiExec(t, db, "DEFINE SCHEMA kv_by_v1 FOR kv { TABLE 'kv_by_v1', ROW ordered{v1}:ordered{k}, FAMILY 'f', QUALIFIER '', VALUE ordered{n} }")
	if res.Statement != "DEFINE" {
		t.Errorf("DEFINE result %+v", res)
	}
	if diff := cmp.Diff([]string{"kv_p", "kv_by_v1"}, apiLayoutNames(db, "kv")); diff != "" {
		t.Errorf("layouts (-want +got):\n%s", diff)
	}

	check := func(when string, db *kvschema.DB, sel *kvschema.Stmt, v1 string, want [][]types.Value) {
		t.Helper()
		plan, err := sel.Explain(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "RANGE SCAN OVER kv_by_v1 ['"+v1+"']") || !strings.Contains(plan, "LAYOUT kv_by_v1 CHOSEN") {
			t.Errorf("%s: plan does not use kv_by_v1:\n%s", when, plan)
		}
		dbPlan, err := db.Explain(ctx, "SELECT k, n FROM kv WHERE v1 = ?", v1)
		if err != nil || dbPlan != plan {
			t.Errorf("%s: db.Explain %q (%v) differs from Stmt.Explain %q", when, dbPlan, err, plan)
		}
		trace.Reset()
		rows, err := sel.Query(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, rows.All()); diff != "" {
			t.Errorf("%s: rows (-want +got):\n%s", when, diff)
		}
		if tr := trace.String(); !strings.HasPrefix(tr, "scan 'kv_by_v1', {STARTROW=>") || strings.Contains(tr, "scan 'kv',") {
			t.Errorf("%s: trace:\n%s", when, tr)
		}
	}
	// The old rows were backfilled.
	check("after DEFINE", db, sel, "x", want)
	check("after DEFINE", db, sel, "y", [][]types.Value{{"k2", int64(2)}})

	// Writes after the DEFINE keep the new layout current.
	apiExec(t, db, "INSERT INTO kv VALUES ('k0', 'x', 0)")
	if res := apiExec(t, db, "UPDATE kv SET v1 = 'y' WHERE k = 'k3'"); res.RowsAffected != 1 {
		t.Errorf("UPDATE %+v", res)
	}
	apiExec(t, db, "UPDATE kv SET v1 = 'x' WHERE k = 'k4'") // NULL → 'x'
	if res := apiExec(t, db, "DELETE FROM kv WHERE k = 'k1'"); res.RowsAffected != 1 {
		t.Errorf("DELETE %+v", res)
	}
	wantX := [][]types.Value{{"k0", int64(0)}, {"k4", int64(4)}}
	wantY := [][]types.Value{{"k2", int64(2)}, {"k3", int64(3)}}
	check("after writes", db, sel, "x", wantX)
	check("after writes", db, sel, "y", wantY)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// And after reopening.
	db = apiOpen(t, url, kvschema.Options{Trace: &trace})
	defer db.Close()
	sel, err = db.Prepare("SELECT k, n FROM kv WHERE v1 = ?")
	if err != nil {
		t.Fatal(err)
	}
	check("after reopening", db, sel, "x", wantX)
	check("after reopening", db, sel, "y", wantY)
}

// TestAPIScan: Rows.Scan into every supported destination type.
func TestAPIScan(t *testing.T) {
	ctx := context.Background()
	db := apiOpen(t, "mem:", kvschema.Options{})
	defer db.Close()
	apiExec(t, db, `DEFINE RELATION typed {
  id STRING KEY, i INT, b BIGINT, f FLOAT, d DOUBLE, ok BOOL, ts TIMESTAMP, raw BYTES
}`)
	apiExec(t, db, `DEFINE PRIMARY SCHEMA typed_p FOR typed {
  TABLE 'typed', ROW ordered{id}, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id']
}`)
	ts := time.Date(2026, 11, 1, 10, 0, 0, 987654000, time.FixedZone("X", -5*3600))
	// A TIMESTAMP keeps microseconds: finer digits are refused, not cut.
	if _, err := db.Exec(ctx, "INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "row", 1, 1, 1.0, 1.0, true, ts.Add(321), nil); err == nil || !strings.Contains(err.Error(), "argument 7: timestamp 2026-11-01T15:00:00.987654321Z has 321 ns below the microsecond") {
		t.Errorf("a timestamp with nanoseconds: %v", err)
	}
	apiExec(t, db, "INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "row", int32(-5), uint32(4000000000), float32(2.5), 1e-300, true, ts, []byte{0, 0xfe})
	apiExec(t, db, "INSERT INTO typed (id) VALUES ('nulls')")

	rows, err := db.Query(ctx, "SELECT * FROM typed WHERE id = 'row'")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"id", "i", "b", "f", "d", "ok", "ts", "raw"}, rows.Columns()); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if !rows.Next() {
		t.Fatal("no row")
	}
	var (
		id  string
		i   int
		b   int64
		f   float64
		d   float64
		ok  bool
		tm  time.Time
		raw []byte
	)
	if err := rows.Scan(&id, &i, &b, &f, &d, &ok, &tm, &raw); err != nil {
		t.Fatal(err)
	}
	wantTS := ts.UTC().Truncate(time.Microsecond)
	if id != "row" || i != -5 || b != 4000000000 || f != 2.5 || d != 1e-300 || !ok || !tm.Equal(wantTS) || tm.Location() != time.UTC || !bytes.Equal(raw, []byte{0, 0xfe}) {
		t.Errorf("scanned %q %d %d %v %v %v %v %x", id, i, b, f, d, ok, tm, raw)
	}
	// *int64 for INT, *any for everything.
	var i64 int64
	var anys [7]any
	if err := rows.Scan(&anys[0], &i64, &anys[1], &anys[2], &anys[3], &anys[4], &anys[5], &anys[6]); err != nil {
		t.Fatal(err)
	}
	if i64 != -5 {
		t.Errorf("INT into *int64: %d", i64)
	}
	if diff := cmp.Diff([7]any{"row", int64(4000000000), 2.5, 1e-300, true, wantTS, []byte{0, 0xfe}}, anys); diff != "" {
		t.Errorf("*any (-want +got):\n%s", diff)
	}
	// Scanned []byte is a copy.
	raw[0] = 'Z'
	if got := rows.Values()[7].([]byte); got[0] != 0 {
		t.Error("Scan into *[]byte aliases the row")
	}
	if rows.Next() {
		t.Error("second row")
	}

	// Mismatches are errors naming the column and the types.
	rows, err = db.Query(ctx, "SELECT i, f, ok, id, ts FROM typed WHERE id = 'row'")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	var s string
	for _, tc := range []struct {
		dest []any
		want string
	}{
		{[]any{&s, &f, &ok, &id, &tm}, "Scan column i: cannot store -5 (integer) in *string"},
		{[]any{&i, &i64, &ok, &id, &tm}, "Scan column f: "}, // no float → int conversion
		{[]any{&i, &f, &i64, &id, &tm}, "Scan column ok: "}, // no bool → int
		{[]any{&i, &f, &ok, &raw, &tm}, "Scan column id: "}, // no string → []byte
		{[]any{&i, &f, &ok, &id, &s}, "Scan column ts: "},   // no time → string
		{[]any{new(int32), &f, &ok, &id, &tm}, "in *int32"}, // unsupported destination
		{[]any{i, &f, &ok, &id, &tm}, "in int"},             // not a pointer
		{[]any{&i, &f, &ok, &id}, "4 destinations for 5 columns"},
	} {
		err := rows.Scan(tc.dest...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Scan(%T…): error %v, want it to contain %q", tc.dest, err, tc.want)
		}
	}
	// NULL fits only *any.
	rows, err = db.Query(ctx, "SELECT i, raw FROM typed WHERE id = 'nulls'")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	var a1, a2 any = 1, 2
	if err := rows.Scan(&a1, &a2); err != nil || a1 != nil || a2 != nil {
		t.Errorf("NULL into *any: %v %v %v", a1, a2, err)
	}
	if err := rows.Scan(&i, &raw); err == nil || !strings.Contains(err.Error(), "NULL") {
		t.Errorf("NULL into *int: %v", err)
	}
}

// TestAPIScanBeforeNext: Scan without a current row. Known bug: it panics
// (index out of range [-1]) where an error is expected.
func TestAPIScanBeforeNext(t *testing.T) {
	db := apiOpen(t, "mem:", kvschema.Options{})
	defer db.Close()
	if err := db.Script(context.Background(), "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	apiExec(t, db, "INSERT INTO r VALUES ('a1', 'b', 'x', 100)")
	rows, err := db.Query(context.Background(), "SELECT v1 FROM r")
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := rows.Scan(&s); err == nil {
		t.Error("Scan before Next succeeded")
	}
}

// TestAPIExplainQuery: EXPLAIN through Query returns the plan as rows of a
// PLAN column, and runs nothing.
func TestAPIExplainQuery(t *testing.T) {
	ctx := context.Background()
	var trace bytes.Buffer
	db := apiOpen(t, "mem:", kvschema.Options{Trace: &trace})
	defer db.Close()
	if err := db.Script(ctx, "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	trace.Reset()
	for _, tc := range []struct {
		src   string
		args  []any
		first string
	}{
		{"EXPLAIN SELECT * FROM r WHERE k1 = ? AND k2 = ?", []any{"a1", "b"}, "CLIENT PARALLEL 1-WAY RANGE SCAN OVER s1 ['a1','b']"},
		{"EXPLAIN SELECT k1 FROM r WHERE k2 = 'b'", nil, "CLIENT PARALLEL 1-WAY RANGE SCAN OVER s2 ['b']"},
		{"EXPLAIN INSERT INTO r VALUES ('a', 'b', 'c', 1)", nil, "UPSERT 1 ROWS INTO r: 3 MUTATIONS OVER s1, s2 IN 1 ATOMIC BATCH"},
		{"EXPLAIN DELETE FROM r WHERE k1 = 'a'", nil, "CLIENT PARALLEL 1-WAY RANGE SCAN OVER s1 ['a']"},
	} {
		rows, err := db.Query(ctx, tc.src, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if diff := cmp.Diff([]string{"PLAN"}, rows.Columns()); diff != "" {
			t.Errorf("%s: columns (-want +got):\n%s", tc.src, diff)
		}
		var got []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			got = append(got, l)
		}
		if len(got) == 0 || got[0] != tc.first {
			t.Errorf("%s: plan rows %q, want first %q", tc.src, got, tc.first)
		}
		// The rows are the lines of Explain.
		plan, err := db.Explain(ctx, tc.src, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(lines(plan), got); diff != "" {
			t.Errorf("%s: rows vs Explain (-want +got):\n%s", tc.src, diff)
		}
	}
	if trace.Len() != 0 {
		t.Errorf("EXPLAIN touched the store:\n%s", trace.String())
	}
	if got := apiRows(t, db, "SELECT * FROM r"); len(got) != 0 {
		t.Errorf("EXPLAIN INSERT inserted: %v", got)
	}
	// Exec of an EXPLAIN puts the plan in the Result.
	res := apiExec(t, db, "EXPLAIN SELECT * FROM r")
	if res.Statement != "EXPLAIN" || !strings.Contains(res.Plan, "FULL SCAN OVER") {
		t.Errorf("Exec EXPLAIN: %+v", res)
	}
}

// TestAPITwoHandles: handles on one store catch up with each other's
// definitions before every write and DEFINE (one catalog version read), so
// no write misses a layout another handle added.
// TestAPITwoHandles: two clients of one store see each other's
// definitions, on memstore (a catalog read per write) and on Pebble
// (which counts changes, so a write reads the catalog only after it
// changed).
func TestAPITwoHandles(t *testing.T) {
	t.Run("mem", func(t *testing.T) { testTwoHandles(t, memstore.New()) })
	t.Run("pebble", func(t *testing.T) {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		testTwoHandles(t, s)
	})
}

func testTwoHandles(t *testing.T, s store.Store) {
	ctx := context.Background()
	db1, err := kvschema.New(ctx, s, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db2, err := kvschema.New(ctx, s, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db1.Script(ctx, "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	// db2 learns of r on its first write.
	apiExec(t, db2, "INSERT INTO r VALUES ('a', 'b', 'c', 1)")
	// An identical re-definition through db2 is a no-op; a new one works.
	apiExec(t, db2, "DEFINE RELATION r { k1 STRING key, k2 STRING key, v1 STRING, v2 INT }")
	apiExec(t, db2, "DEFINE RELATION q { k STRING KEY }")

	// db1 adds a layout; db2 writes without having read anything since.
	apiExec(t, db1, "DEFINE SCHEMA s4 FOR r { TABLE 's4', ROW ordered{v2}:ordered{k1}:ordered{k2}, FAMILY 'f', QUALIFIER '', VALUE v1 }")
	apiExec(t, db2, "INSERT INTO r VALUES ('z', 'b', 'c', 5)")
	plan, _ := db1.Explain(ctx, "SELECT k1 FROM r WHERE v2 = 5")
	if !strings.Contains(plan, "OVER s4") {
		t.Fatalf("plan does not use s4:\n%s", plan)
	}
	if diff := cmp.Diff([][]types.Value{{"z"}}, apiRows(t, db1, "SELECT k1 FROM r WHERE v2 = 5")); diff != "" {
		t.Errorf("row written through db2, read via s4 (-want +got):\n%s", diff)
	}
}

func apiFirstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestPrepareChecksNames: Prepare resolves names against the catalog
// (client relations and the advised model alike), so a misspelt
// relation, attribute or relationship fails at Prepare, positioned; values
// are checked when they come.
func TestPrepareChecksNames(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	if err := db.Script(ctx, "c.kvs", []byte(`DEFINE RELATION r { k STRING KEY, v INT };
DEFINE PRIMARY SCHEMA p FOR r { TABLE 't', ROW k, VALUE v };`), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, err string }{
		{"SELECT zz FROM r WHERE k = ?", "1:8: relation r has no attribute zz"},
		{"SELECT v FROM rr WHERE k = ?", "1:15: unknown relation rr"},
		{"INSERT INTO r (k, w) VALUES (?, ?)", "relation r has no attribute w"},
		{"UPDATE r SET w = ? WHERE k = ?", "relation r has no attribute w"},
		{"DELETE FROM r WHERE w = ?", "relation r has no attribute w"},
		{"SELECT items.nam FROM items WHERE items.id = ?", "relation items has no attribute nam"},
		{"SELECT bids.bid FROM bids WHERE bids.itm.id = ?", "relation bids has no relationship itm"},
		{"UPDATE items SET colour = ? WHERE items.id = ?", "relation items has no attribute colour"},
	} {
		_, err := db.Prepare(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, lang.ErrUnknownName) {
			t.Errorf("Prepare(%s): %v, want …%s…", tc.src, err, tc.err)
		}
	}
	for _, src := range []string{
		"SELECT v FROM r WHERE k = ?", "INSERT INTO r VALUES (?, ?)", "UPDATE r SET v = ? WHERE k = ?",
		"SELECT items.name FROM items WHERE items.id = ?", "SELECT bids.bid FROM bids WHERE bids.item.id = ?",
	} {
		if _, err := db.Prepare(src); err != nil {
			t.Errorf("Prepare(%s): %v", src, err)
		}
	}
}

// TestNamedParameters: :name parameters take sql.Named arguments, by name
// in any case, or arguments in order of first use; mistakes are errors
// that say what is expected.
func TestNamedParameters(t *testing.T) {
	ctx := context.Background()
	db := apiOpen(t, "mem:", kvschema.Options{})
	apiExec(t, db, `DEFINE RELATION r { k STRING KEY, v INT, w INT }`)
	apiExec(t, db, `DEFINE PRIMARY SCHEMA p FOR r { TABLE 't', ROW k, QUALIFIER attr_name['k'], VALUE attr_value['k'] }`)
	if _, err := db.Exec(ctx, "INSERT INTO r VALUES (:k, :n, :n)", sql.Named("N", 7), sql.Named("k", "a")); err != nil {
		t.Fatal(err)
	}
	apiExec(t, db, "INSERT INTO r VALUES (:k, :v, :w)", "b", 1, 2) // in order
	st, err := db.Prepare("SELECT k FROM r WHERE v = :n AND w = :n")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Query(ctx, sql.Named("n", 7))
	if err != nil || rows.Len() != 1 || fmt.Sprint(rows.All()) != "[[a]]" {
		t.Fatalf("by name: %v %v", err, rows.All())
	}
	for _, tc := range []struct {
		args []any
		err  string
	}{
		{[]any{sql.Named("m", 7)}, "no parameter :m (the statement's are :n)"},
		{[]any{sql.Named("n", 7), sql.Named("N", 8)}, "argument :N given twice"},
		{[]any{sql.Named("n", 7), 8}, "either all named"},
	} {
		if _, err := st.Query(ctx, tc.args...); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %v, want …%s…", tc.args, err, tc.err)
		}
	}
	if _, err := db.Query(ctx, "SELECT k FROM r WHERE v = ? AND w = ?", sql.Named("v", 1), sql.Named("w", 2)); err == nil || !strings.Contains(err.Error(), "need :name parameters") {
		t.Errorf("named arguments for ? parameters: %v", err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO r VALUES (:k, :v, :w)", sql.Named("k", "c"), sql.Named("v", 1)); err == nil || !strings.Contains(err.Error(), "missing argument :w") {
		t.Errorf("a missing argument: %v", err)
	}
}
