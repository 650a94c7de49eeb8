package planner_test

import (
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/planner"
)

// TestCondReadOneStep: a conditional write's read of its tuple
// (catalog.Model.CondQuery) is planned as one read of a column family of
// the entity alone keyed by its key that holds the compared fields, never
// through another structure that answers the same query (a family keyed by
// nick, reached through a secondary index on the key), which the runtime
// could not read it from.
func TestCondReadOneStep(t *testing.T) {
	const src = `DEFINE RELATION users ROWS 100 { id BIGINT KEY, nick STRING CARDINALITY 100, karma BIGINT CARDINALITY 10 };
DEFINE RELATION posts ROWS 1000 { id BIGINT KEY, body STRING CARDINALITY 1000, author BIGINT REFERENCES users REVERSE posts };
DEFINE COLUMN FAMILY posts_by_author FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.posts.id), VALUES (users.karma, users.posts.body) };
DEFINE COLUMN FAMILY users_nick FOR users { PARTITION KEY (users.id), VALUES (users.nick) };
DEFINE COLUMN FAMILY users_karma FOR users { PARTITION KEY (users.id), VALUES (users.karma, users.nick) };
DEFINE COLUMN FAMILY users_by_nick FOR users { PARTITION KEY (users.nick), CLUSTERING KEY (users.id), VALUES (users.karma) };
DEFINE SECONDARY INDEX users_by_nick_id ON users_by_nick (users.id);`
	s, q := condSetup(t, src, "UPDATE users SET nick = 'x' WHERE users.id = 1 IF users.karma = 3")
	byName := map[string]*catalog.Index{}
	for _, x := range s.Indexes {
		byName[x.Name] = x
	}
	for _, tc := range []struct {
		pool []string
		want string // the one index read; "" for no plan
	}{
		{[]string{"posts_by_author", "users_nick", "users_karma"}, "users_karma"},
		{[]string{"posts_by_author", "users_nick", "users_by_nick", "users_by_nick_id"}, ""},
	} {
		var xs []*catalog.Index
		for _, n := range tc.pool {
			xs = append(xs, byName[n])
		}
		p := planner.Build(q, cost.Cassandra, planner.NewPool(xs)).Cheapest()
		switch {
		case tc.want == "" && p != nil:
			t.Errorf("pool %v: planned over %s; want no plan", tc.pool, p.Steps[0].Index.Name)
		case tc.want != "" && (p == nil || len(p.Steps) != 1 || p.Steps[0].Index.Name != tc.want):
			t.Errorf("pool %v: %v; want one read of %s", tc.pool, p, tc.want)
		}
		// The same query as an ordinary one can be answered from the
		// posts family: the restriction is the condition's.
		plain := *q
		plain.CondOf = nil
		if tc.want == "" && planner.Build(&plain, cost.Cassandra, planner.NewPool(xs)).Cheapest() == nil {
			t.Errorf("pool %v: not even the plain query has a plan: the case tests nothing", tc.pool)
		}
	}
}

// TestCondReadMissing: a schema without a family to read a conditional
// write's tuple from says which one the write needs.
func TestCondReadMissing(t *testing.T) {
	const src = `DEFINE RELATION users ROWS 100 { id BIGINT KEY, nick STRING CARDINALITY 100, karma BIGINT CARDINALITY 10 };
DEFINE COLUMN FAMILY users_nick FOR users { PARTITION KEY (users.id), VALUES (users.nick) };`
	s, q := condSetup(t, src, "UPDATE users SET nick = 'x' WHERE users.id = 1 IF users.karma = 3")
	_, err := planner.New(s, cost.Cassandra).Query(q)
	if want := "one column family of users alone, partitioned by users.id alone, holding users.karma"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want …%s…", err, want)
	}
}

// condSetup parses a model with its schema, and returns the read the
// conditional write src makes of its tuple (catalog.Model.CondQuery).
func condSetup(t *testing.T, schemaSrc, src string) (*catalog.Schema, *catalog.Query) {
	t.Helper()
	stmts, err := lang.ParseScript("s.kvs", []byte(schemaSrc))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	st, err := lang.ParseStatement("w", src)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.ResolveWrite(st)
	if err != nil {
		t.Fatal(err)
	}
	q, err := m.CondQuery(w)
	if err != nil {
		t.Fatal(err)
	}
	return s, q
}
