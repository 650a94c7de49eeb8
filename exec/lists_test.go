//go:build !race

package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// A message's edits, a list stored one cell per element in three column
// families: by the message's key alone (where a write reads the list it
// changes by position or value), by message and room, and in its room's
// partition.
const listsModel = `
DEFINE RELATION rooms ROWS 20 { id BIGINT KEY, name STRING CARDINALITY 20 };
DEFINE RELATION messages ROWS 400 { id BIGINT KEY, at BIGINT CARDINALITY 50, edits LIST<BIGINT> CARDINALITY 4,
  room BIGINT REFERENCES rooms REVERSE messages };`

const listsSchema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name) };
DEFINE COLUMN FAMILY messages_alone FOR messages { PARTITION KEY (messages.id), VALUES (messages.at, messages.edits) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id),
  VALUES (messages.at, messages.edits) };
DEFINE COLUMN FAMILY room_messages FOR rooms {
  PARTITION KEY (rooms.id), CLUSTERING KEY (rooms.messages.at, rooms.messages.id), VALUES (rooms.messages.edits) };`

// TestListByPositionAndValue runs random sequences of CQL's list
// operations — by position (l[i] = v, l[i] = NULL, DELETE l[i]) and by
// value (l = l - [v, …]), which read the list, mixed with appends,
// prepends and replacements, several in one statement — on Pebble and
// Bigtable, and checks after each that every column family holding the
// list reads what the same operations make of a Go slice; a position past
// the end fails the statement and changes nothing; verify is clean at the
// end.
func TestListByPositionAndValue(t *testing.T) {
	onPebbleAndBigtable(t, listByPositionAndValue)
}

func listByPositionAndValue(t *testing.T, st store.Store) {
	ctx := context.Background()
	en, err := exec.Deploy(ctx, st, "model.kvs", []byte(listsModel), "schema.kvs", []byte(listsSchema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	run := func(src string) error {
		p, err := en.Prepare(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		_, err = p.Exec(ctx)
		return err
	}
	read := func(src string) []string {
		p, err := en.Prepare(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		rows, err := p.Query(ctx)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var out []string
		for _, r := range rows.Values() {
			out = append(out, types.Format(r[0]))
		}
		return out
	}
	if err := run("INSERT INTO rooms SET id = 1, name = 'lobby'"); err != nil {
		t.Fatal(err)
	}
	const msgs = 3
	lists := make([][]int64, msgs)
	for m := range msgs {
		if err := run(fmt.Sprintf("INSERT INTO messages SET id = %d, at = %d, edits = [1, 2] AND CONNECT TO room(1)", m, m)); err != nil {
			t.Fatal(err)
		}
		lists[m] = []int64{1, 2}
	}
	format := func(l []int64) string {
		if len(l) == 0 {
			return "NULL"
		}
		parts := make([]string, len(l))
		for i, v := range l {
			parts[i] = fmt.Sprint(v)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	r := rand.New(rand.NewPCG(3, 17))
	val := func() int64 { return r.Int64N(4) }
	// pos is a position in l, or one past its end one time in five.
	pos := func(l []int64) int {
		if len(l) == 0 || r.IntN(5) == 0 {
			return len(l) + r.IntN(2)
		}
		return r.IntN(len(l))
	}
	failed := 0
	for step := range 400 {
		m := r.IntN(msgs)
		l := slices.Clone(lists[m])
		// One to three operations in one statement, applied in order.
		var sets, dels []string
		ok := true
		for range 1 + r.IntN(3) {
			switch op := r.IntN(9); {
			case op == 0 || op == 8: // append
				v := val()
				sets, l = append(sets, fmt.Sprintf("edits = edits + [%d]", v)), append(l, v)
			case op == 1: // prepend
				v := val()
				sets, l = append(sets, fmt.Sprintf("edits = [%d] + edits", v)), append([]int64{v}, l...)
			case op == 2: // remove by value
				a, b := val(), val()
				sets = append(sets, fmt.Sprintf("edits = edits - [%d, %d]", a, b))
				l = slices.DeleteFunc(l, func(x int64) bool { return x == a || x == b })
			case op == 3 && r.IntN(4) == 0: // replace
				v := val()
				sets, l = append(sets, fmt.Sprintf("edits = [%d, %d]", v, v+1)), []int64{v, v + 1}
			case op <= 5: // set by position (sometimes past the end)
				i, v := pos(l), val()
				sets = append(sets, fmt.Sprintf("edits[%d] = %d", i, v))
				if i >= len(l) {
					ok = false
				} else {
					l[i] = v
				}
			case op == 6: // set NULL by position: deletes the element
				i := pos(l)
				sets = append(sets, fmt.Sprintf("edits[%d] = NULL", i))
				if i >= len(l) {
					ok = false
				} else {
					l = slices.Delete(l, i, i+1)
				}
			default: // DELETE by position
				i := pos(l)
				// In an UPDATE if another operation comes with it.
				sets, dels = append(sets, fmt.Sprintf("edits[%d] = NULL", i)), append(dels, fmt.Sprintf("edits[%d]", i))
				if i >= len(l) {
					ok = false
				} else {
					l = slices.Delete(l, i, i+1)
				}
			}
		}
		src := fmt.Sprintf("UPDATE messages SET %s WHERE messages.id = %d", strings.Join(sets, ", "), m)
		if len(dels) == len(sets) {
			src = fmt.Sprintf("DELETE %s FROM messages WHERE messages.id = %d", strings.Join(dels, ", "), m)
		}
		err := run(src)
		switch {
		case ok && err != nil:
			t.Fatalf("step %d: %s: %v", step, src, err)
		case !ok && (err == nil || !strings.Contains(err.Error(), "list index out of bound")):
			t.Fatalf("step %d: %s: got error %v, want list index out of bound", step, src, err)
		case ok:
			lists[m] = l
		default:
			failed++
		}
		want := format(lists[m])
		for _, q := range []string{
			fmt.Sprintf("SELECT messages.edits FROM messages WHERE messages.id = %d", m),
			fmt.Sprintf("SELECT messages.edits FROM messages.room WHERE messages.id = %d", m),
			fmt.Sprintf("SELECT rooms.messages.edits FROM rooms.messages WHERE rooms.id = 1 AND rooms.messages.id = %d", m),
		} {
			if got := read(q); len(got) != 1 || got[0] != want {
				t.Fatalf("step %d: after %s (applied %v):\n%s\n got %v, want %s", step, src, ok, q, got, want)
			}
		}
	}
	if failed == 0 || failed > 200 {
		t.Fatalf("%d of 400 statements went past a list's end: the sequence tests too little", failed)
	}
	// A message that does not exist: nothing to change, no error.
	if err := run("UPDATE messages SET edits[0] = 1 WHERE messages.id = 99"); err != nil {
		t.Fatal(err)
	}
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", rep, err)
	}
	// EXPLAIN says the list is read, then replaced in every family.
	p, err := en.Prepare("UPDATE messages SET edits[1] = 5 WHERE messages.id = 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"READ messages.edits FROM messages_alone (1 ROW)", "REPLACE rooms.messages.edits WITH THE LIST READ, CHANGED"} {
		if !strings.Contains(p.Explain(), want) {
			t.Errorf("no %q in\n%s", want, p.Explain())
		}
	}
}

// TestListByPositionRefused: changing a list's elements by position or
// value needs the one tuple's list, from a column family of its relation
// keyed by its key alone; each refusal says what is missing.
func TestListByPositionRefused(t *testing.T) {
	ctx := context.Background()
	noAlone := strings.Replace(listsSchema, "DEFINE COLUMN FAMILY messages_alone FOR messages { PARTITION KEY (messages.id), VALUES (messages.at, messages.edits) };", "", 1)
	for _, c := range []struct{ schema, stmt, want string }{
		{listsSchema, "UPDATE messages SET edits[0] = 1 WHERE messages.at = 3", "the WHERE must fix messages.id by equality"},
		{listsSchema, "UPDATE messages SET edits = edits - [1] WHERE messages.id = 1 OR messages.id = 2", "names one tuple: its WHERE has no OR or IN"},
		{noAlone, "DELETE edits[0] FROM messages WHERE messages.id = 1", "from a column family of messages keyed by messages.id alone, and this schema has none"},
	} {
		en, err := exec.Deploy(ctx, memstore.New(), "model.kvs", []byte(listsModel), "schema.kvs", []byte(c.schema), cost.Pebble)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := en.Prepare(c.stmt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.stmt, err, c.want)
		}
	}
}
