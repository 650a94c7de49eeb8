package advisor

import (
	"context"
	"os"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/solver"
)

// TestChatStaticColumns advises the chat example (rooms with their latest
// messages, the room's fields read with them and touched by every post):
// with static-column candidates the optimum has a column family keeping
// the room's fields once per room, which reads in one lookup and keeps in
// one cell per post, cheaper than the two families (and two lookups per
// read) the advisor recommends without them — under both profiles.
func TestChatStaticColumns(t *testing.T) {
	needCBC(t)
	model, wl := readChat(t)
	m, w := parse(t, model, wl)
	for _, prof := range []cost.Profile{cost.Cassandra, cost.Pebble} {
		var costs [2]float64
		for i, static := range []bool{false, true} {
			res, err := Advise(context.Background(), m, w, Options{Mix: "chat", Profile: prof, Solver: &solver.CBC{}, StaticColumns: static})
			if err != nil {
				t.Fatal(err)
			}
			costs[i] = res.TotalCost
			statics := 0
			for _, x := range res.Indexes {
				if len(x.Static) > 0 {
					statics++
				}
			}
			// Pebble's profile may keep a second copy without the tags
			// (the read then reads no collection cells): at least one.
			if static && statics == 0 || !static && statics != 0 {
				t.Errorf("%s, static columns %v: %d indexes, %d with static columns", prof.Name, static, len(res.Indexes), statics)
			}
			// The room's latest messages with its fields: one lookup of
			// the column family with static columns, two lookups without.
			for _, q := range res.Queries {
				if q.Statement.Tag != "read" {
					continue
				}
				steps := len(q.Plan.Steps)
				if want := map[bool]int{false: 2, true: 1}[static]; steps != want || static && len(q.Plan.Steps[0].Index.Static) == 0 {
					t.Errorf("%s, static columns %v: the read takes %d steps, want %d", prof.Name, static, steps, want)
				}
			}
		}
		if costs[1] >= costs[0]*0.9 {
			t.Errorf("%s: %v with static columns, %v without", prof.Name, costs[1], costs[0])
		}
	}
}

// readChat reads the chat example's model and workload.
func readChat(t *testing.T) (model, workload string) {
	t.Helper()
	m, err := os.ReadFile("../examples/chat/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile("../examples/chat/workload.kvs")
	if err != nil {
		t.Fatal(err)
	}
	return string(m), string(w)
}
