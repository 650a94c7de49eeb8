package plan

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/lang"
)

// Explain prints the plan in Apache Phoenix's EXPLAIN vocabulary, one step
// per line, followed by the layout decision of each conjunct.
func (p *Plan) Explain() string {
	var b strings.Builder
	if len(p.Accesses) == 0 {
		b.WriteString("EMPTY RESULT (the WHERE clause can never be true)\n")
	}
	for _, acc := range p.Accesses {
		b.WriteString(accessLine(acc, p.Reverse))
		b.WriteByte('\n')
		if n := len(acc.Reads); n > 0 && (len(acc.Reads[0].Partitions) > 0 || acc.Reads[0].PreloadRows) {
			b.WriteString(partitionsLine(acc, p.Reverse))
			b.WriteByte('\n')
		}
	}
	if p.Residual != nil {
		fmt.Fprintf(&b, "    CLIENT FILTER BY %s\n", lang.PrintExpr(p.Residual))
	}
	if len(p.Accesses) > 1 {
		fmt.Fprintf(&b, "CLIENT UNION OF %d LAYOUT READS, DISTINCT BY PRIMARY KEY\n", len(p.Accesses))
	}
	if p.Merge {
		b.WriteString("CLIENT MERGE SORT\n")
	}
	if p.Sort {
		var keys []string
		for _, o := range p.OrderBy {
			k := p.Relation.Attrs[o.Attr].Name
			if o.Desc {
				k += " DESC"
			}
			keys = append(keys, k)
		}
		fmt.Fprintf(&b, "CLIENT SORT BY [%s]\n", strings.Join(keys, ", "))
	}
	if p.Limit >= 0 {
		if p.PerRead > 0 {
			fmt.Fprintf(&b, "    SERVER %d ROW LIMIT\n", p.PerRead)
		}
		fmt.Fprintf(&b, "CLIENT %d ROW LIMIT\n", p.Limit)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "NOTE %s\n", n)
	}
	for _, c := range p.Chosen {
		label := ""
		if len(p.Chosen) > 1 {
			label = fmt.Sprintf(" for conjunct %d", c.Conjunct+1)
		}
		fmt.Fprintf(&b, "LAYOUT %s CHOSEN%s: %s\n", c.Winner.Layout.Name, label, describe(c.Model, c.Winner))
		for _, l := range c.Losers {
			fmt.Fprintf(&b, "LAYOUT %s REJECTED%s: %s (%s)\n", l.Layout.Name, label, describe(c.Model, l), kindName(l))
		}
	}
	return b.String()
}

func kindName(a *Access) string {
	switch a.Kind {
	case PointLookup:
		return "POINT LOOKUP"
	case SkipScan:
		return "SKIP SCAN"
	case RangeScan:
		return "RANGE SCAN"
	}
	return "FULL SCAN"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// accessLine is Phoenix's first EXPLAIN line for one access.
func accessLine(a *Access, reverse bool) string {
	over := a.Layout.Name
	var step string
	switch a.Kind {
	case PointLookup:
		step = fmt.Sprintf("POINT LOOKUP ON %s OVER %s", plural(a.NumKeys(), "KEY", "KEYS"), over)
	case SkipScan:
		n := a.NumRanges()
		what := plural(n+a.NumKeys(), "RANGE", "RANGES")
		if n == 0 {
			what = plural(a.NumKeys(), "KEY", "KEYS")
		}
		step = fmt.Sprintf("SKIP SCAN ON %s OVER %s", what, over)
	case RangeScan:
		step = "RANGE SCAN OVER " + over
	default:
		step = "FULL SCAN OVER " + over
	}
	if reverse && a.Kind != PointLookup {
		step = "REVERSE " + step
	}
	if a.Kind != FullScan && a.Kind != PointLookup {
		step += " " + bounds(a)
	}
	for _, r := range a.Reads {
		if r.Table == "" {
			step += " IN EVERY TABLE OF THE LAYOUT" // TABLE depends on unfixed attributes
			break
		}
	}
	return fmt.Sprintf("CLIENT PARALLEL %d-WAY %s", max(len(a.Reads), 1), step)
}

// partitionsLine says how a read of a layout with static columns meets
// the partition rows holding them.
func partitionsLine(a *Access, reverse bool) string {
	if a.Reads[0].PreloadRows {
		return "    STATIC COLUMNS: THE SAME RANGES READ FORWARD FIRST FOR THEIR PARTITION ROWS"
	}
	n := 0
	for _, r := range a.Reads {
		n += len(r.Partitions)
	}
	if reverse {
		return fmt.Sprintf("    STATIC COLUMNS: %s READ IN A PARALLEL CALL, DECODED BEFORE THE ROWS", plural(n, "PARTITION ROW", "PARTITION ROWS"))
	}
	return fmt.Sprintf("    STATIC COLUMNS: %s READ WITH THE ROWS (SAME CALL)", plural(n, "PARTITION ROW", "PARTITION ROWS"))
}

func bounds(a *Access) string {
	lo, hi := a.Bounds()
	if a.FanOut > 0 {
		lo = append([]string{"0"}, lo...)
		hi = append([]string{fmt.Sprint(a.FanOut - 1)}, hi...)
	}
	l := "[" + strings.Join(lo, ",") + "]"
	h := "[" + strings.Join(hi, ",") + "]"
	if l == h {
		return l
	}
	return l + " - " + h
}
