package kvschema_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	_ "github.com/kvschema/kvschema/driver"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
)

// lwtDefs: a relation with a composite key, kept in a layout addressed by
// its key and one addressed by a non-key attribute (an index-like layout,
// whose cells a write must find through the old tuple).
const lwtDefs = `
DEFINE RELATION acct { bank BIGINT KEY, id BIGINT KEY, owner STRING, bal BIGINT };
DEFINE PRIMARY SCHEMA acct_p FOR acct { TABLE 'acct', ROW ordered{bank}:ordered{id}, FAMILY 'f', QUALIFIER attr_name['bank','id'], VALUE attr_value['bank','id'] };
DEFINE SCHEMA acct_by_owner FOR acct { TABLE 'acct_o', ROW ordered{owner}:ordered{bank}:ordered{id}, FAMILY 'o', VALUE ordered{bal} };
`

// fataler is what *testing.T and *rapid.T both provide.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// lwtDB opens url with lwtDefs defined; the caller closes it.
func lwtDB(t fataler, url string) *kvschema.DB {
	t.Helper()
	db, err := kvschema.Open(context.Background(), url, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Script(context.Background(), "defs", []byte(lwtDefs), nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// lwtRow runs a conditional write and returns its one result row.
func lwtRow(t fataler, db *kvschema.DB, src string, args ...any) (kvschema.Result, []types.Value) {
	t.Helper()
	st, err := db.Prepare(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	res, rows, err := db.RunStatement(context.Background(), st.AST(), args...)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	all := rows.All()
	if len(all) != 1 || rows.Columns()[0] != "[applied]" {
		t.Fatalf("%s: result %v %v", src, rows.Columns(), all)
	}
	return res, all[0]
}

type acctKey struct{ bank, id int64 }
type acct struct {
	owner string
	bal   int64
}

// TestConditionalWritesModel: any sequence of conditional and plain writes
// on a relation of two layouts does what the same writes do on a map —
// whether each applies, the values it reports when it does not, and the
// relation after — and leaves the layouts equal (Verify).
func TestConditionalWritesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		db := lwtDB(rt, "mem:")
		defer db.Close()
		model := map[acctKey]acct{}
		key := func() acctKey {
			return acctKey{rapid.Int64Range(1, 2).Draw(rt, "bank"), rapid.Int64Range(1, 3).Draw(rt, "id")}
		}
		owners := []string{"ann", "bob"}
		for range rapid.IntRange(1, 25).Draw(rt, "ops") {
			k := key()
			cur, exists := model[k]
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0: // INSERT … IF NOT EXISTS
				a := acct{rapid.SampledFrom(owners).Draw(rt, "owner"), rapid.Int64Range(0, 3).Draw(rt, "bal")}
				res, row := lwtRow(rt, db, "INSERT INTO acct (bank, id, owner, bal) VALUES (?, ?, ?, ?) IF NOT EXISTS", k.bank, k.id, a.owner, a.bal)
				want := []types.Value{!exists, nil, nil, nil, nil}
				if exists {
					want = []types.Value{false, k.bank, k.id, cur.owner, cur.bal}
				} else {
					model[k] = a
				}
				checkLWT(rt, res, row, !exists, want)
			case 1: // UPDATE … IF bal = ?
				bal, nb := rapid.Int64Range(0, 3).Draw(rt, "if bal"), rapid.Int64Range(0, 3).Draw(rt, "new bal")
				res, row := lwtRow(rt, db, "UPDATE acct SET bal = ? WHERE bank = ? AND id = ? IF bal = ?", nb, k.bank, k.id, bal)
				ok := exists && cur.bal == bal
				want := []types.Value{ok, nil}
				if !ok && exists {
					want[1] = cur.bal
				}
				if ok {
					model[k] = acct{cur.owner, nb}
				}
				checkLWT(rt, res, row, ok, want)
			case 2: // UPDATE … IF EXISTS, moving the tuple in the index-like layout
				o := rapid.SampledFrom(owners).Draw(rt, "new owner")
				res, row := lwtRow(rt, db, "UPDATE acct SET owner = ? WHERE bank = ? AND id = ? IF EXISTS", o, k.bank, k.id)
				if exists {
					model[k] = acct{o, cur.bal}
				}
				checkLWT(rt, res, row, exists, []types.Value{exists})
			case 3: // DELETE … IF owner = ? OR bal > ?
				o, b := rapid.SampledFrom(owners).Draw(rt, "if owner"), rapid.Int64Range(0, 3).Draw(rt, "if bal >")
				res, row := lwtRow(rt, db, "DELETE FROM acct WHERE bank = ? AND id = ? IF owner = ? OR bal > ?", k.bank, k.id, o, b)
				ok := exists && (cur.owner == o || cur.bal > b)
				want := []types.Value{ok, nil, nil}
				if !ok && exists {
					want = []types.Value{false, cur.owner, cur.bal}
				}
				if ok {
					delete(model, k)
				}
				checkLWT(rt, res, row, ok, want)
			case 4: // DELETE … IF EXISTS
				res, row := lwtRow(rt, db, "DELETE FROM acct WHERE bank = ? AND id = ? IF EXISTS", k.bank, k.id)
				delete(model, k)
				checkLWT(rt, res, row, exists, []types.Value{exists})
			case 5: // an unconditional upsert
				a := acct{rapid.SampledFrom(owners).Draw(rt, "owner"), rapid.Int64Range(0, 3).Draw(rt, "bal")}
				if _, err := db.Exec(context.Background(), "INSERT INTO acct VALUES (?, ?, ?, ?)", k.bank, k.id, a.owner, a.bal); err != nil {
					rt.Fatal(err)
				}
				model[k] = a
			}
		}
		got := map[acctKey]acct{}
		rows, err := db.Query(context.Background(), "SELECT * FROM acct")
		if err != nil {
			rt.Fatal(err)
		}
		for _, r := range rows.All() {
			got[acctKey{r[0].(int64), r[1].(int64)}] = acct{r[2].(string), r[3].(int64)}
		}
		if fmt.Sprint(got) != fmt.Sprint(model) {
			rt.Fatalf("relation %v, want %v", got, model)
		}
		rep, err := db.Verify(context.Background(), exec.VerifyOptions{})
		if err != nil || len(rep.Differences) > 0 {
			rt.Fatalf("verify: %v %v", err, rep)
		}
	})
}

