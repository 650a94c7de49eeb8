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
	"github.com/kvschema/kvschema/workload"
)

const chatWorkload = `DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) {
    SELECT rooms.name, rooms.updated, rooms.messages.id, rooms.messages.body FROM rooms.messages WHERE rooms.id = ?; -- room
    SELECT rooms.name, rooms.messages.at, rooms.messages.id FROM rooms.messages WHERE rooms.id = ? ORDER BY rooms.messages.at DESC LIMIT 5; -- latest
    SELECT rooms.updated, rooms.messages.id FROM rooms.messages WHERE rooms.id = ? AND rooms.messages.at >= ? ORDER BY rooms.messages.at LIMIT 4; -- since
    SELECT rooms.messages.id, rooms.messages.body FROM rooms.messages WHERE rooms.id = ?; -- no static
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? ORDER BY rooms.messages.at LIMIT 3; -- limited
    SELECT rooms.messages.id FROM rooms.messages WHERE rooms.id = ? ORDER BY rooms.messages.at DESC LIMIT 3; -- limited reverse
    SELECT messages.body, messages.room.name FROM messages.room WHERE messages.id = ?; -- join
    INSERT INTO rooms SET id = ?, name = ?, updated = ?;
    INSERT INTO messages SET id = ?, at = ?, body = ? AND CONNECT TO room(?);
    UPDATE rooms SET name = ?, updated = ? WHERE rooms.id = ?;
    UPDATE rooms SET updated = ? WHERE rooms.name = ?;
    UPDATE messages SET body = ? WHERE messages.id = ?;
    DELETE messages WHERE messages.id = ?;
    DELETE rooms WHERE rooms.id = ?;
} }`

// TestStaticColumnsAgainstSQLite runs the chat workload on a column family
// with static columns against SQLite, across random writes of rooms (the
// static columns) and messages, with verify clean after each round, on
// Pebble and on Bigtable (the in-process emulator, through txnstore).
func TestStaticColumnsAgainstSQLite(t *testing.T) {
	for _, backend := range []string{"pebble", "pebble salted", "bigtable", "pebble without static", "pebble bucketed", "bigtable bucketed"} {
		t.Run(backend, func(t *testing.T) {
			var st store.Store
			schema := chatSchema
			switch backend {
			case "pebble salted":
				// The partition row's key starts with the salt byte too.
				schema = strings.Replace(schema, "VALUES (rooms.messages.body) }", "VALUES (rooms.messages.body), SALT_BUCKETS = 3 }", 1)
			case "pebble without static":
				// The room's fields read by key, then its messages: a
				// later step with the ORDER BY and LIMIT (topK).
				schema = strings.Replace(schema, "STATIC (rooms.name, rooms.updated), ", "", 1)
			case "pebble bucketed", "bigtable bucketed":
				// So is a room's messages spread over 3 partition
				// buckets, read in 3 ranges and put back in order.
				schema = strings.Replace(schema, "STATIC (rooms.name, rooms.updated), ", "", 1)
				schema = strings.Replace(schema, "VALUES (rooms.messages.body) }", "VALUES (rooms.messages.body), PARTITION_BUCKETS = 3 }", 1)
			}
			if !strings.HasPrefix(backend, "bigtable") {
				ps, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				st = ps
			} else {
				st = txnstore.New(openBigtable(t))
			}
			defer st.Close()
			staticColumnsAgainstSQLite(t, st, schema)
		})
	}
}

func staticColumnsAgainstSQLite(t *testing.T, st store.Store, schema string) {
	ctx := context.Background()
	en, err := exec.Deploy(ctx, st, "model.kvs", []byte(chatModel), "schema.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	m := en.Model()
	w, err := workload.Parse(m, "workload.kvs", []byte(chatWorkload))
	if err != nil {
		t.Fatal(err)
	}
	// Each round deletes about 8 rooms (a DELETE, its range and OR forms,
	// twice) and their messages.
	counts := map[string]int{"rooms": 48, "messages": 480}
	d := gen.Generate(m, func(e *catalog.Entity) int { return counts[e.Name] }, 11, 0.1)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	static := strings.Contains(schema, "STATIC")
	for tag, want := range map[string]string{
		"room":      "STATIC COLUMNS: 1 PARTITION ROW READ WITH THE ROWS (SAME CALL)",
		"latest":    "STATIC COLUMNS: 1 PARTITION ROW READ IN A PARALLEL CALL",
		"since":     "STATIC COLUMNS: 1 PARTITION ROW READ WITH THE ROWS",
		"no static": "",
	} {
		st := statement(t, w, tag)
		p, err := en.PrepareAST(st.AST)
		if err != nil {
			t.Fatal(err)
		}
		explain := p.Explain()
		if !static {
			continue
		}
		if !strings.Contains(explain, "room_messages") || want != "" && !strings.Contains(explain, want) || want == "" && strings.Contains(explain, "STATIC COLUMNS") {
			t.Errorf("%s: want %q in\n%s", tag, want, explain)
		}
	}
	or := oracleOf(t, m, d)
	checkVerify(t, ctx, en, or)
	r := rand.New(rand.NewPCG(5, 5))
	next := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		next[e] = counts[e.Name] + 1
	}
	nonEmpty := runQueries(t, ctx, en, or, w, d, r, 8)
	rooms := m.Entity("rooms")
	for round := 0; round < 4; round++ {
		runWrites(t, ctx, en, or, w, d, r, next, 2)
		checkVerify(t, ctx, en, or)
		if len(d.Rows[rooms]) < 8 {
			t.Fatalf("round %d: %d rooms left: the writes leave too little to compare", round, len(d.Rows[rooms]))
		}
		nonEmpty += runQueries(t, ctx, en, or, w, d, r, 8)
	}
	if nonEmpty < 40 {
		t.Fatalf("only %d queries had an answer: the comparison checks little", nonEmpty)
	}
}

func statement(t *testing.T, w *workload.Workload, tag string) *workload.Statement {
	t.Helper()
	for _, s := range w.Statements {
		if s.Tag == tag {
			return s
		}
	}
	t.Fatalf("no statement %s", tag)
	return nil
}
