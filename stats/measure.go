package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/types"
)

// Options tune a measurement.
type Options struct {
	// Exact is the number of distinct values per attribute counted exactly
	// (0: DefaultExact); past it, a HyperLogLog sketch estimates.
	Exact int
	// Progress, if set, is called now and then with the relation being
	// read and its rows so far, and once when it is done.
	Progress func(relation string, rows int64, done bool)
}

// Relation is what was measured of one relation.
type Relation struct {
	Name  string
	Rows  int64
	Attrs []Attr // in Entity.Columns order
}

// Attr is what was measured of one attribute.
type Attr struct {
	Name     string
	Type     types.Type
	Distinct int64 // distinct non-NULL values
	Exact    bool  // Distinct is exact, not a HyperLogLog estimate
	NonNull  int64 // non-NULL values
	Bytes    int64 // total size of the non-NULL values (see Size)
}

// Size is the average size in bytes of a non-NULL value (package doc), or
// 0 if there is none.
func (a Attr) Size() float64 {
	if a.NonNull == 0 {
		return 0
	}
	return float64(a.Bytes) / float64(a.NonNull)
}

// Table measures one relation from its rows.
type Table struct {
	rel      Relation
	distinct []*Distinct
	buf      []byte
}

// NewTable returns a Table for the rows of e (values in e.Columns order).
func NewTable(e *catalog.Entity, opt Options) *Table {
	t := &Table{rel: Relation{Name: e.Name}}
	limit := opt.Exact
	if limit <= 0 {
		limit = DefaultExact
	}
	for _, c := range e.Columns {
		t.rel.Attrs = append(t.rel.Attrs, Attr{Name: c.Name, Type: c.Type})
		t.distinct = append(t.distinct, NewDistinct(limit))
	}
	return t
}

// Add counts one row: values in Entity.Columns order, each of its
// column's canonical Go type (package types) or nil.
func (t *Table) Add(row []types.Value) {
	t.rel.Rows++
	for i, v := range row {
		if v == nil {
			continue
		}
		a := &t.rel.Attrs[i]
		var size int
		t.buf, size = encode(t.buf[:0], v, a.Type)
		a.NonNull++
		a.Bytes += int64(size)
		t.distinct[i].Add(hash(t.buf))
	}
}

// Result is what the rows added so far measure.
func (t *Table) Result() Relation {
	r := t.rel
	r.Attrs = append([]Attr(nil), t.rel.Attrs...)
	for i, d := range t.distinct {
		r.Attrs[i].Distinct, r.Attrs[i].Exact = d.Count(), d.Exact()
	}
	return r
}

// encode appends to dst the bytes a value is counted by — equal values
// (types.Compare), and only they, encode alike — and returns them with
// the value's size (package doc).
func encode(dst []byte, v types.Value, t types.Type) ([]byte, int) {
	switch x := v.(type) {
	case string:
		return append(dst, x...), len(x)
	case []byte:
		return append(dst, x...), len(x)
	case int64:
		dst = binary.BigEndian.AppendUint64(dst, uint64(x))
	case float64:
		switch {
		case x == 0:
			x = 0 // -0 equals 0
		case math.IsNaN(x):
			x = math.NaN()
		}
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(x))
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		dst = append(dst, b)
	case time.Time:
		dst = binary.BigEndian.AppendUint64(dst, uint64(x.UnixMicro()))
	case types.Set, types.List, types.Map:
		// Its stored encoding, which is also its size.
		n := len(dst)
		dst, err := types.AppendCollection(dst, t, x)
		if err != nil {
			panic(fmt.Sprintf("stats: %s value %s: %v", t, types.Format(v), err))
		}
		return dst, len(dst) - n
	default:
		panic(fmt.Sprintf("stats: value %v of Go type %T is not a canonical value", v, v))
	}
	return dst, t.FixedWidth()
}

// hash is FNV-1a over 64 bits, then the finalizer of MurmurHash3 (fmix64):
// FNV-1a alone leaves the top bits, which pick a HyperLogLog register,
// poorly mixed for short inputs such as integers.
func hash(b []byte) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb53a185ac9a3
	h ^= h >> 33
	return h
}

// progressEvery is how many rows pass between calls of Options.Progress.
const progressEvery = 1 << 16

// MeasureFiles measures the relations of data files (dataio.Files), one
// file at a time.
func MeasureFiles(files []dataio.File, opt Options) ([]Relation, error) {
	var out []Relation
	for _, f := range files {
		t := NewTable(f.Entity, opt)
		err := dataio.ReadFile(f, func(row []types.Value) error {
			t.Add(row)
			if opt.Progress != nil && t.rel.Rows%progressEvery == 0 {
				opt.Progress(f.Entity.Name, t.rel.Rows, false)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if opt.Progress != nil {
			opt.Progress(f.Entity.Name, t.rel.Rows, true)
		}
		out = append(out, t.Result())
	}
	return out, nil
}
