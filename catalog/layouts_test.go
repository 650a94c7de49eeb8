package catalog

import (
	"strings"
	"testing"
)

const layoutDefs = `
DEFINE RELATION r { k BIGINT KEY, v STRING };
DEFINE PRIMARY SCHEMA r_k FOR r { TABLE 'r_k', ROW ordered{k}, FAMILY 'f', QUALIFIER 'v', VALUE v };
DEFINE SCHEMA r_v FOR r { TABLE 'r_v', ROW ordered{v}:ordered{k}, FAMILY 'f', QUALIFIER '', VALUE '' };
DEFINE SCHEMA r_w FOR r { TABLE 'r_w', ROW ordered{k}, FAMILY 'g', QUALIFIER 'v', VALUE v };
`

// reopen saves c as a store would and builds the catalog back.
func reopen(t *testing.T, c *Catalog) *Catalog {
	t.Helper()
	n, err := Open(c.Stored())
	if err != nil {
		t.Fatalf("%v\n%s", err, c.Stored().Script)
	}
	return n
}

func readable(r *Relation) string {
	var out []string
	for _, x := range r.ReadIndexes() {
		out = append(out, x.Name)
	}
	return strings.Join(out, ",")
}

// TestLayoutStatesRoundTrip: the write-only and dropping states of client
// layouts are directives of the stored script, read back as they were
// saved; a catalog without them stores the script it always did.
func TestLayoutStatesRoundTrip(t *testing.T) {
	c, err := CatalogFromScript("c.kvs", []byte(layoutDefs))
	if err != nil {
		t.Fatal(err)
	}
	plain := c.Stored().Script
	if strings.Contains(plain, "-- kvschema") {
		t.Fatalf("a catalog with no layout in motion has directives:\n%s", plain)
	}
	// r_v being added, r_k being dropped (write-only), r_w dropped.
	n := c.Clone()
	for _, step := range []error{n.SetWriteOnly("R_V", true), n.SetWriteOnly("r_k", true), n.DropLayout("r_w")} {
		if step != nil {
			t.Fatal(step)
		}
	}
	if got := readable(c.Relation("r")); got != "r_k,r_v,r_w" {
		t.Fatalf("the original changed with its clone: %s", got)
	}
	script := n.Stored().Script
	for _, want := range []string{WriteOnlyLayoutsDirective + "r_k, r_v\n", DroppingLayoutsDirective + "r_w\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("stored script lacks %q:\n%s", want, script)
		}
	}
	back := reopen(t, n)
	r := back.Relation("r")
	if len(r.Indexes) != 2 || readable(r) != "" || r.KeyIndex() != nil {
		t.Errorf("reopened: %d layouts, readable %q, key index %v", len(r.Indexes), readable(r), r.KeyIndex())
	}
	if got := back.WriteOnlyLayouts(); strings.Join(got, ",") != "r_k,r_v" {
		t.Errorf("write-only layouts %v", got)
	}
	if l := back.DroppingLayout("R_W"); l == nil || l.StaticTable() != "r_w" || back.Layout("r_w") != nil || len(back.Dropping()) != 1 {
		t.Errorf("dropping layout r_w: %v, as a layout: %v", l, back.Layout("r_w"))
	}
	if back.Stored().Script != script {
		t.Errorf("saved again, the script changed:\n%s\nthen\n%s", script, back.Stored().Script)
	}
	// A dropping layout keeps its name and its table and family taken.
	for _, def := range []string{
		"DEFINE SCHEMA r_w FOR r { TABLE 'x', ROW ordered{k}, FAMILY 'g', QUALIFIER 'v', VALUE v }",
		"DEFINE SCHEMA r_x FOR r { TABLE 'r_w', ROW ordered{k}, FAMILY 'g', QUALIFIER 'v', VALUE v }",
	} {
		d, err := CatalogFromScript("d.kvs", []byte(layoutDefs[:strings.Index(layoutDefs, "DEFINE PRIMARY")]+def))
		if err != nil {
			t.Fatal(err)
		}
		if err := back.Clone().Define(d.Defs[1]); err == nil || !strings.Contains(err.Error(), "being dropped") {
			t.Errorf("%s over dropping r_w: %v", def, err)
		}
	}
	// Readable again, forgotten: the plain script.
	done := back.Clone()
	if err := done.SetWriteOnly("r_v", false); err != nil {
		t.Fatal(err)
	}
	if err := done.DropLayout("r_k"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r_w", "r_k"} {
		if err := done.ForgetDropped(name); err != nil {
			t.Fatal(err)
		}
	}
	if err := done.ForgetDropped("r_k"); err == nil {
		t.Error("forgot a layout twice")
	}
	got := reopen(t, done)
	if readable(got.Relation("r")) != "r_v" || strings.Contains(got.Stored().Script, "-- kvschema") || got.Layout("r_k") != nil {
		t.Errorf("after the drops:\n%s", got.Stored().Script)
	}
	want, err := CatalogFromScript("w.kvs", []byte(`
DEFINE RELATION r { k BIGINT KEY, v STRING };
DEFINE SCHEMA r_v FOR r { TABLE 'r_v', ROW ordered{v}:ordered{k}, FAMILY 'f', QUALIFIER '', VALUE '' };`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Stored().Script != want.Stored().Script {
		t.Errorf("script\n%s\nwant\n%s", got.Stored().Script, want.Stored().Script)
	}
}

// TestLayoutStatesBadDirectives: a directive naming no layout is an error
// with the script's line.
func TestLayoutStatesBadDirectives(t *testing.T) {
	c, err := CatalogFromScript("c.kvs", []byte(layoutDefs))
	if err != nil {
		t.Fatal(err)
	}
	base := c.Stored().Script
	for _, tc := range []struct{ directive, want string }{
		{WriteOnlyLayoutsDirective + "r_k, nope\n", "definitions (stored):1: the write-only directive: no schema nope"},
		{DroppingLayoutsDirective + "gone\n", "definitions (stored):1: the dropping directive names gone, which the script does not define"},
	} {
		_, err := Open(Stored{Script: tc.directive + base})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want …%s…", tc.directive, err, tc.want)
		}
	}
}
