package kvschema_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/workload"
)

// TestObservedWorkload: statements run on the advised schema — prepared,
// with constants, in a transaction, by two DBs on one store — are counted
// per shape; the counts read back as a query log
// that workload.ParseLog takes with the measured weights. Statements on
// client relations, EXPLAIN and failed parses are not counted.
func TestObservedWorkload(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	db1, err := kvschema.New(ctx, st, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db1.Deploy(ctx, "model.kvs", []byte(advisedLWTModel), "schema.kvs", []byte(advisedLWTSchema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	if err := db1.Script(ctx, "defs", []byte(lwtDefs), nil); err != nil {
		t.Fatal(err)
	}
	exec := func(db *kvschema.DB, src string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, src, args...); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
	for i := 1; i <= 6; i++ {
		exec(db1, fmt.Sprintf("INSERT INTO users SET id = %d, nick = 'u%d', karma = 0", i, i)) // constants
	}
	get, err := db1.Prepare("SELECT users.nick FROM users WHERE users.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if _, err := get.Query(ctx, i%6+1); err != nil {
			t.Fatal(err)
		}
	}
	exec(db1, "SELECT users.nick FROM users WHERE users.id = 3") // the same shape
	exec(db1, "EXPLAIN SELECT users.nick FROM users WHERE users.id = 3")
	exec(db1, "INSERT INTO acct VALUES (1, 1, 'o', 0)") // a client relation
	tx, err := db1.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec(tx.DB(), "UPDATE users SET karma = 1 WHERE users.id = 2")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// A second process on the same store.
	db2, err := kvschema.New(ctx, st, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		exec(db2, "UPDATE users SET karma = ? WHERE users.id = ?", i, 1)
	}
	exec(db2, "SELECT users.nick FROM users WHERE users.id = ? OR users.id = ?", 1, 2) // parse, plan… but another shape
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := db1.ObservedWorkload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	got := map[string]uint64{}
	for _, e := range entries {
		got[e.Shape] = e.Count
		fmt.Fprintf(&log, "%d\t%s\n", e.Count, e.Shape)
	}
	want := map[string]uint64{
		"SELECT users.nick FROM users WHERE users.id = ?":                 11,
		"INSERT INTO users SET id = ?, nick = ?, karma = ?":               6,
		"UPDATE users SET karma = ? WHERE users.id = ?":                   4,
		"SELECT users.nick FROM users WHERE users.id = ? OR users.id = ?": 1,
	}
	if len(got) != len(want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
	for s, n := range want {
		if got[s] != n {
			t.Errorf("%s: %d runs, want %d (all: %v)", s, got[s], n, got)
		}
	}
	m, err := catalog.Build(mustParse(t, advisedLWTModel))
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := workload.ParseLog(m, "observed.log", []byte(log.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range w.Statements {
		if n, ok := want[s.Text()]; ok && s.Weight(workload.LogMix) != float64(n) {
			t.Errorf("%s: weight %v, want %d", s.Text(), s.Weight(workload.LogMix), n)
		}
	}
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustParse(t *testing.T, src string) []lang.Statement {
	t.Helper()
	stmts, err := lang.ParseScript("t.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return stmts
}
