package pebblestore

import (
	"bytes"
	"context"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

// ReadCells implements store.CellReader: the cells come straight from the
// iterator, with nothing copied but each row's key (unescaped once per
// row). A row's cells come in reverse order in reverse reads.
func (s *Store) ReadCells(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(row []byte, c store.Cell, first bool) bool) error {
	r, t, err := s.enterTable(ctx, name)
	if err != nil {
		return err
	}
	defer s.exitReader(r)
	return s.readCellsWith(r, t, rs, opts, fn)
}

// readCellsWith is ReadCells with reader r.
func (s *Store) readCellsWith(r *reader, t *table, rs store.RowSet, opts store.ReadOptions, fn func(row []byte, c store.Cell, first bool) bool) error {
	c := cellScan{r: r, t: t, fn: fn, limit: opts.Limit}
	if len(rs.Ranges) == 0 {
		return c.keys(s, rs.Keys, opts.Reverse)
	}
	ranges := readRanges(rs, opts.Reverse)
	if len(ranges) == 0 {
		return nil
	}
	it, err := r.iter(s, true)
	if err != nil {
		return err
	}
	for _, rg := range ranges {
		r.setBounds(it, t, rg)
		var ok bool
		if opts.Reverse {
			ok = it.Last()
		} else {
			ok = it.First()
		}
		if more, err := c.run(it, ok, opts.Reverse); err != nil || !more {
			return err
		}
	}
	return nil
}

// cellScan passes an iterator's cells to a ReadCells callback.
type cellScan struct {
	r     *reader
	t     *table
	fn    func(row []byte, c store.Cell, first bool) bool
	limit int // rows; 0: none
	rows  int // rows begun
	// begun: a cell of the current row has been passed on (the others
	// may have expired).
	begun bool
}

// run passes on the cells from where it is (ok: at a cell) to the end of
// its bounds, or of its prefix after a prefix seek; more is false once fn
// or the limit stopped the read.
func (c *cellScan) run(it *pebble.Iterator, ok, reverse bool) (more bool, err error) {
	c.r.encLen = 0
	for ; ok; ok = step(it, reverse) {
		more, err := c.cell(it)
		if err != nil {
			return false, c.r.fail(err)
		}
		if !more {
			return false, nil
		}
	}
	if err := it.Error(); err != nil {
		return false, c.r.fail(err)
	}
	return true, nil
}

// cell passes on the cell it is at; more is false once fn or the limit
// stops the read.
func (c *cellScan) cell(it *pebble.Iterator) (more bool, err error) {
	r := c.r
	k := it.Key()[len(c.t.prefix):]
	// No encoding is a prefix of another: a key with the current row's
	// encoding as prefix belongs to that row.
	if r.encLen == 0 || !bytes.HasPrefix(k, r.buf[:r.encLen]) {
		if c.rows == c.limit && c.limit > 0 {
			return false, nil
		}
		if err := r.startRow(k); err != nil {
			return false, err
		}
		r.buf = append(r.buf, k[:r.encLen]...)
		c.begun = false
	}
	fq := k[r.encLen:]
	f := bytes.IndexByte(fq, 0)
	if f < 0 {
		return false, errCorrupt
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return false, err
	}
	if c.t.expiry {
		var live bool
		if v, live, err = r.unwrapValue(v); err != nil || !live {
			return err == nil, err // an expired cell: not passed on
		}
	}
	first := !c.begun
	if first {
		c.rows++ // a row counts once a cell of it is live
		c.begun = true
	}
	return c.fn(r.rowKey(), store.Cell{Family: c.t.family(fq[:f]), Qualifier: fq[f+1:], Value: v}, first), nil
}

// keys reads the rows of keys, in key order, with a prefix seek each (as
// readKeys does).
func (c *cellScan) keys(s *Store, keys [][]byte, reverse bool) error {
	r := c.r
	if len(keys) == 0 {
		return nil
	}
	keys = r.sortKeys(keys, reverse)
	defer clear(r.keys) // keep none of the caller's keys
	it, err := r.iter(s, false)
	if err != nil {
		return err
	}
	for _, key := range keys {
		r.key = appendEnc(append(r.key[:0], c.t.prefix...), key)
		if more, err := c.run(it, it.SeekPrefixGE(r.key), false); err != nil || !more {
			return err
		}
	}
	return nil
}
