package kvschema_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/txnstore"
)

// at is a context whose reads and writes happen at t0 + d (store.WithNow).
func at(t0 time.Time, d time.Duration) context.Context {
	return store.WithNow(context.Background(), t0.Add(d))
}

// TestTTLClientRelation: USING TTL on a client relation: an inserted
// tuple vanishes from both layouts when its TTL runs out, an updated
// column becomes NULL then while the tuple stays, a write without TTL
// makes a cell permanent again, and verify is clean at every instant: on
// memstore, Pebble, and Bigtable (bttest, through txnstore).
func TestTTLClientRelation(t *testing.T) {
	for _, backend := range []string{"mem", "pebble", "bigtable"} {
		t.Run(backend, func(t *testing.T) {
			t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
			var st store.Store
			switch backend {
			case "mem":
				st = memstore.New()
			case "pebble":
				ps, err := pebblestore.Open(filepath.Join(t.TempDir(), "db"), pebblestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				st = ps
			default:
				st = txnstore.New(bttestserver.Open(t))
			}
			db, err := kvschema.New(at(t0, 0), st, kvschema.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			const script = `
DEFINE RELATION s { user BIGINT KEY, id BIGINT KEY, token STRING, note STRING };
DEFINE PRIMARY SCHEMA by_user FOR s { TABLE 's', ROW ordered{user}:ordered{id}, FAMILY 'f', QUALIFIER attr_name['user','id'], VALUE attr_value['user','id'] };
DEFINE SCHEMA by_token FOR s { TABLE 's_token', ROW ordered{token}:ordered{user}:ordered{id}, FAMILY 'f', QUALIFIER attr_name['user','id','token'], VALUE attr_value['user','id','token'] };`
			if err := db.Script(at(t0, 0), "s.kvs", []byte(script), nil); err != nil {
				t.Fatal(err)
			}
			run := func(d time.Duration, src string, args ...any) {
				t.Helper()
				if _, err := db.Exec(at(t0, d), src, args...); err != nil {
					t.Fatalf("%s: %v", src, err)
				}
			}
			rows := func(d time.Duration, src string) []string {
				t.Helper()
				rs, err := db.Query(at(t0, d), src)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for rs.Next() {
					var parts []string
					for _, v := range rs.Values() {
						if v == nil {
							parts = append(parts, "NULL")
						} else {
							parts = append(parts, fmt.Sprint(v))
						}
					}
					out = append(out, strings.Join(parts, " "))
				}
				slices.Sort(out)
				return out
			}
			clean := func(d time.Duration) {
				t.Helper()
				rep, err := db.Verify(at(t0, d), exec.VerifyOptions{})
				if err != nil || !rep.Clean() {
					t.Fatalf("verify at +%v: %v %v", d, rep, err)
				}
			}
			run(0, "INSERT INTO s VALUES (1, 1, 'a', 'one') USING TTL 60")
			run(0, "INSERT INTO s VALUES (1, 2, 'b', 'two')")
			run(0, "UPDATE s USING TTL ? SET note = 'soon' WHERE user = 1 AND id = 2", 30)
			clean(0)
			for _, c := range []struct {
				d    time.Duration
				want string
			}{
				{29 * time.Second, "[1 1 a one 1 2 b soon]"},
				{30 * time.Second, "[1 1 a one 1 2 b NULL]"},
				{59 * time.Second, "[1 1 a one 1 2 b NULL]"},
				{60 * time.Second, "[1 2 b NULL]"},
			} {
				if got := rows(c.d, "SELECT * FROM s"); strings.Join(got, " ") != strings.Trim(c.want, "[]") {
					t.Errorf("+%v: %v, want %s", c.d, got, c.want)
				}
				if got := rows(c.d, "SELECT user, id FROM s WHERE token = 'a'"); (len(got) == 1) != (c.d < 60*time.Second) {
					t.Errorf("+%v: by token: %v", c.d, got)
				}
				clean(c.d)
			}
			// Written again without a TTL, a cell is permanent.
			run(0, "INSERT INTO s VALUES (1, 1, 'a', 'one') USING TTL 60")
			run(time.Second, "INSERT INTO s VALUES (1, 1, 'a', 'kept')")
			if got := rows(time.Hour, "SELECT * FROM s WHERE user = 1 AND id = 1"); strings.Join(got, " ") != "1 1 a kept" {
				t.Errorf("rewritten without TTL: %v", got)
			}
			for _, bad := range []string{"INSERT INTO s VALUES (1, 3, 'c', 'x') USING TTL 0", "INSERT INTO s VALUES (1, 3, 'c', 'x') USING TTL 630720001", "UPDATE s USING TTL 'x' SET note = 'y' WHERE user = 1 AND id = 1"} {
				if _, err := db.Exec(at(t0, 0), bad); err == nil || !strings.Contains(err.Error(), "TTL") {
					t.Errorf("%s: %v", bad, err)
				}
			}
		})
	}
}

// TestTTLAdvised: on an advised schema, a room inserted USING TTL
// vanishes from every index at once, verify clean before and after; one
// updated since keeps the cells the updates wrote, in every index alike
// (every index holding rooms holds the same fields, so a write changes
// all of a room's rows alike), and an UPDATE … USING TTL's cells expire
// in every index at once. Where its rows
// differ — a message's rows join its room, and a later UPDATE of the room
// would write the room's name into them without expiry (the expired
// message's row would come back with it) — the INSERT is refused, saying
// why, and so is an UPDATE … USING TTL of the room.
func TestTTLAdvised(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	ctx := at(t0, 0)
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	model, err := os.ReadFile("examples/chat/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	const schema = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.topic, rooms.updated) };
DEFINE COLUMN FAMILY rooms_again FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.topic, rooms.updated) };
DEFINE SECONDARY INDEX rooms_by_name ON rooms_by_id (rooms.name);
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), VALUES (messages.at, messages.body) };`
	if _, err := db.Deploy(ctx, "examples/chat/model.kvs", model, "schema.kvs", []byte(schema), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration, src string) {
		t.Helper()
		if _, err := db.Exec(at(t0, d), src); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
	values := func(d time.Duration, src string) string {
		t.Helper()
		rs, err := db.Query(at(t0, d), src)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]any
		for rs.Next() {
			out = append(out, slices.Clone(rs.Values()))
		}
		return fmt.Sprint(out)
	}
	run(0, "INSERT INTO rooms SET id = 1, name = 'ops', topic = 't', updated = '2026-01-01' USING TTL 60")
	run(0, "INSERT INTO rooms SET id = 2, name = 'dev', topic = 'u', updated = '2026-01-01'")
	run(0, "INSERT INTO rooms SET id = 3, name = 'tmp', topic = 'v' USING TTL 60")
	// Cells written later without TTL outlive the insert's, in every
	// index alike (the row lives while a cell of it does, as Cassandra's).
	run(10*time.Second, "UPDATE rooms SET topic = 'changed' WHERE rooms.id = 1")
	run(20*time.Second, "UPDATE rooms SET name = NULL WHERE rooms.id = 1")
	// An UPDATE's cells expire, in every index at once; the tuple stays.
	run(0, "UPDATE rooms USING TTL 30 SET name = 'temp' WHERE rooms.id = 2")
	for _, c := range []struct {
		d                      time.Duration
		one, two, three, named string
	}{
		{29 * time.Second, "[[<nil> changed]]", "[[temp u]]", "[[tmp v]]", "[[2]]"},
		{30 * time.Second, "[[<nil> changed]]", "[[<nil> u]]", "[[tmp v]]", "[]"},
		{59 * time.Second, "[[<nil> changed]]", "[[<nil> u]]", "[[tmp v]]", "[]"},
		{60 * time.Second, "[[<nil> changed]]", "[[<nil> u]]", "[]", "[]"},
	} {
		for id, want := range map[int]string{1: c.one, 2: c.two, 3: c.three} {
			if got := values(c.d, fmt.Sprintf("SELECT rooms.name, rooms.topic FROM rooms WHERE rooms.id = %d", id)); got != want {
				t.Errorf("+%v: room %d %s, want %s", c.d, id, got, want)
			}
		}
		if got := values(c.d, "SELECT rooms.id FROM rooms WHERE rooms.name = 'temp'"); got != c.named {
			t.Errorf("+%v: by name %s, want %s", c.d, got, c.named)
		}
		rep, err := db.Verify(at(t0, c.d), exec.VerifyOptions{})
		if err != nil || !rep.Clean() {
			t.Fatalf("verify at +%v: %v %v", c.d, rep, err)
		}
	}
	// A message's rows joining its room, where the room's name is copied:
	// refused.
	db2, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	const joined = `
