package stats

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
)

// Apply writes measured statistics into the definitions of a model
// (catalog.Definitions): each measured relation's ROWS, and each of its
// attributes' SIZE (the average size rounded, at least 1) and CARDINALITY
// (the distinct values clamped to [1, ROWS]; not for a key, whose
// cardinality is its relation's ROWS). Foreign keys get theirs too, for
// the reader: the advisor derives a relationship's fan-out from the ROWS
// of its two relations. An attribute that is NULL in every row keeps its
// SIZE. It returns a warning per thing the user should look at: a
// relation without data (its statistics are left as they were), one with
// no rows (written ROWS 1, as a relation needs a positive count), a key
// with duplicate values.
func Apply(defs []*lang.DefineRelation, rels []Relation, opt ApplyOptions) []string {
	byName := map[string]Relation{}
	for _, r := range rels {
		byName[strings.ToLower(r.Name)] = r
	}
	var warn []string
	for _, d := range defs {
		r, ok := byName[strings.ToLower(d.Name)]
		if !ok {
			what := "ROWS missing: advise needs it"
			if d.Rows > 0 {
				what = fmt.Sprintf("left as the model gives them (ROWS %d)", d.Rows)
			}
			warn = append(warn, fmt.Sprintf("relation %s: no data; its statistics are %s", d.Name, what))
			continue
		}
		if r.Rows == 0 {
			warn = append(warn, fmt.Sprintf("relation %s: no rows in the data; written ROWS 1 (edit it if the relation will hold data)", d.Name))
		}
		d.Rows = max(r.Rows, 1)
		for i := range d.Attrs {
			a := &d.Attrs[i]
			m, ok := measured(r, a.Name)
			if !ok {
				continue
			}
			if m.NonNull > 0 && (a.Size == 0 || !opt.KeepSizes) {
				a.Size = max(int64(math.Round(m.Size())), 1)
			}
			if a.Key {
				if m.Distinct < r.Rows && m.Exact {
					warn = append(warn, fmt.Sprintf("relation %s: key %s has %d distinct values in %d rows: the data holds duplicate keys", d.Name, a.Name, m.Distinct, r.Rows))
				}
				a.Cardinality = 0
				continue
			}
			a.Cardinality = clamp(m.Distinct, d.Rows)
		}
	}
	return warn
}

// ApplyOptions say which statistics Apply leaves as the model gives them.
type ApplyOptions struct {
	// KeepSizes keeps every SIZE the model declares, measuring only the
	// missing ones (a benchmark that compares its costs with the model's).
	KeepSizes bool
}

// clamp puts a number of distinct values in [1, rows].
func clamp(distinct, rows int64) int64 { return min(max(distinct, 1), max(rows, 1)) }

func measured(r Relation, attr string) (Attr, bool) {
	for _, a := range r.Attrs {
		if strings.EqualFold(a.Name, attr) {
			return a, true
		}
	}
	return Attr{}, false
}

// staleFactor is how far a statistic may be from the data's before it is
// stale: more than 2× either way.
const staleFactor = 2

// Compare says where the statistics of m are stale against the data
// measured: a relation's ROWS, or a non-key field's CARDINALITY (as the
// model reads it, ROWS when not declared), more than 2× off either way. A
// warning names the relation, the attribute and both numbers. A relation
// without data is noted: its statistics cannot be checked.
func Compare(m *catalog.Model, rels []Relation) []string {
	byName := map[string]Relation{}
	for _, r := range rels {
		byName[strings.ToLower(r.Name)] = r
	}
	var warn []string
	for _, e := range m.Entities {
		r, ok := byName[strings.ToLower(e.Name)]
		if !ok {
			warn = append(warn, fmt.Sprintf("relation %s: no data, its statistics are not checked", e.Name))
			continue
		}
		rows := float64(max(r.Rows, 1))
		if off(e.Count, rows) {
			warn = append(warn, fmt.Sprintf("relation %s: ROWS %.0f in the model, %d in the data", e.Name, e.Count, r.Rows))
		}
		for _, f := range e.Fields {
			a, ok := measured(r, f.Name)
			if f.Key || !ok {
				continue
			}
			if d := float64(clamp(a.Distinct, r.Rows)); off(f.Cardinality, d) {
				approx := ""
				if !a.Exact {
					approx = "≈"
				}
				warn = append(warn, fmt.Sprintf("relation %s: attribute %s has CARDINALITY %.0f in the model, %s%.0f in the data", e.Name, f.Name, f.Cardinality, approx, d))
			}
		}
	}
	return warn
}

func off(model, data float64) bool { return model > staleFactor*data || data > staleFactor*model }
