package catalog

import (
	"strings"
	"testing"

	"github.com/kvschema/kvschema/lang"
)

const testModel = `
DEFINE RELATION regions2 ROWS 5 { id BIGINT KEY, name STRING };
DEFINE RELATION users ROWS 100 { id BIGINT KEY, rating BIGINT CARDINALITY 10, region2 BIGINT REFERENCES regions2 REVERSE users };
DEFINE RELATION items ROWS 1000 { id BIGINT KEY, end_date TIMESTAMP, seller BIGINT REFERENCES users REVERSE items_sold };
`

func build(t *testing.T) *Model {
	t.Helper()
	return buildModel(t, "m.kvs", testModel)
}

func resolve(t *testing.T, m *Model, src string) *Query {
	t.Helper()
	st, err := lang.ParseStatement("q", src)
	if err != nil {
		t.Fatal(err)
	}
	q, err := m.ResolveSelect(st.(*lang.Select))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// NoSE treats != as =, collapses two predicates on one field and rejects
// digits in names; kvschema keeps each predicate as written.
func TestPredicatesAsWritten(t *testing.T) {
	m := build(t)
	q := resolve(t, m, "SELECT items.id FROM items.seller.region2 WHERE region2.id = ? AND seller.rating != 3 AND items.end_date > ? AND items.end_date <= ?")
	var ops []Op
	for _, p := range q.Preds {
		ops = append(ops, p.Op)
	}
	if want := []Op{Eq, Ne, Gt, Le}; len(ops) != 4 || ops[0] != want[0] || ops[1] != want[1] || ops[2] != want[2] || ops[3] != want[3] {
		t.Fatalf("predicates %v, want %v", ops, want)
	}
	if q.Preds[2].Ref != q.Preds[3].Ref {
		t.Errorf("both end_date bounds should name the same field")
	}
	if got := q.Graph.Describe(2); got != "items.seller.region2" {
		t.Errorf("node 2 is %s", got)
	}
}

// A path, a chain in WHERE and SQL joins along the same foreign keys give
// the same query graph.
func TestPathAndJoinSameGraph(t *testing.T) {
	m := build(t)
	shape := func(q *Query) []string {
		var out []string
		for n := range q.Graph.Nodes {
			out = append(out, q.Graph.Nodes[n].Entity.Name)
		}
		for _, p := range q.Preds {
			out = append(out, q.Graph.Nodes[p.Ref.Node].Entity.Name+"."+p.Ref.Field.Name+p.Op.String())
		}
		for _, r := range q.Select {
			out = append(out, q.Graph.Nodes[r.Node].Entity.Name+"."+r.Field.Name)
		}
		return out
	}
	path := resolve(t, m, "SELECT items.id, seller.rating FROM items.seller WHERE seller.region2.id = ?")
	join := resolve(t, m, "SELECT i.id, u.rating FROM items i JOIN users u ON i.seller = u.id JOIN regions2 r ON u.region2 = r.id WHERE r.id = ?")
	reverse := resolve(t, m, "SELECT i.id, u.rating FROM regions2 r JOIN users u ON u.region2 = r.id JOIN items i ON i.seller = u.id WHERE r.id = ?")
	a, b, c := shape(path), shape(join), shape(reverse)
	if len(a) != len(b) || len(a) != len(c) {
		t.Fatalf("path %v\njoin %v\nreverse %v", a, b, c)
	}
	count := func(xs []string) map[string]int {
		m := map[string]int{}
		for _, x := range xs {
			m[x]++
		}
		return m
	}
	ca, cb, cc := count(a), count(b), count(c)
	for k, v := range ca {
		if cb[k] != v || cc[k] != v {
			t.Fatalf("graphs differ at %s:\npath %v\njoin %v\nreverse %v", k, a, b, c)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	m := build(t)
	for _, tc := range []struct{ src, want string }{
		{"SELECT items.id FROM items JOIN users ON items.id = users.id WHERE items.id = ?", "q:1:42: JOIN users ON items.id = users.id does not follow a declared foreign key"},
		{"SELECT id FROM items JOIN users ON items.seller = users.id WHERE id = ?", "q:1:8: id is ambiguous"},
		{"SELECT items.id FROM items WHERE items.seller.nope = ?", "q:1:34: relation users has no attribute nope"},
		{"SELECT items.id FROM items WHERE items.id = ? LIMIT ?", "q:1:53: LIMIT must be a constant"},
	} {
		st, err := lang.ParseStatement("q", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.ResolveSelect(st.(*lang.Select))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}

// TestParamsAndColumns: each `?` maps to the predicate it stands in (a
// literal takes none), and fields map to their column in declaration order.
func TestParamsAndColumns(t *testing.T) {
	m := build(t)
	q := resolve(t, m, "SELECT items.id FROM items.seller WHERE seller.rating != 3 AND items.end_date > ? AND seller.id = ?")
	ps := q.Params()
	if len(ps) != 2 || ps[0] != &q.Preds[1] || ps[1] != &q.Preds[2] {
		t.Fatalf("Params() = %v, preds %v", ps, q.Preds)
	}
	users := m.Entity("users")
	if got := users.Column(users.Field("rating")); got != 1 {
		t.Errorf("users.rating is column %d, want 1", got)
	}
	if got := users.Column(m.Entity("items").Field("id")); got != -1 {
		t.Errorf("items.id in users: column %d, want -1", got)
	}
	if got := users.Column(nil); got != -1 {
		t.Errorf("nil field: column %d", got)
	}
}

// Names are case-insensitive, as in SQL and the client's relations: any
// spelling resolves to the declared names, and names differing only in
// case clash.
func TestNamesCaseInsensitive(t *testing.T) {
	m := build(t)
	want := resolve(t, m, "SELECT i.id, u.rating FROM items i JOIN users u ON i.seller = u.id WHERE u.region2.id = ? AND i.end_date > ?")
	for _, src := range []string{
		"SELECT I.ID, U.Rating FROM Items I JOIN USERS u ON i.Seller = U.id WHERE u.REGION2.Id = ? AND I.End_Date > ?",
		"select i.Id, u.RATING from ITEMS i join users U on I.SELLER = u.ID where U.region2.ID = ? and i.END_DATE > ?",
	} {
		got := resolve(t, m, src)
		shape := func(q *Query) string {
			var b strings.Builder
			for n := range q.Graph.Nodes {
				b.WriteString(q.Graph.Describe(n) + ";")
			}
			for _, p := range q.Preds {
				b.WriteString(q.Graph.DescribeRef(p.Ref) + p.Op.String() + ";")
			}
			return b.String()
		}
		if shape(got) != shape(want) || len(got.Select) != len(want.Select) {
			t.Fatalf("%s:\n%s\nwant\n%s", src, shape(got), shape(want))
		}
		for i := range got.Select {
			if got.Select[i].Field != want.Select[i].Field {
				t.Fatalf("%s: column %d is %s, want %s", src, i, got.Select[i].Field, want.Select[i].Field)
			}
		}
	}
	if e := m.Entity("USERS"); e == nil || e.Name != "users" || e.Field("Rating") == nil || e.Nav("Items_Sold") == nil {
		t.Fatalf("lookups by other spellings fail: %v", e)
	}
	for src, msg := range map[string]string{
		`DEFINE RELATION a ROWS 1 { id BIGINT KEY }; DEFINE RELATION A ROWS 1 { id BIGINT KEY };`:                                              "relation A is defined twice",
		`DEFINE RELATION a ROWS 1 { id BIGINT KEY, x BIGINT, X STRING };`:                                                                      "attribute X is declared twice",
		`DEFINE RELATION a ROWS 1 { id BIGINT KEY, b BIGINT REFERENCES b REVERSE As }; DEFINE RELATION b ROWS 1 { id BIGINT KEY, AS BIGINT };`: "already has an attribute or relationship named As",
	} {
		ss, err := lang.ParseScript("m.kvs", []byte(src))
		if err == nil {
			_, err = Build(ss)
		}
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", src, err, msg)
		}
	}
}

// TestConditionalModelWrites: a model's writes may be conditional on the
// one tuple they name — INSERT … IF NOT EXISTS, or an UPDATE or DELETE
// whose WHERE fixes the key, IF EXISTS or IF comparisons of its fields —
// with Key the expression of that tuple's key; other conditions are
// refused where they are.
func TestConditionalModelWrites(t *testing.T) {
	m := build(t)
	for _, tc := range []struct {
		src  string
		cond WriteCond
		key  string
	}{
		{"INSERT INTO users (id, rating) VALUES (?, 2) IF NOT EXISTS", IfNotExists, "?"},
		{"UPDATE users SET rating = 3 WHERE users.rating = 1 AND users.id = 4 IF EXISTS", IfExists, "4"},
		{"DELETE FROM users WHERE users.id = ? IF EXISTS", IfExists, "?"},
		{"DELETE FROM users WHERE users.id = ?", Unconditional, ""},
		{"DELETE FROM users WHERE users.id = ? IF users.rating >= ? AND users.rating < 9", IfValues, "?"},
	} {
		st, err := lang.ParseStatement("q", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		w, err := m.ResolveWrite(st)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		key := ""
		if w.Key != nil {
			key = lang.PrintExpr(w.Key)
		}
		if w.Cond != tc.cond || key != tc.key {
			t.Errorf("%s: condition %v on key %q, want %v on %q", tc.src, w.Cond, key, tc.cond, tc.key)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"UPDATE users SET rating = 3 WHERE users.rating = 1 IF EXISTS", "q:1:52: a conditional write names one tuple: the WHERE must fix users.id by equality"},
		{"DELETE FROM users WHERE users.id = 1 IF users.region2.name = 'x'", "q:1:38: a write's condition may only name attributes of users"},
		{"DELETE FROM users WHERE users.id = 1 IF users.rating = 2 OR users.rating = 3", "q:1:41: the IF condition of a write on a model's relation must be a conjunction"},
	} {
		st, err := lang.ParseStatement("q", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err = m.ResolveWrite(st); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}
