// Package datagen generates data for any conceptual model (catalog.Model)
// from its statistics, deterministically and streaming: the rows of every
// entity, one at a time, so memory does not grow with the data set.
//
// At scale S an entity with ROWS n has N = max(1, round(n·S)) rows. Its key
// values are 1..N for an INT or BIGINT key, or for a STRING key N distinct
// strings (the row's index in base 26, then letters up to the key's SIZE);
// a key of another type is an error naming the relation. Every other
// attribute is drawn so that its data matches its statistics:
//
//   - Distinct values. An attribute whose CARDINALITY is at least ROWS
//     (catalog.Build caps it there: the attribute is unique per row) has N
//     distinct values at any scale; another has min(CARDINALITY, N), also
//     capped by its type's domain (BOOL 2, INT 2^31, FLOAT 2^24, DOUBLE and
//     BIGINT 2^53, TIMESTAMP up to year 9999). The count is exact: row i
//     (from 0) takes value index perm(i) while i < C, perm a pseudo-random
//     affine permutation of [0, C), so every index appears, and a uniform
//     index of [0, C) after that. Value index j becomes j (integers and
//     floats), j = 1 (BOOL), 2022-01-01 plus j steps of span/C seconds
//     (TIMESTAMP), or a string of lowercase letters (STRING and BYTES): j in
//     base 26 in as many letters as C needs, so distinct indexes give
//     distinct values, then letters drawn from a stream seeded by j up to
//     the attribute's SIZE. A SIZE shorter than those base-26 letters is
//     exceeded, since distinctness wins.
//   - Foreign keys are drawn over the N' keys of the referenced entity:
//     uniform by default, so each parent has N/N' children on average (the
//     model's fan-out), or with Config.Skew s > 0 Zipfian, the rank-k parent
//     drawn with probability ∝ k^-s, ranks mapped to keys by a pseudo-random
//     affine permutation per attribute (so the hot parents of two foreign
//     keys differ).
//   - No NULLs: the model has no notion of a nullable attribute.
//
// Invariants:
//   - Deterministic: the same model and Config give the same rows. Each
//     entity draws from its own PCG stream seeded by Config.Seed and its
//     name (NewRand), and the permutations from streams of their attribute's
//     name, so a change to one entity changes no other entity's rows.
//   - Entities come parents first (dataio.ParentsFirst) and rows in key
//     order, so a foreign key refers to a row already emitted, except within
//     a reference cycle (a self-reference included), where keys 1..N' of an
//     entity not yet complete are referred to all the same.
//   - Streaming: per entity only its plan is kept (a few numbers per
//     attribute), never a row or a set of values.
package datagen

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/types"
)

// Config selects a data set of a model.
type Config struct {
	Scale float64 // fraction of each entity's ROWS
	Seed  uint64
	Skew  float64 // Zipf exponent of foreign keys; 0: uniform
}

// Emit receives one generated row: a value per entry of Entity.Columns, in
// that order. The row slice is reused once Emit returns; its values are
// not shared and may be kept.
type Emit func(e *catalog.Entity, row []types.Value) error

// MaxRows bounds an entity's row count, so that keys stay exact in a
// float64.
const MaxRows = 1 << 53

// Rows is the row count of an entity of count rows at a scale:
// max(1, round(count·scale)), at most MaxRows.
func Rows(count, scale float64) int64 {
	n := math.Round(count * scale)
	switch {
	case !(n >= 1): // also NaN
		n = 1
	case n > MaxRows:
		n = MaxRows
	}
	return int64(n)
}

// The span of generated timestamps starts at dateFrom and is spread over
// dateSpan seconds (2022 … 2025) when the cardinality allows.
var (
	dateFrom = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	dateSpan = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix() - dateFrom
	dateMax  = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() - dateFrom
)

// maxStrLen bounds a generated string.
const maxStrLen = 1 << 16

// domain is the number of distinct values of a type generators draw from
// (0: unbounded, as strings are).
func domain(t types.Type) uint64 {
	switch t {
	case types.Bool:
		return 2
	case types.Int:
		return 1 << 31
	case types.Float:
		return 1 << 24
	case types.BigInt, types.Double:
		return MaxRows
	case types.Timestamp:
		return uint64(dateMax)
	}
	return 0
}

type kind uint8

const (
	kKey   kind = iota // the row's key
	kField             // a value index, then a value of the type
	kRef               // a key of the referenced entity
)

// column is how one column's values are drawn.
type column struct {
	kind kind
	typ  types.Type
	name string
	// kField: card distinct value indexes, the first card rows by perm.
	// kRef: a parent index of card, by zipf (nil: uniform) and perm.
	card uint64
	perm affine
	zipf *zipf
	to   *entityPlan // kRef: the referenced entity
	text textCodec   // STRING and BYTES values
	step int64       // TIMESTAMP seconds between value indexes
	// A collection's elements (a MAP's values) and a MAP's keys: columns
	// of the element types over collectionDomain values.
	elem, key *column
}

