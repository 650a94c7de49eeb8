package kvschema_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
)

// TestMigrateThroughPartner: on a chat store whose messages are kept only
// with their room (every column family holding messages holds the
// room), a migration adds a column family of messages alone, built from
// one of those (planner.Planner.Rows: no message exists without its
// room); every message then reads by id as written, writes during and
// after keep it, and verify is clean.
func TestMigrateThroughPartner(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	model, err := os.ReadFile("examples/chat/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	const deployed = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.topic, rooms.updated) };
DEFINE COLUMN FAMILY messages_rooms FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id), VALUES () };
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id), VALUES (rooms.messages.body, rooms.messages.tags) };`
	const added = `
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), VALUES (messages.at, messages.body) };`
	if _, err := db.Deploy(ctx, "examples/chat/model.kvs", model, "deployed.kvs", []byte(deployed), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	bodies := map[int64]string{}
	for r := int64(1); r <= 3; r++ {
		if _, err := db.Exec(ctx, "INSERT INTO rooms SET id = ?, name = ?, topic = 't', updated = '2025-01-01'", r, fmt.Sprint("room", r)); err != nil {
			t.Fatal(err)
		}
	}
	post := func(id int64) {
		t.Helper()
		body := fmt.Sprint("body ", id)
		if _, err := db.Exec(ctx, "INSERT INTO messages SET id = ?, at = ?, body = ?, tags = {'x'} AND CONNECT TO room(?)", id, fmt.Sprintf("2025-01-02 00:00:%02d", id%60), body, id%3+1); err != nil {
			t.Fatal(err)
		}
		bodies[id] = body
	}
	for id := int64(100); id < 160; id++ {
		post(id)
	}
	mig, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(deployed+added), cost.Pebble, kvschema.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mig.Add) != 1 || mig.Add[0].Name != "messages_by_id" || len(mig.Drop) != 0 {
		t.Fatalf("migration:\n%s", mig)
	}
	post(160)
	plan, err := db.Explain(ctx, "SELECT messages.body FROM messages WHERE messages.id = ?")
	if err != nil || !strings.Contains(plan, "messages_by_id") {
		t.Fatalf("the query by id does not read messages_by_id: %v\n%s", err, plan)
	}
	for id, body := range bodies {
		rows, err := db.Query(ctx, "SELECT messages.body FROM messages WHERE messages.id = ?", id)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows.All(); len(got) != 1 || got[0][0] != body {
			t.Errorf("message %d by id: %v, want %q\n%s", id, got, body, plan)
		}
	}
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil || len(rep.Differences) > 0 {
		t.Fatalf("verify: %v %v", err, rep)
	}
	if n := rep.Rows["messages_by_id"]; n != len(bodies) {
		t.Errorf("messages_by_id holds %d rows, want %d", n, len(bodies))
	}
}
