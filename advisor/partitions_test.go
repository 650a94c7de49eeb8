package advisor

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
)

// bigPartitions: items by category make 10 partitions of 10⁶ items of
// 200 B each (200 MB apiece); an index of categories to item ids, 10
// partitions of 10⁶ × 16 B (16 MB).
const bigPartitionsModel = `
DEFINE RELATION items ROWS 10000000 {
  id BIGINT KEY SIZE 8,
  category BIGINT SIZE 8 CARDINALITY 10,
  title STRING SIZE 184
};`

const bigPartitionsWorkload = `
DEFINE WORKLOAD w MIXES (m) {
  GROUP Browse WEIGHTS (m 1) {
    SELECT items.id, items.title FROM items WHERE items.category = ?; -- 1
  }
  GROUP View WEIGHTS (m 1) {
    SELECT items.title FROM items WHERE items.id = ?; -- 2
  }
};`

// TestMaxPartition: candidates whose average partition passes
// --max-partition are refused (and counted), the optimum under the limit
// reads the category's items through smaller partitions where the mode
// offers them (an SI, a CF of ids by category), and a limit nothing meets
// fails naming it;
// without a limit the large partitions come back, with a warning.
func TestMaxPartition(t *testing.T) {
	needCBC(t)
	m, w := parse(t, bigPartitionsModel, bigPartitionsWorkload)
	run := func(mode Mode, max float64) (*Result, error) {
		return Advise(context.Background(), m, w, Options{Mix: "m", Profile: cost.Cassandra, Mode: mode, Solver: &solver.CBC{}, MaxPartition: max})
	}
	largest := func(res *Result) (p float64) {
		for _, x := range res.Indexes {
			p = max(p, x.PartitionBytes())
		}
		return p
	}
	free, err := run(WithSI, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, free)
	if largest(free) <= catalog.MaxPartitionBytes || free.Stats.LargePartitions != 0 {
		t.Fatalf("without a limit: largest partition %v, %d refused; want the 200 MB one chosen", largest(free), free.Stats.LargePartitions)
	}
	var text strings.Builder
	if err := free.WriteText(&text); err != nil || !strings.Contains(text.String(), "warning: partitions average 200MB") {
		t.Fatalf("no warning for 200 MB partitions (%v):\n%s", err, text.String())
	}
	limited, err := run(WithSI, 0) // the default: 100 MB
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, limited)
	if largest(limited) > catalog.MaxPartitionBytes || limited.Stats.LargePartitions == 0 {
		t.Fatalf("within 100 MB: largest partition %v, %d refused", largest(limited), limited.Stats.LargePartitions)
	}
	if limited.TotalCost < free.TotalCost {
		t.Fatalf("a limit lowered the cost: %v < %v", limited.TotalCost, free.TotalCost)
	}
	cfOnly, err := run(NoSI, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, cfOnly)
	if largest(cfOnly) > catalog.MaxPartitionBytes {
		t.Fatalf("CF-only within 100 MB: largest partition %v", largest(cfOnly))
	}
	// No structure keyed by category stays under 1 MB (10 partitions of a
	// million entries): no plan, and the error says why.
	if _, err := run(WithSI, 1e6); err == nil || !strings.Contains(err.Error(), "--max-partition") {
		t.Fatalf("within 1 MB: %v; want no plan, naming --max-partition", err)
	}
}

// TestBucketPartitions: with BucketPartitions, a column family over the
// limit is spread over the fewest partition buckets that bring it under
// (200 MB partitions: 2 buckets within 100 MB, 200 within 1 MB), so a
// limit no unbucketed structure meets has a plan; the optimum lies
// between the unlimited one and the one that refuses (bucketing adds a
// partition read per bucket, and only adds candidates); a limit that
// needs more than 256 buckets refuses still; the schema's DDL keeps the
// buckets.
func TestBucketPartitions(t *testing.T) {
	needCBC(t)
	m, w := parse(t, bigPartitionsModel, bigPartitionsWorkload)
	run := func(max float64, bucketed bool) (*Result, error) {
		return Advise(context.Background(), m, w, Options{Mix: "m", Profile: cost.Cassandra, Mode: NoSI, Solver: &solver.CBC{}, MaxPartition: max, BucketPartitions: bucketed})
	}
	free, err := run(math.Inf(1), true)
	if err != nil {
		t.Fatal(err)
	}
	if free.Stats.Bucketed != 0 {
		t.Fatalf("without a limit, %d candidates bucketed", free.Stats.Bucketed)
	}
	for _, tc := range []struct {
		max     float64
		buckets int // of the CF answering query 1
	}{{100e6, 2}, {1e6, 200}} {
		res, err := run(tc.max, true)
		if err != nil {
			t.Fatalf("within %g: %v", tc.max, err)
		}
		checkResult(t, res)
		found := false
		for _, x := range res.Indexes {
			if x.PartitionBytes() > tc.max {
				t.Fatalf("within %g: %s has partitions of %g", tc.max, x.Name, x.PartitionBytes())
			}
			found = found || x.PartitionBuckets == tc.buckets
		}
		if !found || res.Stats.Bucketed == 0 {
			t.Fatalf("within %g: no column family in %d buckets (%d bucketed):\n%s", tc.max, tc.buckets, res.Stats.Bucketed, lang.PrintScript(res.Schema.Statements()))
		}
		if res.TotalCost < free.TotalCost*(1-1e-9) {
			t.Fatalf("within %g: buckets cost %v, less than without a limit (%v)", tc.max, res.TotalCost, free.TotalCost)
		}
		if refused, err := run(tc.max, false); err == nil && res.TotalCost > refused.TotalCost*(1+1e-9) {
			t.Fatalf("within %g: buckets cost %v, more than refusing (%v)", tc.max, res.TotalCost, refused.TotalCost)
		} else if err != nil && tc.max != 1e6 {
			t.Fatal(err)
		}
		// The DDL round trip keeps the buckets.
		printed := lang.PrintScript(res.Schema.Statements())
		stmts, err := lang.ParseScript("schema.kvs", []byte(printed))
		if err != nil {
			t.Fatal(err)
		}
		s, err := catalog.ParseSchema(m, stmts)
		if err != nil {
			t.Fatal(err)
		}
		if got := lang.PrintScript(s.Statements()); got != printed || !strings.Contains(printed, "PARTITION_BUCKETS") {
			t.Fatalf("round trip:\n%s\n%s", printed, got)
		}
	}
	if _, err := run(10e3, true); err == nil || !strings.Contains(err.Error(), "--max-partition") {
		t.Fatalf("within 10 kB (20,000 buckets needed): %v; want no plan, naming --max-partition", err)
	}
}
