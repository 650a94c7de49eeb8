package bench

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// source says where one statement parameter's values come from.
type source struct {
	entity *catalog.Entity
	tuple  int  // which of the statement's sampled rows (tuples) the value is from
	column int  // the column of that row
	fresh  bool // a key no row has: INSERT's new key
}

// binder draws statement parameters as NoSE's harness does: from rows
// sampled from the data, for any model. Each run picks one sampled row per
// entity occurrence the statement's parameters refer to — a node of its
// query graph, the written tuple, a relationship an INSERT connects or
// CONNECT names — so the parameters of one occurrence come from one tuple
// (UPDATE items SET quantity = ? WHERE items.id = ? updates a real item
// with another real item's quantity), and two occurrences of one entity
// (comments.from_user and comments.to_user) are drawn apart. An INSERT's
// key is new: beyond the data's greatest key.
type binder struct {
	data *dataSet
}

// sources maps each parameter of s to where its values come from.
func (b *binder) sources(s *workload.Statement) ([]source, error) {
	var out []source
	tuples := map[string]int{}
	set := func(e lang.Expr, src source) {
		p, ok := e.(*lang.Param)
		if !ok {
			return
		}
		for len(out) <= p.Index {
			out = append(out, source{})
		}
		out[p.Index] = src
	}
	columnOf := func(e *catalog.Entity, f *catalog.Field, occurrence string) source {
		t, ok := tuples[occurrence]
		if !ok {
			t = len(tuples)
			tuples[occurrence] = t
		}
		return source{entity: e, tuple: t, column: e.Column(f)}
	}
	preds := func(g *catalog.Graph, ps []catalog.Pred) {
		for _, p := range ps {
			e := g.Nodes[p.Ref.Node].Entity
			set(p.Value, columnOf(e, p.Ref.Field, fmt.Sprintf("node %d", p.Ref.Node)))
		}
	}
	switch {
	case s.Query != nil:
		preds(s.Query.Graph, s.Query.Preds)
	case s.Write != nil:
		w := s.Write // its graph's node 0 is the written tuple
		for _, a := range w.Set {
			if w.Kind == catalog.Insert && a.Field == w.Entity.ID() {
				set(a.Value, source{entity: w.Entity, fresh: true})
			} else {
				set(a.Value, columnOf(w.Entity, a.Field, "node 0"))
			}
		}
		for i, l := range w.Links {
			set(l.Value, columnOf(l.Nav.To, l.Nav.To.ID(), fmt.Sprintf("link %d", i)))
		}
		preds(w.Graph, w.Preds)
		if w.Nav != nil && w.Target != nil {
			set(w.Target, columnOf(w.Nav.To, w.Nav.To.ID(), "target"))
		}
	}
	for len(out) < lang.CountParams(s.AST) {
		out = append(out, source{}) // a parameter none of the above takes
	}
	for i, src := range out {
		if src.entity == nil || src.column < 0 && !src.fresh {
			return nil, fmt.Errorf("statement %s: cannot tell where parameter %d's values come from (the bench draws a parameter from the column it is compared with or assigned to)", s.Tag, i+1)
		}
		if !src.fresh && len(b.data.samples[src.entity.Name]) == 0 {
			return nil, fmt.Errorf("statement %s: no %s rows to draw parameter %d from", s.Tag, src.entity.Name, i+1)
		}
		if src.fresh {
			if _, err := freshKey(src.entity.ID().Type, b.data.maxKey[src.entity.Name], 1); err != nil {
				return nil, fmt.Errorf("statement %s: parameter %d: %w", s.Tag, i+1, err)
			}
		}
	}
	return out, nil
}

// stream is the parameter sequence of one statement: the same for every
// variant and pass, so that all schemas answer the same requests.
type stream struct {
	srcs    []source
	data    *dataSet
	rnd     *rand.Rand
	nextKey map[*catalog.Entity]int64 // new keys drawn so far
}

func (b *binder) stream(s *workload.Statement, seed uint64) (*stream, error) {
	srcs, err := b.sources(s)
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	h.Write([]byte(s.Tag))
	return &stream{srcs: srcs, data: b.data, rnd: rand.New(rand.NewPCG(seed, h.Sum64())), nextKey: map[*catalog.Entity]int64{}}, nil
}

// next returns the parameters of the next run.
func (st *stream) next() ([]types.Value, error) {
	args := make([]types.Value, len(st.srcs))
	rows := map[int][]types.Value{} // by tuple
	for i, src := range st.srcs {
		if src.fresh {
			k := st.nextKey[src.entity] + 1
			st.nextKey[src.entity] = k
			v, err := freshKey(src.entity.ID().Type, st.data.maxKey[src.entity.Name], k)
			if err != nil {
				return nil, err
			}
			args[i] = v
			continue
		}
		row, ok := rows[src.tuple]
		if !ok {
			sample := st.data.samples[src.entity.Name]
			row = sample[st.rnd.IntN(len(sample))]
			rows[src.tuple] = row
		}
		args[i] = row[src.column]
	}
	return args, nil
}

// freshKey is the k-th new key (from 1) of a key of type t whose greatest
// value in the data is greatest (nil when the data has none): beyond it, so no
// row has it. Numbers count up from it (from 0 without data), timestamps
// by seconds, strings and byte strings append a suffix to it (which makes
// them greater). A BOOL key has no room for new keys.
func freshKey(t types.Type, greatest types.Value, k int64) (types.Value, error) {
	switch t {
	case types.Int, types.BigInt:
		base, _ := greatest.(int64)
		v := base + k
		if t == types.Int && v > math.MaxInt32 || v < base {
			return nil, fmt.Errorf("no %s key beyond %d for new rows", t, base)
		}
		return v, nil
	case types.Float, types.Double:
		base, _ := greatest.(float64)
		return base + float64(k), nil
	case types.Timestamp:
		base, ok := greatest.(time.Time)
		if !ok {
			base = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return base.Add(time.Duration(k) * time.Second), nil
	case types.String:
		if greatest == nil {
			return fmt.Sprintf("new%012d", k), nil
		}
		return fmt.Sprintf("%s~new%012d", greatest, k), nil
	case types.Bytes:
		base, _ := greatest.([]byte)
		return fmt.Appendf(append([]byte(nil), base...), "~new%012d", k), nil
	}
	return nil, fmt.Errorf("cannot make new keys of type %s", t)
}
