package exec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// TestVerifyPartitions: verify counts each column family's partitions as
// stored and finds its largest, whose rows and bytes are those the store
// holds under that partition key; the estimate is the model's average.
func TestVerifyPartitions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	const model = `DEFINE RELATION users ROWS 10 { id BIGINT KEY, nick STRING CARDINALITY 10 };
DEFINE RELATION posts ROWS 40 { id BIGINT KEY, body STRING SIZE 20 CARDINALITY 40, author BIGINT REFERENCES users REVERSE posts };`
	const schema = `DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nick) };
DEFINE COLUMN FAMILY posts_by_author FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.posts.id), VALUES (users.posts.body) };`
	en, err := exec.Deploy(ctx, st, "m.kvs", []byte(model), "s.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	run := func(src string, args ...types.Value) { t.Helper(); execOn(t, en, src, args...) }
	// User u has u posts, with bodies of growing length: user 4's
	// partition is the largest by rows and by bytes.
	post := int64(0)
	for u := int64(1); u <= 4; u++ {
		run("INSERT INTO users SET id = ?, nick = ?", u, fmt.Sprintf("u%d", u))
		for range u {
			post++
			run("INSERT INTO posts SET id = ?, body = ? AND CONNECT TO author(?)", post, strings.Repeat("b", int(post)), u)
		}
	}
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil || !rep.Clean() {
		t.Fatalf("verify: %v %v", err, rep)
	}
	p := rep.Partitions["posts_by_author"]
	// The bytes of user 4's partition, read from the store itself.
	var want int64
	x := en.Schema().Index("posts_by_author")
	prefix, err := x.Layout().AppendKeyPrefix(nil, []types.Value{int64(4)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReadRows(ctx, "posts_by_author", store.RowSet{Ranges: []store.Range{store.PrefixRange(prefix)}}, store.ReadOptions{}, func(r store.Row) bool {
		want += int64(len(r.Key))
		for _, c := range r.Cells {
			want += int64(len(c.Family) + len(c.Qualifier) + len(c.Value))
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if p.Count != 4 || p.Largest.Key != "[users.id=4]" || p.Largest.Rows != 4 || p.Largest.Bytes != want || want == 0 {
		t.Errorf("posts_by_author partitions %+v, want 4 partitions, largest [users.id=4] with 4 rows and %d bytes", p, want)
	}
	if est := x.Size / x.Partitions; p.Estimate != est {
		t.Errorf("estimate %v, want %v", p.Estimate, est)
	}
	if u := rep.Partitions["users_by_id"]; u.Count != 4 || u.Largest.Rows != 1 {
		t.Errorf("users_by_id partitions %+v", u)
	}
	if !strings.Contains(rep.String(), "posts_by_author                          [users.id=4]  4 rows") {
		t.Errorf("report:\n%s", rep)
	}
}
