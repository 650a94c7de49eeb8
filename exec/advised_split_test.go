package exec_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// TestSplitOn: a CF with SPLIT ON creates its table pre-split at the points'
// encodings, each of which is the row-key prefix of the partition it names,
// and rows on both sides of every split read back.
func TestSplitOn(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `DEFINE RELATION items ROWS 100 { id BIGINT KEY, name STRING CARDINALITY 100, quantity BIGINT CARDINALITY 10 };`
	const schemaSrc = modelSrc + `
DEFINE COLUMN FAMILY items_by_name FOR items { PARTITION KEY (items.name), CLUSTERING KEY (items.id), VALUES (items.quantity), SPLIT ON ('t', 'm') };
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.name, items.quantity), SPLIT ON (100, 200) };`
	st := memstore.New()
	en, err := exec.Deploy(ctx, st, "model.kvs", []byte(modelSrc), "schema.kvs", []byte(schemaSrc), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := st.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	splits := map[string]string{}
	for _, s := range specs {
		splits[s.Name] = fmt.Sprintf("%q", s.Splits)
	}
	wantSplits := map[string]string{
		"items_by_name": `["\x01m\x00\x01" "\x01t\x00\x01"]`,
		"items_by_id":   `["\x01\x80\x00\x00\x00\x00\x00\x00d" "\x01\x80\x00\x00\x00\x00\x00\x00\xc8"]`,
	}
	for name, want := range wantSplits {
		if splits[name] != want {
			t.Errorf("table %s splits %s, want %s", name, splits[name], want)
		}
	}

	// Items on both sides of every split, and on the splits themselves.
	items := []struct {
		id   int64
		name string
	}{{99, "l"}, {100, "m"}, {101, "ma"}, {199, "s"}, {200, "t"}, {201, "z"}, {1, ""}}
	ins, err := en.Prepare("INSERT INTO items SET id = ?, name = ?, quantity = ?")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := ins.Exec(ctx, it.id, it.name, it.id*10); err != nil {
			t.Fatal(err)
		}
	}
	byName, err := en.Prepare("SELECT items.id, items.quantity FROM items WHERE items.name = ?")
	if err != nil {
		t.Fatal(err)
	}
	byID, err := en.Prepare("SELECT items.name, items.quantity FROM items WHERE items.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	if byName.Plan.Steps[0].Index.Name != "items_by_name" || byID.Plan.Steps[0].Index.Name != "items_by_id" {
		t.Fatalf("plans use other tables:\n%s\n%s", byName.Explain(), byID.Explain())
	}
	for _, it := range items {
		res, err := byName.Query(ctx, it.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || types.Compare(res.Values()[0][0], it.id) != 0 || types.Compare(res.Values()[0][1], it.id*10) != 0 {
			t.Errorf("name %q: rows %v", it.name, res.Values())
		}
		res, err = byID.Query(ctx, it.id)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || types.Compare(res.Values()[0][0], it.name) != 0 {
			t.Errorf("id %d: rows %v", it.id, res.Values())
		}
	}

	// A split key is the row-key prefix of the partition it names: the
	// partition starts exactly at the split.
	for _, tc := range []struct {
		table string
		split []byte
		want  int // rows from the split on
	}{
		{"items_by_name", []byte("\x01m\x00\x01"), 5},
		{"items_by_name", []byte("\x01t\x00\x01"), 2},
		{"items_by_id", []byte("\x01\x80\x00\x00\x00\x00\x00\x00d"), 5},
	} {
		var keys [][]byte
		err := st.ReadRows(ctx, tc.table, store.RowSet{Ranges: []store.Range{{Start: tc.split}}}, store.ReadOptions{}, func(r store.Row) bool {
			keys = append(keys, bytes.Clone(r.Key))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != tc.want || !bytes.HasPrefix(keys[0], tc.split) {
			t.Errorf("%s from %q: rows %q, want %d starting with the split", tc.table, tc.split, keys, tc.want)
		}
	}
}
