package advisor

import (
	"fmt"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
)

// The rooms-and-messages instance of issue 16: read a room's fields with
// its messages by room; post messages and touch the room.
const chatModel = `
DEFINE RELATION rooms ROWS 10000 {
  id BIGINT KEY SIZE 8,
  title STRING SIZE 40 CARDINALITY 10000,
  topic STRING SIZE 20 CARDINALITY 100,
  updated TIMESTAMP SIZE 8 CARDINALITY 10000
};
DEFINE RELATION messages ROWS 1000000 {
  id BIGINT KEY SIZE 8,
  body STRING SIZE 200 CARDINALITY 1000000,
  posted TIMESTAMP SIZE 8 CARDINALITY 1000000,
  room BIGINT SIZE 8 REFERENCES rooms REVERSE messages
};
`

const chatWorkload = `
DEFINE WORKLOAD chat MIXES (main) {
  GROUP Read WEIGHTS (main 10) {
    SELECT rooms.title, rooms.topic, rooms.updated, messages.body, messages.posted FROM rooms.messages WHERE rooms.id = ? ORDER BY messages.posted; -- read
  }
  GROUP Post WEIGHTS (main 5) {
    INSERT INTO messages SET id=?, body=?, posted=? AND CONNECT TO room(?); -- post
    UPDATE rooms SET updated=? WHERE rooms.id=?; -- touch
  }
};
`

// What a Cassandra engineer writes: the messages of a room with their own
// fields only, the room read by its key (its update touches one row).
const chatByHand = `
DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id),
  CLUSTERING KEY (rooms.messages.posted, rooms.messages.id),
  VALUES (rooms.messages.body)
};
DEFINE COLUMN FAMILY room FOR rooms {
  PARTITION KEY (rooms.id),
  CLUSTERING KEY (),
  VALUES (rooms.title, rooms.topic, rooms.updated)
};
`

// TestEnumerationHoles: the schemas that showed holes in the candidate
// space (issue 16) cost no less than the advisor's optimum, in both modes:
// a CF holding the fields of part of its path (the room's messages without
// the room's fields).
func TestEnumerationHoles(t *testing.T) {
	needCBC(t)
	m, w := parse(t, chatModel, chatWorkload)
	ss, err := lang.ParseScript("schema.kvs", []byte(chatByHand))
	if err != nil {
		t.Fatal(err)
	}
	hand, err := catalog.ParseSchema(m, ss)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Mix: "main", Profile: cost.Cassandra, Solver: &solver.CBC{}}
	byHand, err := Evaluate(m, w, hand, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{WithSI, NoSI} {
		res, err := advise(t, m, w, "main", 0, mode)
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalCost > byHand.TotalCost*(1+1e-9) {
			t.Errorf("%v: the advisor's optimum costs %g, a hand-written schema %g:\n%s", mode, res.TotalCost, byHand.TotalCost, fmt.Sprint(describe(res)))
		}
	}
}

// TestCFOnlyNoWorse: on every RUBiS workload and mix (with the paper's
// budget too for the 36-statement workload; at 161 MB the 61-statement one
// takes minutes in both modes), when the default mode chooses no SI,
// CF-only mode finds a schema as cheap (both see the same CFs).
func TestCFOnlyNoWorse(t *testing.T) {
	needCBC(t)
	for _, wf := range []string{"workload.kvs", "workload_secondary.kvs"} {
		m, w := loadRUBiS(t, wf)
		for _, mix := range w.Mixes {
			for _, budget := range []float64{0, 161e6} {
				if wf != "workload.kvs" && budget != 0 {
					continue
				}
				def, err := advise(t, m, w, mix, budget, WithSI)
				if err != nil {
					t.Fatal(err)
				}
				sis := 0
				for _, x := range def.Indexes {
					if x.Kind == catalog.SI {
						sis++
					}
				}
				if sis > 0 {
					continue
				}
				cf, err := advise(t, m, w, mix, budget, NoSI)
				if err != nil {
					t.Fatal(err)
				}
				if cf.TotalCost > def.TotalCost*(1+1e-9) {
					t.Errorf("%s %s budget %g: CF-only costs %g, the default mode %g with no SI", wf, mix, budget, cf.TotalCost, def.TotalCost)
				}
			}
		}
	}
}
