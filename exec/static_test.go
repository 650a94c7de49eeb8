package exec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/rttstore"
	"github.com/kvschema/kvschema/types"
)

// The chat model of issue 17: rooms with a name and a last-update time,
// messages per room ordered by time.
const chatModel = `
DEFINE RELATION rooms ROWS 20 { id BIGINT KEY, name STRING CARDINALITY 20, updated BIGINT CARDINALITY 20 };
DEFINE RELATION messages ROWS 400 { id BIGINT KEY, at BIGINT CARDINALITY 50, body STRING CARDINALITY 400, room BIGINT REFERENCES rooms REVERSE messages };`

// chatSchema keeps each room's fields once per partition of its messages
// (STATIC), beside the rooms and messages by key.
const chatSchema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.updated) };
DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id),
  STATIC (rooms.name, rooms.updated), VALUES (rooms.messages.body) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id), VALUES (messages.at, messages.body) };`

// TestStaticColumnsStoreCalls counts what static columns cost the store: a
// room with its messages is one read (the partition row comes with the
// rows), the latest messages in reverse two reads made in parallel, an
// UPDATE of the room changes one cell per static column in one partition
// row and reads nothing, and a new message writes no room field.
func TestStaticColumnsStoreCalls(t *testing.T) {
	ctx := context.Background()
	cs := countstore.New(memstore.New())
	en, err := exec.Deploy(ctx, cs, "model.kvs", []byte(chatModel), "schema.kvs", []byte(chatSchema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	run := func(q string, args ...types.Value) (countstore.Stats, [][]types.Value, string) {
		t.Helper()
		st, err := en.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		cs.Reset()
		if st.Write != nil {
			if _, err := st.Exec(ctx, args...); err != nil {
				t.Fatal(err)
			}
			return cs.Stats(), nil, st.Explain()
		}
		rows, err := st.Query(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return cs.Stats(), rows.Values(), st.Explain()
	}
	run("INSERT INTO rooms SET id = ?, name = ?, updated = ?", int64(1), "lobby", int64(10))
	for i := int64(1); i <= 6; i++ {
		s, _, explain := run("INSERT INTO messages SET id = ?, at = ?, body = ? AND CONNECT TO room(?)", i, 100+i, fmt.Sprint("m", i), int64(1))
		// Its rows in room_messages (body) and messages_by_id (at, body): the room's
		// fields are not copied into it (one read: the room exists).
		if s.ReadRows+s.ReadRow > 1 || s.Mutations != 3 {
			t.Fatalf("a message's insert: %v\n%s", s, explain)
		}
	}
	s, _, explain := run("UPDATE rooms SET name = ?, updated = ? WHERE rooms.id = ?", "hall", int64(11), int64(1))
	// rooms_by_id's two cells and the partition row's two.
	if s.RoundTrips != 1 || s.Mutations != 4 {
		t.Fatalf("the room's update: %v, want one batch of 4 cells\n%s", s, explain)
	}
	s, rows, explain := run("SELECT rooms.name, rooms.updated, rooms.messages.id FROM rooms.messages WHERE rooms.id = ?", int64(1))
	if s.RoundTrips != 1 || len(rows) != 6 {
		t.Fatalf("the room's messages: %v, %d rows\n%s", s, len(rows), explain)
	}
	for _, r := range rows {
		if r[0] != "hall" || r[1] != int64(11) {
			t.Fatalf("a message's row has the room's fields %v\n%s", r, explain)
		}
	}
	s, rows, explain = run("SELECT rooms.name, rooms.messages.at FROM rooms.messages WHERE rooms.id = ? ORDER BY rooms.messages.at DESC LIMIT 2", int64(1))
	if s.ReadRows != 2 || len(rows) != 2 || rows[0][0] != "hall" || rows[0][1] != int64(106) || rows[1][1] != int64(105) {
		t.Fatalf("the latest messages: %v, %v\n%s", s, rows, explain)
	}
	// A room without messages: its partition row alone yields no row.
	run("INSERT INTO rooms SET id = ?, name = ?, updated = ?", int64(2), "empty", int64(1))
	if _, rows, explain = run("SELECT rooms.name, rooms.messages.id FROM rooms.messages WHERE rooms.id = ?", int64(2)); len(rows) != 0 {
		t.Fatalf("an empty room: %v\n%s", rows, explain)
	}
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil || !rep.Clean() {
		t.Fatalf("verify: %v\n%s", err, rep)
	}
}

// TestStaticColumnsCheckExistence: with no column family of rooms alone,
// a message's insert checks its room through the room's partition row.
func TestStaticColumnsCheckExistence(t *testing.T) {
	ctx := context.Background()
	schema := `DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id),
  STATIC (rooms.name, rooms.updated), VALUES (rooms.messages.body) };`
	en, err := exec.Deploy(ctx, memstore.New(), "model.kvs", []byte(chatModel), "schema.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	room, err := en.Prepare("INSERT INTO rooms SET id = ?, name = ?, updated = ?")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := en.Prepare("INSERT INTO messages SET id = ?, at = ?, body = ? AND CONNECT TO room(?)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := room.Exec(ctx, int64(1), nil, nil); err != nil { // the marker alone
		t.Fatal(err)
	}
	if _, err := msg.Exec(ctx, int64(1), int64(5), "hi", int64(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := msg.Exec(ctx, int64(2), int64(5), "hi", int64(2)); err == nil || !strings.Contains(err.Error(), "no rooms has id = 2") {
		t.Fatalf("a message to no room: %v\n%s", err, msg.Explain())
	}
}

// BenchmarkChatRead reads a room's 20 latest messages with the room's
// fields on Pebble, over rtt (rttstore, per store call): from one column
// family with the room's fields static, and from the two families the
// advisor recommends without static columns (the room by key, then its
// messages). 50 rooms of 200 messages.
func BenchmarkChatRead(b *testing.B) {
	const twoCFs = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.updated) };
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id), VALUES (rooms.messages.body) };`
	const oneCF = `
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id),
  STATIC (rooms.name, rooms.updated), VALUES (rooms.messages.body) };`
	for _, rtt := range []time.Duration{0, time.Millisecond} {
		for _, c := range []struct{ name, schema string }{{"static", oneCF}, {"two-cfs", twoCFs}} {
			b.Run(fmt.Sprintf("%s/rtt=%v", c.name, rtt), func(b *testing.B) {
				ctx := context.Background()
				ps, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				st := rttstore.New(ps, rtt)
				defer st.Close()
				en, err := exec.Deploy(ctx, st, "model.kvs", []byte(chatModel), "schema.kvs", []byte(c.schema), cost.Pebble)
				if err != nil {
					b.Fatal(err)
				}
				var rows []exec.Row
				rooms, msgs := en.Model().Entity("rooms"), en.Model().Entity("messages")
				for r := int64(1); r <= 50; r++ {
					rows = append(rows, exec.Row{Entity: rooms, Values: []types.Value{r, fmt.Sprint("room ", r), r}})
					for i := int64(0); i < 200; i++ {
						id := r*1000 + i
						rows = append(rows, exec.Row{Entity: msgs, Values: []types.Value{id, i, fmt.Sprint("message ", id), r}})
					}
				}
				if _, err := en.Load(ctx, func(yield func(exec.Row) error) error {
					for _, row := range rows {
						if err := yield(row); err != nil {
							return err
						}
					}
					return nil
				}, exec.LoadOptions{Identity: "bench"}); err != nil {
					b.Fatal(err)
				}
				q, err := en.Prepare("SELECT rooms.name, rooms.updated, rooms.messages.at, rooms.messages.body FROM rooms.messages WHERE rooms.id = ? ORDER BY rooms.messages.at DESC LIMIT 20")
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; b.Loop(); i++ {
					res, err := q.Query(ctx, int64(i%50+1))
					if err != nil || len(res.Values()) != 20 {
						b.Fatalf("%v, %v", err, res)
					}
				}
			})
		}
	}
}

