package kvschema_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
)

// TestMigrateDryRunMeasures: a dry run counts the tuples the store holds
// of the relations of the indexes to add, scales the model's sizes of
// those indexes to them (the model has 10,000 rooms and 5,000,000
// messages; the store 3 and 40), estimates the build, and changes
// nothing; one whose index cannot be built from the store fails, naming
// what it lacks, as the migration would.
func TestMigrateDryRunMeasures(t *testing.T) {
	ctx := context.Background()
	db, model := partnerDB(t)
	for id := 100; id < 140; id++ {
		if _, err := db.Exec(ctx, "INSERT INTO messages SET id = ?, at = '2025-01-02', body = 'b', tags = {'x'} AND CONNECT TO room(?)", id, id%3+1); err != nil {
			t.Fatal(err)
		}
	}
	var counted []string
	mig, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(partnerDeployed+partnerAdded), cost.Pebble, kvschema.MigrateOptions{DryRun: true, Progress: func(ev kvschema.MigrateEvent) {
		if ev.Phase != "count" || !ev.Done {
			t.Errorf("a dry run reports %+v", ev)
		}
		counted = append(counted, fmt.Sprint(ev.Index, " ", ev.Rows))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(mig.Counts) != "map[messages:40]" || fmt.Sprint(counted) != "[messages 40]" {
		t.Errorf("counts %v, reported %v; want messages 40", mig.Counts, counted)
	}
	if len(mig.Add) != 1 || mig.Add[0].Rows != 40 || mig.Add[0].ModelRows != 5e6 || mig.Add[0].Bytes != 40*mig.Add[0].ModelBytes/5e6 {
		t.Fatalf("the index to add: %+v", mig.Add)
	}
	if mig.Build <= 0 || mig.Profile != "pebble" {
		t.Errorf("build %v at profile %q", mig.Build, mig.Profile)
	}
	// One wave, no drop: two catalog changes wait for other processes'
	// writers.
	waiting, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(partnerDeployed+partnerAdded), cost.Pebble, kvschema.MigrateOptions{DryRun: true, Grace: time.Second})
	if err != nil || waiting.Build-mig.Build != 2*time.Second {
		t.Errorf("with a grace of 1s: %v, build %v, without %v", err, waiting.Build, mig.Build)
	}
	// Twice the rows, at a rate of one a second: at least 80 s.
	for id := 140; id < 180; id++ {
		if _, err := db.Exec(ctx, "INSERT INTO messages SET id = ?, at = '2025-01-02', body = 'b', tags = {'x'} AND CONNECT TO room(1)", id); err != nil {
			t.Fatal(err)
		}
	}
	slow, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(partnerDeployed+partnerAdded), cost.Pebble, kvschema.MigrateOptions{DryRun: true, Rate: 1})
	if err != nil || slow.Add[0].Rows != 80 || slow.Build.Seconds() < 80 {
		t.Fatalf("80 messages at 1 row/s: %v, %+v, build %v", err, slow.Add, slow.Build)
	}
	// Given the counts, nothing is counted again (the store's 80 are not
	// seen).
	again, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(partnerDeployed+partnerAdded), cost.Pebble, kvschema.MigrateOptions{DryRun: true, Counts: mig.Counts, Progress: func(ev kvschema.MigrateEvent) {
		t.Errorf("counted again: %+v", ev)
	}})
	if err != nil || again.Add[0].Rows != 40 {
		t.Fatalf("with the counts given: %v, %+v", err, again.Add)
	}
	// Rooms are counted from rooms_by_id's rows (a column family of rooms
	// alone, keyed by their key), not through a query.
	byName := partnerDeployed + `
DEFINE COLUMN FAMILY rooms_by_name FOR rooms { PARTITION KEY (rooms.name), CLUSTERING KEY (rooms.id), VALUES (rooms.topic) };`
	rooms, err := db.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(byName), cost.Pebble, kvschema.MigrateOptions{DryRun: true})
	if err != nil || fmt.Sprint(rooms.Counts) != "map[rooms:3]" || len(rooms.Add) != 1 || rooms.Add[0].Rows != 3 {
		t.Fatalf("rooms by name: %v, counts %v, %+v", err, rooms.Counts, rooms.Add)
	}
	// Nothing changed: the query by id still has no index to read.
	if plan, err := db.Explain(ctx, "SELECT messages.body FROM messages WHERE messages.id = ?"); err != nil || strings.Contains(plan, "messages_by_id") {
		t.Fatalf("after dry runs the plan reads messages_by_id: %v\n%s", err, plan)
	}
	// A store whose indexes keep no message's time or body cannot build
	// an index of them: the dry run says so, as the migration would.
	db2, err := kvschema.Open(ctx, "mem:", kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	keys := partnerDeployed[:strings.Index(partnerDeployed, "DEFINE COLUMN FAMILY room_messages")]
	if _, err := db2.Deploy(ctx, "examples/chat/model.kvs", model, "deployed.kvs", []byte(keys), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	_, err = db2.Migrate(ctx, "examples/chat/model.kvs", model, "target.kvs", []byte(keys+partnerAdded), cost.Pebble, kvschema.MigrateOptions{DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "messages_by_id cannot be built from this store: no index of it holds messages.at, messages.body") {
		t.Fatalf("a dry run to an index the store cannot build: %v", err)
	}
}
