// Package rubis generates the RUBiS benchmark's data set deterministically
// from a RUBiS conceptual model (examples/rubis/model.kvs), at a scale factor
// of the full data set used by the NoSE experiments:
//
//	regions 50, categories 500, users 200,000, items 2,000,000,
//	bids 20,000,000, comments 10,000,000, buynow 2,000,000
//
// At scale S an entity has max(1, round(full·S)) rows, keyed 1..N.
//
// Values follow the benchmark's data generation facts. Foreign keys are
// uniform over the target's keys. users.rating is uniform in [-50, 200],
// comments.rating in [-5, 5], items.quantity in [0, 10], items.nb_of_bids in
// [0, 100], bids.qty in [1, 5], buynow.qty in [1, 3]; every dummy is 1. Prices
// (items.initial_price, reserve_price, buy_now, max_bid, bids.bid) and
// users.balance are uniform in [1, 1000) in whole cents. Every other field
// gets a value by its type: strings are uniform lowercase letters, as many as
// the field's declared SIZE; timestamps are whole seconds uniform over
// 2022-01-01 … 2025-12-31 (items.end_date is 1 hour to 30 days after
// items.start_date, both in that span); integers are uniform in
// [0, CARDINALITY); floats as prices; booleans fair coins; bytes random, SIZE
// of them. A named fact applies only when the column has a type it fits
// (numbers for the ranges, FLOAT or DOUBLE for prices), else the column's
// type decides.
//
// RUBiS is not a configuration of the general generator (package datagen):
// its named value facts (ranges, prices in cents, auction dates), its full
// counts (not the model's ROWS) and its one draw per column per row make
// data the benchmark's tests and goldens depend on, which datagen's rules
// (exact distinct counts from the model's statistics) would change. It
// shares datagen's machinery: the streams (datagen.NewRand), the row count
// rule (datagen.Rows) and the writing of files (datagen.WriteDir).
//
// Invariants:
//   - Deterministic: the same Config and model give the same rows. Each
//     entity draws from its own PCG stream (math/rand/v2) seeded by
//     Config.Seed and the entity's name, so entities are independent: a
//     change to one entity's columns changes no other entity's rows.
//     Every row takes the same number of draws whatever the scale, so the
//     first rows at one scale equal those at another except for their
//     foreign keys (whose ranges scale).
//   - Entities come parents first (regions, categories, users, items, bids,
//     comments, buynow) and rows in key order, so every foreign key refers to
//     a row already emitted.
package rubis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/datagen"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/types"
)

// order is the generation order: referenced entities first.
var order = []string{"regions", "categories", "users", "items", "bids", "comments", "buynow"}

// fullCounts are the row counts at scale 1.
var fullCounts = map[string]float64{
	"regions":    50,
	"categories": 500,
	"users":      200_000,
	"items":      2_000_000,
	"bids":       20_000_000,
	"comments":   10_000_000,
	"buynow":     2_000_000,
}

// Entities lists the RUBiS entities in generation order.
func Entities() []string { return append([]string(nil), order...) }

// Config selects a data set.
type Config struct {
	Scale float64 // fraction of the full data set: 1.0 is 200,000 users
	Seed  uint64
}

// Counts returns the number of rows of each RUBiS entity at a scale:
// max(1, round(full·scale)) (datagen.Rows).
func Counts(scale float64) map[string]int {
	out := make(map[string]int, len(fullCounts))
	for name, full := range fullCounts {
		out[name] = int(datagen.Rows(full, scale))
	}
	return out
}

