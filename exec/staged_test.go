package exec

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/scratch"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// TestStagedProperty: for tuples in any key order, staged across batch
// commits of any size, the stager reports exactly the first duplicate key
// (with where its first copy came from), the foreign-key check exactly the
// dangling references, and a reader returns what a map of the same tuples
// holds: every tuple by key, roots in key order, each parent's children.
func TestStagedProperty(t *testing.T) {
	src := `DEFINE RELATION rooms ROWS 10 { id BIGINT KEY, title STRING CARDINALITY 10 };
DEFINE RELATION msgs ROWS 100 { id STRING KEY, room BIGINT REFERENCES rooms, body STRING CARDINALITY 100 };`
	ss, err := lang.ParseScript("m.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	rooms, msgs := m.Entity("rooms"), m.Entity("msgs")
	roomCol := -1
	for i, c := range msgs.Columns {
		if c.Nav != nil {
			roomCol = i
		}
	}
	if roomCol < 0 {
		t.Fatal("msgs has no foreign key column")
	}
	rapid.Check(t, func(rt *rapid.T) {
		sm, err := scratch.Open(t.TempDir())
		if err != nil {
			rt.Fatal(err)
		}
		defer sm.Close()
		s := newStaged(m, sm)
		w := &stager{s: s, b: sm.NewBatch(), last: map[*catalog.Entity][]byte{}, commitBytes: rapid.IntRange(1, 400).Draw(rt, "commitBytes")}
		defer func() { w.b.Close() }()
		n := rapid.IntRange(0, 40).Draw(rt, "n")
		roomIDs := map[int64]int{} // id → line
		msgIDs := map[string]int{}
		children := map[int64][]string{}
		var dup string
		line := 0
		for i := 0; i < n && dup == ""; i++ {
			line++
			if rapid.Bool().Draw(rt, "room?") {
				id := rapid.Int64Range(-3, 8).Draw(rt, "room")
				err := w.add(rooms, []types.Value{id, fmt.Sprint("t", id)}, "rooms.csv", line)
				if first, ok := roomIDs[id]; ok {
					dup = fmt.Sprintf("rooms.csv:%d: field id: duplicate key %d (first at rooms.csv:%d)", line, id, first)
					checkErr(rt, err, dup)
					break
				}
				if err != nil {
					rt.Fatal(err)
				}
				roomIDs[id] = line
				continue
			}
			id := rapid.StringMatching(`[a-c\x00]{0,3}`).Draw(rt, "msg")
			room := rapid.Int64Range(-3, 8).Draw(rt, "msgRoom")
			vals := make([]types.Value, len(msgs.Columns))
			for c, col := range msgs.Columns {
				switch {
				case c == roomCol:
					vals[c] = room
				case col.Field.Key:
					vals[c] = id
				default:
					vals[c] = "body " + id
				}
			}
			err := w.add(msgs, vals, "msgs.csv", line)
			if first, ok := msgIDs[id]; ok {
				dup = fmt.Sprintf("msgs.csv:%d: field id: duplicate key %s (first at msgs.csv:%d)", line, types.Format(id), first)
				checkErr(rt, err, dup)
				break
			}
			if err != nil {
				rt.Fatal(err)
			}
			msgIDs[id] = line
			children[room] = append(children[room], id)
		}
		if dup != "" {
			return
		}
		if err := w.b.Commit(); err != nil {
			rt.Fatal(err)
		}
		err = s.checkForeignKeys()
		dangling := false
		for room := range children {
			if _, ok := roomIDs[room]; !ok {
				dangling = true
			}
		}
		var le *LoadError
		if dangling != errors.As(err, &le) {
			rt.Fatalf("dangling references: %v, check says %v", dangling, err)
		}
		if dangling {
			return
		}
		r := s.reader()
		defer r.close()
		var prev types.Value
		seen := 0
		if err := r.scan(rooms, func(rec *record) error {
			id := rec.vals[0]
			if prev != nil && types.Compare(prev, id) >= 0 {
				rt.Fatalf("rooms out of order: %v then %v", prev, id)
			}
			prev = id
			seen++
			var kids []string
			if err := r.children(1, rooms.Navs[0], id, func(c *record) error {
				kids = append(kids, c.vals[msgs.Column(msgs.ID())].(string))
				return nil
			}); err != nil {
				return err
			}
			want := append([]string(nil), children[id.(int64)]...)
			sort.Strings(want) // children come in key order
			if !slices.Equal(kids, want) {
				rt.Fatalf("room %d: children %q, want %q", id, kids, want)
			}
			return nil
		}); err != nil {
			rt.Fatal(err)
		}
		if seen != len(roomIDs) {
			rt.Fatalf("scanned %d rooms, staged %d", seen, len(roomIDs))
		}
		for id := range msgIDs {
			rec, err := r.get(msgs, id)
			if err != nil || rec == nil || rec.vals[msgs.Column(msgs.ID())] != id {
				rt.Fatalf("get msgs %q: %v %v", id, rec, err)
			}
		}
		if rec, err := r.get(rooms, int64(99)); rec != nil || err != nil {
			rt.Fatalf("get of an absent key: %v %v", rec, err)
		}
	})
}

func checkErr(t *rapid.T, err error, want string) {
	var le *LoadError
	if !errors.As(err, &le) || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}