func checkLWT(t *rapid.T, res kvschema.Result, row []types.Value, applied bool, want []types.Value) {
	t.Helper()
	if fmt.Sprint(row) != fmt.Sprint(want) {
		t.Fatalf("result row %v, want %v", row, want)
	}
	if n := map[bool]int64{true: 1}[applied]; res.RowsAffected != n {
		t.Fatalf("%d rows affected, want %d", res.RowsAffected, n)
	}
}

// queryScalar scans the first column of the first row src answers.
func queryScalar(ctx context.Context, db *kvschema.DB, src string, dest any) error {
	rows, err := db.Query(ctx, src)
	if err != nil {
		return err
	}
	if !rows.Next() {
		return fmt.Errorf("%s: no row", src)
	}
	return rows.Scan(dest)
}

// lwtQuery is lwtRace's exec through Query on the DB db returns: the
// answer's [applied] and its last column.
func lwtQuery(db func() *kvschema.DB) func(src string, args ...any) (bool, any, error) {
	return func(src string, args ...any) (bool, any, error) {
		rows, err := db().Query(context.Background(), src, args...)
		if err != nil || !rows.Next() {
			return false, nil, err
		}
		v := rows.Values()
		return v[0].(bool), v[len(v)-1], nil
	}
}

// lwtRaces numbers the named stores of TestConditionalWritesRace's runs.
var lwtRaces atomic.Int64