DEFINE COLUMN FAMILY rooms_by_id FOR rooms { PARTITION KEY (rooms.id), VALUES (rooms.name, rooms.topic, rooms.updated) };
DEFINE COLUMN FAMILY messages_by_id FOR messages { PARTITION KEY (messages.id), CLUSTERING KEY (messages.room.id), VALUES (messages.at, messages.body, messages.room.name) };`
	if _, err := db2.Deploy(ctx, "examples/chat/model.kvs", model, "schema.kvs", []byte(joined), cost.Pebble); err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		"INSERT INTO messages SET id = 10, at = '2026-01-02', body = 'b' AND CONNECT TO room(2) USING TTL 60": "INSERT … USING TTL: column family messages_by_id (CF([messages.id] [messages.room.id] → [messages.at, messages.body, messages.room.name])) holds messages in rows joining other tuples",
		"UPDATE rooms USING TTL 30 SET name = 'temp' WHERE rooms.id = 2":                                      "UPDATE … USING TTL: column family messages_by_id",
	} {
		if _, err := db2.Exec(ctx, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want …%s…", src, err, want)
		}
	}
}

// noExpiry is a store that keeps no cell expiry, as an older backend.
type noExpiry struct{ store.Store }

func (s noExpiry) Capabilities() store.Capabilities {
	c := s.Store.Capabilities()
	c.Expiry = false
	return c
}

func (s noExpiry) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := store.CheckNoExpiry("noExpiry", muts); err != nil {
		return err
	}
	return s.Store.Apply(ctx, muts)
}

// TestTTLRefused: a store that keeps no cell expiry refuses a write USING
// TTL, writing nothing.
func TestTTLRefused(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.New(ctx, noExpiry{memstore.New()}, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Script(ctx, "s.kvs", []byte(`DEFINE RELATION s { k BIGINT KEY, v STRING };
DEFINE SCHEMA p FOR s { TABLE 's', ROW ordered{k}, FAMILY 'f', QUALIFIER attr_name['k'], VALUE attr_value['k'] };`), nil); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(ctx, "INSERT INTO s VALUES (1, 'x') USING TTL 60")
	if !errors.Is(err, store.ErrNoExpiry) {
		t.Fatalf("got %v, want ErrNoExpiry", err)
	}
	rs, err := db.Query(ctx, "SELECT * FROM s")
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 0 {
		t.Fatalf("%d tuples written", rs.Len())
	}
}
