package lang

import (
	"github.com/kvschema/kvschema/types"
	"strings"
	"testing"
)

// The advisor's inputs: statistics and foreign keys in DEFINE RELATION,
// NoSE's path notation, SQL joins, INSERT … SET … AND CONNECT TO, CONNECT
// and DEFINE WORKLOAD with statement tags.
func TestParseModelSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      Statement
		printed   string
	}{
		{
			name: "relation with statistics and a foreign key",
			src: `DEFINE RELATION items ROWS 20000 {
				id BIGINT KEY SIZE 16, name STRING SIZE 19 CARDINALITY 20000,
				seller BIGINT SIZE 16 REFERENCES users REVERSE items_sold }`,
			want: &DefineRelation{Name: "items", Rows: 20000, Attrs: []AttrDef{
				{Name: "id", Type: types.BigInt, Key: true, Size: 16},
				{Name: "name", Type: types.String, Size: 19, Cardinality: 20000},
				{Name: "seller", Type: types.BigInt, Size: 16, References: "users", Reverse: "items_sold"},
			}},
			printed: "DEFINE RELATION items ROWS 20000 {\n  id BIGINT KEY SIZE 16,\n  name STRING SIZE 19 CARDINALITY 20000,\n  seller BIGINT SIZE 16 REFERENCES users REVERSE items_sold\n}",
		},
		{
			name: "path notation with a chain in WHERE, ORDER BY and LIMIT",
			src:  `SELECT items.id, bids.* FROM items.seller WHERE seller.region.id = ? AND items.end_date >= ? ORDER BY bids.date LIMIT 25`,
			want: &Select{
				Columns:  []ColumnRef{{Qual: []string{"items"}, Name: "id"}, {Qual: []string{"bids"}, Star: true}},
				Relation: "items", Path: []string{"seller"},
				Where: and(eq(&ColumnRef{Qual: []string{"seller", "region"}, Name: "id"}, prm(0)),
					bin(OpGe, &ColumnRef{Qual: []string{"items"}, Name: "end_date"}, prm(1))),
				OrderBy: []OrderItem{{Qual: []string{"bids"}, Column: "date"}},
				Limit:   lit(int64(25)),
			},
			printed: `SELECT items.id, bids.* FROM items.seller WHERE seller.region.id = ? AND items.end_date >= ? ORDER BY bids.date LIMIT 25`,
		},
		{
			name: "SQL joins with aliases",
			src:  `SELECT i.name FROM items i JOIN bids AS b ON b.item = i.id INNER JOIN users ON b.user = users.id WHERE users.id = ?`,
			want: &Select{
				Columns:  []ColumnRef{{Qual: []string{"i"}, Name: "name"}},
				Relation: "items", Alias: "i",
				Joins: []Join{
					{Relation: "bids", Alias: "b", On: eq(&ColumnRef{Qual: []string{"b"}, Name: "item"}, &ColumnRef{Qual: []string{"i"}, Name: "id"})},
					{Relation: "users", On: eq(&ColumnRef{Qual: []string{"b"}, Name: "user"}, &ColumnRef{Qual: []string{"users"}, Name: "id"})},
				},
				Where: eq(&ColumnRef{Qual: []string{"users"}, Name: "id"}, prm(0)),
			},
			printed: `SELECT i.name FROM items AS i JOIN bids AS b ON b.item = i.id JOIN users ON b.user = users.id WHERE users.id = ?`,
		},
		{
			name: "INSERT … SET … AND CONNECT TO",
			src:  `INSERT INTO bids SET id=?, qty=?, bid=0 AND CONNECT TO item(?), user(?)`,
			want: &Insert{Relation: "bids", SetForm: true, Columns: []string{"id", "qty", "bid"},
				Rows:    [][]Expr{{prm(0), prm(1), lit(int64(0))}},
				Connect: []Connection{{FK: "item", Value: prm(2)}, {FK: "user", Value: prm(3)}}},
			printed: `INSERT INTO bids SET id = ?, qty = ?, bid = 0 AND CONNECT TO item(?), user(?)`,
		},
		{
			name:    "DISCONNECT",
			src:     `DISCONNECT items(?) FROM seller(5)`,
			want:    &Connect{Disconnect: true, Relation: "items", Key: prm(0), To: Connection{FK: "seller", Value: lit(int64(5))}},
			printed: `DISCONNECT items(?) FROM seller(5)`,
		},
		{
			name: "workload with tags on the statements' lines",
			src: `DEFINE WORKLOAD w MIXES (browsing, bidding) {
				GROUP ViewItem WEIGHTS (browsing 22.95, bidding 14) {
					SELECT items.* FROM items WHERE items.id = ?; -- 5
					SELECT bids.* FROM items.bids WHERE items.quantity = ?; --6_secondary
					-- a comment on its own line is no tag
					UPDATE items SET quantity=? WHERE items.id=?;
					CONNECT items(?) TO seller(?) -- last
				}
			}`,
			want: &DefineWorkload{Name: "w", Mixes: []string{"browsing", "bidding"}, Groups: []Group{{
				Name: "ViewItem", Weights: []MixWeight{{Mix: "browsing", Weight: 22.95}, {Mix: "bidding", Weight: 14}},
				Statements: []Tagged{
					{Tag: "5", Stmt: &Select{Columns: []ColumnRef{{Qual: []string{"items"}, Star: true}}, Relation: "items", Where: eq(&ColumnRef{Qual: []string{"items"}, Name: "id"}, prm(0))}},
					{Tag: "6_secondary", Stmt: &Select{Columns: []ColumnRef{{Qual: []string{"bids"}, Star: true}}, Relation: "items", Path: []string{"bids"}, Where: eq(&ColumnRef{Qual: []string{"items"}, Name: "quantity"}, prm(0))}},
					{Stmt: &Update{Relation: "items", Set: []Assignment{{Column: "quantity", Value: prm(0)}}, Where: eq(&ColumnRef{Qual: []string{"items"}, Name: "id"}, prm(1))}},
					{Tag: "last", Stmt: &Connect{Relation: "items", Key: prm(0), To: Connection{FK: "seller", Value: prm(1)}}},
				},
			}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStatement("m.kvs", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if !EqualIgnoringPos(got, tc.want) {
				t.Fatalf("parse differs:\n%s", diffIgnoringPos(tc.want, got))
			}
			text := Print(got)
			if tc.printed != "" && text != tc.printed {
				t.Errorf("printed\n%s\nwant\n%s", text, tc.printed)
			}
			again, err := ParseStatement("", text)
			if err != nil || !EqualIgnoringPos(again, got) {
				t.Errorf("reparse of %q: %v", text, err)
			}
		})
	}
}

func TestParseModelSyntaxErrors(t *testing.T) {
	for _, tc := range []struct{ src, pos, msg string }{
		{"DEFINE RELATION r ROWS 0 { a INT }", "1:24", "expected positive integer after ROWS, found number 0"},
		{"DEFINE RELATION r { a INT SIZE x }", "1:32", "expected positive integer after SIZE"},
		{"DEFINE RELATION r { a INT REFERENCES s REVERSE }", "1:48", "expected name of the reverse relationship, found '}'"},
		{"DEFINE RELATION r { a INT REFERENCES s(x, y) }", "1:41", "a foreign key references one attribute (composite foreign keys are not supported"},
		{"DEFINE RELATION r { a INT REFERENCES s() }", "1:40", "expected referenced attribute, found ')'"},
		{"DEFINE RELATION r { a INT KEY KEY }", "1:31", "expected ',' or '}' after attribute definition"},
		{"DEFINE WORKLOAD w MIXES () {}", "1:26", "expected mix name"},
		{"DEFINE WORKLOAD w MIXES (a) { GROUP g WEIGHTS (a x) {} }", "1:50", "expected weight (a number) after mix a"},
		{"DEFINE WORKLOAD w MIXES (a) { GROUP g WEIGHTS (a -1) {} }", "1:50", "weight -1 must be a finite number ≥ 0"},
		{"DEFINE WORKLOAD w MIXES (a) { GROUP g WEIGHTS (a 1) { DEFINE RELATION r {a INT} } }", "1:55", "expected statement (SELECT, INSERT, UPDATE, DELETE, CONNECT or DISCONNECT) or '}' in group g"},
		{"DEFINE WORKLOAD w MIXES (a) { GROUP g WEIGHTS (a 1) { SELECT * FROM r SELECT * FROM r } }", "1:71", "expected ';' or '}' after statement"},
		{"DEFINE WORKLOAD w MIXES (a) { SELECT * FROM r }", "1:31", "expected GROUP or '}' in workload"},
		{"SELECT items. FROM items", "1:15", "expected attribute name after '.'"},
		{"SELECT * FROM items.", "1:21", "expected foreign key name after '.'"},
		{"SELECT * FROM a JOIN b", "1:23", "expected ON after JOIN b"},
		{"INSERT INTO r SET a = 1 AND TO x(1)", "1:29", "expected CONNECT after AND"},
		{"CONNECT r(1) FROM s(2)", "1:14", "expected TO after CONNECT r(key)"},
		{"CONNECT r(a) TO s(2)", "1:11", "expected value"},
	} {
		_, err := ParseStatement("w.kvs", tc.src)
		if err == nil {
			t.Errorf("%s: no error", tc.src)
			continue
		}
		if want := "w.kvs:" + tc.pos + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s:\n got  %v\n want %s…%s…", tc.src, err, want, tc.msg)
		}
	}
}
