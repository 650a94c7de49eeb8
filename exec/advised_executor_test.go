package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// TestPerPartitionExecutor: a two-step join plan whose second step probes
// N partitions is 2 store requests with the batched executor and 1+N with
// the per-partition one, which returns the same rows.
func TestPerPartitionExecutor(t *testing.T) {
	ctx := context.Background()
	const model = `DEFINE RELATION users ROWS 10 { id BIGINT KEY, nick STRING CARDINALITY 10 };
DEFINE RELATION posts ROWS 40 { id BIGINT KEY, body STRING SIZE 20 CARDINALITY 40, author BIGINT REFERENCES users REVERSE posts };`
	// The posts of a user are only reachable through their keys: the
	// query's one plan reads posts_by_author, then posts_by_id for each
	// post found.
	const schema = `DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nick) };
DEFINE COLUMN FAMILY posts_by_author FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.posts.id) };
DEFINE COLUMN FAMILY posts_by_id FOR posts { PARTITION KEY (posts.id), VALUES (posts.body) };`
	cs := countstore.New(memstore.New())
	loader, err := exec.Deploy(ctx, cs, "m.kvs", []byte(model), "s.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	run := func(src string, args ...types.Value) { t.Helper(); execOn(t, loader, src, args...) }
	// User u wrote u+1 posts.
	post := int64(0)
	for u := int64(1); u <= 4; u++ {
		run("INSERT INTO users SET id = ?, nick = ?", u, fmt.Sprintf("u%d", u))
		for range u + 1 {
			post++
			run("INSERT INTO posts SET id = ?, body = ? AND CONNECT TO author(?)", post, fmt.Sprintf("post %d", post), u)
		}
	}

	const query = "SELECT posts.id, posts.body FROM users.posts WHERE users.id = ?"
	engine := func(x exec.Executor) (*exec.Engine, *exec.Stmt) {
		en := exec.New(cs, loader.Model(), loader.Schema(), cost.Pebble)
		en.SetExecutor(x)
		if en.Executor() != x {
			t.Fatalf("Executor() = %v after SetExecutor(%v)", en.Executor(), x)
		}
		s, err := en.Prepare(query)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Plan.Steps) != 2 {
			t.Fatalf("want a two-step join plan:\n%s", s.Explain())
		}
		return en, s
	}
	_, batched := engine(exec.Batched)
	_, perPart := engine(exec.PerPartition)
	for u := int64(1); u <= 4; u++ {
		n := u + 1 // posts of user u: the partitions of posts_by_id the second step probes
		cs.Reset()
		want, err := batched.Query(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		b := cs.Stats()
		cs.Reset()
		got, err := perPart.Query(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		p := cs.Stats()
		if len(want.Rows) != int(n) {
			t.Fatalf("user %d: %d rows, want %d", u, len(want.Rows), n)
		}
		if !reflect.DeepEqual(got.Rows, want.Rows) {
			t.Errorf("user %d: per-partition rows %v, batched %v", u, got.Rows, want.Rows)
		}
		if b.RoundTrips != 2 || b.ReadRows != 2 {
			t.Errorf("user %d, batched: %v, want 2 round trips", u, b)
		}
		if p.RoundTrips != 1+n || p.ReadRows != 1+n {
			t.Errorf("user %d, per-partition: %v, want 1+%d round trips", u, p, n)
		}
		if p.Probes != b.Probes || p.RowsRead != b.RowsRead {
			t.Errorf("user %d: per-partition asked for %d partitions and read %d rows, batched %d and %d", u, p.Probes, p.RowsRead, b.Probes, b.RowsRead)
		}
	}
}

// TestPerPartitionExecutorRUBiS: on the normalized baseline, whose plans
// join, every query of the paper's workload returns the same rows with
// either executor and asks the store for the same partitions; per
// partition it takes at least the batched round trips, and some queries
// (those whose join steps probe several partitions) take more.
func TestPerPartitionExecutorRUBiS(t *testing.T) {
	ctx := context.Background()
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	en, cs, d := countedEngine(t, m, w, advisor.Normalized)
	per := exec.New(cs, m, en.Schema(), cost.Cassandra)
	per.SetExecutor(exec.PerPartition)
	r := rand.New(rand.NewPCG(1, 2))
	more := 0
	for _, s := range w.Statements {
		if s.Query == nil {
			continue
		}
		bs, err := en.PrepareAST(s.AST)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := per.PrepareAST(s.AST)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			args := bs.Resolved.SampleArgs(r, d.Rows)
			cs.Reset()
			want, err := bs.Query(ctx, args...)
			if err != nil {
				t.Fatal(err)
			}
			b := cs.Stats()
			cs.Reset()
			got, err := ps.Query(ctx, args...)
			if err != nil {
				t.Fatal(err)
			}
			p := cs.Stats()
			if len(s.Query.OrderBy) == 0 {
				// In no order: the same rows.
				sortRows(got.Rows)
				sortRows(want.Rows)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("%s %v: per-partition rows %v, batched %v", s.Tag, args, got.Rows, want.Rows)
			}
			if p.Probes != b.Probes || p.RoundTrips < b.RoundTrips {
				t.Fatalf("%s %v: per-partition %v, batched %v\n%s", s.Tag, args, p, b, bs.Explain())
			}
			if p.RoundTrips > b.RoundTrips {
				more++
			}
		}
	}
	if more == 0 {
		t.Fatal("no query took more round trips per partition: the test checks nothing")
	}
}

// sortRows orders rows by their values, column after column.
func sortRows(rows [][]types.Datum) {
	slices.SortFunc(rows, func(a, b []types.Datum) int {
		for i := range min(len(a), len(b)) {
			if c := types.CompareDatums(a[i], b[i]); c != 0 {
				return c
			}
		}
		return len(a) - len(b)
	})
}
