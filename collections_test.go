//go:build !race

package kvschema_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
	"pgregory.net/rapid"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	_ "github.com/kvschema/kvschema/driver"
	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/types"
)

// collectionsScript defines a relation with frozen collections and two
// layouts: one cell per attribute (attr_name/attr_value, the collection's
// natural encoding) and one row per (title, id) holding the collections
// in their ordered encoding, concatenated in one value.
const collectionsScript = `
DEFINE RELATION posts { id INT KEY, title STRING, tags FROZEN<SET<STRING>>, votes FROZEN<MAP<STRING, INT>>, seen FROZEN<LIST<BIGINT>> };
DEFINE PRIMARY SCHEMA posts_by_id FOR posts { TABLE 'posts', ROW id, FAMILY 'f', QUALIFIER attr_name['id'], VALUE attr_value['id'] };
DEFINE SCHEMA posts_by_title FOR posts { TABLE 'posts_t', ROW ordered{title}:ordered{id}, VALUE ordered{tags}:ordered{votes}:ordered{seen} };`

var collectionsColumns = []types.Type{types.Int, types.String, types.SetOf(types.String).Frozen(), types.MapOf(types.String, types.Int).Frozen(), types.ListOf(types.BigInt).Frozen()}

// TestCollectionsDifferentialSQLite runs random writes of frozen
// collections (as literals, as Go values and as JSON text) and random
// queries filtering on them (CONTAINS, CONTAINS KEY, equality, under NOT
// and OR) through kvschema and through SQLite, which holds each collection
// as its JSON text and reads it with json_each, and requires the same
// answers.
func TestCollectionsDifferentialSQLite(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		if err := db.Script(ctx, "posts.kvs", []byte(collectionsScript), nil); err != nil {
			rt.Fatal(err)
		}
		lite, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			rt.Fatal(err)
		}
		defer lite.Close()
		lite.SetMaxOpenConns(1)
		if _, err := lite.Exec("CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, tags TEXT, votes TEXT, seen TEXT)"); err != nil {
			rt.Fatal(err)
		}
		word := rapid.SampledFrom([]string{"a", "b", "c", "", "é", "x\"y"})
		coll := func(typ types.Type, label string) types.Value {
			if rapid.IntRange(0, 5).Draw(rt, label+" null") == 0 {
				return nil
			}
			n := rapid.IntRange(0, 4).Draw(rt, label+" n")
			var raw types.Value
			switch typ.Kind() {
			case types.MapKind:
				m := types.Map{}
				for ; n > 0; n-- {
					m = append(m, types.Entry{Key: word.Draw(rt, "key"), Val: rapid.Int64Range(-2, 2).Draw(rt, "val")})
				}
				raw = m
			case types.SetKind:
				xs := []types.Value{}
				for ; n > 0; n-- {
					xs = append(xs, word.Draw(rt, "elem"))
				}
				raw = xs
			default:
				xs := []types.Value{}
				for ; n > 0; n-- {
					xs = append(xs, rapid.Int64Range(-2, 2).Draw(rt, "elem"))
				}
				raw = xs
			}
			v, err := types.Coerce(raw, typ)
			if err != nil {
				rt.Fatal(err)
			}
			return v
		}
		// arg is how a program passes a collection: the canonical value,
		// a plain Go value, or JSON text.
		arg := func(v types.Value) any {
			switch v.(type) {
			case types.Set, types.List, types.Map:
			default:
				return v
			}
			switch rapid.IntRange(0, 2).Draw(rt, "arg form") {
			case 1:
				return types.JSON(v)
			case 2:
				switch x := v.(type) {
				case types.Set:
					out := []string{}
					for _, e := range x {
						out = append(out, e.(string))
					}
					return out
				case types.Map:
					out := map[string]int64{}
					for _, e := range x {
						out[e.Key.(string)] = e.Val.(int64)
					}
					return out
				case types.List:
					out := []int64{}
					for _, e := range x {
						out = append(out, e.(int64))
					}
					return out
				}
			}
			return v
		}
		exec := func(stmt string, args []any, liteStmt string, liteArgs ...any) {
			rt.Logf("%s %v", stmt, args)
			if _, err := db.Exec(ctx, stmt, args...); err != nil {
				rt.Fatalf("kvschema: %s %v: %v", stmt, args, err)
			}
			if _, err := lite.Exec(liteStmt, liteArgs...); err != nil {
				rt.Fatalf("sqlite: %s: %v", liteStmt, err)
			}
		}
		for range rapid.IntRange(1, 25).Draw(rt, "writes") {
			id := rapid.Int64Range(1, 6).Draw(rt, "id")
			switch rapid.IntRange(0, 3).Draw(rt, "write") {
			case 0, 1:
				vals := []types.Value{id, word.Draw(rt, "title"), coll(collectionsColumns[2], "tags"), coll(collectionsColumns[3], "votes"), coll(collectionsColumns[4], "seen")}
				args := make([]any, len(vals))
				lits := make([]string, len(vals))
				lite := make([]any, len(vals))
				for i, v := range vals {
					args[i], lits[i], lite[i] = arg(v), types.Format(v), oracle.Arg(v)
				}
				liteStmt := "INSERT OR REPLACE INTO posts VALUES (?, ?, ?, ?, ?)"
				if rapid.Bool().Draw(rt, "literal") {
					exec("INSERT INTO posts VALUES ("+strings.Join(lits, ", ")+")", nil, liteStmt, lite...)
				} else {
					exec("INSERT INTO posts VALUES (?, ?, ?, ?, ?)", args, liteStmt, lite...)
				}
			case 2:
				tags, votes := coll(collectionsColumns[2], "tags"), coll(collectionsColumns[3], "votes")
				exec("UPDATE posts SET tags = ?, votes = ? WHERE id = ?", []any{arg(tags), arg(votes), id},
					"UPDATE posts SET tags = ?, votes = ? WHERE id = ?", oracle.Arg(tags), oracle.Arg(votes), id)
			case 3:
				exec("DELETE FROM posts WHERE id = ?", []any{id}, "DELETE FROM posts WHERE id = ?", id)
			}
		}
		for range rapid.IntRange(1, 15).Draw(rt, "queries") {
			var where, liteWhere []string
			var args, liteArgs []any
			for range rapid.IntRange(1, 2).Draw(rt, "preds") {
				var p, lp string
				switch rapid.IntRange(0, 5).Draw(rt, "pred") {
				case 0:
					w := word.Draw(rt, "w")
					p, lp = "tags CONTAINS ?", containsSQL("tags", "value")
					args, liteArgs = append(args, w), append(liteArgs, types.JSON(w))
				case 1:
					w := word.Draw(rt, "w")
					p, lp = "votes CONTAINS KEY ?", containsSQL("votes", "key")
					args, liteArgs = append(args, w), append(liteArgs, types.JSON(w))
				case 2:
					i := rapid.Int64Range(-2, 2).Draw(rt, "i")
					p, lp = "votes CONTAINS ?", containsSQL("votes", "value")
					args, liteArgs = append(args, i), append(liteArgs, types.JSON(i))
				case 3:
					i := rapid.Int64Range(-2, 2).Draw(rt, "i")
					p, lp = "seen CONTAINS ?", containsSQL("seen", "value")
					args, liteArgs = append(args, i), append(liteArgs, types.JSON(i))
				case 4:
					v := coll(collectionsColumns[2], "eq")
					p, lp = "tags = ?", "tags = ?"
					args, liteArgs = append(args, arg(v)), append(liteArgs, oracle.Arg(v))
				case 5:
					w := word.Draw(rt, "w")
					p, lp = "title = ?", "title = ?"
					args, liteArgs = append(args, w), append(liteArgs, w)
				}
				if rapid.IntRange(0, 3).Draw(rt, "not") == 0 {
					p, lp = "NOT ("+p+")", "NOT ("+lp+")"
				}
				where, liteWhere = append(where, p), append(liteWhere, lp)
			}
			conn := rapid.SampledFrom([]string{" AND ", " OR "}).Draw(rt, "conn")
			q := "SELECT id, title, tags, votes, seen FROM posts WHERE " + strings.Join(where, conn)
			rows, err := db.Query(ctx, q, args...)
			if err != nil {
				rt.Fatalf("kvschema: %s %v: %v", q, args, err)
			}
			var got []string
			for rows.Next() {
				var id int64
				var title sql.NullString
				var tags []string
				var votes map[string]int64
				var seen types.List
				if err := rows.Scan(&id, &title, &tags, &votes, &seen); err != nil {
					rt.Fatal(err)
				}
				got = append(got, fmt.Sprint(id, title.String, tags, votes, types.Format(seen)))
			}
			lq := "SELECT id, title, tags, votes, seen FROM posts WHERE " + strings.Join(liteWhere, conn)
			lr, err := lite.Query(lq, liteArgs...)
			if err != nil {
				rt.Fatalf("sqlite: %s: %v", lq, err)
			}
			var want []string
			for lr.Next() {
				var id int64
				var title sql.NullString
				var tags, votes, seen sql.NullString
				if err := lr.Scan(&id, &title, &tags, &votes, &seen); err != nil {
					rt.Fatal(err)
				}
				var ts []string
				var vs map[string]int64
				var sn types.Value = types.List(nil)
				if tags.Valid {
					v, _ := types.Coerce(tags.String, collectionsColumns[2])
					for _, e := range v.(types.Set) {
						ts = append(ts, e.(string))
					}
				}
				if votes.Valid {
					v, _ := types.Coerce(votes.String, collectionsColumns[3])
					vs = map[string]int64{}
					for _, e := range v.(types.Map) {
						vs[e.Key.(string)] = e.Val.(int64)
					}
				}
				if seen.Valid {
					sn, _ = types.Coerce(seen.String, collectionsColumns[4])
				}
				want = append(want, fmt.Sprint(id, title.String, ts, vs, types.Format(sn)))
			}
			lr.Close()
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				plan, _ := db.Explain(ctx, q)
				rt.Fatalf("%s %v\nkvschema: %q\nsqlite:   %q\nplan:\n%s", q, args, got, want, plan)
			}
		}
	})
}

