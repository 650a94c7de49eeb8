package exec_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
)

// A room's messages are keyed by time in room_messages; their flag is only
// in message, by id: a query for a room's flagged messages reads the
// room's messages in time order, then each message, filtered by flag.
const (
	pipeModel = `DEFINE RELATION rooms ROWS 10 { id BIGINT KEY, title STRING CARDINALITY 10 };
DEFINE RELATION messages ROWS 10000 { id BIGINT KEY, body STRING CARDINALITY 10000, posted BIGINT CARDINALITY 10000, flag BIGINT CARDINALITY 2, room BIGINT REFERENCES rooms REVERSE messages };`
	pipeSchema = `DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.posted, rooms.messages.id) };
DEFINE COLUMN FAMILY message FOR messages { PARTITION KEY (messages.id), VALUES (messages.body, messages.posted, messages.flag) };`
	// One step: the room's messages with their flags, filtered.
	pipeSchema1 = `DEFINE COLUMN FAMILY room_messages FOR rooms { PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.posted, rooms.messages.id), VALUES (rooms.messages.flag) };`
)

type pipeMsg struct{ id, posted, flag int64 }

// tb is what these helpers need of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}

// pipeStore deploys schema on st (nil: a memstore), counted, with the
// messages of room 1 (room 2 has none).
func pipeStore(t tb, st store.Store, schema string, msgs []pipeMsg) (*exec.Engine, *countstore.Store) {
	t.Helper()
	if st == nil {
		st = memstore.New()
	}
	cs := countstore.New(st)
	en, err := exec.Deploy(context.Background(), cs, "m.kvs", []byte(pipeModel), "s.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	run := func(src string, args ...any) {
		s, err := en.Prepare(src)
		if err == nil {
			_, err = s.Exec(context.Background(), args...)
		}
		if err != nil {
			t.Fatalf("%s %v: %v", src, args, err)
		}
	}
	run("INSERT INTO rooms SET id = 1, title = 'one'")
	run("INSERT INTO rooms SET id = 2, title = 'two'")
	for _, m := range msgs {
		run("INSERT INTO messages SET id = ?, body = ?, posted = ?, flag = ? AND CONNECT TO room(1)", m.id, fmt.Sprint("b", m.id), m.posted, m.flag)
	}
	return en, cs
}

// pipeWant is the ids of room 1's messages with flag, in (posted, id)
// order, descending if desc, the first limit of them.
func pipeWant(msgs []pipeMsg, flag int64, desc bool, limit int) []int64 {
	var sel []pipeMsg
	for _, m := range msgs {
		if m.flag == flag {
			sel = append(sel, m)
		}
	}
	slices.SortFunc(sel, func(a, b pipeMsg) int {
		c := int(a.posted - b.posted)
		if c == 0 {
			c = int(a.id - b.id)
		}
		if desc {
			c = -c
		}
		return c
	})
	var ids []int64
	for _, m := range sel[:min(limit, len(sel))] {
		ids = append(ids, m.id)
	}
	return ids
}

