package kvschema_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
)

// staticScript is a client relation with Cassandra's static columns: a
// room's name and topic, one value per room (the partition), in two
// layouts that both start with the partition key.
const staticScript = `
DEFINE RELATION msgs {
  room BIGINT PARTITION KEY,
  at BIGINT KEY,
  id BIGINT KEY,
  body STRING,
  room_name STRING STATIC,
  topic STRING STATIC
};
DEFINE PRIMARY SCHEMA by_time FOR msgs {
  TABLE 'msgs', ROW ordered{room}:desc{at}:ordered{id}, FAMILY 'm',
  QUALIFIER attr_name['room','at','id'], VALUE attr_value['room','at','id']
};
DEFINE SCHEMA by_id FOR msgs {
  TABLE 'msgs_by_id', ROW ordered{room}:ordered{id}:ordered{at}, FAMILY 'm',
  QUALIFIER attr_name['room','at','id'], VALUE attr_value['room','at','id']
};`

// TestStaticColumnsProperty: any sequence of inserts (naming the static
// columns or not), updates of a tuple's or a partition's columns and
// deletes of tuples or partitions reads, from either layout, as Cassandra
// defines static columns (a Go model): one value per partition, returned
// with each of its tuples, set by any write that gives it, left by a
// write that does not and by deletes of rows, deleted with the partition
// (a DELETE whose WHERE is the partition key's alone); verify is clean
// after each run.
func TestStaticColumnsProperty(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		if err := db.Script(ctx, "static.kvs", []byte(staticScript), nil); err != nil {
			rt.Fatal(err)
		}
		type key struct{ room, at, id int64 }
		rows := map[key]string{}
		statics := map[int64][2]string{} // name, topic ("" NULL)
		lit := func(s string) string {
			if s == "" {
				return "NULL"
			}
			return "'" + s + "'"
		}
		run := func(src string) {
			if _, err := db.Exec(ctx, src); err != nil {
				rt.Fatalf("%s: %v", src, err)
			}
		}
		val := rapid.SampledFrom([]string{"", "a", "b", "c"})
		for step := range rapid.IntRange(1, 25).Draw(rt, "steps") {
			k := key{rapid.Int64Range(1, 2).Draw(rt, "room"), rapid.Int64Range(1, 3).Draw(rt, "at"), rapid.Int64Range(1, 3).Draw(rt, "id")}
			where := fmt.Sprintf("room = %d AND at = %d AND id = %d", k.room, k.at, k.id)
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0: // INSERT naming every attribute
				body, name, topic := val.Draw(rt, "body"), val.Draw(rt, "name"), val.Draw(rt, "topic")
				run(fmt.Sprintf("INSERT INTO msgs VALUES (%d, %d, %d, %s, %s, %s)", k.room, k.at, k.id, lit(body), lit(name), lit(topic)))
				rows[k] = body
				s := statics[k.room]
				if name != "" {
					s[0] = name
				}
				if topic != "" {
					s[1] = topic
				}
				statics[k.room] = s
			case 1: // INSERT without the static columns
				body := val.Draw(rt, "body")
				run(fmt.Sprintf("INSERT INTO msgs (room, at, id, body) VALUES (%d, %d, %d, %s)", k.room, k.at, k.id, lit(body)))
				rows[k] = body
			case 2: // UPDATE of one tuple's static column (NULL clears it)
				name := val.Draw(rt, "name")
				run(fmt.Sprintf("UPDATE msgs SET room_name = %s WHERE %s", lit(name), where))
				if _, ok := rows[k]; ok {
					s := statics[k.room]
					s[0] = name
					statics[k.room] = s
				}
			case 3: // UPDATE of a whole partition
				topic, body := val.Draw(rt, "topic"), val.Draw(rt, "body")
				run(fmt.Sprintf("UPDATE msgs SET topic = %s, body = %s WHERE room = %d", lit(topic), lit(body), k.room))
				some := false
				for r := range rows {
					if r.room == k.room {
						rows[r], some = body, true
					}
				}
				if some {
					s := statics[k.room]
					s[1] = topic
					statics[k.room] = s
				}
			case 4: // DELETE of a tuple: the partition keeps its statics
				run("DELETE FROM msgs WHERE " + where)
				delete(rows, k)
			case 8: // DELETE of the tuples of a partition at one time: a row deletion
				run(fmt.Sprintf("DELETE FROM msgs WHERE room = %d AND at = %d", k.room, k.at))
				for r := range rows {
					if r.room == k.room && r.at == k.at {
						delete(rows, r)
					}
				}
			case 9: // DELETE of partitions: their statics go with their tuples
				where := rapid.SampledFrom([]string{"room = %d", "room IN (%d, 3)", "%d = room"}).Draw(rt, "partition")
				run("DELETE FROM msgs WHERE " + fmt.Sprintf(where, k.room))
				for r := range rows {
					if r.room == k.room {
						delete(rows, r)
					}
				}
				delete(statics, k.room)
			case 6: // a conditional UPDATE on a static column
				want, body := val.Draw(rt, "if name"), val.Draw(rt, "body")
				_, exists := rows[k]
				applies := exists && statics[k.room][0] == want && want != ""
				res, err := db.Exec(ctx, fmt.Sprintf("UPDATE msgs SET body = %s WHERE %s IF room_name = %s", lit(body), where, lit(want)))
				if err != nil {
					rt.Fatal(err)
				}
				if applied := res.RowsAffected == 1; applied != applies {
					rt.Fatalf("step %d: IF room_name = %s applied %v, want %v (statics %v)", step, lit(want), applied, applies, statics[k.room])
				}
				if applies {
					rows[k] = body
				}
			case 7: // INSERT … IF NOT EXISTS, giving the static columns
				body, name := val.Draw(rt, "body"), val.Draw(rt, "name")
				_, exists := rows[k]
				// Refused, it answers the stored tuple, with its
				// partition's static columns.
				got := query(rt, db, fmt.Sprintf("INSERT INTO msgs VALUES (%d, %d, %d, %s, %s, NULL) IF NOT EXISTS", k.room, k.at, k.id, lit(body), lit(name)))
				want := "true NULL NULL NULL NULL NULL NULL"
				if exists {
					st := statics[k.room]
					want = fmt.Sprintf("false %d %d %d %s %s %s", k.room, k.at, k.id, lit(rows[k]), lit(st[0]), lit(st[1]))
				}
				if len(got) != 1 || got[0] != want {
					rt.Fatalf("step %d: IF NOT EXISTS answered %v, want %s", step, got, want)
				}
				if !exists {
					rows[k] = body
					if name != "" {
						s := statics[k.room]
						s[0] = name
						statics[k.room] = s
					}
				}
			case 5: // SELECT of one partition, newest first, or by id
				order := rapid.SampledFrom([]string{"at DESC, id", "id, at"}).Draw(rt, "order")
				got := query(rt, db, fmt.Sprintf("SELECT * FROM msgs WHERE room = %d ORDER BY %s", k.room, order))
				var want []string
				for r, body := range rows {
					if r.room == k.room {
						s := statics[r.room]
						want = append(want, fmt.Sprintf("%d %d %d %s %s %s", r.room, r.at, r.id, lit(body), lit(s[0]), lit(s[1])))
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					rt.Fatalf("step %d: room %d:\n got %v\nwant %v", step, k.room, got, want)
				}
			}
		}
		// Every tuple, by key and all at once, with its partition's values.
		var want []string
		for r, body := range rows {
			s := statics[r.room]
			row := fmt.Sprintf("%d %d %d %s %s %s", r.room, r.at, r.id, lit(body), lit(s[0]), lit(s[1]))
			want = append(want, row)
			if got := query(rt, db, fmt.Sprintf("SELECT * FROM msgs WHERE room = %d AND at = %d AND id = %d", r.room, r.at, r.id)); len(got) != 1 || got[0] != row {
				rt.Fatalf("point lookup: got %v, want %s", got, row)
			}
		}
		got := query(rt, db, "SELECT * FROM msgs")
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			rt.Fatalf("all tuples:\n got %v\nwant %v", got, want)
		}
		rep, err := db.Verify(ctx, exec.VerifyOptions{})
		if err != nil || !rep.Clean() {
			rt.Fatalf("verify: %v %v", rep, err)
		}
	})
}