// containsSQL is CONTAINS in SQLite over a collection's JSON text: NULL
// (unknown) for a NULL collection, as kvschema's three-valued logic has
// it; the element compared as json_each reads it (side: its value, or a
// MAP's key).
func containsSQL(col, side string) string {
	return "CASE WHEN " + col + " IS NULL THEN NULL ELSE EXISTS (SELECT 1 FROM json_each(" + col + ") WHERE " + side + " = json_extract(?, '$')) END"
}

// TestCollectionsDatabaseSQL: through database/sql a collection is passed
// as JSON text or as a Go slice or map, and read back as JSON text.
func TestCollectionsDatabaseSQL(t *testing.T) {
	db, err := sql.Open("kvschema", "mem:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range strings.Split(strings.TrimSpace(collectionsScript), ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatal(s, err)
		}
	}
	if _, err := db.Exec("INSERT INTO posts VALUES (?, ?, ?, ?, ?)", 1, "hi", `["b","a","b"]`, map[string]int{"x": 2}, []int64{3, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO posts VALUES (2, 'yo', {'c'}, {}, [])"); err != nil {
		t.Fatal(err)
	}
	// A named []byte (json.RawMessage) is JSON text, not a slice of
	// elements.
	if _, err := db.Exec("INSERT INTO posts VALUES (3, 'raw', ?, NULL, NULL)", json.RawMessage(`["z"]`)); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := db.QueryRow("SELECT tags FROM posts WHERE id = 3").Scan(&raw); err != nil || raw != `["z"]` {
		t.Fatalf("json.RawMessage argument: %q, %v", raw, err)
	}
	rows, err := db.Query("SELECT id, tags, votes, seen FROM posts WHERE tags CONTAINS ? OR votes CONTAINS KEY 'x'", "c")
	if err != nil {
		t.Fatal(err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if got := cts[1].DatabaseTypeName(); got != "FROZEN<SET<STRING>>" {
		t.Errorf("type name %q", got)
	}
	if got := cts[2].ScanType().String(); got != "string" {
		t.Errorf("scan type %q", got)
	}
	var got []string
	for rows.Next() {
		var id int64
		var tags, votes, seen string
		if err := rows.Scan(&id, &tags, &votes, &seen); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(id, " ", tags, " ", votes, " ", seen))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{`1 ["a","b"] {"x":2} [3,1]`, `2 ["c"] {} []`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestCollectionsBadInput: a collection that is no value of its type is
// refused with the statement's position and the value, and the store is
// left as it was; collections cannot be keys.
func TestCollectionsBadInput(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Script(ctx, "posts.kvs", []byte(collectionsScript), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO posts VALUES (1, 'a', {'x'}, {'k': 1}, [1])"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stmt string
		args []any
		want string
	}{
		{"INSERT INTO posts VALUES (1, 'b', {1}, {}, [])", nil, "cannot use 1 (integer) as STRING"},
		{"INSERT INTO posts VALUES (1, 'b', ?, {}, [])", []any{`["x", null]`}, "cannot hold NULL"},
		{"INSERT INTO posts VALUES (1, 'b', ?, {}, [])", []any{`{"x": 1}`}, "want an array"},
		{"UPDATE posts SET votes = ? WHERE id = 1", []any{`{"k": 1.5}`}, "cannot use 1.5"},
		{"UPDATE posts SET seen = {'a': 1} WHERE id = 1", nil, "cannot use {'a': 1} (map) as FROZEN<LIST<BIGINT>>"},
		{"SELECT id FROM posts WHERE title CONTAINS 'a'", nil, "1:28: title: CONTAINS applies to a SET, LIST or MAP, not a STRING"},
		{"SELECT id FROM posts WHERE tags CONTAINS KEY 'a'", nil, "CONTAINS KEY applies to a MAP"},
		{"SELECT id FROM posts WHERE tags CONTAINS 1", nil, "cannot use 1 (integer) as STRING"},
		{"DEFINE RELATION bad { tags FROZEN<SET<STRING>> KEY }", nil, "attribute tags is a FROZEN<SET<STRING>>, which cannot be a key"},
	} {
		_, err := db.Exec(ctx, c.stmt, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.stmt, c.args, err, c.want)
		}
	}
	rows, err := db.Query(ctx, "SELECT title, tags, votes, seen FROM posts")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for rows.Next() {
		var title, tags, votes, seen string
		if err := rows.Scan(&title, &tags, &votes, &seen); err != nil {
			t.Fatal(err)
		}
		all = append(all, title+" "+tags+" "+votes+" "+seen)
	}
	if want := `a ["x"] {"k":1} [1]`; len(all) != 1 || all[0] != want {
		t.Fatalf("store changed: %q, want %q", all, want)
	}
}

// TestSeed002Collections is seed 002's test_table (a list of tags and a map
// of keywords per post), frozen: its INSERT, verbatim but for the
// relation's definition, and its SELECT by key, whose cells read as cqlsh
// prints them.
func TestSeed002Collections(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const script = `
DEFINE RELATION test_table { id STRING KEY, body STRING, tag FROZEN<LIST<STRING>>, keyword FROZEN<MAP<STRING, STRING>> };
DEFINE SCHEMA test_table_by_id FOR test_table { ROW id, QUALIFIER attr_name['id'], VALUE attr_value['id'] };
INSERT INTO test_table (
   id
 , body
 , tag
 , keyword
) VALUES (
   '01'
 , 'Cassandraデータモデリングの紹介'
 , ['Future','Tech Blog']
 , {'author': 'Iwasaki', 'nosql':'cassandra'}
);`
	if err := db.Script(ctx, "seed002.kvs", []byte(script), nil); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, "select id, body, keyword, tag from test_table where id = '01'")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rows.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	// The seed's output: ` 01 | Cassandraデータモデリングの紹介 | {'author':
	// 'Iwasaki', 'nosql': 'cassandra'} | ['Future', 'Tech Blog']`.
	for _, want := range []string{"01", "Cassandraデータモデリングの紹介", "{'author': 'Iwasaki', 'nosql': 'cassandra'}", "['Future', 'Tech Blog']"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// TestElementOpsThroughDBAndDatabaseSQL: on an advised schema of the chat
// example (tags a set stored one cell per element), the Go API and
// database/sql add and remove elements with Go slices and maps as
// arguments, and read the set back as a Go slice and as JSON text; an
// element operation on a scalar is an error naming the statement's
// position.
func TestElementOpsThroughDBAndDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	dsn := "pebble:" + filepath.Join(t.TempDir(), "db")
	db, err := kvschema.Open(ctx, dsn, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile("examples/chat/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	const schema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.topic, rooms.updated) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id), VALUES (messages.at, messages.body, messages.tags) };
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id), VALUES (rooms.messages.body, rooms.messages.tags) };`
	if _, err := db.Deploy(ctx, "examples/chat/model.kvs", model, "schema.kvs", []byte(schema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"INSERT INTO rooms SET id = 1, name = 'ops', topic = 't', updated = '2025-01-01'",
		"INSERT INTO messages SET id = 10, at = '2025-01-02', body = 'down', tags = {'urgent'} AND CONNECT TO room(1)",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(s, err)
		}
	}
	if _, err := db.Exec(ctx, "UPDATE messages SET tags = tags + ? WHERE messages.id = ?", []string{"ops", "db"}, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "UPDATE messages SET tags = tags - ? WHERE messages.id = ?", []string{"urgent"}, 10); err != nil {
		t.Fatal(err)
	}
	var tags []string
	rows, err := db.Query(ctx, "SELECT rooms.messages.tags FROM rooms.messages WHERE rooms.id = 1")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		if err := rows.Scan(&tags); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(tags) != "[db ops]" {
		t.Fatalf("tags %v, want [db ops]", tags)
	}
	for src, want := range map[string]string{
		"UPDATE messages SET body = body + 'x' WHERE messages.id = 10":        "1:21: messages.body has no elements to change",
		"UPDATE messages SET tags = tags - [1] + tags WHERE messages.id = 10": "1:39: expected end of input after statement, found '+'",
	} {
		if _, err := db.Exec(ctx, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want …%s…", src, err, want)
		}
	}
	db.Close()

	sdb, err := sql.Open("kvschema", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if _, err := sdb.ExecContext(ctx, "UPDATE messages SET tags = tags + ? WHERE messages.id = ?", []string{"a"}, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.ExecContext(ctx, "DELETE tags FROM messages WHERE messages.id = ?", 11); err != nil {
		t.Fatal(err) // no such message: nothing changes
	}
	var text string
	if err := sdb.QueryRowContext(ctx, "SELECT messages.tags, messages.room.name FROM messages.room WHERE messages.id = ?", 10).Scan(&text, new(string)); err != nil {
		t.Fatal(err)
	}
	if text != `["a","db","ops"]` {
		t.Fatalf("database/sql: tags %s", text)
	}
}
