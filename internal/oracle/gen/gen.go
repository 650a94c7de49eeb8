// Package gen generates entity data for the engine's tests: rows of every entity
// of a model, parents first, with keys, foreign keys and values drawn from a
// seed. It has no dependency beyond the model, so that tests built with the
// race detector need not build the SQLite reference (package oracle).
package gen

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// Data is generated entity data: rows per entity in Entity.Columns order.
type Data struct {
	Order []*catalog.Entity // referenced entities first
	Rows  map[*catalog.Entity][][]types.Value
}

// ParentsFirst orders the entities so that every entity comes after those
// its foreign keys reference (a self-reference is ignored).
func ParentsFirst(m *catalog.Model) []*catalog.Entity {
	var out []*catalog.Entity
	done := map[*catalog.Entity]bool{}
	var visit func(e *catalog.Entity, depth int)
	visit = func(e *catalog.Entity, depth int) {
		if done[e] || depth > len(m.Entities) {
			return
		}
		for _, n := range e.Navs {
			if !n.Many && n.To != e {
				visit(n.To, depth+1)
			}
		}
		if !done[e] {
			done[e] = true
			out = append(out, e)
		}
	}
	for _, e := range m.SortedEntities() {
		visit(e, 0)
	}
	return out
}

// Generate makes rows for every entity: count(e) rows, keys 1..n, foreign
// keys uniform over the referenced keys (NULL with probability nullFK),
// values drawn from small domains so that equality predicates match.
func Generate(m *catalog.Model, count func(*catalog.Entity) int, seed uint64, nullFK float64) *Data {
	d := &Data{Order: ParentsFirst(m), Rows: map[*catalog.Entity][][]types.Value{}}
	r := rand.New(rand.NewPCG(seed, 7))
	for _, e := range d.Order {
		n := count(e)
		for i := 1; i <= n; i++ {
			row := make([]types.Value, len(e.Columns))
			for j, c := range e.Columns {
				switch {
				case c.Field != nil && c.Field.Key:
					row[j] = KeyValue(c.Type, i)
				case c.Nav != nil:
					if k := count(c.Nav.To); k > 0 && r.Float64() >= nullFK {
						row[j] = KeyValue(c.Type, 1+r.IntN(k))
					}
				default:
					row[j] = RandomValue(r, c.Type, int(min(c.Field.Cardinality, 8)))
				}
			}
			d.Rows[e] = append(d.Rows[e], row)
		}
	}
	return d
}

// KeyValue is the i-th key of type t.
func KeyValue(t types.Type, i int) types.Value {
	switch t {
	case types.String:
		return fmt.Sprintf("k%04d", i)
	case types.Bytes:
		return []byte(fmt.Sprintf("k%04d", i))
	case types.Double, types.Float:
		return float64(i)
	case types.Timestamp:
		return time.Unix(int64(i), 0).UTC()
	case types.Bool:
		return i%2 == 0
	}
	return int64(i)
}

// RandomValue draws a value of type t from a domain of about card values.
func RandomValue(r *rand.Rand, t types.Type, card int) types.Value {
	card = max(card, 1)
	if t.IsCollection() {
		// 0 to 3 elements, each from the domain; 1 to 3 for a collection
		// stored one cell per element, where an empty one is NULL (as in
		// Cassandra), so that SQLite's JSON text agrees with it.
		n := r.IntN(4)
		if !t.IsFrozen() {
			n = 1 + r.IntN(3)
		}
		var raw types.Value
		switch t.Kind() {
		case types.MapKind:
			m := make(types.Map, n)
			for i := range m {
				m[i] = types.Entry{Key: RandomValue(r, t.Key(), card), Val: RandomValue(r, t.Elem(), card)}
			}
			raw = m
		default:
			xs := make(types.List, n)
			for i := range xs {
				xs[i] = RandomValue(r, t.Elem(), card)
			}
			raw = xs
		}
		if t.Kind() == types.SetKind {
			raw = types.Set(raw.(types.List))
		}
		v, err := types.Coerce(raw, t)
		if err != nil {
			panic(err)
		}
		return v
	}
	k := r.IntN(card)
	switch t {
	case types.String:
		return fmt.Sprintf("s%d", k)
	case types.Bytes:
		return []byte{byte(k), 0, 0xff}
	case types.Double, types.Float:
		return float64(k) / 4
	case types.Timestamp:
		return time.Date(2024, 1, 1+k, 0, 0, 0, 0, time.UTC)
	case types.Bool:
		return k%2 == 0
	case types.Int:
		return int64(k - card/2)
	}
	return int64(k - card/2)
}
