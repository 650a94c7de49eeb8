package kvschema_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
)

// partnerDeployed keeps chat messages only with their room; partnerAdded
// is a column family of messages alone.
const (
	partnerDeployed = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.topic, rooms.updated) };
DEFINE COLUMN FAMILY messages_rooms FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id), VALUES () };
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id), VALUES (rooms.messages.body, rooms.messages.tags) };`
	partnerAdded = `
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), VALUES (messages.at, messages.body) };`
)

// partnerDB is a DB on mem: with the chat model deployed as
// partnerDeployed and rooms 1 to 3; model is the model's text.
func partnerDB(t *testing.T) (db *kvschema.DB, model []byte) {
	t.Helper()
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if model, err = os.ReadFile("examples/chat/model.kvs"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Deploy(ctx, "examples/chat/model.kvs", model, "deployed.kvs", []byte(partnerDeployed), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	for r := int64(1); r <= 3; r++ {
		if _, err := db.Exec(ctx, "INSERT INTO rooms SET id = ?, name = ?, topic = 't', updated = '2025-01-01'", r, fmt.Sprint("room", r)); err != nil {
			t.Fatal(err)
		}
	}
	return db, model
}

// TestMigrateThroughPartner: on a chat store whose messages are kept only
// with their room (every column family holding messages holds the
// room), a migration adds a column family of messages alone, built from
// one of those (planner.Planner.Rows: no message exists without its
// room); every message then reads by id as written, writes during and
// after keep it, and verify is clean.
func TestMigrateThroughPartner(t *testing.T) {
	ctx := context.Background()
	db, model := partnerDB(t)
	bodies := map[int64]string{}
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
	mig, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(partnerDeployed+partnerAdded), cost.Pebble, kvschema.MigrateOptions{})
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

// TestMigrateThroughPartnerUnderWrites: the same migration, paced, while a
// writer posts messages and edits their bodies: the rows the writes
// change during the copy are recomputed through the room join too (the
// catch-up's rows query with the key bound), so every message reads by id
// as last written and verify is clean.
func TestMigrateThroughPartnerUnderWrites(t *testing.T) {
	ctx := context.Background()
	db, model := partnerDB(t)
	bodies := map[int64]string{}
	post := func(id int64) error {
		body := fmt.Sprint("body ", id)
		_, err := db.Exec(ctx, "INSERT INTO messages SET id = ?, at = ?, body = ?, tags = {'x'} AND CONNECT TO room(?)", id, fmt.Sprintf("2025-01-02 00:%02d:%02d", id/60%60, id%60), body, id%3+1)
		if err == nil {
			bodies[id] = body
		}
		return err
	}
	const n = 1000
	for id := int64(0); id < n; id++ {
		if err := post(id); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	wrote := make(chan error, 1)
	edits := 0
	go func() {
		r := rand.New(rand.NewPCG(1, 2))
		next := int64(n)
		for {
			select {
			case <-stop:
				wrote <- nil
				return
			default:
			}
			var err error
			if r.IntN(2) == 0 {
				err = post(next)
				next++
			} else {
				id := r.Int64N(next)
				body := fmt.Sprint("edit ", edits)
				if _, err = db.Exec(ctx, "UPDATE messages SET body = ? WHERE messages.id = ?", body, id); err == nil {
					bodies[id] = body
				}
			}
			if err != nil {
				wrote <- err
				return
			}
			edits++
		}
	}()
	mig, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(partnerDeployed+partnerAdded), cost.Pebble, kvschema.MigrateOptions{Rate: 2000})
	close(stop)
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	st := mig.Stats["messages_by_id"]
	t.Logf("%d writes; backfill %+v", edits, st)
	if st.Recounted == 0 {
		t.Fatal("no row the writes changed during the copy was recomputed: the catch-up went untested")
	}
	for id, body := range bodies {
		rows, err := db.Query(ctx, "SELECT messages.body FROM messages WHERE messages.id = ?", id)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows.All(); len(got) != 1 || got[0][0] != body {
			t.Fatalf("message %d by id: %v, want %q", id, got, body)
		}
	}
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil || len(rep.Differences) > 0 {
		t.Fatalf("verify: %v %v", err, rep)
	}
}

// TestQueryThroughPartner: on the same store, an ad-hoc query on messages
// alone that no key lookup answers is a full scan of messages with their
// room (no message is kept without one): every message matching, once,
// and nothing of the room in its columns.
func TestQueryThroughPartner(t *testing.T) {
	ctx := context.Background()
	db, _ := partnerDB(t)
	for id := int64(1); id <= 30; id++ {
		if _, err := db.Exec(ctx, "INSERT INTO messages SET id = ?, at = ?, body = ?, tags = {'x'} AND CONNECT TO room(?)", id, fmt.Sprintf("2025-01-02 00:00:%02d", id), fmt.Sprint("body ", id), id%3+1); err != nil {
			t.Fatal(err)
		}
	}
	const q = "SELECT messages.id, messages.body FROM messages WHERE messages.at >= '2025-01-02 00:00:21'"
	plan, err := db.Explain(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got := rows.All()
	seen := map[int64]bool{}
	for _, r := range got {
		id := r[0].(int64)
		if len(r) != 2 || r[1] != fmt.Sprint("body ", id) || id < 21 || seen[id] {
			t.Fatalf("row %v of %v\n%s", r, got, plan)
		}
		seen[id] = true
	}
	if len(seen) != 10 {
		t.Fatalf("%d messages, want 10: %v\n%s", len(seen), got, plan)
	}
}
