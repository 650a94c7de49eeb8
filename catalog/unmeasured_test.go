package catalog

import (
	"strings"
	"testing"

	"github.com/kvschema/kvschema/lang"
)

// TestUnmeasured: a model without statistics, which Build refuses, builds
// unmeasured with Build's columns, keys and navigations; a fault other
// than statistics is still an error.
func TestUnmeasured(t *testing.T) {
	const src = `CREATE TABLE users (id bigint PRIMARY KEY, name text);
CREATE TABLE items (id bigint PRIMARY KEY, seller bigint REFERENCES users, price real);`
	ss, _, err := lang.ParseModel("shop.sql", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ss); err == nil || !strings.Contains(err.Error(), "ROWS missing") {
		t.Fatalf("Build: %v, want ROWS missing", err)
	}
	m, err := Unmeasured(ss)
	if err != nil {
		t.Fatal(err)
	}
	items := m.Entity("items")
	if items.Count != 0 || items.ID().Name != "id" || len(items.Columns) != 3 || items.Columns[1].Nav == nil || items.Columns[1].Nav.To != m.Entity("users") {
		t.Fatalf("items: count %v, columns %+v", items.Count, items.Columns)
	}
	bad, _, err := lang.ParseModel("bad.sql", []byte(`CREATE TABLE t (a bigint, b bigint, PRIMARY KEY (a, b));`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmeasured(bad); err == nil || !strings.Contains(err.Error(), "exactly one key attribute") {
		t.Fatalf("Unmeasured of a composite key: %v", err)
	}
}
