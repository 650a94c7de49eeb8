package exec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// TestAdvisedConditionalWrites: the advisor costs a conditional write's
// read of the tuple it names (workload.Statement.CondOf) and so
// recommends a column family the runtime can read it from, though no
// query of the workload reads those fields by key; the schema, deployed,
// runs the conditional writes; the read's plan is one step over such a
// family.
func TestAdvisedConditionalWrites(t *testing.T) {
	needCBC(t)
	ctx := context.Background()
	const model = `DEFINE RELATION users ROWS 1000 { id BIGINT KEY, nick STRING CARDINALITY 1000, karma BIGINT CARDINALITY 100 };
DEFINE RELATION posts ROWS 100000 { id BIGINT KEY, body STRING CARDINALITY 100000, author BIGINT REFERENCES users REVERSE posts };`
	const wl = `DEFINE WORKLOAD w MIXES (m) {
  GROUP Read WEIGHTS (m 10) {
    SELECT posts.body, users.nick FROM users.posts WHERE users.id = ?; -- posts
  }
  GROUP Vote WEIGHTS (m 1) {
    UPDATE users SET karma = ? WHERE users.id = ? IF users.karma = ?; -- vote
    INSERT INTO users SET id = ?, nick = ?, karma = 0 IF NOT EXISTS; -- join
  }
};`
	ms, err := lang.ParseScript("model.kvs", []byte(model))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(ms)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(m, "w.kvs", []byte(wl))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []advisor.Mode{advisor.WithSI, advisor.NoSI} {
		res, err := advisor.Advise(ctx, m, w, advisor.Options{Mix: "m", Profile: cost.Cassandra, Mode: mode, Solver: &solver.CBC{}})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, q := range res.Queries {
			cw := q.Statement.CondOf
			if cw == nil {
				continue
			}
			if len(q.Plan.Steps) != 1 || !cw.Write.CondSource(q.Plan.Steps[0].Index) {
				t.Fatalf("%s: the read of %s is planned as %d steps over %v", mode, cw.Tag, len(q.Plan.Steps), q.Plan.Steps[0].Index.Name)
			}
		}
		var ddl strings.Builder
		if err := res.WriteDDL(&ddl, m.Defs); err != nil {
			t.Fatal(err)
		}
		en, err := exec.Deploy(ctx, memstore.New(), "model.kvs", []byte(model), "schema.kvs", []byte(ddl.String()), cost.Cassandra)
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, ddl.String())
		}
		for _, tc := range []struct {
			src     string
			args    []types.Value
			applied bool
		}{
			{"INSERT INTO users SET id = ?, nick = ?, karma = 0 IF NOT EXISTS", []types.Value{int64(1), "ann"}, true},
			{"INSERT INTO users SET id = ?, nick = ?, karma = 0 IF NOT EXISTS", []types.Value{int64(1), "bob"}, false},
			{"UPDATE users SET karma = ? WHERE users.id = ? IF users.karma = ?", []types.Value{int64(1), int64(1), int64(0)}, true},
			{"UPDATE users SET karma = ? WHERE users.id = ? IF users.karma = ?", []types.Value{int64(2), int64(1), int64(0)}, false},
		} {
			st, err := en.Prepare(tc.src)
			if err != nil {
				t.Fatalf("%s: %s: %v\n%s", mode, tc.src, err, ddl.String())
			}
			o, err := st.ExecIf(ctx, tc.args...)
			if err != nil || o.Applied != tc.applied {
				t.Fatalf("%s: %s %v: applied %v (%v), want %v", mode, tc.src, tc.args, o.Applied, err, tc.applied)
			}
		}
	}
}