// Generate emits every row of the RUBiS data set described by cfg, entity
// by entity in generation order, rows in key order. A row has one value per
// entry of Entity.Columns, in that order. The row slice is reused once emit
// returns (copy it to keep it); the values in it are not shared and may be
// kept. An error of emit, or of ctx (checked every few thousand rows), stops
// Generate and is returned as is. m must be RUBiS-shaped: exactly the seven RUBiS
// entities, each with an INT or BIGINT key.
func Generate(ctx context.Context, m *catalog.Model, cfg Config, emit func(e *catalog.Entity, row []types.Value) error) error {
	if !(cfg.Scale > 0) || math.IsInf(cfg.Scale, 0) {
		return fmt.Errorf("rubis: scale %v is not a positive number", cfg.Scale)
	}
	plans, err := plan(m, Counts(cfg.Scale))
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

// WriteDir generates the data set into dir (created if needed), one file per
// entity named <entity>.csv or <entity>.jsonl, replacing files of those
// names. It refuses to start if dir holds a data file of the other format for
// a RUBiS entity, which would make the directory ambiguous to dataio.Files.
func WriteDir(ctx context.Context, dir string, m *catalog.Model, cfg Config, f dataio.Format) error {
	var ents []*catalog.Entity
	for _, name := range order {
		if e := m.Entity(name); e != nil {
			ents = append(ents, e)
		}
	}
	return datagen.WriteDir(dir, ents, f, func(emit datagen.Emit) error {
		return Generate(ctx, m, cfg, emit)
	})
}

// The span of generated timestamps: [dateFrom, dateTo) in Unix seconds.
var (
	dateFrom = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	dateTo   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

const (
	minAuction = int64(time.Hour / time.Second)
	maxAuction = int64(30 * 24 * time.Hour / time.Second)
	maxStrLen  = 1 << 16
)

// intFacts are the benchmark's integer ranges, inclusive.
var intFacts = map[string][2]int64{
	"users.rating":     {-50, 200},
	"comments.rating":  {-5, 5},
	"items.quantity":   {0, 10},
	"items.nb_of_bids": {0, 100},
	"bids.qty":         {1, 5},
	"buynow.qty":       {1, 3},
}

// moneyFacts are amounts in [1, 1000) in whole cents.
var moneyFacts = map[string]bool{
	"users.balance":       true,
	"items.initial_price": true,
	"items.reserve_price": true,
	"items.buy_now":       true,
	"items.max_bid":       true,
	"bids.bid":            true,
}

// kind is how one column's values are drawn.
type kind uint8

const (
	kKey    kind = iota // the row's key
	kConst              // val
	kInt                // uniform in [lo, lo+n)
	kMoney              // cents uniform in [100, 100000), as a float
	kDate               // uniform second in [dateFrom, dateTo)
	kStart              // items.start_date: the row's auction start
	kEnd                // items.end_date: the row's auction end
	kString             // size lowercase letters
	kBool               // a fair coin
	kBytes              // size random bytes
	kRef                // uniform key in [1, n]
)

type column struct {
	kind kind
	typ  types.Type
	lo   int64
	n    uint64
	size int
	val  types.Value
}

// entityPlan is how to generate one entity.
type entityPlan struct {
	ent     *catalog.Entity
	rows    int64
	cols    []column
	auction bool // a row draws an auction start and end first
}

// plan checks that m is RUBiS-shaped and decides how to draw every column.
func plan(m *catalog.Model, counts map[string]int) ([]*entityPlan, error) {
	rank := map[string]int{}
	for i, name := range order {
		rank[name] = i
		if m.Entity(name) == nil {
			return nil, fmt.Errorf("rubis: the model is not RUBiS-shaped: it has no entity %q", name)
		}
	}
	for _, e := range m.Entities {
		if _, ok := rank[e.Name]; !ok {
			return nil, fmt.Errorf("rubis: the model is not RUBiS-shaped: entity %q is not one of RUBiS's (%v)", e.Name, order)
		}
	}
	var plans []*entityPlan
	for _, name := range order {
		e := m.Entity(name)
		p := &entityPlan{ent: e, rows: int64(counts[name])}
		if t := e.ID().Type; t != types.Int && t != types.BigInt {
			return nil, fmt.Errorf("rubis: key %s.%s is %s, want INT or BIGINT", name, e.ID().Name, t)
		}
		if e.ID().Type == types.Int && p.rows > math.MaxInt32 {
			return nil, fmt.Errorf("rubis: %d %s do not fit INT key %s", p.rows, name, e.ID().Name)
		}
		for _, c := range e.Columns {
			col, err := planColumn(e, c, counts, rank)
			if err != nil {
				return nil, err
			}
			if col.kind == kStart || col.kind == kEnd {
				p.auction = true
			}
			p.cols = append(p.cols, col)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func isNumber(t types.Type) bool {
	return t == types.Int || t == types.BigInt || t == types.Float || t == types.Double
}

func planColumn(e *catalog.Entity, c catalog.Column, counts map[string]int, rank map[string]int) (column, error) {
	col := column{typ: c.Type}
	if c.Nav != nil {
		to := c.Nav.To
		if to != e && rank[to.Name] > rank[e.Name] {
			return col, fmt.Errorf("rubis: foreign key %s.%s refers to %s, which RUBiS generates later", e.Name, c.Name, to.Name)
		}
		col.kind, col.n = kRef, uint64(counts[to.Name])
		return col, nil
	}
	f := c.Field
	if f == e.ID() {
		col.kind = kKey
		return col, nil
	}
	qual := e.Name + "." + c.Name
	if r, ok := intFacts[qual]; ok && isNumber(c.Type) {
		col.kind, col.lo, col.n = kInt, r[0], uint64(r[1]-r[0]+1)
		return col, nil
	}
	if c.Name == "dummy" && isNumber(c.Type) {
		col.kind, col.val = kConst, number(c.Type, 1)
		return col, nil
	}
	if moneyFacts[qual] && (c.Type == types.Float || c.Type == types.Double) {
		col.kind = kMoney
		return col, nil
	}
	if e.Name == "items" && c.Type == types.Timestamp && e.Field("start_date") != nil && e.Field("start_date").Type == types.Timestamp {
		switch c.Name {
		case "start_date":
			col.kind = kStart
			return col, nil
		case "end_date":
			col.kind = kEnd
			return col, nil
		}
	}
	size := int(math.Round(f.Size))
	size = min(max(size, 1), maxStrLen)
	switch c.Type {
	case types.String:
		col.kind, col.size = kString, size
	case types.Bytes:
		col.kind, col.size = kBytes, size
	case types.Int, types.BigInt:
		card := f.Cardinality
		if !(card >= 1) {
			card = 1
		}
		if c.Type == types.Int {
			card = min(card, math.MaxInt32)
		}
		col.kind, col.n = kInt, uint64(min(card, datagen.MaxRows))
	case types.Float, types.Double:
		col.kind = kMoney
	case types.Bool:
		col.kind = kBool
	case types.Timestamp:
		col.kind = kDate
	default:
		return col, fmt.Errorf("rubis: column %s has unsupported type %s", qual, c.Type)
	}
	return col, nil
}

// number is an integer as a value of numeric type t.
func number(t types.Type, i int64) types.Value {
	switch t {
	case types.Float:
		return float64(float32(i))
	case types.Double:
		return float64(i)
	}
	return i
}

// ctxEvery is how many rows go between checks of the context.
const ctxEvery = 4096

func (p *entityPlan) run(ctx context.Context, seed uint64, emit func(*catalog.Entity, []types.Value) error) error {
	r := datagen.NewRand(seed, p.ent.Name)
	row := make([]types.Value, len(p.cols))
	maxSize := 0
	for _, c := range p.cols {
		maxSize = max(maxSize, c.size)
	}
	buf := make([]byte, maxSize)
	for id := int64(1); id <= p.rows; id++ {
		if id%ctxEvery == 1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var start, end int64
		if p.auction {
			start = dateFrom + int64(r.Below(uint64(dateTo-maxAuction-dateFrom)))
			end = start + minAuction + int64(r.Below(uint64(maxAuction-minAuction+1)))
		}
		for i := range p.cols {
			c := &p.cols[i]
			var v types.Value
			switch c.kind {
			case kKey:
				v = id
			case kConst:
				v = c.val
			case kInt:
				v = number(c.typ, c.lo+int64(r.Below(c.n)))
			case kMoney:
				cents := 100 + int64(r.Below(100000-100))
				f := float64(cents) / 100
				if c.typ == types.Float {
					f = float64(float32(f))
				}
				v = f
			case kDate:
				v = time.Unix(dateFrom+int64(r.Below(uint64(dateTo-dateFrom))), 0).UTC()
			case kStart:
				v = time.Unix(start, 0).UTC()
			case kEnd:
				v = time.Unix(end, 0).UTC()
			case kString:
				b := buf[:c.size]
				r.Letters(b)
				v = string(b)
			case kBool:
				v = r.Uint64()&1 == 1
			case kBytes:
				b := make([]byte, c.size)
				r.Fill(b)
				v = b
			case kRef:
				v = 1 + int64(r.Below(c.n))
			}
			row[i] = v
		}
		if err := emit(p.ent, row); err != nil {
			return err
		}
	}
	return nil
}
