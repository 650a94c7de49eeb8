package advisor

import (
	"context"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
)

// TestChatElementIndex advises the chat example with a query for the
// messages holding a tag, across rooms (CONTAINS alone): for a target that
// keeps local indexes the optimum reads it through an index on the tags'
// elements, whose base is a column family of messages by key; for one that
// keeps none (Bigtable), the query has no plan, and the error says why.
func TestChatElementIndex(t *testing.T) {
	needCBC(t)
	model, wl := readChat(t)
	const tagged = "    SELECT messages.id, messages.body FROM messages WHERE messages.tags CONTAINS ?; -- any tagged\n"
	src := strings.Replace(wl, "  GROUP Post", "  GROUP Tags WEIGHTS (chat 10) {\n"+tagged+"  }\n  GROUP Post", 1)
	if src == wl {
		t.Fatal("the chat workload changed: no GROUP Post")
	}
	m, w := parse(t, model, src)
	for _, prof := range []cost.Profile{cost.Cassandra, cost.Pebble} {
		res, err := Advise(context.Background(), m, w, Options{Mix: "chat", Profile: prof, Solver: &solver.CBC{}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, q := range res.Queries {
			if q.Statement.Tag != "any tagged" {
				continue
			}
			found = true
			st := q.Plan.Steps
			if len(st) != 2 || !st[0].Index.OnElements() || st[0].Index.AttrName(st[0].Index.Hash[0]) != "messages.tags" || !st[1].Index.Has(st[0].Index.Extra[0]) {
				t.Errorf("%s: the query's plan is\n%s\nwant a lookup of an index on messages.tags's elements, then its base", prof.Name, q.Plan.Describe("  "))
			}
		}
		if !found {
			t.Fatalf("%s: no plan for the query", prof.Name)
		}
	}
	_, err := Advise(context.Background(), m, w, Options{Mix: "chat", Profile: cost.Bigtable, Solver: &solver.CBC{}})
	if want := "only a CONTAINS selects, which needs an index on the collection's elements: a local index of the store, and target bigtable keeps none"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("bigtable: got %v, want …%s…", err, want)
	}
}
