package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store/memstore"
)

const (
	advModel  = `DEFINE RELATION items ROWS 100 { id BIGINT KEY, name STRING CARDINALITY 100 };`
	advSchema = `DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.name) };`
)

func advised(t *testing.T) *Advised {
	t.Helper()
	a, err := ParseAdvised("m.kvs", []byte(advModel), "s.kvs", []byte(advSchema), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func define(t *testing.T, c *Catalog, src string) error {
	t.Helper()
	st, err := lang.ParseStatement("d.kvs", src)
	if err != nil {
		t.Fatal(err)
	}
	return c.Define(st)
}

// TestOneCatalog: a store's one catalog holds client relations and an
// advised schema, survives the round trip through the store, and keeps
// every name with one owner whichever side is defined first.
func TestOneCatalog(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	c, err := CatalogFromScript("c.kvs", []byte(`DEFINE RELATION r { k STRING KEY, v BIGINT };
DEFINE PRIMARY SCHEMA r_main FOR r { TABLE 'r_main', ROW ordered{k}, VALUE ordered{v} };`))
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.WithAdvised(advised(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Save(ctx, st, 0, c.Stored()); err != nil {
		t.Fatal(err)
	}
	v, stored, err := Load(ctx, st)
	if err != nil || v != 1 {
		t.Fatalf("load: %d %v", v, err)
	}
	got, err := Open(stored)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stored() != c.Stored() {
		t.Errorf("round trip changed the catalog:\n%+v\n%+v", got.Stored(), c.Stored())
	}
	if rel, ent := got.Owner("R"); rel == nil || ent != nil {
		t.Errorf("owner of r: %v %v", rel, ent)
	}
	if rel, ent := got.Owner("ITEMS"); rel != nil || ent == nil || ent.Name != "items" {
		t.Errorf("owner of items: %v %v", rel, ent)
	}
	if got.Advised.Profile != cost.Cassandra || !got.Advised.Same(c.Advised) {
		t.Errorf("advised schema after the round trip: %+v", got.Advised.Profile)
	}

	// Client definitions after the deployment.
	before := got.Stored()
	for _, tc := range []struct{ src, want string }{
		{`DEFINE RELATION Items { id BIGINT KEY }`, "d.kvs:1:1: relation Items is defined by the advised schema deployed in this store (as items)"},
		{`DEFINE SCHEMA r_cf FOR r { TABLE 'items_by_id', ROW ordered{k}, VALUE ordered{v} }`, `d.kvs:1:1: schema r_cf: table "items_by_id" holds column family items_by_id of the advised schema`},
		// A table named from the tuple could be the column family's.
		{`DEFINE SCHEMA r_dyn FOR r { TABLE prefix('items_'){k}, ROW ordered{k}, VALUE ordered{v} }`, `d.kvs:1:1: schema r_dyn: table "items_by_id" holds column family items_by_id`},
		{`DEFINE SCHEMA r_rows FOR r { TABLE prefix('rows_'){k}, ROW ordered{k}, VALUE ordered{v} }`, ""},
	} {
		err := define(t, got, tc.src)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.src, err, tc.want)
		}
	}
	if got.Stored().Script == before.Script {
		t.Error("the accepted definition was not applied")
	}

	// The advised schema after client definitions that take its names.
	for _, tc := range []struct{ script, want string }{
		{`DEFINE RELATION items { id BIGINT KEY };`, "m.kvs:1:1: relation items is already defined in this store by DEFINE RELATION"},
		{`DEFINE RELATION r { k STRING KEY };
DEFINE SCHEMA r_cf FOR r { TABLE prefix('items_by_'){k}, ROW ordered{k} };`, `column family items_by_id of the advised schema would use table "items_by_id", which schema r_cf (DEFINE SCHEMA) uses`},
	} {
		c, err := CatalogFromScript("c.kvs", []byte(tc.script))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WithAdvised(advised(t)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.script, err, tc.want)
		}
		// A stored version holding both (written by hand, or by an earlier
		// kvschema) is refused on opening, not half-read.
		pj, _ := json.Marshal(cost.Cassandra)
		if _, err := Open(Stored{Script: tc.script, Model: advModel, Schema: advSchema, Profile: string(pj)}); err == nil {
			t.Errorf("%s: a stored version with a name of both kinds opened", tc.script)
		}
	}
}
