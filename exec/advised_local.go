package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// A secondary index the store keeps as a local index of its base column
// family (catalog.Schema.Local) has no table: the base's table declares
// it, the store maintains its entries in the base's own write path, and
// one ReadIndex returns the base rows whose indexed cell holds the values
// looked up — seed 000's SI, whose lookup and base-CF lookup are one
// request. A plan's SI step and the base-CF step after it (cost.AfterSI)
// compile to one such read; an SI step that answers the query alone reads
// the same way (the base rows hold the SI's attributes).

// localRead is how a step reads through a local index.
type localRead struct {
	si    *catalog.Index
	index string     // the store index: the SI's name
	h     int        // the indexed attribute's position in the base's attrs
	typ   types.Type // of the values looked up
	fused bool       // the plan's base-CF step is answered too
	// elements: an index on a collection's elements (catalog.Index.
	// OnElements), whose values are ordered-encoded qualifiers.
	elements bool
}

// compileLocal compiles plan step si, an SI kept as a local index — a
// first step, as every SI step is — with the base-CF step after it when
// fused.
func (p *program) compileLocal(e *Engine, si int, fused bool, filled, applied map[int]bool) (*stepProg, error) {
	pl, q := p.plan, p.q
	l := pl.Steps[si]
	x := l.Index
	t := e.tables[e.schema.Local[x]]
	h := x.Hash[0]
	hpos, ok := t.pos[h]
	if !ok {
		return nil, fmt.Errorf("plan step %d: %s does not hold the attribute %s indexes", si+1, t.name, x.Name)
	}
	lr := &localRead{si: x, index: x.Name, h: hpos, typ: h.Field.Type, fused: fused}
	keyOp := catalog.Eq
	if x.OnElements() {
		// Looked up by element: CONTAINS (KEY) is its key.
		lr.typ, lr.elements = x.Layout().Attrs[0].Type, true
		keyOp = catalog.ElementOp(h.Field.Type)
	}
	sp := &stepProg{l: l, t: t, toSlot: make([]int, len(t.attrs)), filters: append([]int(nil), l.Filters...), local: lr}
	view := l // whose node map places the base's attributes in the query
	done := [][]int{l.KeyPreds, l.Filters}
	if fused {
		view = pl.Steps[si+1]
		// The base step's own key predicates (on its clustering key) are
		// not part of an index read: the client tests them.
		sp.filters = append(sp.filters, view.KeyPreds...)
		sp.filters = append(sp.filters, view.Filters...)
		done = append(done, view.KeyPreds, view.Filters)
		for n, m := range l.Map {
			if view.Map[n] != m {
				return nil, fmt.Errorf("plan steps %d and %d place %s's entities differently", si+1, si+2, x.Name)
			}
		}
	}
	ref := func(a catalog.Attr) catalog.FieldRef { return catalog.FieldRef{Node: view.Map[a.Node], Field: a.Field} }
	for i, a := range t.attrs {
		sp.toSlot[i] = -1
		if s, ok := p.slots[ref(a)]; ok {
			sp.toSlot[i] = s
		}
	}
	// The key: the indexed attribute's value, from an equality, or an
	// element from a CONTAINS (KEY) (the planner starts plans only with
	// an SI step, dag.go).
	if si > 0 {
		return nil, fmt.Errorf("plan step %d reads secondary index %s after another step", si+1, x.Name)
	}
	for _, k := range l.KeyPreds {
		if pr := q.Preds[k]; pr.Ref == ref(h) && pr.Op == keyOp && len(sp.key) == 0 {
			sp.key = []keySource{{slot: -1, eq: k}}
		} else {
			sp.filters = append(sp.filters, k)
		}
	}
	if len(sp.key) == 0 {
		return nil, fmt.Errorf("plan step %d: no %s gives the value of %s to look up in %s", si+1, keyOp, q.Graph.DescribeRef(ref(h)), x.Name)
	}
	if pl.Ordered && len(q.OrderBy) > 0 && q.OrderBy[0].Desc {
		sp.reverse = true
	}
	p.maxKey = max(p.maxKey, 1)
	p.settle(sp, filled, applied, done...)
	return sp, nil
}