// lwtRace runs writers racing through conditional writes on one tuple:
// `workers` inserts (insert, with the worker's name) of which exactly one
// must apply (owner then reads that name back), then compare-and-set
// increments (cas, with the new and the old value) of the counter read
// reads, retried until they apply: none may be lost. exec runs a
// conditional write and says whether it applied and, when the answer has
// them, the value its condition read (else nil).
func lwtRace(t *testing.T, insert, cas string, exec func(src string, args ...any) (applied bool, seen any, err error), read func() (int64, error), owner func() (string, error)) {
	const workers, incs = 8, 25
	var wg sync.WaitGroup
	applied := make(chan string, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, err := exec(insert, fmt.Sprintf("w%d", w))
			if err != nil {
				t.Error(err)
			} else if ok {
				applied <- fmt.Sprintf("w%d", w)
			}
		}()
	}
	wg.Wait()
	close(applied)
	var winners []string
	for w := range applied {
		winners = append(winners, w)
	}
	if got, err := owner(); len(winners) != 1 || err != nil || got != winners[0] {
		t.Fatalf("inserts applied: %v; stored owner %q (%v)", winners, got, err)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range incs {
				for {
					bal, err := read()
					if err != nil {
						t.Error(err)
						return
					}
					ok, seen, err := exec(cas, bal+1, bal)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						break
					}
					if seen != nil && fmt.Sprint(seen) == fmt.Sprint(bal) {
						t.Errorf("not applied, yet reports bal %v, which it was asked for", seen)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if got, err := read(); err != nil || got != workers*incs {
		t.Fatalf("counter %d (%v) after %d compare-and-set increments", got, err, workers*incs)
	}
}

// TestConditionalWritesRace: writers racing on one key through one DB are
// serialized by the tuple's lock (lwtRace) on mem: and Pebble through the
// API, and through database/sql (whose connections to one DSN share one
// DB).
func TestConditionalWritesRace(t *testing.T) {
	ctx := context.Background()
	const insert, cas = "INSERT INTO acct VALUES (1, 1, ?, 0) IF NOT EXISTS", "UPDATE acct SET bal = ? WHERE bank = 1 AND id = 1 IF bal = ?"
	for _, url := range []string{"mem:", "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"} {
		t.Run(url[:4], func(t *testing.T) {
			db := lwtDB(t, url)
			defer db.Close()
			scalar := func(src string, dest any) error { return queryScalar(ctx, db, src, dest) }
			lwtRace(t, insert, cas, lwtQuery(func() *kvschema.DB { return db }), func() (bal int64, err error) {
				return bal, scalar("SELECT bal FROM acct WHERE bank = 1 AND id = 1", &bal)
			}, func() (o string, err error) {
				return o, scalar("SELECT owner FROM acct WHERE bank = 1 AND id = 1", &o)
			})
		})
	}
	t.Run("database/sql", func(t *testing.T) {
		sqldb, err := sql.Open("kvschema", fmt.Sprintf("mem:lwt-race-%d", lwtRaces.Add(1))) // a fresh store each run
		if err != nil {
			t.Fatal(err)
		}
		defer sqldb.Close()
		for _, def := range strings.Split(strings.TrimSpace(lwtDefs), ";\n") {
			if _, err := sqldb.ExecContext(ctx, def); err != nil {
				t.Fatal(err)
			}
		}
		lwtRace(t, insert, cas, func(src string, args ...any) (bool, any, error) {
			if strings.HasPrefix(src, "INSERT") {
				// Exec: RowsAffected says whether it applied.
				res, err := sqldb.ExecContext(ctx, src, args...)
				if err != nil {
					return false, nil, err
				}
				n, err := res.RowsAffected()
				return n == 1, nil, err
			}
			var ok bool
			var seen sql.NullInt64
			err := sqldb.QueryRowContext(ctx, src, args...).Scan(&ok, &seen)
			return ok, seen.Int64, err
		}, func() (bal int64, err error) {
			return bal, sqldb.QueryRowContext(ctx, "SELECT bal FROM acct WHERE bank = 1 AND id = 1").Scan(&bal)
		}, func() (o string, err error) {
			return o, sqldb.QueryRowContext(ctx, "SELECT owner FROM acct WHERE bank = 1 AND id = 1").Scan(&o)
		})
	})
}

// advisedLWT is a model of users and their posts, with a column family of
// users by key (where a conditional write reads whether a user exists) and
// one of posts by author holding a copy of the author's nickname (which
// every write of a user keeps).
const (
	advisedLWTModel = `DEFINE RELATION users ROWS 100 { id BIGINT KEY, nick STRING CARDINALITY 100, karma BIGINT CARDINALITY 100 };
DEFINE RELATION posts ROWS 1000 { id BIGINT KEY, body STRING CARDINALITY 1000, author BIGINT REFERENCES users REVERSE posts };`
	advisedLWTSchema = `DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nick, users.karma) };
DEFINE COLUMN FAMILY posts_by_author FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.posts.id), VALUES (users.nick, users.karma, users.posts.body) };`
)

// TestConditionalWritesAdvised: on an advised schema, INSERT … IF NOT
// EXISTS and UPDATE/DELETE … IF EXISTS / IF field = ? decide on the tuple
// read under its lock, answer [applied] and, when refused, the stored
// values the condition read (every field the entity's column family holds
// for IF NOT EXISTS), and keep every column family right; writers racing
// through one DB are serialized (lwtRace); conditions beyond the relation,
// and schemas with no column family to read the tuple from, are refused.
func TestConditionalWritesAdvised(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"mem:", "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"} {
		t.Run(url[:4], func(t *testing.T) {
			db, err := kvschema.Open(ctx, url, kvschema.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Deploy(ctx, "model.kvs", []byte(advisedLWTModel), "schema.kvs", []byte(advisedLWTSchema), cost.Pebble); err != nil {
				t.Fatal(err)
			}
			// answer is a conditional write's one row: its columns, then its
			// values.
			answer := func(src string) string {
				t.Helper()
				rows, err := db.Query(ctx, src)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				v := rows.All()
				if len(v) != 1 {
					t.Fatalf("%s: %d rows", src, len(v))
				}
				return fmt.Sprint(rows.Columns(), v[0])
			}
			apiExec(t, db, "INSERT INTO users SET id = 9, nick = 'dee'")
			apiExec(t, db, "INSERT INTO posts SET id = 10, body = 'hi' AND CONNECT TO author(9)")
			for _, tc := range []struct{ src, want string }{
				{"INSERT INTO users SET id = 1, nick = 'ann' IF NOT EXISTS", "[[applied] id nick karma] [true <nil> <nil> <nil>]"},
				{"INSERT INTO users SET id = 9, nick = 'eve' IF NOT EXISTS", "[[applied] id nick karma] [false 9 dee <nil>]"},
				{"UPDATE users SET nick = 'dee2' WHERE users.id = 9 IF EXISTS", "[[applied]] [true]"},
				{"UPDATE users SET karma = 5 WHERE users.id = 9 IF users.nick = 'dee'", "[[applied] nick] [false dee2]"},
				{"UPDATE users SET karma = 5 WHERE users.id = 9 IF users.karma = 0", "[[applied] karma] [false <nil>]"}, // NULL: unknown
				{"UPDATE users SET karma = 0 WHERE users.id = 9 IF users.nick = 'dee2' AND users.karma < 3", "[[applied] nick karma] [false dee2 <nil>]"},
				{"UPDATE users SET karma = 0 WHERE users.id = 9 IF users.nick = 'dee2'", "[[applied] nick] [true <nil>]"},
				{"UPDATE users SET karma = 0 WHERE users.id = 3 IF users.nick = 'dee2'", "[[applied] nick] [false <nil>]"}, // no such user
				{"UPDATE users SET nick = 'x' WHERE users.id = 9 IF users.karma > 0 AND users.nick = 'dee2' AND users.karma < 9", "[[applied] karma nick] [false 0 dee2]"},

				{"INSERT INTO users SET id = 1, nick = 'bob' IF NOT EXISTS", "[[applied] id nick karma] [false 1 ann <nil>]"},
				{"UPDATE users SET nick = 'ann2' WHERE users.id = 1 IF EXISTS", "[[applied]] [true]"},
				{"UPDATE users SET nick = 'cy' WHERE users.id = 2 IF EXISTS", "[[applied]] [false]"},
				{"DELETE FROM users WHERE users.id = 2 IF EXISTS", "[[applied]] [false]"},
			} {
				if got := answer(tc.src); got != tc.want {
					t.Errorf("%s: answered %s, want %s", tc.src, got, tc.want)
				}
			}
			// The copies of user 9 in posts_by_author followed the updates
			// that applied; the refused insert changed nothing.
			if got := fmt.Sprint(apiRows(t, db, "SELECT users.nick, users.karma, posts.body FROM users.posts WHERE users.id = 9")); got != "[[dee2 0 hi]]" {
				t.Errorf("posts of user 9: %s", got)
			}
			scalar := func(src string, dest any) error { return queryScalar(ctx, db, src, dest) }
			lwtRace(t, "INSERT INTO users SET id = 7, nick = ?, karma = 0 IF NOT EXISTS", "UPDATE users SET karma = ? WHERE users.id = 7 IF users.karma = ?",
				func(src string, args ...any) (bool, any, error) {
					res, err := db.Exec(ctx, src, args...)
					return res.RowsAffected == 1, nil, err
				}, func() (k int64, err error) {
					return k, scalar("SELECT users.karma FROM users WHERE users.id = 7", &k)
				}, func() (o string, err error) {
					return o, scalar("SELECT users.nick FROM users WHERE users.id = 7", &o)
				})
			rep, err := db.Verify(ctx, exec.VerifyOptions{})
			if err != nil || len(rep.Differences) > 0 {
				t.Fatalf("verify: %v %v", err, rep.Differences)
			}
			for _, tc := range []struct{ src, want string }{
				{"UPDATE users SET nick = 'z' WHERE users.id = 1 IF users.posts.body = 'x'", "1:48: a write's condition may only name attributes of users"},
				{"UPDATE users SET nick = 'z' WHERE users.id = 1 IF users.id = 1", "the condition tests the key users.id, which the WHERE fixes"},
				{"DELETE FROM users WHERE users.nick = 'ann2' IF EXISTS", "1:45: a conditional write names one tuple: the WHERE must fix users.id by equality"},
				{"DELETE FROM users WHERE users.id = 1 OR users.id = 2 IF EXISTS", "a conditional write names one tuple: its WHERE has no OR or IN"},
				{"DELETE FROM posts WHERE posts.id = 10 IF EXISTS", "a conditional write reads the tuple it names from a column family of posts keyed by posts.id alone, and this schema has none"},
			} {
				if _, err := db.Exec(ctx, tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want …%s…", tc.src, err, tc.want)
				}
			}
		})
	}
}

// TestConditionalWritesAcrossProcesses: two DBs on one store, each with
// its own tuple locks, as two processes sharing a Bigtable instance are
// (two txnstore clients of one row-atomic store): racing conditional
// writes through both are serialized by the store's guarded write
// (store.Guarded), on a client relation and on an advised schema.
func TestConditionalWritesAcrossProcesses(t *testing.T) {
	for name, inner := range sharedStores {
		t.Run(name, func(t *testing.T) { conditionalWritesAcrossProcesses(t, inner) })
	}
}

// sharedStores open a fresh row-atomic store, shared by the txnstore
// clients of TestConditionalWritesAcrossProcesses (the Bigtable emulator
// joins in builds without the race detector).
var sharedStores = map[string]func(t testing.TB) txnstore.Inner{
	"mem": func(testing.TB) txnstore.Inner { return memstore.New() },
}

func conditionalWritesAcrossProcesses(t *testing.T, inner func(t testing.TB) txnstore.Inner) {
	ctx := context.Background()
	open := func(t *testing.T) [2]*kvschema.DB {
		shared := inner(t)
		var dbs [2]*kvschema.DB
		for i := range dbs {
			db, err := kvschema.New(ctx, txnstore.New(shared, txnstore.Options{}), kvschema.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
		}
		return dbs
	}
	// exec runs src through the DB of the worker whose argument it gets,
	// alternating by call: both "processes" write the tuple.
	var calls atomic.Int64
	pick := func(dbs [2]*kvschema.DB) *kvschema.DB { return dbs[calls.Add(1)%2] }
	for _, tc := range []struct {
		name                   string
		setup                  func(db *kvschema.DB) error
		insert, cas, bal, nick string
	}{
		{"relation", func(db *kvschema.DB) error { return db.Script(ctx, "defs", []byte(lwtDefs), nil) },
			"INSERT INTO acct VALUES (1, 1, ?, 0) IF NOT EXISTS", "UPDATE acct SET bal = ? WHERE bank = 1 AND id = 1 IF bal = ?",
			"SELECT bal FROM acct WHERE bank = 1 AND id = 1", "SELECT owner FROM acct WHERE bank = 1 AND id = 1"},
		{"advised", func(db *kvschema.DB) error {
			_, err := db.Deploy(ctx, "model.kvs", []byte(advisedLWTModel), "schema.kvs", []byte(advisedLWTSchema), cost.Pebble)
			return err
		},
			"INSERT INTO users SET id = 7, nick = ?, karma = 0 IF NOT EXISTS", "UPDATE users SET karma = ? WHERE users.id = 7 IF users.karma = ?",
			"SELECT users.karma FROM users WHERE users.id = 7", "SELECT users.nick FROM users WHERE users.id = 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbs := open(t)
			if err := tc.setup(dbs[0]); err != nil {
				t.Fatal(err)
			}
			lwtRace(t, tc.insert, tc.cas, lwtQuery(func() *kvschema.DB { return pick(dbs) }), func() (n int64, err error) {
				return n, queryScalar(ctx, dbs[0], tc.bal, &n)
			}, func() (o string, err error) {
				return o, queryScalar(ctx, dbs[1], tc.nick, &o)
			})
			for _, db := range dbs {
				if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || len(rep.Differences) > 0 {
					t.Fatalf("verify: %v %v", err, rep.Differences)
				}
			}
		})
	}
}

// TestConditionalWritesPickTheirColumnFamily: of several column families
// of an entity by its key, a conditional write reads the one holding the
// fields its condition compares; when none holds them all, it is refused
// naming them.
func TestConditionalWritesPickTheirColumnFamily(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const schema = `DEFINE COLUMN FAMILY users_nick FOR users { PARTITION KEY (users.id), VALUES (users.nick) };
DEFINE COLUMN FAMILY users_karma FOR users { PARTITION KEY (users.id), VALUES (users.karma) };`
	if _, err := db.Deploy(ctx, "model.kvs", []byte(advisedLWTModel), "schema.kvs", []byte(schema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	apiExec(t, db, "INSERT INTO users SET id = 1, nick = 'ann', karma = 3")
	for _, tc := range []struct{ src, want string }{
		{"UPDATE users SET karma = 4 WHERE users.id = 1 IF users.karma = 3", "[[applied] karma] [true <nil>]"},
		{"UPDATE users SET karma = 5 WHERE users.id = 1 IF users.karma = 3", "[[applied] karma] [false 4]"},
		{"UPDATE users SET karma = 5 WHERE users.id = 1 IF users.nick = 'bob'", "[[applied] nick] [false ann]"},
	} {
		rows, err := db.Query(ctx, tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := fmt.Sprint(rows.Columns(), rows.All()[0]); got != tc.want {
			t.Errorf("%s: answered %s, want %s", tc.src, got, tc.want)
		}
	}
	const both = "UPDATE users SET karma = 5 WHERE users.id = 1 IF users.nick = 'ann' AND users.karma = 4"
	if _, err := db.Exec(ctx, both); err == nil || !strings.Contains(err.Error(), "the condition reads users.nick, users.karma, which no column family of users keyed by users.id alone holds") {
		t.Errorf("%s: %v", both, err)
	}
}

// TestConditionalWritesExplainGuard: EXPLAIN of a conditional write says
// which row the store's guard checks, on a client relation and on an
// advised schema.
func TestConditionalWritesExplainGuard(t *testing.T) {
	ctx := context.Background()
	db := lwtDB(t, "mem:")
	defer db.Close()
	for _, src := range []string{
		"EXPLAIN INSERT INTO acct VALUES (1, 1, 'ann', 0) IF NOT EXISTS",
		"EXPLAIN UPDATE acct SET bal = 1 WHERE bank = 1 AND id = 1 IF bal = 0",
	} {
		if res, err := db.Exec(ctx, src); err != nil || !strings.Contains(res.Plan, "STORE GUARD: THE BATCH APPLIES ONLY IF THE TUPLE'S ROW OVER acct_p IS AS READ") {
			t.Errorf("%s: %v\n%s", src, err, res.Plan)
		}
	}
	adb, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	if _, err := adb.Deploy(ctx, "model.kvs", []byte(advisedLWTModel), "schema.kvs", []byte(advisedLWTSchema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	const src = "EXPLAIN UPDATE users SET karma = 1 WHERE users.id = 1 IF users.karma = 0"
	if res, err := adb.Exec(ctx, src); err != nil || !strings.Contains(res.Plan, "STORE GUARD: THE BATCH APPLIES ONLY IF THAT ROW OF users_by_id IS AS READ") {
		t.Errorf("%s: %v\n%s", src, err, res.Plan)
	}
}

// TestConditionalWriteOneRead: on a store with guarded writes, a
// conditional write whose WHERE is its key decides on the row its guard
// checks, read once (it read the tuple, then, when the condition held, the
// same row again for the guard). countstore counts, beside that read: the
// catalog's version (a scan, each write statement) and the guarded apply's
// check of its row.
func TestConditionalWriteOneRead(t *testing.T) {
	ctx := context.Background()
	cs := countstore.New(memstore.New())
	db, err := kvschema.New(ctx, cs, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Script(ctx, "defs", []byte(lwtDefs), nil); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		src  string
		args []any
		want bool
	}{
		{"INSERT INTO acct VALUES (1, 1, 'a', 0) IF NOT EXISTS", nil, true},
		{"INSERT INTO acct VALUES (1, 1, 'b', 0) IF NOT EXISTS", nil, false},
		{"UPDATE acct SET bal = ? WHERE bank = 1 AND id = 1 IF bal = ?", []any{5, 0}, true},
		{"UPDATE acct SET bal = ? WHERE bank = 1 AND id = 1 IF bal = ?", []any{6, 0}, false},
		{"DELETE FROM acct WHERE bank = 1 AND id = 1 IF EXISTS", nil, true},
	} {
		cs.Reset()
		_, row := lwtRow(t, db, tc.src, tc.args...)
		s := cs.Stats()
		// The guarded apply's check (when the condition held) counts as a
		// ReadRows probing its guard row.
		checks := map[bool]int64{true: 1, false: 0}[tc.want]
		if row[0] != tc.want || s.ReadRow != 1 || s.ReadRows != 1+checks {
			t.Errorf("%d. %s: applied %v, %v; want applied %v after one read of the row, the catalog's scan and %d guard checks", i+1, tc.src, row[0], s, tc.want, checks)
		}
	}
}
