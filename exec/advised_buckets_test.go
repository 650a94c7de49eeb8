//go:build !race

package exec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store/memstore"
)

// bucketed returns s with every column family that can have partition
// buckets (a clustering key; no static columns, salt, split points or
// secondary index) spread over n of them, and how many it changed.
func bucketed(t testing.TB, m *catalog.Model, s *catalog.Schema, n int) (*catalog.Schema, int) {
	t.Helper()
	stmts := s.Statements()
	bases := map[string]bool{}
	for _, b := range s.Base {
		bases[b.Name] = true
	}
	k := 0
	for _, st := range stmts {
		if d, ok := st.(*lang.DefineColumnFamily); ok && len(d.Clustering) > 0 && len(d.Static) == 0 && d.SaltBuckets == 0 && d.SplitOn == nil && !bases[d.Name] {
			d.PartitionBuckets = n
			k++
		}
	}
	b, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatalf("%v\n%s", err, lang.PrintScript(stmts))
	}
	return b, k
}

// TestRUBiSBucketedAgainstSQLite runs the 61-statement workload on the
// advisor's schemas with every clustered column family's partitions spread
// over 3 buckets, and compares with SQLite (and verifies): reads of a
// partition read all its buckets and give its rows in clustering order.
func TestRUBiSBucketedAgainstSQLite(t *testing.T) {
	m, w := loadRUBiS(t, "workload_secondary.kvs")
	for _, mode := range []advisor.Mode{advisor.WithSI, advisor.NoSI} {
		t.Run(mode.String(), func(t *testing.T) {
			res := advise(t, m, w, mode, 161e6)
			s, n := bucketed(t, m, res.Schema, 3)
			if n < 3 {
				t.Fatalf("%d column families bucketed: the test checks little", n)
			}
			// Steps that read partitions read each in 3 parts, first
			// steps and later ones.
			en := exec.New(memstore.New(), m, s, cost.Cassandra)
			first, later := 0, 0
			for _, st := range w.Statements {
				if st.Query == nil {
					continue
				}
				p, err := en.PrepareAST(st.AST)
				if err != nil {
					t.Fatalf("%s: %v", st.Tag, err)
				}
				for _, line := range strings.Split(p.Explain(), "\n") {
					switch {
					case !strings.Contains(line, "EACH PARTITION IN 3 BUCKETS"):
					case strings.Contains(line, "FROM STEP"), strings.Contains(line, "OF STEP"):
						later++
					default:
						first++
					}
				}
			}
			t.Logf("%d first and %d later steps read partitions in 3 buckets", first, later)
			if first == 0 || later == 0 {
				t.Fatalf("%d first and %d later steps read partitions of bucketed column families: the test checks little", first, later)
			}
			bres := *res
			bres.Schema = s
			runRUBiS(t, m, w, &bres, memstore.New())
		})
	}
}

// TestPartitionBucketsVerify: verify reports a bucketed column family's
// stored partitions, one per bucket of each partition (a room's messages
// in 3), each named with its bucket.
func TestPartitionBucketsVerify(t *testing.T) {
	ctx := context.Background()
	schema := strings.Replace(chatSchema, "STATIC (rooms.name, rooms.updated), ", "", 1)
	schema = strings.Replace(schema, "VALUES (rooms.messages.body) }", "VALUES (rooms.messages.body), PARTITION_BUCKETS = 3 }", 1)
	en, err := exec.Deploy(ctx, memstore.New(), "model.kvs", []byte(chatModel), "schema.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		t.Fatal(err)
	}
	m := en.Model()
	counts := map[string]int{"rooms": 10, "messages": 300}
	d := gen.Generate(m, func(e *catalog.Entity) int { return counts[e.Name] }, 3, 0)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Fatalf("verify: %v", rep.Differences)
	}
	// 300 messages in 10 rooms: every room's messages fill its 3 buckets.
	p := rep.Partitions["room_messages"]
	if p.Count != 30 || !strings.Contains(p.Largest.Key, "bucket=") || p.Largest.Rows >= 30 {
		t.Fatalf("room_messages partitions: %d, largest %s with %d rows; want 30, each about 10 rows", p.Count, p.Largest.Key, p.Largest.Rows)
	}
	if q := rep.Partitions["rooms_by_id"]; q.Count != 10 || strings.Contains(q.Largest.Key, "bucket") {
		t.Fatalf("rooms_by_id partitions: %d, largest %s", q.Count, q.Largest.Key)
	}
}