// A generated collection holds 0 to 2·collectionMean elements (value
// index j holds j mod (2·collectionMean+1)), each drawn from
// collectionDomain values of its type by a hash of (j, position).
const (
	collectionMean   = 3
	collectionDomain = 64
)

// textCodec makes the string of a value index: the index in base 26, width
// letters, then letters from a stream seeded by (salt, index) up to size.
type textCodec struct {
	width, size int
	salt        uint64
}

func newTextCodec(card uint64, size float64, salt uint64) textCodec {
	w := 0
	for c := uint64(1); c < card; c *= 26 { // card ≤ MaxRows: c cannot overflow
		w++
	}
	sz := int(math.Round(size))
	return textCodec{width: w, size: min(max(sz, w), maxStrLen), salt: salt}
}

func (t textCodec) appendText(b []byte, idx uint64) []byte {
	x := idx
	for range t.width {
		b = append(b, 'a'+byte(x%26))
		x /= 26
	}
	if pad := t.size - t.width; pad > 0 {
		var r Rand
		r.p.Seed(t.salt, idx)
		n := len(b)
		b = append(b, make([]byte, pad)...)
		r.Letters(b[n:])
	}
	return b
}

// affine is the permutation i ↦ (a·i + b) mod n of [0, n), a coprime to n.
type affine struct{ a, b, n uint64 }

func newAffine(r *Rand, n uint64) affine {
	p := affine{a: 1, n: n}
	if n > 2 {
		for {
			p.a = 1 + r.Below(n-1)
			if gcd(p.a, n) == 1 {
				break
			}
		}
	}
	if n > 1 {
		p.b = r.Below(n)
	}
	return p
}

