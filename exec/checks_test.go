package exec_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// gateStore holds each read until two are in flight (or a second passes,
// so that a write reading one at a time still finishes), and records how
// many ever were at once.
type gateStore struct {
	store.Store
	mu       sync.Mutex
	on       bool
	in, most int
	open     chan struct{}
}

func (g *gateStore) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	g.mu.Lock()
	on := g.on
	if on {
		g.in++
		g.most = max(g.most, g.in)
		if g.in == 2 {
			close(g.open)
		}
	}
	g.mu.Unlock()
	if on {
		select {
		case <-g.open:
		case <-time.After(time.Second):
		}
		defer func() { g.mu.Lock(); g.in--; g.mu.Unlock() }()
	}
	return g.Store.ReadRows(ctx, table, rs, opts, fn)
}

// TestExistenceChecksAtOnce: a write connecting to entities that no upkeep
// reads checks that they exist with reads issued together, one round trip
// of waiting instead of one per entity; a missing entity still fails it,
// the first link's named first, with nothing written.
func TestExistenceChecksAtOnce(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	res := advise(t, m, w, advisor.WithSI, 161e6)
	gate := &gateStore{Store: memstore.New()}
	en := exec.New(gate, m, res.Schema, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := en.Load(ctx, source(gen.Generate(m, tinyRUBiS, 3, 0)), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	st, err := en.Prepare("INSERT INTO comments SET id = ?, rating = 1, date = '2026-01-01 00:00:00', comment = 'x' AND CONNECT TO to_user(?), from_user(?), item(?)")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(st.Explain(), "CHECK "); n < 2 {
		t.Fatalf("%d existence checks: the test needs two\n%s", n, st.Explain())
	}
	exec1 := func(args ...types.Value) error {
		gate.mu.Lock()
		gate.on, gate.most, gate.open = true, 0, make(chan struct{})
		gate.mu.Unlock()
		defer func() { gate.mu.Lock(); gate.on = false; gate.mu.Unlock() }()
		_, err := st.Exec(ctx, args...)
		return err
	}
	if err := exec1(int64(900001), int64(2), int64(1), int64(3)); err != nil {
		t.Fatal(err)
	}
	if gate.most < 2 {
		t.Errorf("the existence checks ran one at a time (at most %d reads at once)", gate.most)
	}
	for _, c := range []struct {
		args []types.Value
		want string
	}{
		{[]types.Value{int64(900002), int64(424242), int64(1), int64(3)}, "no users has id = 424242"},
		{[]types.Value{int64(900003), int64(2), int64(1), int64(525252)}, "no items has id = 525252"},
		{[]types.Value{int64(900004), int64(424242), int64(1), int64(525252)}, "no users has id = 424242"},
	} {
		if err := exec1(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", rep, err)
	}
	// Of the comments to users 2 and 424242, only the one written.
	q, err := en.Prepare("SELECT comments.id FROM comments.to_user WHERE to_user.id = ?")
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []int64{2, 424242} {
		got, err := q.Query(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range got.Rows {
			if id := r[0].Value().(int64); id >= 900000 {
				n++
				if id != 900001 {
					t.Errorf("comment %d stored, to user %d", id, user)
				}
			}
		}
		if want := map[int64]int{2: 1}[user]; n != want {
			t.Errorf("user %d: %d new comments, want %d", user, n, want)
		}
	}
}
