package pebblestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

// The benchmarks pair each operation of this layer with the raw Pebble
// operation that does the same work on the same data, so the overhead of
// the layer shows. Both write without fsync.

const (
	benchRows  = 100_000
	benchTable = "bench"
)

var benchValue = make([]byte, 100)

func benchRowKey(i int) []byte { return fmt.Appendf(nil, "row%08d", i) }

// benchCellKey is the Pebble key of row i's single cell f:q.
func benchCellKey(i int) []byte {
	return append(appendEnc(tablePrefix(benchTable), benchRowKey(i)), "f\x00q"...)
}

// benchStore returns a store whose table holds benchRows one-cell rows,
// flushed and compacted so that reads do not depend on the memtable.
func benchStore(b *testing.B) *Store {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateTable(ctx, store.TableSpec{Name: benchTable, Families: []string{"f"}}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < benchRows; i += 1000 {
		if err := s.Apply(ctx, benchPuts(i, 1000)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.db.Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchPuts(from, n int) []store.Mutation {
	muts := make([]store.Mutation, n)
	for j := range muts {
		muts[j] = store.Mutation{Kind: store.SetCell, Table: benchTable, Row: benchRowKey(from + j), Family: "f", Qualifier: []byte("q"), Value: benchValue}
	}
	return muts
}

// benchOrder is a fixed random order of row numbers, so both benchmarks of
// a pair read the same rows.
func benchOrder() []int { return rand.New(rand.NewPCG(1, 2)).Perm(benchRows) }

func BenchmarkReadRow(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	order := benchOrder()
	keys := make([][]byte, benchRows)
	for i := range keys {
		keys[i] = benchRowKey(i)
	}
	i := 0
	stop := cpuTime(b)
	for b.Loop() {
		r, ok, err := s.ReadRow(ctx, benchTable, keys[order[i%benchRows]])
		if err != nil || !ok || len(r.Cells[0].Value) != len(benchValue) {
			b.Fatal(r, ok, err)
		}
		i++
	}
	stop()
}

func BenchmarkRawGet(b *testing.B) {
	s := benchStore(b)
	order := benchOrder()
	keys := make([][]byte, benchRows)
	for i := range keys {
		keys[i] = benchCellKey(i)
	}
	i := 0
	stop := cpuTime(b)
	for b.Loop() {
		v, closer, err := s.db.Get(keys[order[i%benchRows]])
		if err != nil || len(v) != len(benchValue) {
			b.Fatal(len(v), err)
		}
		closer.Close()
		i++
	}
	stop()
}

// benchStarts are the first rows of the 100-row ranges the scans read.
func benchStarts() []int {
	order := benchOrder()
	for i := range order {
		order[i] %= benchRows - 100
	}
	return order
}

func BenchmarkReadRows100(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	starts := benchStarts()
	ranges := make([]store.Range, len(starts))
	for i, start := range starts {
		ranges[i] = store.Range{Start: benchRowKey(start), End: benchRowKey(start + 100)}
	}
	rs := store.RowSet{Ranges: make([]store.Range, 1)}
	i := 0
	stop := cpuTime(b)
	for b.Loop() {
		rs.Ranges[0] = ranges[i%len(ranges)]
		n := 0
		err := s.ReadRows(ctx, benchTable, rs, store.ReadOptions{}, func(r store.Row) bool {
			n += len(r.Key) + len(r.Cells[0].Value)
			return true
		})
		if err != nil || n != 100*(11+len(benchValue)) {
			b.Fatal(n, err)
		}
		i++
	}
	stop()
}

func BenchmarkRawIter100(b *testing.B) {
	s := benchStore(b)
	starts := benchStarts()
	bounds := make([]pebble.IterOptions, len(starts))
	for i, start := range starts {
		bounds[i] = pebble.IterOptions{
			LowerBound: appendEnc(tablePrefix(benchTable), benchRowKey(start)),
			UpperBound: appendEnc(tablePrefix(benchTable), benchRowKey(start+100)),
		}
	}
	i := 0
	stop := cpuTime(b)
	for b.Loop() {
		it, err := s.db.NewIter(&bounds[i%len(bounds)])
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				b.Fatal(err)
			}
			n += len(it.Key()) + len(v)
		}
		if err := it.Close(); err != nil || n != 100*(len(benchCellKey(0))+len(benchValue)) {
			b.Fatal(n, err)
		}
		i++
	}
	stop()
}

func BenchmarkApply1000(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	batches := make([][]store.Mutation, benchRows/1000)
	for j := range batches {
		batches[j] = benchPuts(j*1000, 1000)
	}
	i := 0
	for b.Loop() {
		if err := s.Apply(ctx, batches[i%len(batches)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkRawBatch1000(b *testing.B) {
	s := benchStore(b)
	keys := make([][]byte, benchRows)
	for i := range keys {
		keys[i] = benchCellKey(i)
	}
	i := 0
	for b.Loop() {
		batch := s.db.NewBatch()
		from := i % (benchRows / 1000) * 1000
		for _, k := range keys[from : from+1000] {
			if err := batch.Set(k, benchValue, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		batch.Close()
		i++
	}
}

// cpuTime starts measuring the CPU time the process spends (GC included)
// and returns a function that reports it per operation, as "cpu-ns/op": on
// a shared machine it varies much less than the wall time.
func cpuTime(b *testing.B) (stop func()) {
	start := rusageNanos()
	return func() {
		b.ReportMetric(float64(rusageNanos()-start)/float64(b.N), "cpu-ns/op")
	}
}

func rusageNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
