//go:build !race

package exec_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// Indexes on collection elements, as Cassandra's CREATE INDEX ON t (tags)
// and (KEYS(reactions)): the messages holding a tag, or a reaction, found
// through the store's local index of the collection's cells.
const elementIndexSchema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.mods) };
DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id),
  VALUES (rooms.messages.body, rooms.messages.tags, rooms.messages.reactions, rooms.messages.edits) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id),
  VALUES (messages.at, messages.body, messages.tags, messages.reactions, messages.edits) };
DEFINE COLUMN FAMILY messages_rooms FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id), VALUES (messages.room.name) };
DEFINE SECONDARY INDEX messages_by_tag ON messages_by_id (messages.tags);
DEFINE SECONDARY INDEX messages_by_reaction ON messages_by_id (messages.reactions);`

const elementIndexWorkload = `DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) {
    SELECT messages.id, messages.body, messages.tags FROM messages WHERE messages.tags CONTAINS ?; -- by tag
    SELECT messages.id, messages.reactions FROM messages WHERE messages.reactions CONTAINS KEY ?; -- by reaction
    SELECT messages.id FROM messages WHERE messages.tags CONTAINS ? AND messages.reactions CONTAINS KEY ?; -- both
    SELECT messages.id, messages.at FROM messages WHERE messages.tags CONTAINS ? ORDER BY messages.at DESC; -- newest
    SELECT rooms.messages.id, rooms.messages.tags FROM rooms.messages WHERE rooms.id = ?; -- room
    INSERT INTO rooms SET id = ?, name = ?, mods = ?;
    INSERT INTO messages SET id = ?, at = ?, body = ?, tags = ?, reactions = ?, edits = ? AND CONNECT TO room(?);
    UPDATE messages SET tags = tags + ? WHERE messages.id = ?; -- tag
    UPDATE messages SET tags = tags - ?, body = ? WHERE messages.id = ?; -- untag
    UPDATE messages SET reactions[?] = ? WHERE messages.id = ?; -- react
    UPDATE messages SET tags = ?, reactions = ? WHERE messages.id = ?; -- replace
    DELETE reactions[?] FROM messages WHERE messages.id = ?; -- delete key
    DELETE tags FROM messages WHERE messages.id = ?; -- delete column
    DELETE messages WHERE messages.id = ?;
} }`

// TestElementIndexAgainstSQLite runs queries that find messages by one of
// their tags (CONTAINS) or reactions (CONTAINS KEY) through indexes on the
// collections' elements, kept by the store, while writes add, remove and
// replace elements and delete messages, against SQLite; verify (which
// reads every entry of the indexes) is clean after each round.
func TestElementIndexAgainstSQLite(t *testing.T) {
	for _, backend := range []string{"pebble", "mem"} {
		t.Run(backend, func(t *testing.T) {
			var st store.Store = memstore.New()
			if backend == "pebble" {
				ps, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				st = ps
			}
			defer st.Close()
			c := loadChat(t, st, elementsModel, elementIndexSchema, elementIndexWorkload)
			for tag, want := range map[string]string{
				"by tag":      "OVER LOCAL INDEX messages_by_tag OF messages_by_id [messages.tags CONTAINS ?]",
				"by reaction": "OVER LOCAL INDEX messages_by_reaction OF messages_by_id [messages.reactions CONTAINS KEY ?]",
				"both":        "LOCAL INDEX messages_by_",
			} {
				p, err := c.en.PrepareAST(statement(t, c.w, tag).AST)
				if err != nil {
					t.Fatal(err)
				}
				if explain := p.Explain(); !strings.Contains(explain, want) {
					t.Errorf("%s: want %q in\n%s", tag, want, explain)
				}
			}
			c.againstSQLite(t, rand.New(rand.NewPCG(11, 4)), 4)
		})
	}
}

// TestElementIndexNeedsLocalIndexes: on a store that keeps no local
// indexes (Bigtable), a schema with an index on a collection's elements
// is refused at deployment, saying why.
func TestElementIndexNeedsLocalIndexes(t *testing.T) {
	st := txnstore.New(openBigtable(t))
	defer st.Close()
	_, err := exec.Deploy(context.Background(), st, "model.kvs", []byte(elementsModel), "schema.kvs", []byte(elementIndexSchema), cost.Pebble)
	if want := "secondary index messages_by_tag indexes the elements of messages.tags, which only a store's local index keeps, and this store keeps no local indexes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want …%s…", err, want)
	}
}

// TestMigrateAddsElementIndex: a migration adds, on a loaded Pebble store,
// an index on a collection's elements and one on a scalar some tuples
// leave NULL (local indexes both: the store builds their entries, and the
// migration's verification of them expects none for NULL and one per
// element); the store verifies clean and answers as SQLite does.
func TestMigrateAddsElementIndex(t *testing.T) {
	ctx := context.Background()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := loadChat(t, st, elementsModel, elementsSchema, elementsWorkload)
	// A room without a name: no entry in the index on names.
	ins, err := c.en.Prepare("INSERT INTO rooms SET id = 999, mods = {5}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rooms := c.en.Model().Entity("rooms")
	c.d.Rows[rooms] = append(c.d.Rows[rooms], []types.Value{int64(999), nil, types.Set{int64(5)}})
	const next = elementsSchema + `
DEFINE SECONDARY INDEX rooms_by_name ON rooms_by_id (rooms.name);
DEFINE SECONDARY INDEX messages_by_tag ON messages_by_id (messages.tags);
DEFINE SECONDARY INDEX messages_by_reaction ON messages_by_id (messages.reactions);`
	db, err := kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	mg, err := db.Migrate(ctx, "model.kvs", []byte(elementsModel), "next.kvs", []byte(next), cost.Pebble, kvschema.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mg.Add) != 3 {
		t.Fatalf("added %d indexes, want 3", len(mg.Add))
	}
	after, err := db.Advised(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wl := strings.Replace(elementsWorkload, "    INSERT INTO rooms", `    SELECT messages.id, messages.body, messages.tags FROM messages.room WHERE messages.tags CONTAINS ?; -- by tag
    SELECT messages.id, messages.room.name FROM messages.room WHERE messages.reactions CONTAINS KEY ?; -- by reaction
    SELECT rooms.id, rooms.mods FROM rooms WHERE rooms.name = ?; -- by name
    INSERT INTO rooms`, 1)
	w, err := workload.Parse(after.Model(), "workload.kvs", []byte(wl))
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]string{"by tag": "OVER LOCAL INDEX messages_by_tag", "by name": "OVER LOCAL INDEX rooms_by_name"} {
		p, err := after.PrepareAST(statement(t, w, tag).AST)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Explain(), want) {
			t.Errorf("%s: the new index is not read:\n%s", tag, p.Explain())
		}
	}
	c.en, c.w, c.d = after, w, byName(c.d, after.Model())
	c.againstSQLite(t, rand.New(rand.NewPCG(2, 8)), 2)
}