// readLocal runs a local-index step: one ReadIndex of its equality's
// value.
func (sp *stepProg) readLocal(ctx context.Context, st store.Store, r *runState) ([]tuple, error) {
	p := r.p
	var out []tuple
	err := sp.readLocalEach(ctx, st, r, func(d []types.Datum) bool {
		t := tuple(r.slab.Copy(r.blank))
		sp.fill(t, d)
		if p.keep(t, sp.filters, r.preds) {
			out = append(out, t)
		}
		return true
	})
	return out, err
}

// readLocalEach reads as readLocal does, passing each base row read to
// emit (lent until it returns; false stops the read).
func (sp *stepProg) readLocalEach(ctx context.Context, st store.Store, r *runState, emit func([]types.Datum) bool) error {
	lr := sp.local
	d := r.preds[sp.key[0].eq]
	if d.IsNull() {
		return nil
	}
	var v []byte
	var err error
	if lr.elements {
		v, err = keyenc.AppendOrderedDatum(nil, lr.typ, d, false)
	} else {
		v, err = keyenc.AppendNaturalDatum(nil, lr.typ, d)
	}
	if err != nil {
		return err
	}
	return sp.readIndex(ctx, st, lr.index, [][]byte{v}, store.ReadOptions{Reverse: sp.reverse}, emit)
}

// readIndex reads the base rows whose indexed value is one of values, in
// one round trip, and decodes them as read does.
func (sp *stepProg) readIndex(ctx context.Context, st store.Store, index string, values [][]byte, opts store.ReadOptions, emit func([]types.Datum) bool) error {
	t := sp.t
	dec, _ := t.cellDecoders.Get().(*layout.CellDecoder)
	if dec == nil {
		dec = new(layout.CellDecoder)
	}
	defer t.cellDecoders.Put(dec)
	dec.Init(t.l, nil, t.name, emit)
	cell := dec.Func()
	err := store.ReadIndex(ctx, st, t.name, index, store.RowSet{Keys: values}, opts, func(row store.Row) bool {
		for i, c := range row.Cells {
			if !cell(row.Key, c, i == 0) {
				return false
			}
		}
		return true
	})
	if err == nil {
		err = dec.Flush()
	}
	dec.Reset()
	return err
}

// explainLocal writes a local-index step in the EXPLAIN vocabulary: one
// request returning base rows.
func (sp *stepProg) explainLocal(b *strings.Builder, p *program) {
	lr, q := sp.local, p.q
	what := "POINT LOOKUP ON 1 KEY"
	if sp.reverse {
		what = "REVERSE " + what
	}
	answers := "ITS BASE ROWS"
	if lr.fused {
		answers = "THE BASE ROWS OF THE NEXT PLAN STEP"
	}
	fmt.Fprintf(b, "CLIENT PARALLEL 1-WAY %s OVER LOCAL INDEX %s OF %s [%s] (1 ROUND TRIP, RETURNS %s)\n", what, lr.index, sp.t.name, predText(q, q.Preds[sp.key[0].eq]), answers)
	if len(sp.filters) > 0 {
		var fs []string
		for _, k := range sp.filters {
			fs = append(fs, predText(q, q.Preds[k]))
		}
		fmt.Fprintf(b, "    CLIENT FILTER BY %s\n", strings.Join(fs, " AND "))
	}
}

// tableSpecs are the tables of the advised schema: one per index that is
// not a local index, each declaring the local indexes it keeps.
func (e *Engine) tableSpecs() []store.TableSpec {
	var out []store.TableSpec
	for _, x := range e.schema.Indexes {
		if e.schema.Local[x] != nil {
			continue
		}
		spec := e.tables[x].spec()
		for _, si := range e.schema.Indexes {
			if e.schema.Local[si] == x {
				spec.Indexes = append(spec.Indexes, e.schema.LocalIndex(si))
			}
		}
		out = append(out, spec)
	}
	return out
}
