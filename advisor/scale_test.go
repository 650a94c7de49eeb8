package advisor

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/workload"
)

// combine joins models and their workloads (all of one mix list) into one
// model and one workload: every relation (and every relationship the same
// name is used for) of instance c > 1 suffixed _c, its groups and tags
// too, so the instances share no entity and no candidate index. The
// workload header is the first one's.
func combine(t tb, relations []string, models, workloads []string) (*catalog.Model, *workload.Workload) {
	t.Helper()
	rel := regexp.MustCompile(`\b(` + strings.Join(relations, "|") + `)\b`)
	group := regexp.MustCompile(`\bGROUP (\w+)`)
	tag := regexp.MustCompile(`-- (\w+)\s*$`)
	var ms, ws strings.Builder
	for c := range models {
		m, w := models[c], workloads[c]
		open, close := strings.Index(w, "{"), strings.LastIndex(w, "}")
		if open < 0 || close < open {
			t.Fatal("workload text has no body")
		}
		if c == 0 {
			ws.WriteString(w[:open+1] + "\n")
		}
		body := w[open+1 : close]
		if c > 0 {
			suffix := fmt.Sprintf("_%d", c+1)
			m = rel.ReplaceAllString(m, "${1}"+suffix)
			var lines []string
			for _, l := range strings.Split(body, "\n") {
				l = rel.ReplaceAllString(l, "${1}"+suffix)
				l = group.ReplaceAllString(l, "GROUP ${1}"+suffix)
				lines = append(lines, tag.ReplaceAllString(l, "-- ${1}"+suffix))
			}
			body = strings.Join(lines, "\n")
		}
		ms.WriteString(m + "\n")
		ws.WriteString(body + "\n")
	}
	ws.WriteString("};\n")
	return parse(t, ms.String(), ws.String())
}

// copies is k copies of one model and workload, combined.
func copies(t tb, modelSrc, workloadSrc string, relations []string, k int) (*catalog.Model, *workload.Workload) {
	t.Helper()
	var ms, ws []string
	for range k {
		ms, ws = append(ms, modelSrc), append(ws, workloadSrc)
	}
	return combine(t, relations, ms, ws)
}

var rubisRelations = []string{"categories", "regions", "users", "items", "bids", "comments", "buynow"}

// rubisCopies is RUBiS (the 36-statement workload) k times over.
func rubisCopies(t testing.TB, k int) (*catalog.Model, *workload.Workload) {
	return copies(t, examples.RUBiSModel, examples.RUBiSWorkload, rubisRelations, k)
}

// TestScaleRUBiS times the advisor on RUBiS ×k (bidding, no budget),
// decomposed and as one program, each twice and interleaved;
// KVSCHEMA_SCALE=1 runs it (k = 8 as one program takes minutes).
func TestScaleRUBiS(t *testing.T) {
	if os.Getenv("KVSCHEMA_SCALE") == "" {
		t.Skip("KVSCHEMA_SCALE=1 times RUBiS ×k")
	}
	needCBC(t)
	for _, k := range []int{1, 2, 4, 8} {
		m, w := rubisCopies(t, k)
		for run := 1; run <= 2; run++ {
			for _, one := range []bool{false, true} {
				start := time.Now()
				res, err := Advise(context.Background(), m, w, Options{Mix: "bidding", Profile: cost.Cassandra, Solver: &solver.CBC{}, oneProgram: one})
				if err != nil {
					t.Fatal(err)
				}
				how := "decomposed"
				if one {
					how = "one program"
				}
				t.Logf("k=%d %-11s run %d: %3d statements, %d programs, %v (solve %v), cost %.9g, optimal %v",
					k, how, run, len(res.Queries)+len(res.Writes), res.Stats.Components, time.Since(start).Round(time.Millisecond),
					res.Stats.SolveTime.Round(time.Millisecond), res.TotalCost, res.Stats.Optimal)
			}
		}
	}
}
