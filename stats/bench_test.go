package stats

import (
	"testing"

	"github.com/kvschema/kvschema/types"
)

// BenchmarkTableAdd measures a row of four attributes, two of them unique
// (past the exact limit after 2^18 rows, as in a large relation).
func BenchmarkTableAdd(b *testing.B) {
	m := rubis(b)
	tbl := NewTable(m.Entity("bids"), Options{})
	row := make([]types.Value, len(m.Entity("bids").Columns))
	b.ReportAllocs()
	for i := range b.N {
		row[0], row[1], row[2] = int64(i), int64(i%5), float64(i)/3
		row[3], row[4], row[5] = nil, int64(i%1000), int64(i%5000)
		tbl.Add(row)
	}
}
