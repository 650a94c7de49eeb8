package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
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
	en, cs := itemsStore(t, modelSrc, schemaSrc, 100, func(id int64) (string, int64) { return fmt.Sprint("n", id), id % 10 })
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

// TestUnionOneRead: the alternatives of an IN list or OR on the key the
// first step reads run as one program whose first read is a skip scan of
// every alternative's key (one store call), each row once; alternatives
// along different keys stay a union of plans.
func TestUnionOneRead(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `DEFINE RELATION items ROWS 100 { id BIGINT KEY, name STRING CARDINALITY 10, quantity BIGINT CARDINALITY 10 };`
	const schemaSrc = modelSrc + `
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.name, items.quantity) };
DEFINE COLUMN FAMILY items_by_name FOR items { PARTITION KEY (items.name), CLUSTERING KEY (items.id), VALUES (items.quantity) };`
	en, cs := itemsStore(t, modelSrc, schemaSrc, 40, func(id int64) (string, int64) { return fmt.Sprint("n", id%5), id % 3 })
	for _, c := range []struct {
		q       string
		args    []any
		explain string
		want    string
		reads   int64 // ReadRows calls
	}{
		{"SELECT items.id FROM items WHERE items.id IN (?, ?, ?, ?) ORDER BY items.id DESC", []any{int64(7), int64(3), int64(7), nil},
			"CLIENT PARALLEL 1-WAY POINT LOOKUP ON 4 KEYS OVER items_by_id [items.id = ? OR items.id = ? OR items.id = ? OR items.id = ?]", "[[7] [3]]", 1},
		{"SELECT items.id, items.quantity FROM items WHERE items.name IN (?, ?) AND items.id > ? AND items.quantity = ?", []any{"n1", "n2", int64(30), int64(0)},
			"CLIENT PARALLEL 1-WAY SKIP SCAN ON 2 RANGES OVER items_by_name [items.name = ? AND items.id > ? OR items.name = ? AND items.id > ?]", "[[36 0]]", 1},
		{"SELECT items.id FROM items WHERE items.id = ? OR items.name = ?", []any{int64(2), "n0"},
			"CLIENT UNION OF 2 PLANS", "[[10] [15] [20] [25] [2] [30] [35] [40] [5]]", 2},
	} {
		st, err := en.Prepare(c.q)
		if err != nil {
			t.Fatal(err)
		}
		if e := st.Explain(); !strings.Contains(e, c.explain) {
			t.Errorf("EXPLAIN %s: want %q in\n%s", c.q, c.explain, e)
		}
		args := make([]types.Value, len(c.args))
		for i, a := range c.args {
			args[i] = a
		}
		cs.Reset()
		res, err := st.Query(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(res.Values())
		if !strings.Contains(c.q, "ORDER BY") {
			var rows []string // any order
			for _, r := range res.Values() {
				rows = append(rows, fmt.Sprint(r))
			}
			slices.Sort(rows)
			got = fmt.Sprint(rows)
		}
		if got != c.want {
			t.Errorf("%s %v: got %s, want %s", c.q, c.args, got, c.want)
		}
		if s := cs.Stats(); s.ReadRows != c.reads {
			t.Errorf("%s: %s, want %d store reads", c.q, s, c.reads)
		}
	}
}

// itemsStore deploys an items schema on a counting memstore and inserts
// items 1..n, each's name and quantity given by row.
func itemsStore(t *testing.T, modelSrc, schemaSrc string, n int64, row func(id int64) (string, int64)) (*exec.Engine, *countstore.Store) {
	t.Helper()
	ctx := context.Background()
	cs := countstore.New(memstore.New())
	en, err := exec.Deploy(ctx, cs, "model.kvs", []byte(modelSrc), "schema.kvs", []byte(schemaSrc), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := en.Prepare("INSERT INTO items SET id = ?, name = ?, quantity = ?")
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= n; id++ {
		name, qty := row(id)
		if _, err := ins.Exec(ctx, id, name, qty); err != nil {
			t.Fatal(err)
		}
	}
	return en, cs
}

// TestOrderFromOneRow: a later step that reads the one partition its one
// input row names delivers that partition's clustering order, so an
// ascending ORDER BY needs no client sort (the planner's State.single); a
// descending one is sorted, as later steps read forward.
func TestOrderFromOneRow(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `
DEFINE RELATION rooms ROWS 100 { id BIGINT KEY, title STRING CARDINALITY 100 };
DEFINE RELATION messages ROWS 10000 { id BIGINT KEY, body STRING CARDINALITY 10000, posted BIGINT CARDINALITY 10000, room BIGINT REFERENCES rooms REVERSE messages };`
	const schemaSrc = modelSrc + `
DEFINE COLUMN FAMILY room FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.title) };
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.posted, rooms.messages.id), VALUES (rooms.messages.body) };`
	en, err := exec.Deploy(ctx, memstore.New(), "model.kvs", []byte(modelSrc), "schema.kvs", []byte(schemaSrc), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	exec1 := func(q string, args ...any) {
		t.Helper()
		st, err := en.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Exec(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec1("INSERT INTO rooms SET id = ?, title = ?", int64(1), "one")
	exec1("INSERT INTO rooms SET id = ?, title = ?", int64(2), "two")
	posted := map[int64][]int64{}
	r := rand.New(rand.NewPCG(1, 2))
	for id := int64(1); id <= 60; id++ {
		room, at := 1+id%2, r.Int64N(1000)
		exec1("INSERT INTO messages SET id = ?, body = ?, posted = ? AND CONNECT TO room(?)", id, fmt.Sprint("b", id), at, room)
		posted[room] = append(posted[room], at)
	}
	for _, desc := range []bool{false, true} {
		dir := ""
		if desc {
			dir = " DESC"
		}
		q, err := en.Prepare("SELECT rooms.title, messages.posted, messages.body FROM rooms.messages WHERE rooms.id = ? ORDER BY messages.posted" + dir)
		if err != nil {
			t.Fatal(err)
		}
		if sorts := strings.Contains(q.Explain(), "CLIENT SORT"); sorts != desc {
			t.Errorf("ORDER BY%s: client sort %v, want %v:\n%s", dir, sorts, desc, q.Explain())
		}
		for room := int64(1); room <= 2; room++ {
			res, err := q.Query(ctx, room)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(posted[room])
			slices.Sort(want)
			if desc {
				slices.Reverse(want)
			}
			var got []int64
			for _, row := range res.Values() {
				got = append(got, row[1].(int64))
			}
			if !slices.Equal(got, want) {
				t.Errorf("ORDER BY%s in room %d: %v, want %v\n%s", dir, room, got, want, q.Explain())
			}
		}
	}
}
