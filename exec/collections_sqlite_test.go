//go:build !race

package exec_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// The chat model with collections (seed 002): a message's tags, its
// reactions by emoji, and the times it was edited; a room's moderators.
const collectionsModel = `
DEFINE RELATION rooms ROWS 20 { id BIGINT KEY, name STRING CARDINALITY 20, mods FROZEN<SET<BIGINT>> CARDINALITY 20 };
DEFINE RELATION messages ROWS 400 {
  id BIGINT KEY, at BIGINT CARDINALITY 50, body STRING CARDINALITY 400,
  tags FROZEN<SET<STRING>> CARDINALITY 6, reactions FROZEN<MAP<STRING, INT>> CARDINALITY 5,
  edits FROZEN<LIST<TIMESTAMP>> CARDINALITY 4,
  room BIGINT REFERENCES rooms REVERSE messages };`

const collectionsSchema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.mods) };
DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id),
  VALUES (rooms.messages.body, rooms.messages.tags, rooms.messages.reactions) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id),
  VALUES (messages.at, messages.body, messages.tags, messages.reactions, messages.edits) };
DEFINE COLUMN FAMILY messages_by_tags FOR messages { PARTITION KEY (messages.tags), CLUSTERING KEY (messages.reactions, messages.id) };
DEFINE COLUMN FAMILY rooms_by_mods FOR rooms { PARTITION KEY (rooms.mods), CLUSTERING KEY (rooms.id), VALUES (rooms.name) };
DEFINE SECONDARY INDEX room_messages_by_reactions ON room_messages (rooms.messages.reactions);`

const collectionsWorkload = `DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) {
    SELECT rooms.messages.id, rooms.messages.tags, rooms.messages.reactions FROM rooms.messages WHERE rooms.id = ?; -- room
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.tags CONTAINS ?; -- tagged
    SELECT rooms.messages.id, rooms.messages.body FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.reactions CONTAINS KEY ? ORDER BY rooms.messages.at DESC LIMIT 3; -- reacted
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.reactions CONTAINS ?; -- count
    SELECT rooms.messages.id, rooms.messages.tags FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.tags NOT CONTAINS ?; -- untagged
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? AND NOT rooms.messages.reactions CONTAINS KEY ?; -- unreacted
    SELECT messages.tags, messages.edits, messages.room.name, messages.room.mods FROM messages.room WHERE messages.id = ?; -- one
    SELECT messages.id, messages.room.name FROM messages.room WHERE messages.id = ? AND messages.edits CONTAINS ?; -- edited
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.tags = ?; -- same tags
    SELECT messages.id, messages.reactions FROM messages WHERE messages.tags = ?; -- by tags
    SELECT messages.id FROM messages WHERE messages.tags = ? AND messages.reactions = ?; -- by tags and reactions
    SELECT rooms.id, rooms.name FROM rooms WHERE rooms.mods = ?; -- by mods
    SELECT rooms.id, rooms.messages.id, rooms.messages.body FROM rooms.messages WHERE rooms.messages.reactions = ?; -- by reactions
    INSERT INTO rooms SET id = ?, name = ?, mods = ?;
    INSERT INTO messages SET id = ?, at = ?, body = ?, tags = ?, reactions = ?, edits = ? AND CONNECT TO room(?);
    UPDATE messages SET tags = ?, reactions = ? WHERE messages.id = ?;
    UPDATE rooms SET mods = ? WHERE rooms.id = ?;
    DELETE messages WHERE messages.id = ?;
} }`

// TestCollectionsAgainstSQLite runs a workload that reads, filters
// (CONTAINS, CONTAINS KEY, equality of whole collections) and replaces
// frozen collections, on Pebble and on Bigtable, against SQLite holding
// each collection as JSON text (CONTAINS through json_each), with verify
// clean after each round of writes.
func TestCollectionsAgainstSQLite(t *testing.T) {
	onPebbleAndBigtable(t, collectionsAgainstSQLite)
}

// onPebbleAndBigtable runs test on a new Pebble store and on Bigtable
// (through txnstore), each a subtest.
func onPebbleAndBigtable(t *testing.T, test func(*testing.T, store.Store)) {
	for _, backend := range []string{"pebble", "bigtable"} {
		t.Run(backend, func(t *testing.T) {
			var st store.Store
			if backend == "pebble" {
				ps, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				st = ps
			} else {
				st = txnstore.New(openBigtable(t))
			}
			defer st.Close()
			test(t, st)
		})
	}
}

// chatData is a chat model deployed with a schema on a store, loaded with
// generated data, and its workload.
type chatData struct {
	en     *exec.Engine
	w      *workload.Workload
	d      *gen.Data
	counts map[string]int
}

// loadChat deploys model and schema on st, loads generated data (24
// rooms, 300 messages) and parses the workload.
func loadChat(t *testing.T, st store.Store, model, schema, wl string) *chatData {
	t.Helper()
	ctx := context.Background()
	en, err := exec.Deploy(ctx, st, "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	m := en.Model()
	w, err := workload.Parse(m, "workload.kvs", []byte(wl))
	if err != nil {
		t.Fatal(err)
	}
	c := &chatData{en: en, w: w, counts: map[string]int{"rooms": 24, "messages": 300}}
	c.d = gen.Generate(m, func(e *catalog.Entity) int { return c.counts[e.Name] }, 3, 0.1)
	if _, err := en.Load(ctx, source(c.d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	return c
}

// againstSQLite compares the workload's queries with SQLite, before and
// after each of rounds of its writes (random arguments from r), with
// verify clean after each round.
func (c *chatData) againstSQLite(t *testing.T, r *rand.Rand, rounds int) {
	t.Helper()
	ctx := context.Background()
	m := c.en.Model()
	or := oracleOf(t, m, c.d)
	checkVerify(t, ctx, c.en, or)
	next := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		next[e] = c.counts[e.Name] + 1
	}
	nonEmpty := runQueries(t, ctx, c.en, or, c.w, c.d, r, 10)
	for range rounds {
		runWrites(t, ctx, c.en, or, c.w, c.d, r, next, 3)
		checkVerify(t, ctx, c.en, or)
		nonEmpty += runQueries(t, ctx, c.en, or, c.w, c.d, r, 10)
	}
	if nonEmpty < 60 {
		t.Fatalf("only %d queries had an answer: the comparison checks little", nonEmpty)
	}
}

func collectionsAgainstSQLite(t *testing.T, st store.Store) {
	ctx := context.Background()
	c := loadChat(t, st, collectionsModel, collectionsSchema, collectionsWorkload)
	en, w := c.en, c.w
	// The filters run at the client, after the read of the room's rows.
	for tag, want := range map[string]string{"tagged": "tags CONTAINS", "reacted": "reactions CONTAINS KEY", "edited": "edits CONTAINS",
		"untagged": "tags NOT CONTAINS", "unreacted": "reactions NOT CONTAINS KEY",
		// Frozen collections in keys, looked up by value. (SQLite holds
		// them as JSON text, whose order is not theirs: ranges and ORDER
		// BY of collections are checked by keyenc's property tests.)
		"by tags": "OVER messages_by_tags [messages.tags = ?]", "by tags and reactions": "[messages.tags = ?, messages.reactions = ?]", "by mods": "OVER rooms_by_mods",
		"by reactions": "room_messages_by_reactions"} {
		p, err := en.PrepareAST(statement(t, w, tag).AST)
		if err != nil {
			t.Fatal(err)
		}
		if explain := p.Explain(); !strings.Contains(explain, want) {
			t.Errorf("%s: want %q in\n%s", tag, want, explain)
		}
	}
	c.againstSQLite(t, rand.New(rand.NewPCG(9, 9)), 3)
	// The stored collections are canonical: a set sorted and without
	// duplicates, whatever order a write gave.
	ins, err := en.Prepare("INSERT INTO rooms SET id = 1000, name = 'x', mods = {3, 1, 3, 2}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	sel, err := en.Prepare("SELECT rooms.mods FROM rooms WHERE rooms.id = 1000")
	if err != nil {
		t.Fatal(err)
	}
	got, err := sel.Query(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Values(); len(v) != 1 || types.Format(v[0][0]) != "{1, 2, 3}" {
		t.Fatalf("mods = %v, want {1, 2, 3}", v)
	}
}

// The chat model with collections stored one cell per element: a
// message's tags, reactions and edits change element by element.
const elementsModel = `
DEFINE RELATION rooms ROWS 20 { id BIGINT KEY, name STRING CARDINALITY 20, mods SET<BIGINT> CARDINALITY 20 };
DEFINE RELATION messages ROWS 400 {
  id BIGINT KEY, at BIGINT CARDINALITY 50, body STRING CARDINALITY 400,
  tags SET<STRING> CARDINALITY 6, reactions MAP<STRING, INT> CARDINALITY 5,
  edits LIST<TIMESTAMP> CARDINALITY 4,
  room BIGINT REFERENCES rooms REVERSE messages };`

const elementsSchema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.mods) };
DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id),
  VALUES (rooms.messages.body, rooms.messages.tags, rooms.messages.reactions, rooms.messages.edits) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id),
  VALUES (messages.at, messages.body, messages.tags, messages.reactions, messages.edits) };
DEFINE COLUMN FAMILY messages_alone FOR messages { PARTITION KEY (messages.id), VALUES (messages.edits) };`

