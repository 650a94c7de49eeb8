package catalog

import (
	"strings"
	"testing"
)

// TestLayoutsAreIndexes: each DEFINE SCHEMA of a client relation is a
// catalog index — a CF over the relation alone, partitioned by what its
// row key holds, clustered by the key attributes its cell coordinates hold
// (wide rows), with the other stored attributes as values — and the
// catalog lists it with the advised schema's indexes.
func TestLayoutsAreIndexes(t *testing.T) {
	c, err := CatalogFromScript("c.kvs", []byte(`
DEFINE RELATION ev { usr BIGINT KEY, ts BIGINT KEY, kind STRING, amount DOUBLE };
DEFINE SCHEMA ev_by_kind FOR ev { TABLE 'ev_kind', ROW ordered{kind}:ordered{amount}:ordered{usr}:ordered{ts}, FAMILY 'k' };
DEFINE PRIMARY SCHEMA ev_salted FOR ev {
  TABLE 'ev', ROW salt(4){ordered{usr}}:ordered{usr}:desc{ts}, FAMILY 'e',
  QUALIFIER attr_name['usr','ts'], VALUE attr_value['usr','ts'] };
DEFINE SCHEMA ev_wide FOR ev { TABLE 'ev_wide', ROW ordered{usr}, FAMILY 'w', QUALIFIER ordered{ts}, VALUE ordered{kind}:ordered{amount} };`))
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.WithAdvised(advised(t))
	if err != nil {
		t.Fatal(err)
	}
	names := func(as []Attr) string {
		var out []string
		for _, a := range as {
			out = append(out, a.Field.Name)
		}
		return strings.Join(out, ",")
	}
	rel := c.Relation("ev")
	want := []struct{ name, hash, order, extra string }{
		{"ev_salted", "usr,ts", "", "kind,amount"}, // the primary first
		{"ev_by_kind", "kind,amount,usr,ts", "", ""},
		{"ev_wide", "usr", "ts", "kind,amount"},
	}
	if len(rel.Indexes) != len(want) {
		t.Fatalf("%d indexes, want %d", len(rel.Indexes), len(want))
	}
	for i, w := range want {
		x := rel.Indexes[i]
		got := [4]string{x.Name, names(x.Hash), names(x.Order), names(x.Extra)}
		if got != [4]string{w.name, w.hash, w.order, w.extra} {
			t.Errorf("index %d: %q, want %+v", i, got, w)
		}
		if x.Kind != CF || x.Relation != rel || x.Layout() != c.Layout(w.name) || len(x.Graph.Nodes) != 1 || x.Graph.Nodes[0].Entity != rel.Entity {
			t.Errorf("index %s: kind %v, relation %p (want %p), layout %p (want %p), graph %v", x.Name, x.Kind, x.Relation, rel, x.Layout(), c.Layout(w.name), x.Graph.Nodes)
		}
	}
	all := c.Indexes()
	if len(all) != 4 || all[0] != rel.Indexes[0] || all[3] != c.Advised.Schema.Indexes[0] || all[3].Layout() == nil || all[3].Relation != nil {
		t.Errorf("catalog indexes: %v", all)
	}
	// A clone's indexes belong to the clone's relation; the original's are
	// untouched by definitions on the clone.
	n := c.Clone()
	if err := define(t, n, `DEFINE SCHEMA ev_more FOR ev { TABLE 'ev_more', ROW ordered{ts}:ordered{usr}:ordered{kind}:ordered{amount} }`); err != nil {
		t.Fatal(err)
	}
	if nr := n.Relation("ev"); len(nr.Indexes) != 4 || nr.Indexes[0].Relation != nr || len(rel.Indexes) != 3 || rel.Indexes[0].Relation != rel {
		t.Errorf("clone: %d indexes (relation %p, want %p); original: %d", len(nr.Indexes), nr.Indexes[0].Relation, nr, len(rel.Indexes))
	}
}