// TestSeed002StaticExample runs seed 002's own static-column example
// (static_test: PRIMARY KEY ((id), no), static_data text static) and
// checks the two tables the seed prints: the four rows as inserted, then,
// after one UPDATE of static_data for partition '1', both rows of that
// partition showing the new value and the other partition unchanged. The
// advised model keys an entity by one field, so each row of the seed's
// table is an entity of its own (eid) belonging to its partition (part);
// no clusters the partition, as in the seed. The UPDATE, as the seed
// explains, changes the one copy the partition keeps: one cell, no read.
func TestSeed002StaticExample(t *testing.T) {
	const model = `
DEFINE RELATION static_test ROWS 2 { id STRING KEY, static_data STRING CARDINALITY 2 };
DEFINE RELATION entries ROWS 4 { eid BIGINT KEY, no STRING CARDINALITY 2, non_static_data STRING CARDINALITY 2, part STRING REFERENCES static_test REVERSE rows };`
	const schema = `
DEFINE COLUMN FAMILY static_test_rows FOR static_test {
  PARTITION KEY (static_test.id), CLUSTERING KEY (static_test.rows.no, static_test.rows.eid),
  STATIC (static_test.static_data), VALUES (static_test.rows.non_static_data) };`
	seedTable := func(rows [][]types.Value) string {
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, "%v | %v | %v | %v\n", r[0], r[1], r[2], r[3])
		}
		return b.String()
	}
	const selectAll = "SELECT static_test.id, static_test.rows.no, static_test.static_data, static_test.rows.non_static_data FROM static_test.rows"
	for _, backend := range []string{"mem", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var inner store.Store
			if backend == "mem" {
				inner = memstore.New()
			} else {
				ps, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				defer ps.Close()
				inner = ps
			}
			cs := countstore.New(inner)
			en, err := exec.Deploy(ctx, cs, "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Pebble)
			if err != nil {
				t.Fatal(err)
			}
			exec1 := func(q string, args ...types.Value) { t.Helper(); execOn(t, en, q, args...) }
			query := func() string {
				t.Helper()
				st, err := en.Prepare(selectAll)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := st.Query(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return seedTable(rows.Values())
			}
			// insert into static_test json '{"id":"1","no":"1","static_data":"static_1","non_static_data":"non_static_1"}'; …
			eid := int64(0)
			for _, p := range []string{"1", "2"} {
				exec1("INSERT INTO static_test SET id = ?, static_data = ?", p, "static_"+p)
				for _, no := range []string{"1", "2"} {
					eid++
					exec1("INSERT INTO entries SET eid = ?, no = ?, non_static_data = ? AND CONNECT TO part(?)", eid, no, "non_static_"+p, p)
				}
			}
			if got, want := query(), "1 | 1 | static_1 | non_static_1\n1 | 2 | static_1 | non_static_1\n2 | 1 | static_2 | non_static_2\n2 | 2 | static_2 | non_static_2\n"; got != want {
				t.Fatalf("select * from static_test:\n%s\nwant (seed 002):\n%s", got, want)
			}
			// update static_test set static_data = 'static_test_1' where id = '1';
			cs.Reset()
			exec1("UPDATE static_test SET static_data = ? WHERE static_test.id = ?", "static_test_1", "1")
			if s := cs.Stats(); s.Mutations != 1 || s.ReadRow+s.ReadRows > 1 {
				t.Errorf("the static column's update: %v, want one cell written and at most the catalog's check read", s)
			}
			if got, want := query(), "1 | 1 | static_test_1 | non_static_1\n1 | 2 | static_test_1 | non_static_1\n2 | 1 | static_2 | non_static_2\n2 | 2 | static_2 | non_static_2\n"; got != want {
				t.Fatalf("after the update:\n%s\nwant (seed 002):\n%s", got, want)
			}
		})
	}
}
