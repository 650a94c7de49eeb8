package planner_test

import (
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/planner"
)

// partnerDefs: messages kept only with their room (a CF rooted at rooms),
// plus whatever extra adds.
const partnerDefs = `
DEFINE RELATION rooms ROWS 100 { id BIGINT KEY SIZE 8, name STRING SIZE 10 CARDINALITY 100 };
DEFINE RELATION messages ROWS 1000 { id BIGINT KEY SIZE 8, at BIGINT SIZE 8 CARDINALITY 1000,
  body STRING SIZE 20 CARDINALITY 1000, room BIGINT SIZE 8 REFERENCES rooms REVERSE messages };
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (), VALUES (rooms.name) };
DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id), VALUES (rooms.messages.body) };
`

// TestRowsThroughPartner: the rows of a column family of messages alone
// come from one holding each message with its room when every index
// holding messages holds their room (no message is kept without one), and
// not when some index holds messages without it.
func TestRowsThroughPartner(t *testing.T) {
	const target = `DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (), VALUES (messages.at, messages.body) };`
	for _, c := range []struct {
		name, extra string
		ok          bool
	}{
		{"partnered", "", true},
		{"a message kept alone", `DEFINE COLUMN FAMILY messages_by_at FOR messages { PARTITION KEY (messages.at), CLUSTERING KEY (messages.id), VALUES () };`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The target write-only, as a migration registers it: the
			// planner reads only the deployed indexes.
			s, _ := schemaAndWorkload(t, "partner", partnerDefs+c.extra+target, "DEFINE WORKLOAD w MIXES (m) { GROUP g WEIGHTS (m 1) { SELECT rooms.name FROM rooms WHERE rooms.id = ?; } };")
			var x *catalog.Index
			for _, y := range s.Indexes {
				if y.Name == "messages_by_id" {
					x = y
				}
			}
			s.WriteOnly = map[*catalog.Index]bool{x: true}
			p := planner.New(s, cost.Pebble)
			p.Scans = true
			sp, err := p.Rows(x, nil)
			if !c.ok {
				if err == nil {
					t.Fatalf("rows of %s planned from a schema that keeps messages without their room:\n%v", x.Describe(), sp.Plan)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The plan reads room_messages, joins nothing else, and fills
			// every attribute of x from the messages node.
			steps := sp.Plan.Steps
			if len(steps) != 1 || steps[0].Index.Name != "room_messages" {
				t.Fatalf("plan of the rows of %s: %v, want one scan of room_messages", x.Describe(), sp.Plan)
			}
			for _, a := range x.Attrs() {
				found := false
				for _, r := range sp.Query.Select {
					if sp.From[r.Node] == a.Node && r.Field == a.Field {
						found = true
					}
				}
				if !found {
					t.Errorf("the rows query selects no %s: %v", x.AttrName(a), sp.Query.Select)
				}
			}
			if g := sp.Query.Graph; len(g.Nodes) != 2 || !strings.Contains(catalog.GraphKey(g), "room") {
				t.Errorf("rows query graph %s, want messages with their room", catalog.GraphKey(g))
			}
		})
	}
}
