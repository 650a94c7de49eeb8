package exec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
)

// TestSaltedRangeScan: a query that bounds the partition key of a salted
// column family by a range reads only the rows in the range, one range in
// each salt bucket (in parallel), as the client's relations do (the first
// step is planned by the client's planner).
func TestSaltedRangeScan(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `DEFINE RELATION items ROWS 100 { id BIGINT KEY, name STRING CARDINALITY 100, quantity BIGINT CARDINALITY 10 };`
	const schemaSrc = modelSrc + `
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.name, items.quantity), SALT_BUCKETS = 4 };`
	cs := countstore.New(memstore.New())
	en, err := exec.Deploy(ctx, cs, "model.kvs", []byte(modelSrc), "schema.kvs", []byte(schemaSrc), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := en.Prepare("INSERT INTO items SET id = ?, name = ?, quantity = ?")
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 100; id++ {
		if _, err := ins.Exec(ctx, id, fmt.Sprint("n", id), id%10); err != nil {
			t.Fatal(err)
		}
	}
	q, err := en.Prepare("SELECT items.id, items.name FROM items WHERE items.id >= ? AND items.id < ? ORDER BY items.id")
	if err != nil {
		t.Fatal(err)
	}
	explain := q.Explain()
	for _, want := range []string{"CLIENT PARALLEL 4-WAY RANGE SCAN OVER items_by_id [items.id >= ?, items.id < ?]", "CLIENT SORT BY [items.id]"} {
		if !strings.Contains(explain, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, explain)
		}
	}
	for _, r := range [][2]int64{{10, 20}, {95, 200}, {-5, 3}, {50, 50}} {
		cs.Reset()
		res, err := q.Query(ctx, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for id := max(r[0], 1); id < min(r[1], 101); id++ {
			want = append(want, fmt.Sprintf("[%d n%d]", id, id))
		}
		for _, row := range res.Values() {
			got = append(got, fmt.Sprint(row))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ids in [%d, %d): got %v, want %v", r[0], r[1], got, want)
		}
		s := cs.Stats()
		if s.RowsRead != int64(len(want)) || s.Probes != 4 && len(want) > 0 {
			t.Errorf("ids in [%d, %d): %s; want %d rows read, 4 ranges (one per bucket)", r[0], r[1], s, len(want))
		}
	}
}
