// Migration-aware advice (issue 19): a recommendation weighed against the
// schema deployed now.

package advisor

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/workload"
)

// Migration is what a recommendation made with Options.Current changes:
// the deployed indexes it keeps (under their deployed names), those it
// adds and those it drops; the backfill of the added ones (rows, bytes,
// and the profile's cost of writing them, in seconds of store work); and
// the workload's cost on the deployed schema (CurrentCost; +Inf when it
// cannot answer some query, CurrentErr says why).
type Migration struct {
	Keep, Add, Drop       []*catalog.Index
	BuildRows, BuildBytes float64
	BuildCost             float64
	CurrentCost           float64
	CurrentErr            string
	// GainPerDay is the store work the change saves a day at the
	// workload's rate, in seconds; PaybackDays the days it takes to save
	// the backfill's cost (+Inf when it saves nothing).
	GainPerDay, PaybackDays float64
	totalCost               float64
}

// migration compares r with opt.Current: keeps the deployed names of the
// indexes it keeps, and fills r.Migration.
func (r *Result) migration(m *catalog.Model, w *workload.Workload, opt Options) error {
	mg := &Migration{totalCost: r.TotalCost}
	kept := map[string]bool{}
	// Every deployed name is taken: a new structure named as a dropped
	// one would meet its table.
	used := map[string]bool{}
	for _, x := range opt.Current.Indexes {
		used[strings.ToLower(x.Name)] = true
	}
	for _, x := range r.Indexes {
		if name, ok := opt.currentKeys[x.Key]; ok {
			x.Name = name
			kept[x.Key] = true
			mg.Keep = append(mg.Keep, x)
		}
	}
	for _, x := range r.Indexes {
		if kept[x.Key] {
			continue
		}
		for base, n := x.Name, 2; used[strings.ToLower(x.Name)]; n++ {
			x.Name = fmt.Sprintf("%s_%d", base, n) // a deployed index has the name
		}
		used[strings.ToLower(x.Name)] = true
		mg.Add = append(mg.Add, x)
		mg.BuildRows += x.Entries
		mg.BuildBytes += x.Size
		mg.BuildCost += opt.Profile.Write(x.Entries, 0)
	}
	for _, x := range opt.Current.Indexes {
		if !kept[x.Key] {
			mg.Drop = append(mg.Drop, x)
		}
	}
	sort.Slice(r.Indexes, func(i, j int) bool { return r.Indexes[i].Name < r.Indexes[j].Name })
	cur := opt
	cur.Current, cur.currentKeys = nil, nil
	ev, err := Evaluate(m, w, opt.Current, cur)
	if err != nil {
		mg.CurrentCost, mg.CurrentErr = math.Inf(1), err.Error()
	} else {
		mg.CurrentCost = ev.TotalCost
	}
	// A weighted cost unit is one run of the mix's weights: per second,
	// Rate/Σweights of them (opt.buildWeight·Amortize).
	perSecond := 1 / (opt.buildWeight * opt.Amortize.Seconds())
	mg.GainPerDay = (mg.CurrentCost - r.TotalCost) * perSecond * 86400
	mg.PaybackDays = math.Inf(1)
	if mg.GainPerDay > 0 {
		mg.PaybackDays = mg.BuildCost / mg.GainPerDay
	}
	r.Migration = mg
	return nil
}

// WriteText writes the migration for a reader: what is kept, added and
// dropped, the backfill, and what the change gains.
func (mg *Migration) WriteText(b *strings.Builder) {
	names := func(xs []*catalog.Index) string {
		if len(xs) == 0 {
			return "none"
		}
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = x.Name
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(b, "\nMigration from the deployed schema\n")
	fmt.Fprintf(b, "  keep %d: %s\n", len(mg.Keep), names(mg.Keep))
	fmt.Fprintf(b, "  add %d: %s\n", len(mg.Add), names(mg.Add))
	fmt.Fprintf(b, "  drop %d: %s\n", len(mg.Drop), names(mg.Drop))
	if len(mg.Add) > 0 {
		fmt.Fprintf(b, "  backfill: %s rows, %s, %.4g s of store writes\n", fmtCount(mg.BuildRows), units.Format(mg.BuildBytes), mg.BuildCost)
	}
	switch {
	case mg.CurrentErr != "":
		fmt.Fprintf(b, "  the deployed schema cannot run this workload: %s\n", mg.CurrentErr)
	case len(mg.Add) == 0 && len(mg.Drop) == 0:
		fmt.Fprintf(b, "  nothing to change: the workload costs %.6g on the deployed schema\n", mg.CurrentCost)
	default:
		fmt.Fprintf(b, "  workload cost %.6g, on the deployed schema %.6g: saves %.4g s of store work a day", mg.totalCost, mg.CurrentCost, mg.GainPerDay)
		if !math.IsInf(mg.PaybackDays, 1) && len(mg.Add) > 0 {
			fmt.Fprintf(b, ", the backfill paid back in %.3g days", mg.PaybackDays)
		}
		b.WriteString("\n")
	}
}
