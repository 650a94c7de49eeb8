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

// TestOneReadingOfDefineRelation: the client's relations and the advisor's
// model read DEFINE RELATION with one reader: the same attributes, key
// and errors; a client relation may have a composite key and no
// statistics, and its REFERENCES attribute is a plain attribute, where the
// advisor needs one key and ROWS, and makes a foreign key a navigation.
func TestOneReadingOfDefineRelation(t *testing.T) {
	src := `DEFINE RELATION users ROWS 10 { id BIGINT KEY, name STRING SIZE 12 };
DEFINE RELATION bids ROWS 100 { id BIGINT KEY, amount DOUBLE, bidder BIGINT REFERENCES users REVERSE bids };`
	stmts, err := lang.ParseScript("m.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog()
	for _, st := range stmts {
		if err := c.Define(st); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"users", "bids"} {
		me, ce := m.Entity(name), c.Relation(name).Entity
		if me.ID() == nil || ce.ID() == nil || me.ID().Name != ce.ID().Name || me.Count != ce.Count {
			t.Errorf("%s: model key %v count %v, client key %v count %v", name, me.Key, me.Count, ce.Key, ce.Count)
		}
	}
	if n := m.Entity("bids").Nav("bidder"); n == nil || n.To != m.Entity("users") {
		t.Errorf("the model's bids.bidder is no navigation: %v", n)
	}
	if f := c.Relation("bids").Entity.Field("bidder"); f == nil || f.Type.String() != "BIGINT" {
		t.Errorf("the client's bids.bidder is no plain attribute: %v", f)
	}

	// A composite key and no statistics: a client relation, not a model's.
	comp := `DEFINE RELATION ev { grp BIGINT KEY, seq BIGINT KEY, val STRING };`
	cs, err := lang.ParseScript("c.kvs", []byte(comp))
	if err != nil {
		t.Fatal(err)
	}
	c = NewCatalog()
	if err := c.Define(cs[0]); err != nil {
		t.Fatal(err)
	}
	if e := c.Relation("ev").Entity; len(e.Key) != 2 || e.ID() != nil || e.Count != 0 {
		t.Errorf("composite key: %v, ID %v, count %v", e.Key, e.ID(), e.Count)
	}
	if _, err := Build(cs); err == nil || !strings.Contains(err.Error(), "relation ev needs its row count for the advisor") {
		t.Errorf("Build without ROWS: %v", err)
	}
	cs, _ = lang.ParseScript("c.kvs", []byte(`DEFINE RELATION ev ROWS 5 { grp BIGINT KEY, seq BIGINT KEY };`))
	if _, err := Build(cs); err == nil || !strings.HasPrefix(err.Error(), "c.kvs:1:45: relation ev: the advisor needs exactly one key attribute (found grp and seq: a composite key") {
		t.Errorf("Build with a composite key: %v", err)
	}
	// The same errors for both readers.
	bad := `DEFINE RELATION r ROWS 1 { k BIGINT KEY, K STRING };`
	bs, _ := lang.ParseScript("b.kvs", []byte(bad))
	_, merr := Build(bs)
	cerr := NewCatalog().Define(bs[0])
	if merr == nil || cerr == nil || merr.Error() != cerr.Error() {
		t.Errorf("one error for both readers: model %v, client %v", merr, cerr)
	}
}