const elementsWorkload = `DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) {
    SELECT rooms.messages.id, rooms.messages.tags, rooms.messages.reactions, rooms.messages.edits FROM rooms.messages WHERE rooms.id = ?; -- room
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.tags CONTAINS ?; -- tagged
    SELECT rooms.messages.id, rooms.messages.body FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.reactions CONTAINS KEY ? ORDER BY rooms.messages.at DESC LIMIT 3; -- reacted
    SELECT messages.tags, messages.reactions, messages.edits, messages.room.name, messages.room.mods FROM messages.room WHERE messages.id = ?; -- one
    SELECT messages.id, messages.room.name FROM messages.room WHERE messages.id = ? AND messages.edits CONTAINS ?; -- edited
    INSERT INTO rooms SET id = ?, name = ?, mods = ?;
    INSERT INTO messages SET id = ?, at = ?, body = ?, tags = ?, reactions = ?, edits = ? AND CONNECT TO room(?);
    UPDATE messages SET tags = tags + ? WHERE messages.id = ?; -- tag
    UPDATE messages SET tags = tags - ?, body = ? WHERE messages.id = ?; -- untag
    UPDATE messages SET reactions[?] = ? WHERE messages.id = ?; -- react
    UPDATE messages SET reactions = reactions + ?, edits = edits + ? WHERE messages.id = ?; -- react and edit
    UPDATE messages SET reactions = reactions - ? WHERE messages.id = ?; -- unreact
    UPDATE messages SET edits = ? + edits WHERE messages.id = ?; -- prepend
    UPDATE messages SET edits = edits - ?, edits = edits + ? WHERE messages.id = ?; -- unedit
    UPDATE messages SET tags = ?, reactions = ? WHERE messages.id = ?; -- replace
    UPDATE rooms SET mods = mods + ? WHERE rooms.id = ?;
    DELETE reactions[?] FROM messages WHERE messages.id = ?; -- delete key
    DELETE tags FROM messages WHERE messages.id = ?; -- delete column
    DELETE messages WHERE messages.id = ?;
} }`

