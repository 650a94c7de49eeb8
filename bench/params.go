package bench

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// source says where one statement parameter's values come from.
type source struct {
	entity *catalog.Entity
	column int  // the column of a sampled row
	fresh  bool // a key no row has: INSERT's new key
}

// binder draws statement parameters as NoSE's harness does: from rows
// sampled from the data. Each run picks one sampled row per entity the
// statement's parameters refer to, so the parameters of one entity come
// from one tuple; an INSERT's key is new (beyond every generated key).
type binder struct {
	data *dataSet
}

// sources maps each `?` of s to where its values come from.
func (b *binder) sources(s *workload.Statement) ([]source, error) {
	var out []source
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
	columnOf := func(e *catalog.Entity, f *catalog.Field) source {
		return source{entity: e, column: e.Column(f)}
	}
	preds := func(g *catalog.Graph, ps []catalog.Pred) {
		for _, p := range ps {
			e := g.Nodes[p.Ref.Node].Entity
			set(p.Value, columnOf(e, p.Ref.Field))
		}
	}
	switch {
	case s.Query != nil:
		preds(s.Query.Graph, s.Query.Preds)
	case s.Write != nil:
		w := s.Write
		for _, a := range w.Set {
			if w.Kind == catalog.Insert && a.Field == w.Entity.ID() {
				set(a.Value, source{entity: w.Entity, fresh: true})
			} else {
				set(a.Value, columnOf(w.Entity, a.Field))
			}
		}
		for _, l := range w.Links {
			set(l.Value, columnOf(l.Nav.To, l.Nav.To.ID()))
		}
		preds(w.Graph, w.Preds)
		if w.Nav != nil && w.Target != nil {
			set(w.Target, columnOf(w.Nav.To, w.Nav.To.ID()))
		}
	}
	for i, src := range out {
		if src.entity == nil || src.column < 0 && !src.fresh {
			return nil, fmt.Errorf("statement %s: cannot tell where parameter %d's values come from", s.Tag, i+1)
		}
		if !src.fresh && len(b.data.samples[src.entity.Name]) == 0 {
			return nil, fmt.Errorf("statement %s: no %s rows to draw parameter %d from", s.Tag, src.entity.Name, i+1)
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
	nextKey map[*catalog.Entity]int64
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
func (st *stream) next() []types.Value {
	args := make([]types.Value, len(st.srcs))
	rows := map[*catalog.Entity][]types.Value{}
	for i, src := range st.srcs {
		if src.fresh {
			k := st.nextKey[src.entity]
			if k == 0 {
				k = int64(st.data.counts[src.entity.Name])
			}
			k++
			st.nextKey[src.entity] = k
			args[i] = freshKey(src.entity.ID().Type, k)
			continue
		}
		row, ok := rows[src.entity]
		if !ok {
			sample := st.data.samples[src.entity.Name]
			row = sample[st.rnd.IntN(len(sample))]
			rows[src.entity] = row
		}
		args[i] = row[src.column]
	}
	return args
}

// freshKey is key number k as a value of the key's type.
func freshKey(t types.Type, k int64) types.Value {
	switch t {
	case types.String:
		return fmt.Sprintf("new%012d", k)
	case types.Float, types.Double:
		return float64(k)
	}
	return k
}
