package exec_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/types"
)

// tablesOnly hides its store's local indexes, as Bigtable has none: the
// engine keeps secondary indexes in tables of their own.
type tablesOnly struct{ store.Store }

func (s tablesOnly) Capabilities() store.Capabilities {
	c := s.Store.Capabilities()
	c.LocalIndexes = false
	return c
}

// TestLocalIndexOneRoundTrip: on Pebble, which keeps local indexes, a
// query through a secondary index is one store call (the index and the
// base rows together), and an UPDATE of the indexed attribute reads
// nothing; on a store without them, the same schema's query takes two
// calls and the UPDATE one support read. Both answer alike.
func TestLocalIndexOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `DEFINE RELATION items ROWS 1000 { id BIGINT KEY, quantity BIGINT CARDINALITY 10, name STRING CARDINALITY 1000 };`
	const schemaSrc = modelSrc + `
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.quantity, items.name) };
DEFINE SECONDARY INDEX items_by_quantity ON items_by_id (items.quantity);`
	answers := map[bool]string{}
	for _, local := range []bool{true, false} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) {
			ps, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var base store.Store = ps
			if !local {
				base = tablesOnly{ps}
			}
			cs := countstore.New(base)
			defer cs.Close()
			en, err := exec.Deploy(ctx, cs, "model.kvs", []byte(modelSrc), "schema.kvs", []byte(schemaSrc), cost.Pebble)
			if err != nil {
				t.Fatal(err)
			}
			tables, err := cs.Tables(ctx)
			if err != nil {
				t.Fatal(err)
			}
			hasTable := slices.ContainsFunc(tables, func(s store.TableSpec) bool { return s.Name == "items_by_quantity" })
			if hasTable == local {
				t.Fatalf("local %v: the index has a table of its own: %v", local, hasTable)
			}
			ins, err := en.Prepare("INSERT INTO items SET id=?, quantity=?, name=?")
			if err != nil {
				t.Fatal(err)
			}
			for i := int64(1); i <= 20; i++ {
				if _, err := ins.Exec(ctx, i, i%3, fmt.Sprint("item ", i)); err != nil {
					t.Fatal(err)
				}
			}
			upd, err := en.Prepare("UPDATE items SET quantity=? WHERE items.id=?")
			if err != nil {
				t.Fatal(err)
			}
			cs.Reset()
			if _, err := upd.Exec(ctx, int64(1), int64(3)); err != nil { // item 3: quantity 0 → 1
				t.Fatal(err)
			}
			st := cs.Stats()
			reads := st.ReadRow + st.ReadRows + st.ReadIndex
			if want := map[bool]int64{true: 0, false: 1}[local]; reads != want {
				t.Errorf("UPDATE of the indexed attribute: %d reads (%v), want %d\n%s", reads, st, want, upd.Explain())
			}
			q, err := en.Prepare("SELECT items.id, items.quantity, items.name FROM items WHERE items.quantity = ?")
			if err != nil {
				t.Fatal(err)
			}
			explain := q.Explain()
			if strings.Contains(explain, "LOCAL INDEX items_by_quantity") != local ||
				strings.Contains(explain, "OVER items_by_quantity [items.quantity = ?] (SECONDARY INDEX TABLE: 1 ROUND TRIP, THE BASE ROWS ANOTHER)") == local {
				t.Errorf("EXPLAIN does not say the index kind:\n%s", explain)
			}
			cs.Reset()
			res, err := q.Query(ctx, int64(1))
			if err != nil {
				t.Fatal(err)
			}
			st = cs.Stats()
			if want := map[bool]int64{true: 1, false: 2}[local]; st.RoundTrips != want || local && st.ReadIndex != 1 {
				t.Errorf("query through the index: %v, want %d round trips\n%s", st, want, explain)
			}
			var ids []string
			for _, row := range res.Values() {
				if types.Compare(row[1], int64(1)) != 0 {
					t.Errorf("row %v fails WHERE quantity = 1", row)
				}
				ids = append(ids, fmt.Sprint(row[0]))
			}
			slices.Sort(ids)
			answers[local] = strings.Join(ids, ",")
			if len(ids) != 8 { // 1, 4, …, 19 (7) and 3
				t.Errorf("quantity 1: items %v, want 8", ids)
			}
			if rep, err := en.Verify(ctx, exec.VerifyOptions{}); err != nil || len(rep.Differences) > 0 {
				t.Fatalf("verify: %v %v", err, rep)
			}
		})
	}
	if answers[true] != answers[false] {
		t.Errorf("local index answers %s, table %s", answers[true], answers[false])
	}
}