// TestElementsAgainstSQLite runs a workload that adds, removes, prepends,
// puts and deletes the elements of collections stored one cell per
// element (a list's removed by value after a read of the list), and
// replaces them whole, on Pebble and on Bigtable, against
// SQLite (whose reference applies the operations in Go,
// oracle.ApplyElements), with verify clean after each round of writes.
func TestElementsAgainstSQLite(t *testing.T) {
	onPebbleAndBigtable(t, elementsAgainstSQLite)
}

func elementsAgainstSQLite(t *testing.T, st store.Store) {
	ctx := context.Background()
	c := loadChat(t, st, elementsModel, elementsSchema, elementsWorkload)
	en := c.en
	c.againstSQLite(t, rand.New(rand.NewPCG(5, 7)), 4)
	// One element is one cell: adding a tag writes it alone, without
	// reading the message's tags.
	one := func(src string, args ...types.Value) [][]types.Value {
		t.Helper()
		p, err := en.Prepare(src)
		if err != nil {
			t.Fatal(err)
		}
		if p.Write == nil {
			rows, err := p.Query(ctx, args...)
			if err != nil {
				t.Fatal(err)
			}
			return rows.Values()
		}
		if _, err := p.Exec(ctx, args...); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	one("INSERT INTO messages SET id = 5000, at = 1, body = 'b', tags = {'b', 'a'}, edits = [TIMESTAMP '2024-01-01 00:00:00'] AND CONNECT TO room(1)")
	one("UPDATE messages SET tags = tags + {'c'}, edits = edits + [TIMESTAMP '2024-01-03 00:00:00'] WHERE messages.id = 5000")
	one("UPDATE messages SET edits = [TIMESTAMP '2023-12-31 00:00:00'] + edits, reactions['x'] = 2 WHERE messages.id = 5000")
	one("UPDATE messages SET tags = tags - {'a'} WHERE messages.id = 5000")
	// Several operations on one collection apply in statement order.
	one("UPDATE messages SET tags = tags + {'d', 'e'}, tags = tags - {'d'}, reactions['y'] = 1, reactions['z'] = 3, reactions = reactions - {'y'} WHERE messages.id = 5000")
	if got := one("SELECT rooms.messages.tags, rooms.messages.reactions FROM rooms.messages WHERE rooms.id = 1 AND rooms.messages.id = 5000"); len(got) != 1 || types.Format(got[0][0])+" "+types.Format(got[0][1]) != "{'b', 'c', 'e'} {'x': 2, 'z': 3}" {
		t.Fatalf("got %v, want {'b', 'c', 'e'} {'x': 2, 'z': 3}", got)
	}
	one("UPDATE messages SET tags = tags - {'e'}, reactions = {'x': 2}, reactions = reactions + {'w': 1}, reactions['x'] = 2 WHERE messages.id = 5000")
	got := one("SELECT messages.tags, messages.edits, messages.reactions, messages.room.name FROM messages.room WHERE messages.id = 5000")
	want := "{'b', 'c'} [TIMESTAMP '2023-12-31 00:00:00', TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-03 00:00:00'] {'w': 1, 'x': 2}"
	if len(got) != 1 || types.Format(got[0][0])+" "+types.Format(got[0][1])+" "+types.Format(got[0][2]) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	// EXPLAIN says which cells an element operation writes.
	for src, want := range map[string]string{
		"UPDATE messages SET tags = tags + {'x'} WHERE messages.id = 1": "ADD ELEMENTS TO rooms.messages.tags: PUT THEIR CELLS IN FAMILY",
		"DELETE reactions['x'] FROM messages WHERE messages.id = 1":     "REMOVE ELEMENTS OF messages.reactions: DELETE THEIR CELLS IN FAMILY",
		"UPDATE messages SET edits = [] WHERE messages.id = 1":          "REPLACE messages.edits: DELETE FAMILY",
		"UPDATE messages SET reactions['y'] = 1 WHERE messages.id = 1":  "SET AN ENTRY OF rooms.messages.reactions: PUT ITS CELL IN FAMILY",
	} {
		p, err := en.Prepare(src)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Explain(), want) {
			t.Errorf("%s: no %q in\n%s", src, want, p.Explain())
		}
	}
	// Removing the last element leaves NULL, and the row.
	one("UPDATE messages SET tags = tags - {'b', 'c'}, reactions = reactions - {'x', 'w'} WHERE messages.id = 5000")
	got = one("SELECT messages.tags, messages.reactions, rooms.messages.body FROM rooms.messages WHERE rooms.id = 1 AND rooms.messages.id = 5000")
	if len(got) != 1 || got[0][0] != nil || got[0][1] != nil || got[0][2] != "b" {
		t.Fatalf("got %v, want NULL, NULL, 'b'", got)
	}
}