// query runs a query and writes each row as its values, space-separated,
// strings quoted and NULL as NULL.
func query(rt *rapid.T, db *kvschema.DB, src string) []string {
	rows, err := db.Query(context.Background(), src)
	if err != nil {
		rt.Fatalf("%s: %v", src, err)
	}
	var out []string
	for rows.Next() {
		var parts []string
		for _, v := range rows.Values() {
			switch x := v.(type) {
			case nil:
				parts = append(parts, "NULL")
			case string:
				parts = append(parts, "'"+x+"'")
			case bool:
				parts = append(parts, fmt.Sprint(x))
			default:
				parts = append(parts, fmt.Sprint(x))
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// TestStaticColumnsBadDefinitions: every misuse of PARTITION KEY and
// STATIC is an error at its position saying why, and defines nothing.
func TestStaticColumnsBadDefinitions(t *testing.T) {
	ctx := context.Background()
	const rel = "DEFINE RELATION m { room BIGINT PARTITION KEY, id BIGINT KEY, body STRING, name STRING STATIC };\n"
	for _, tc := range []struct{ src, want string }{
		{"DEFINE RELATION m { room BIGINT KEY, id BIGINT KEY, name STRING STATIC };", "1:53: relation m: static column name needs a partition key to be shared by"},
		{"DEFINE RELATION m { room BIGINT PARTITION KEY, name STRING STATIC };", "1:48: relation m: static column name needs a clustering key"},
		{"DEFINE RELATION m { id BIGINT KEY, room BIGINT PARTITION KEY, name STRING STATIC };", "1:36: relation m: partition key attribute room follows the clustering key attribute id"},
		{"DEFINE RELATION m { room BIGINT PARTITION KEY STATIC, id BIGINT KEY };", "1:21: relation m: key attribute room cannot be static"},
		{rel + "DEFINE SCHEMA s FOR m { TABLE 't', ROW ordered{id}:ordered{room}, FAMILY 'f', QUALIFIER attr_name['room','id'], VALUE attr_value['room','id'] };", "2:1: schema s: static column name: ROW must start with the partition key (id is not in it)"},
		{"DEFINE RELATION m { room STRING PARTITION KEY, id BIGINT KEY, name STRING STATIC };\nDEFINE SCHEMA s FOR m { TABLE 't', ROW suffix('-'){room}:ordered{id}, FAMILY 'f', QUALIFIER attr_name['room','id'], VALUE attr_value['room','id'] };", "2:1: schema s: static column name: ROW's partition key attribute room must be ordered{…}, desc{…} or of fixed width"},
		{rel + "DEFINE SCHEMA s FOR m { TABLE 't', ROW ordered{room}, FAMILY 'f', QUALIFIER attr_name['room'], VALUE attr_value['room'] };", "2:1: schema s: key attribute id must appear in TABLE, ROW, FAMILY or QUALIFIER"},
		{rel + "DEFINE SCHEMA s FOR m { TABLE 't', ROW ordered{room}:ordered{id}, FAMILY 's', QUALIFIER attr_name['room','id'], VALUE attr_value['room','id'] };", "2:1: schema s: static column name: a layout with static columns needs a constant FAMILY other than \"s\""},
		{rel + "DEFINE SCHEMA s FOR m { TABLE 't', ROW ordered{room}:ordered{id}, FAMILY 'f', QUALIFIER '', VALUE suffix('|'){body}:name };", "2:1: schema s: static column name: it is in VALUE"},
		{rel + "DEFINE SCHEMA s FOR m { TABLE 't', ROW ordered{room}, FAMILY 'f', QUALIFIER ordered{id}:attr_name['room','id'], VALUE attr_value['room','id'] };", "2:1: schema s: static column name: a layout with static columns keeps one tuple per row"},
		{"DEFINE RELATION rooms ROWS 1 { id BIGINT KEY, name STRING STATIC };", "1:47: relation rooms: attribute name is STATIC, which a model's relation is not"},
	} {
		db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got error
		if strings.Contains(tc.src, "ROWS 1") {
			_, got = db.Deploy(ctx, "model.kvs", []byte(tc.src), "schema.kvs", nil, cost.Pebble)
		} else {
			got = db.Script(ctx, "bad.kvs", []byte(tc.src), nil)
		}
		if got == nil || !strings.Contains(got.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant …%s…", tc.src, got, tc.want)
		}
		db.Close()
	}
}
