package lang

import (
	"errors"
	"strings"
	"testing"
)

// The repro of the dotted-name collision: the quoted attribute
// "seller.rating" of items and the path items.seller.rating (the rating of
// the user seller references) named the same thing.
const (
	dottedModel = `DEFINE RELATION users ROWS 10 { id BIGINT KEY, rating BIGINT CARDINALITY 10 };
DEFINE RELATION items ROWS 10 { id BIGINT KEY, "seller.rating" BIGINT CARDINALITY 10, seller BIGINT REFERENCES users REVERSE items_sold };
`
	dottedSchema = dottedModel + `DEFINE COLUMN FAMILY items_cf FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items.seller.id), VALUES (items."seller.rating", items.seller.rating) };
`
)

// A definition cannot give a relation, attribute, relationship, column
// family or index a name holding '.', the separator of path notation: the
// error names the identifier, its position and why.
func TestDottedNamesRejected(t *testing.T) {
	for _, tc := range []struct {
		name, src, pos, msg string
	}{
		{"repro model", dottedModel, "2:48",
			`attribute name "seller.rating" cannot contain '.': a '.' separates the steps of a path (relation.reference.attribute), so the name would be ambiguous; rename it (e.g. seller_rating)`},
		{"repro schema", dottedSchema, "2:48", `attribute name "seller.rating" cannot contain '.'`},
		{"relation", `DEFINE RELATION "a.b" { id INT KEY }`, "1:17", `relation name "a.b" cannot contain '.'`},
		{"referenced relation", "DEFINE RELATION a {\n  id INT KEY,\n  u INT REFERENCES \"us.ers\" REVERSE a_s }", "3:20", `referenced relation "us.ers" cannot contain '.'`},
		{"reverse relationship", "DEFINE RELATION a { id INT KEY, u INT REFERENCES users REVERSE \"a.s\" }", "1:64", `name of the reverse relationship "a.s" cannot contain '.'`},
		{"leading dot", `DEFINE RELATION a { ".id" INT KEY }`, "1:21", `attribute name ".id" cannot contain '.'`},
		{"column family", `DEFINE COLUMN FAMILY "cf.x" FOR items { PARTITION KEY (items.id) }`, "1:22", `column family name "cf.x" cannot contain '.'`},
		{"column family relation", `DEFINE COLUMN FAMILY cf FOR "it.ems" { PARTITION KEY (items.id) }`, "1:29", `relation name "it.ems" cannot contain '.'`},
		{"column family path step", "DEFINE COLUMN FAMILY cf FOR items {\n  PARTITION KEY (items.id),\n  VALUES (items.\"seller.rating\") }", "3:17", `attribute name "seller.rating" cannot contain '.'`},
		{"column family path root", `DEFINE COLUMN FAMILY cf FOR items { PARTITION KEY ("it.ems".id) }`, "1:52", `relation name "it.ems" cannot contain '.'`},
		{"column family clustering step", `DEFINE COLUMN FAMILY cf FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items."sel.ler".id) }`, "1:85", `reference name "sel.ler" cannot contain '.'`},
		{"index", `DEFINE SECONDARY INDEX "i.x" ON cf (items.name)`, "1:24", `index name "i.x" cannot contain '.'`},
		{"index family", `DEFINE SECONDARY INDEX i ON "c.f" (items.name)`, "1:29", `column family name "c.f" cannot contain '.'`},
		{"index attribute", `DEFINE SECONDARY INDEX i ON cf (items."na.me")`, "1:39", `attribute name "na.me" cannot contain '.'`},
		{"schema relation", `DEFINE SCHEMA s FOR "r.x" { ROW a }`, "1:21", `relation name "r.x" cannot contain '.'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := ParseScript("bad.kvs", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; parsed %s", PrintScript(ss))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if want := "bad.kvs:" + tc.pos + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("got  %v\nwant %s…%s…", err, want, tc.msg)
			}
		})
	}
}

// Names that only refer to things, and names that never become part of a
// path, may still hold a '.': they can name nothing a definition made, and
// fail later, at resolution.
func TestDottedNamesElsewhere(t *testing.T) {
	for _, src := range []string{
		`SELECT "a.b" FROM r WHERE "x.y".c = 1`,
		`INSERT INTO r ("a.b") VALUES (1)`,
		`DEFINE SCHEMA "s.1" FOR r { ROW "a.b" }`,
		`DEFINE WORKLOAD "w.1" MIXES ("m.1") { GROUP "g.1" WEIGHTS ("m.1" 1) { SELECT * FROM r } }`,
	} {
		if _, err := ParseScript("ok.kvs", []byte(src)); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// CheckDefName is the rule itself, for definitions built without the parser.
func TestCheckDefName(t *testing.T) {
	at := Pos{File: "m.kvs", Line: 4, Col: 9}
	if err := CheckDefName(at, "attribute name", "seller_rating"); err != nil {
		t.Fatalf("plain name refused: %v", err)
	}
	err := CheckDefName(at, "attribute name", "seller.rating")
	if err == nil || err.Pos != at || !strings.HasPrefix(err.Error(), `m.kvs:4:9: attribute name "seller.rating" cannot contain '.'`) {
		t.Fatalf("got %v", err)
	}
}
