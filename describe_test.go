package kvschema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
)

// TestDescribe: SHOW TABLES' list and DESCRIBE's text cover both kinds of
// definitions in one store, each object once, and what Describe prints can
// be given to a store again.
func TestDescribe(t *testing.T) {
	ctx := context.Background()
	db := advisedDB(t)
	if err := db.Script(ctx, "client.kvs", []byte(`
DEFINE RELATION accounts { id BIGINT KEY, owner STRING };
DEFINE PRIMARY SCHEMA accounts_by_id FOR accounts { TABLE 'acc', ROW salt(4){ordered{id}}:ordered{id}, VALUE owner };
`), nil); err != nil {
		t.Fatal(err)
	}
	objs, err := db.Objects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]kvschema.Object{}
	for _, o := range objs {
		if _, dup := kinds[strings.ToLower(o.Name)]; dup {
			t.Errorf("%s listed twice", o.Name)
		}
		kinds[strings.ToLower(o.Name)] = o
	}
	for name, want := range map[string]kvschema.Object{
		"accounts":              {Name: "accounts", Kind: "RELATION"},
		"accounts_by_id":        {Name: "accounts_by_id", Kind: "SCHEMA", Of: "accounts", Table: "acc"},
		"items":                 {Name: "items", Kind: "RELATION", Advised: true},
		"cf_buynow_items_by_id": {Name: "cf_buynow_items_by_id", Kind: "COLUMN FAMILY", Of: "buynow", Table: "cf_buynow_items_by_id", Advised: true},
	} {
		if got := kinds[name]; got != want {
			t.Errorf("%s: listed as %+v, want %+v", name, got, want)
		}
	}
	if objs[0].Kind != "RELATION" || objs[len(objs)-1].Kind == "RELATION" {
		t.Errorf("relations do not come first: %+v", objs)
	}

	for _, tc := range []struct {
		name  string
		frags []string
	}{
		{"ACCOUNTS", []string{"DEFINE RELATION accounts {", "-- layout of accounts in table acc, 4 salt buckets\nDEFINE PRIMARY SCHEMA accounts_by_id FOR accounts {"}},
		{"accounts_by_id", []string{"-- layout of accounts in table acc, 4 salt buckets\nDEFINE PRIMARY SCHEMA accounts_by_id"}},
		{"items", []string{"DEFINE RELATION items ROWS 20000 {", "-- column family in table cf_items_by_id: CF([items.id] [] → [", "DEFINE COLUMN FAMILY cf_items_by_id FOR items {"}},
		{"cf_buynow_items_by_id", []string{"-- column family in table cf_buynow_items_by_id: CF(", "DEFINE COLUMN FAMILY cf_buynow_items_by_id FOR buynow {"}},
		{"si_items_by_quantity", []string{"-- secondary index kept by the store in table cf_items_by_id (a local index: its entries are written with the rows, read with them in one call): SI([items.quantity] → [", "DEFINE SECONDARY INDEX si_items_by_quantity ON cf_items_by_id (items.quantity);"}},
		{"schema", []string{"DEFINE RELATION accounts {", "-- the advised schema", "DEFINE COLUMN FAMILY cf_buynow_items_by_id"}},
	} {
		text, err := db.Describe(ctx, tc.name)
		if err != nil {
			t.Fatalf("Describe(%s): %v", tc.name, err)
		}
		for _, f := range tc.frags {
			if !strings.Contains(text, f) {
				t.Errorf("Describe(%s) lacks %q:\n%s", tc.name, f, text)
			}
		}
	}
	// A client relation's description defines it again in another store.
	text, err := db.Describe(ctx, "accounts")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Script(ctx, "described.kvs", []byte(text), nil); err != nil {
		t.Fatalf("the description does not run: %v\n%s", err, text)
	}
	if _, err := db.Describe(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "no relation, schema, column family or index is named nope") {
		t.Errorf("unknown name: %v", err)
	}
}

// TestDescribePartitionBuckets: DESCRIBE of a column family with partition
// buckets says how many, and what a partition read costs, and prints the
// option back.
func TestDescribePartitionBuckets(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	model := `DEFINE RELATION rooms ROWS 10 { id BIGINT KEY };
DEFINE RELATION messages ROWS 1000 { id BIGINT KEY, body STRING, room BIGINT REFERENCES rooms REVERSE messages };`
	schema := `DEFINE COLUMN FAMILY by_room FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.id), VALUES (rooms.messages.body), PARTITION_BUCKETS = 8 };`
	if _, err := db.Deploy(ctx, "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	got, err := db.Describe(ctx, "by_room")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"each partition spread over 8 buckets (a read of one reads 8)", "PARTITION_BUCKETS = 8"} {
		if !strings.Contains(got, want) {
			t.Errorf("DESCRIBE by_room lacks %q:\n%s", want, got)
		}
	}
}