func pipeQuery(t tb, en *exec.Engine, ordered, desc bool, limit int) *exec.Stmt {
	t.Helper()
	q := "SELECT messages.id, messages.posted FROM rooms.messages WHERE rooms.id = ? AND messages.flag = ?"
	if ordered {
		q += " ORDER BY messages.posted"
		if desc {
			q += " DESC"
		}
	}
	s, err := en.Prepare(fmt.Sprintf("%s LIMIT %d", q, limit))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(t tb, res *exec.Result) []int64 {
	var out []int64
	for _, r := range res.Values() {
		id, ok := r[0].(int64)
		if !ok {
			t.Fatalf("id %v is a %T", r[0], r[0])
		}
		out = append(out, id)
	}
	return out
}

// TestPipelinedLimit: a limited two-step plan whose second step filters
// joins the first step's rows in batches and stops reading once it has
// the LIMIT (EXPLAIN says so): a room of 2,000 messages, all flagged, is
// read for the first batch only. The rows are those of a full read, in
// the ORDER BY the first step delivers.
func TestPipelinedLimit(t *testing.T) { testPipelinedLimit(t, nil) }

func testPipelinedLimit(t *testing.T, st store.Store) {
	ctx := context.Background()
	var msgs []pipeMsg
	for id := int64(1); id <= 2000; id++ {
		msgs = append(msgs, pipeMsg{id: id, posted: (id * 7919) % 5003, flag: 1})
	}
	en, cs := pipeStore(t, st, pipeSchema, msgs)
	for _, ordered := range []bool{false, true} {
		s := pipeQuery(t, en, ordered, false, 25)
		if !strings.Contains(s.Explain(), "CLIENT PIPELINED") || strings.Contains(s.Explain(), "CLIENT SORT") {
			t.Fatalf("ordered %v: want a pipelined plan without a client sort:\n%s", ordered, s.Explain())
		}
		// The planner priced it so (planner.DAG's pipeline).
		for i, step := range s.Plan.Steps {
			if step.Read <= 0 || step.Read >= 1 {
				t.Errorf("ordered %v: step %d priced on a share %v of its rows, want the LIMIT's\n%s", ordered, i+1, step.Read, s.Explain())
			}
		}
		cs.Reset()
		res, err := s.Query(ctx, int64(1), int64(1))
		if err != nil {
			t.Fatal(err)
		}
		got := ids(t, res)
		if want := pipeWant(msgs, 1, false, 25); ordered && !slices.Equal(got, want) {
			t.Errorf("ordered: got %v, want %v", got, want)
		} else if len(got) != 25 {
			t.Errorf("%d rows, want 25", len(got))
		}
		// The first batch (its size from the plan's estimates), one more
		// row read before the sink stopped the read, and the batch's
		// messages: far from the room's 2,000.
		if st := cs.Stats(); st.RowsRead > 400 || st.RoundTrips != 2 {
			t.Errorf("ordered %v: %v, want 2 round trips and the first batch's rows read", ordered, st)
		}
	}
	// A filter that keeps nothing reads everything, in batches growing
	// fourfold: a round trip for the first step, one per batch for the
	// second.
	cs.Reset()
	res, err := pipeQuery(t, en, true, false, 25).Query(ctx, int64(1), int64(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 0 {
		t.Errorf("flag 0: %d rows, want none", len(res.Rows))
	}
	if st := cs.Stats(); st.RoundTrips > 6 || st.RowsRead != 4000 {
		t.Errorf("flag 0: %v, want every message read in at most 5 batches", st)
	}
}

// TestFilteredLimit: a one-step plan whose client filter drops rows stops
// reading once LIMIT rows pass it.
func TestFilteredLimit(t *testing.T) {
	ctx := context.Background()
	var msgs []pipeMsg
	for id := int64(1); id <= 2000; id++ {
		msgs = append(msgs, pipeMsg{id: id, posted: (id * 7919) % 5003, flag: id % 2})
	}
	en, cs := pipeStore(t, nil, pipeSchema1, msgs)
	s := pipeQuery(t, en, true, false, 25)
	if len(s.Plan.Steps) != 1 || !strings.Contains(s.Explain(), "CLIENT FILTERED READ STOPPING AT THE LIMIT") || s.Plan.Steps[0].Read <= 0 {
		t.Fatalf("want one step stopping at the limit:\n%s", s.Explain())
	}
	cs.Reset()
	res, err := s.Query(ctx, int64(1), int64(1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(t, res), pipeWant(msgs, 1, false, 25); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Every other message is flagged: about 50 read, and the one the sink
	// stopped at.
	if st := cs.Stats(); st.RowsRead > 80 || st.RoundTrips != 1 {
		t.Errorf("%v: want one round trip reading about 50 rows", st)
	}
}

// TestPipelinedLimitProperty: on random messages, flags and limits, in a
// two-step plan and in one, the pipelined run returns exactly the first LIMIT of the matching messages
// in the ORDER BY (either direction), or LIMIT of them without one.
func TestPipelinedLimitProperty(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(rt, "messages")
		flags := rapid.Int64Range(1, 4).Draw(rt, "flags")
		var msgs []pipeMsg
		for id := int64(1); id <= int64(n); id++ {
			msgs = append(msgs, pipeMsg{id: id, posted: rapid.Int64Range(0, 50).Draw(rt, "posted"), flag: rapid.Int64Range(0, flags-1).Draw(rt, "flag")})
		}
		schema := rapid.SampledFrom([]string{pipeSchema, pipeSchema1}).Draw(rt, "schema")
		en, _ := pipeStore(rt, nil, schema, msgs)
		for range 3 {
			limit := rapid.IntRange(1, 120).Draw(rt, "limit")
			ordered, desc := rapid.Bool().Draw(rt, "ordered"), rapid.Bool().Draw(rt, "desc")
			flag := rapid.Int64Range(0, flags).Draw(rt, "query flag")
			s := pipeQuery(rt, en, ordered, desc, limit)
			res, err := s.Query(ctx, int64(1), flag)
			if err != nil {
				rt.Fatal(err)
			}
			got, want := ids(rt, res), pipeWant(msgs, flag, desc, limit)
			if ordered {
				if !slices.Equal(got, want) {
					rt.Fatalf("ORDER BY (desc %v) LIMIT %d, flag %d: got %v, want %v\n%s", desc, limit, flag, got, want, s.Explain())
				}
				continue
			}
			all := pipeWant(msgs, flag, false, n)
			if len(got) != len(want) || slices.ContainsFunc(got, func(id int64) bool { return !slices.Contains(all, id) }) || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
				rt.Fatalf("LIMIT %d, flag %d: got %v, want %d distinct of %v", limit, flag, got, len(want), all)
			}
		}
	})
}

// TestPipelinedOnView: a pipelined query on a Pebble view (a snapshot,
// DB.Snapshot's store) joins its first step's rows while that read goes
// on, each join a read of the view inside the first read's callback. It
// deadlocked while a view served one call at a time.
func TestPipelinedOnView(t *testing.T) {
	st, err := pebblestore.Open(filepath.Join(t.TempDir(), "db"), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var msgs []pipeMsg
	for i := int64(1); i <= 50; i++ {
		msgs = append(msgs, pipeMsg{i, 10 * (51 - i), i % 2})
	}
	en, _ := pipeStore(t, st, pipeSchema, msgs)
	v, err := store.Viewer(st).View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := pipeQuery(t, exec.FromCatalog(v, en.Advised(), nil), true, false, 3).Query(ctx, int64(1), int64(1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(t, res), pipeWant(msgs, 1, false, 3); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
