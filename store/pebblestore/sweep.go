package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

// sweepChunk is how many keys a sweep reads, and deletes the expired ones
// of, while it holds writers off (guard).
const sweepChunk = 1024

// SweepExpired removes the cells of tables with expiry whose expiry has
// passed at store.Now(ctx) (store.Sweeper). It goes through each table in
// chunks of keys, each read and its expired cells deleted (as DeleteCell,
// indexes following) while every write waits (guard), so that none
// rewrites a cell between the read and the delete.
func (s *Store) SweepExpired(ctx context.Context, progress func(table string, cells int64)) (int64, error) {
	now := store.Now(ctx).UnixMicro()
	tables := *s.tables.Load()
	names := make([]string, 0, len(tables))
	for name, t := range tables {
		if t.expiry {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var total int64
	for _, name := range names {
		t := tables[name]
		start := slices.Clone(t.prefix)
		end := endOfPrefix(slices.Clone(t.prefix))
		var n int64
		for start != nil {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			var k int
			var err error
			if k, start, err = s.sweepChunk(ctx, t, start, end, now); err != nil {
				return total, fmt.Errorf("pebblestore: sweeping %s: %w", name, err)
			}
			n += int64(k)
			total += int64(k)
		}
		if progress != nil {
			progress(name, n)
		}
	}
	return total, nil
}

// sweepChunk deletes the expired cells among up to sweepChunk keys of t
// from start (below end), and returns how many and where the next chunk
// starts (nil: the table is done).
func (s *Store) sweepChunk(ctx context.Context, t *table, start, end []byte, now int64) (int, []byte, error) {
	r, err := s.enterReader(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer s.exitReader(r)
	s.guard.Lock()
	defer s.guard.Unlock()
	if cur := (*s.tables.Load())[t.spec.Name]; cur != t {
		return 0, nil, nil // dropped or replaced meanwhile: nothing of it to sweep
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return 0, nil, err
	}
	var muts []store.Mutation
	var next []byte
	seen := 0
	for ok := it.First(); ok; ok = it.Next() {
		if seen == sweepChunk {
			next = slices.Clone(it.Key())
			break
		}
		seen++
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return 0, nil, err
		}
		if len(v) < 9 || v[0] != valueExpiring || int64(binary.BigEndian.Uint64(v[1:9])) > now {
			continue
		}
		k := it.Key()[len(t.prefix):]
		row := make([]byte, len(k))
		rn, encLen, err := decodeEnc(row, k)
		if err != nil {
			it.Close()
			return 0, nil, err
		}
		fq := k[encLen:]
		f := bytes.IndexByte(fq, 0)
		if f < 0 {
			it.Close()
			return 0, nil, errCorrupt
		}
		muts = append(muts, store.Mutation{Kind: store.DeleteCell, Table: t.spec.Name, Row: row[:rn], Family: string(fq[:f]), Qualifier: slices.Clone(fq[f+1:])})
	}
	if err := it.Close(); err != nil {
		return 0, nil, err
	}
	if len(muts) > 0 {
		if err := s.apply(r, muts, nil); err != nil {
			return 0, nil, err
		}
	}
	return len(muts), next, nil
}
