package exec_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
)

// TestPartitionBucketsTopK: the room's latest messages, read after the
// room's fields (a later step that alone decides the LIMIT), read each of
// the partition's buckets with the limit, in parallel: at most 3 × 5 of
// its 60 messages, and the right 5.
func TestPartitionBucketsTopK(t *testing.T) {
	ctx := context.Background()
	schema := strings.Replace(chatSchema, "STATIC (rooms.name, rooms.updated), ", "", 1)
	schema = strings.Replace(schema, "VALUES (rooms.messages.body) }", "VALUES (rooms.messages.body), PARTITION_BUCKETS = 3 }", 1)
	cs := countstore.New(memstore.New())
	en, err := exec.Deploy(ctx, cs, "model.kvs", []byte(chatModel), "schema.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := en.Prepare("INSERT INTO messages SET id = ?, at = ?, body = ? AND CONNECT TO room(?)")
	if err != nil {
		t.Fatal(err)
	}
	room, err := en.Prepare("INSERT INTO rooms SET id = ?, name = ?, updated = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := room.Exec(ctx, int64(1), "lobby", int64(10)); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 60; i++ {
		// Times in another order than ids: the latest are 1, 2, … .
		if _, err := ins.Exec(ctx, i, 1000-i, "m", int64(1)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := en.Prepare("SELECT rooms.name, rooms.messages.at, rooms.messages.id FROM rooms.messages WHERE rooms.id = ? ORDER BY rooms.messages.at DESC LIMIT 5")
	if err != nil {
		t.Fatal(err)
	}
	if e := st.Explain(); !strings.Contains(e, "SERVER 5 ROW LIMIT WHEN ONE PARTITION IS PROBED, SCANNED BACKWARDS, EACH OF ITS 3 BUCKETS IN A READ OF ITS OWN") {
		t.Fatalf("the messages are not read with a limit per bucket:\n%s", e)
	}
	cs.Reset()
	rows, err := st.Query(ctx, int64(1))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows.Values() {
		ids = append(ids, r[2].(int64))
	}
	if !slices.Equal(ids, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("latest messages %v, want 1 … 5", ids)
	}
	if s := cs.Stats(); s.RowsRead > 1+3*5 {
		t.Errorf("read %d rows: more than the room's and 5 a bucket", s.RowsRead)
	}
}
