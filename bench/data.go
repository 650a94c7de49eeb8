package bench

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/types"
)

// PaperBudget is the storage budget of the paper's experiment, in bytes, at
// the RUBiS model's scale.
const PaperBudget = 161_000_000

// dataSet describes the generated data the benchmark runs on: its
// statistics (as ANALYZE would gather them), a sample of rows per entity for
// statement parameters, and the model rewritten with those statistics.
type dataSet struct {
	counts   map[string]int
	distinct map[string]map[string]int // entity → attribute → distinct values
	samples  map[string][][]types.Value
	// modelSrc is the RUBiS model with ROWS and CARDINALITY measured on
	// the data; model is it built.
	modelSrc   []byte
	modelStmts []lang.Statement
	model      *catalog.Model
	// budgetScale is the data's size over the model scale's size (both as
	// the model's field sizes estimate them).
	budgetScale float64
}

// analyze generates the data once to measure it and sample rows: a
// reservoir of up to sampleRows rows per entity, drawn with a fixed seed.
func analyze(ctx context.Context, cfg Config, sampleRows int) (*dataSet, error) {
	base, err := lang.ParseScript("examples/rubis/model.kvs", []byte(examples.RUBiSModel))
	if err != nil {
		return nil, err
	}
	m0, err := catalog.Build(base)
	if err != nil {
		return nil, err
	}
	d := &dataSet{counts: map[string]int{}, distinct: map[string]map[string]int{}, samples: map[string][][]types.Value{}}
	seen := map[string][]map[any]struct{}{}
	rnd := rand.New(rand.NewPCG(cfg.Seed, 0x5a3b1e))
	err = rubis.Generate(ctx, m0, rubis.Config{Scale: cfg.Scale, Seed: cfg.Seed}, func(e *catalog.Entity, row []types.Value) error {
		sets := seen[e.Name]
		if sets == nil {
			sets = make([]map[any]struct{}, len(e.Columns))
			for i, c := range e.Columns {
				if c.Field != nil && c.Field != e.ID() {
					sets[i] = map[any]struct{}{}
				}
			}
			seen[e.Name] = sets
		}
		for i, v := range row {
			if sets[i] != nil {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				sets[i][v] = struct{}{}
			}
		}
		n := d.counts[e.Name]
		d.counts[e.Name] = n + 1
		// Reservoir sampling (Algorithm R).
		if n < sampleRows {
			d.samples[e.Name] = append(d.samples[e.Name], append([]types.Value(nil), row...))
		} else if j := rnd.IntN(n + 1); j < sampleRows {
			d.samples[e.Name][j] = append(d.samples[e.Name][j][:0], row...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name, sets := range seen {
		e := m0.Entity(name)
		d.distinct[name] = map[string]int{}
		for i, s := range sets {
			if s != nil {
				d.distinct[name][e.Columns[i].Name] = len(s)
			}
		}
	}

	// The model with the data's statistics.
	var scaled []lang.Statement
	for _, st := range base {
		rel, ok := st.(*lang.DefineRelation)
		if !ok {
			scaled = append(scaled, st)
			continue
		}
		r := *rel
		r.Rows = int64(d.counts[r.Name])
		r.Attrs = append([]lang.AttrDef(nil), rel.Attrs...)
		for i := range r.Attrs {
			if n, ok := d.distinct[r.Name][r.Attrs[i].Name]; ok {
				r.Attrs[i].Cardinality = int64(max(n, 1))
			}
		}
		scaled = append(scaled, &r)
	}
	d.modelSrc = []byte("-- RUBiS model with statistics measured on the generated data (kvschema bench)\n" + lang.PrintScript(scaled))
	if d.modelStmts, err = lang.ParseScript("model.kvs", d.modelSrc); err != nil {
		return nil, fmt.Errorf("scaled model: %w", err)
	}
	if d.model, err = catalog.Build(d.modelStmts); err != nil {
		return nil, fmt.Errorf("scaled model: %w", err)
	}
	d.budgetScale = modelBytes(d.model) / modelBytes(m0)
	return d, nil
}

// modelBytes estimates the size of a model's entities: rows × the sum of
// their field sizes.
func modelBytes(m *catalog.Model) float64 {
	var total float64
	for _, e := range m.Entities {
		var row float64
		for _, f := range e.Fields {
			row += f.Size
		}
		total += e.Count * row
	}
	return total
}
