// Package observe counts the statements a DB runs on its advised schema,
// per normalized shape (the statement with its constants made parameters,
// as a query log's statements are: lang.Parameterize), and keeps the
// counts in the store, so that `kvschema workload` can write the workload
// the store actually serves as a query log (workload.ParseLog), ready for
// `advise --workload-log` (issue 19, workload drift).
//
// Storage: table Table, one row per shape (row key: the shape's text, or,
// for a shape longer than a row key may be, its SHA-256 with the text in a
// cell), family "c", one cell per Counter (per process: qualifier a random
// instance id) holding that counter's total as 8 big-endian bytes. A
// counter overwrites only its own cells, so processes sharing a store
// never conflict; Read sums the cells of a row.
//
// Invariants: a Counter's totals only grow; Flush writes every total the
// counter has, so a crash loses at most the counts since the last flush.
package observe

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
)

// Table is the reserved table holding the counts, named after the
// catalog's (catalog.Table), so that no layout reads it.
const Table = "__kvschema_observed"

const (
	family = "c"
	textQ  = "text" // the shape, in a row keyed by its hash
	// maxKey: shapes longer are keyed by their hash (row keys are at most
	// 4 KiB on Bigtable).
	maxKey = 1024
	// FlushEvery is how long counts may wait in memory before a statement
	// that counts starts a flush.
	FlushEvery = 10 * time.Second
)

// Shape is st normalized: printed with its constants as parameters (st is
// not changed). ok is false for statements that are no query or write.
func Shape(st lang.Statement) (shape string, ok bool) {
	switch x := st.(type) {
	case *lang.Insert:
		if len(x.Rows) > 1 {
			// An INSERT of n tuples is n INSERTs of one.
			one := *x
			one.Rows = one.Rows[:1]
			st = &one
		}
	case *lang.Select, *lang.Update, *lang.Delete, *lang.Connect:
	default:
		return "", false
	}
	// Parameterize works in place: on a copy, made by printing and
	// parsing again.
	cp, err := lang.ParseStatement("shape", lang.Print(st))
	if err != nil {
		return "", false
	}
	lang.Parameterize(cp)
	return lang.Print(cp), true
}

// Counter counts statements by shape for one process and flushes the
// totals to its store.
type Counter struct {
	st       store.Store
	instance []byte
	mu       sync.Mutex
	counts   map[string]*atomic.Uint64
	last     atomic.Int64 // unix nanoseconds of the last flush started
	flushing sync.Mutex
	bg       sync.WaitGroup
}

// New returns a counter flushing to st, with a fresh instance id.
func New(st store.Store) *Counter {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	c := &Counter{st: st, instance: []byte(hex.EncodeToString(id)), counts: map[string]*atomic.Uint64{}}
	c.last.Store(time.Now().UnixNano())
	return c
}

// For returns the count of shape, to add to (callers keep it: counting is
// then one atomic add).
func (c *Counter) For(shape string) *atomic.Uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.counts[shape]
	if n == nil {
		n = new(atomic.Uint64)
		c.counts[shape] = n
	}
	return n
}

// Count adds times to n (from For) and, when FlushEvery has passed since
// the last flush, starts one in the background.
func (c *Counter) Count(n *atomic.Uint64, times uint64) {
	n.Add(times)
	now := time.Now().UnixNano()
	last := c.last.Load()
	if now-last < int64(FlushEvery) || !c.last.CompareAndSwap(last, now) {
		return
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), FlushEvery)
		defer cancel()
		_ = c.Flush(ctx) // the next flush writes the totals again
	}()
}

// Flush writes every total of the counter.
func (c *Counter) Flush(ctx context.Context) error {
	c.flushing.Lock()
	defer c.flushing.Unlock()
	c.mu.Lock()
	shapes := make([]string, 0, len(c.counts))
	totals := make([]uint64, 0, len(c.counts))
	for s, n := range c.counts {
		if v := n.Load(); v > 0 {
			shapes, totals = append(shapes, s), append(totals, v)
		}
	}
	c.mu.Unlock()
	if len(shapes) == 0 {
		return nil
	}
	var muts []store.Mutation
	for i, s := range shapes {
		row := rowKey(s)
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: Table, Row: row, Family: family, Qualifier: c.instance, Value: binary.BigEndian.AppendUint64(nil, totals[i])})
		if string(row) != s {
			muts = append(muts, store.Mutation{Kind: store.SetCell, Table: Table, Row: row, Family: family, Qualifier: []byte(textQ), Value: []byte(s)})
		}
	}
	err := store.ApplyRows(ctx, c.st, muts)
	if errors.Is(err, store.ErrNoTable) {
		if err = c.st.CreateTable(ctx, store.TableSpec{Name: Table, Families: []string{family}}); err == nil {
			err = store.ApplyRows(ctx, c.st, muts)
		}
	}
	return err
}

// Close waits for a background flush, then flushes.
func (c *Counter) Close(ctx context.Context) error {
	c.bg.Wait()
	return c.Flush(ctx)
}

func rowKey(shape string) []byte {
	if len(shape) <= maxKey {
		return []byte(shape)
	}
	h := sha256.Sum256([]byte(shape))
	return append([]byte("#"), h[:]...)
}

// Entry is one observed shape and how often it ran, over every counter
// that flushed to the store.
type Entry struct {
	Shape string
	Count uint64
}

// Read returns the counts kept in st, most frequent first (then by
// shape); none when nothing was counted.
func Read(ctx context.Context, st store.Store) ([]Entry, error) {
	var out []Entry
	var bad error
	err := st.ReadRows(ctx, Table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		e := Entry{Shape: string(r.Key)}
		for _, c := range r.Cells {
			switch {
			case c.Family != family:
			case string(c.Qualifier) == textQ:
				e.Shape = string(c.Value)
			case len(c.Value) == 8:
				e.Count += binary.BigEndian.Uint64(c.Value)
			default:
				bad = errors.New("observe: a count cell of " + Table + " is not 8 bytes")
				return false
			}
		}
		out = append(out, e)
		return true
	})
	if errors.Is(err, store.ErrNoTable) {
		return nil, nil
	}
	if err == nil {
		err = bad
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Shape < out[j].Shape
	})
	return out, err
}
