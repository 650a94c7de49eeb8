package pebblestore

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

func BenchmarkZZPair(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	starts := benchStarts()
	ranges := make([]store.Range, len(starts))
	bounds := make([]pebble.IterOptions, len(starts))
	for i, start := range starts {
		ranges[i] = store.Range{Start: benchRowKey(start), End: benchRowKey(start + 100)}
		bounds[i] = pebble.IterOptions{
			LowerBound: appendEnc(tablePrefix(benchTable), benchRowKey(start)),
			UpperBound: appendEnc(tablePrefix(benchTable), benchRowKey(start+100)),
		}
	}
	rs := store.RowSet{Ranges: make([]store.Range, 1)}
	var tl, tr time.Duration
	i := 0
	for b.Loop() {
		layer := func() {
			rs.Ranges[0] = ranges[i%len(ranges)]
			n := 0
			s.ReadRows(ctx, benchTable, rs, store.ReadOptions{}, func(r store.Row) bool {
				n += len(r.Key) + len(r.Cells[0].Value)
				return true
			})
		}
		raw := func() {
			it, _ := s.db.NewIter(&bounds[(i+7919)%len(bounds)])
			m := 0
			for ok := it.First(); ok; ok = it.Next() {
				v, _ := it.ValueAndErr()
				m += len(it.Key()) + len(v)
			}
			it.Close()
		}
		t0 := time.Now()
		layer()
		t1 := time.Now()
		raw()
		t2 := time.Now()
		tl += t1.Sub(t0)
		tr += t2.Sub(t1)
		i++
	}
	b.ReportMetric(float64(tl.Nanoseconds())/float64(i), "layer-ns")
	b.ReportMetric(float64(tr.Nanoseconds())/float64(i), "raw-ns")
	b.ReportMetric(float64(tl)/float64(tr), "ratio")
}

func BenchmarkZZPairGet(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	order := benchOrder()
	rows := make([][]byte, benchRows)
	cells := make([][]byte, benchRows)
	for i := range rows {
		rows[i] = benchRowKey(i)
		cells[i] = benchCellKey(i)
	}
	var tl, tr time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		s.ReadRow(ctx, benchTable, rows[order[i%benchRows]])
		t1 := time.Now()
		v, c, _ := s.db.Get(cells[order[(i+7919)%benchRows]])
		_ = v
		c.Close()
		t2 := time.Now()
		tl += t1.Sub(t0)
		tr += t2.Sub(t1)
		i++
	}
	b.ReportMetric(float64(tl.Nanoseconds())/float64(i), "layer-ns")
	b.ReportMetric(float64(tr.Nanoseconds())/float64(i), "raw-ns")
	b.ReportMetric(float64(tl)/float64(tr), "ratio")
}