func (p affine) at(i uint64) uint64 {
	hi, lo := bits.Mul64(p.a, i)
	lo, carry := bits.Add64(lo, p.b, 0)
	return bits.Rem64(hi+carry, lo, p.n) // a, i < 2^53: hi+carry cannot overflow
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// entityPlan is how to generate one entity.
type entityPlan struct {
	ent  *catalog.Entity
	rows int64
	key  column // the key's codec, for the entities referring to this one
	cols []column
}

// keyValue is the key of the row of index i (from 0).
func (p *entityPlan) keyValue(i uint64, buf *[]byte) types.Value {
	if p.key.typ == types.String {
		*buf = p.key.text.appendText((*buf)[:0], i)
		return string(*buf)
	}
	return int64(i) + 1
}

// Generate emits every row of the data set of m that cfg describes, entity
// by entity parents first, rows in key order. An error of emit, or of ctx
// (checked every few thousand rows), stops it and is returned as is.
func Generate(ctx context.Context, m *catalog.Model, cfg Config, emit Emit) error {
	plans, err := plan(m, cfg)
	if err != nil {
		return err
	}
	for _, p := range plans {
		if err := p.run(ctx, cfg.Seed, emit); err != nil {
			return err
		}
	}
	return nil
}

// Counts returns the row count of each entity of m at a scale.
func Counts(m *catalog.Model, scale float64) map[string]int64 {
	out := make(map[string]int64, len(m.Entities))
	for _, e := range m.Entities {
		out[e.Name] = Rows(e.Count, scale)
	}
	return out
}

func plan(m *catalog.Model, cfg Config) ([]*entityPlan, error) {
	if !(cfg.Scale > 0) || math.IsInf(cfg.Scale, 0) {
		return nil, fmt.Errorf("datagen: scale %v is not a positive number", cfg.Scale)
	}
	if !(cfg.Skew >= 0) || math.IsInf(cfg.Skew, 0) {
		return nil, fmt.Errorf("datagen: skew %v is not a number ≥ 0", cfg.Skew)
	}
	order := dataio.ParentsFirst(m)
	byEnt := make(map[*catalog.Entity]*entityPlan, len(order))
	var plans []*entityPlan
	// Every entity's key first: a foreign key may refer to an entity of its
	// cycle that is planned later.
	for _, e := range order {
		p := &entityPlan{ent: e, rows: Rows(e.Count, cfg.Scale)}
		k := e.ID()
		p.key = column{kind: kKey, typ: k.Type, name: k.Name}
		switch k.Type {
		case types.BigInt:
		case types.Int:
			if p.rows > math.MaxInt32 {
				return nil, fmt.Errorf("datagen: relation %s: %d rows do not fit its INT key %s", e.Name, p.rows, k.Name)
			}
		case types.String:
			p.key.text = newTextCodec(uint64(p.rows), k.Size, hashName(e.Name+"."+k.Name)^cfg.Seed)
		default:
			return nil, fmt.Errorf("datagen: relation %s: key %s is %s; generated keys are INT, BIGINT or STRING", e.Name, k.Name, k.Type)
		}
		byEnt[e] = p
		plans = append(plans, p)
	}
	for _, p := range plans {
		for _, c := range p.ent.Columns {
			col, err := planColumn(p, c, byEnt, cfg)
			if err != nil {
				return nil, err
			}
			p.cols = append(p.cols, col)
		}
	}
	return plans, nil
}

func planColumn(p *entityPlan, c catalog.Column, byEnt map[*catalog.Entity]*entityPlan, cfg Config) (column, error) {
	e := p.ent
	qual := e.Name + "." + c.Name
	r := NewRand(cfg.Seed, qual)
	col := column{typ: c.Type, name: c.Name}
	if c.Nav != nil {
		to := byEnt[c.Nav.To]
		col.kind, col.to, col.card = kRef, to, uint64(to.rows)
		if cfg.Skew > 0 {
			col.zipf = newZipf(cfg.Skew, col.card)
			col.perm = newAffine(r, col.card)
		}
		return col, nil
	}
	f := c.Field
	if f.Key {
		return p.key, nil
	}
	// Cardinality: unique stays unique at any scale; else min(C, N).
	card := uint64(p.rows)
	if f.Cardinality < e.Count {
		card = uint64(max(1, min(math.Round(f.Cardinality), float64(p.rows))))
	}
	if d := domain(c.Type); d > 0 {
		card = min(card, d)
	}
	col.kind, col.card, col.perm = kField, card, newAffine(r, card)
	switch c.Type {
	case types.String, types.Bytes:
		col.text = newTextCodec(card, f.Size, r.Uint64())
	case types.Timestamp:
		col.step = max(1, dateSpan/int64(card))
	case types.Int, types.BigInt, types.Float, types.Double, types.Bool:
	default:
		if c.Type.IsCollection() {
			col.elem = scalarColumn(c.Type.Elem(), r.Uint64())
			if c.Type.Kind() == types.MapKind {
				col.key = scalarColumn(c.Type.Key(), r.Uint64())
			}
			break
		}
		return col, fmt.Errorf("datagen: relation %s: attribute %s has type %s, which the generator does not know", e.Name, c.Name, c.Type)
	}
	return col, nil
}

// ctxEvery is how many rows go between checks of the context.
const ctxEvery = 4096

func (p *entityPlan) run(ctx context.Context, seed uint64, emit Emit) error {
	r := NewRand(seed, p.ent.Name)
	row := make([]types.Value, len(p.cols))
	var buf []byte
	for i := uint64(0); i < uint64(p.rows); i++ {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for k := range p.cols {
			c := &p.cols[k]
			switch c.kind {
			case kKey:
				row[k] = p.keyValue(i, &buf)
			case kRef:
				var j uint64
				if c.zipf != nil {
					j = c.perm.at(c.zipf.rank(r) - 1)
				} else {
					j = r.Below(c.card)
				}
				row[k] = c.to.keyValue(j, &buf)
			case kField:
				j := r.Below(c.card) // drawn always: a row takes the same draws
				if i < c.card {
					j = c.perm.at(i)
				}
				row[k] = c.value(j, &buf)
			}
		}
		if err := emit(p.ent, row); err != nil {
			return err
		}
	}
	return nil
}

// scalarColumn draws a collection's elements of type t.
func scalarColumn(t types.Type, salt uint64) *column {
	c := &column{kind: kField, typ: t, card: collectionDomain}
	if d := domain(t); d > 0 {
		c.card = min(c.card, d)
	}
	switch t {
	case types.String, types.Bytes:
		c.text = newTextCodec(c.card, 8, salt)
	case types.Timestamp:
		c.step = dateSpan / int64(c.card)
	}
	return c
}

// collection is the value of index j of a collection column.
func (c *column) collection(j uint64, buf *[]byte) types.Value {
	n := j % (2*collectionMean + 1)
	draw := func(col *column, i uint64) types.Value {
		h := (j+1)*0x9E3779B97F4A7C15 ^ (i+1)*0xBF58476D1CE4E5B9
		h ^= h >> 31
		return col.value(h%col.card, buf)
	}
	var raw types.Value
	if c.key != nil {
		m := make(types.Map, n)
		for i := range m {
			m[i] = types.Entry{Key: draw(c.key, 2*uint64(i)), Val: draw(c.elem, 2*uint64(i)+1)}
		}
		raw = m
	} else {
		xs := make([]types.Value, n)
		for i := range xs {
			xs[i] = draw(c.elem, uint64(i))
		}
		raw = xs
	}
	v, err := types.Coerce(raw, c.typ)
	if err != nil {
		panic(fmt.Sprintf("datagen: a generated %s: %v", c.typ, err)) // elements are of their types
	}
	return v
}

// value is the value of index j of a field column; buf is scratch space.
func (c *column) value(j uint64, buf *[]byte) types.Value {
	if c.typ.IsCollection() {
		return c.collection(j, buf)
	}
	switch c.typ {
	case types.String:
		*buf = c.text.appendText((*buf)[:0], j)
		return string(*buf)
	case types.Bytes:
		return c.text.appendText(nil, j)
	case types.Bool:
		return j == 1
	case types.Float, types.Double:
		return float64(j)
	case types.Timestamp:
		return time.Unix(dateFrom+int64(j)*c.step, 0).UTC()
	}
	return int64(j)
}
