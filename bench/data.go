package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/stats"
	"github.com/kvschema/kvschema/types"
)

// PaperBudget is the storage budget of the paper's experiment, in bytes, at
// the RUBiS model's scale.
const PaperBudget = 161_000_000

// dataSet describes the data the benchmark runs on: its statistics (as
// ANALYZE would gather them), a sample of rows per entity for statement
// parameters, and the model rewritten with those statistics.
type dataSet struct {
	src     rowSource // where the rows come from
	counts  map[string]int
	samples map[string][][]types.Value
	// maxKey is each entity's greatest key (absent when it has no rows):
	// an INSERT's new keys lie beyond it.
	maxKey map[string]types.Value
	// modelSrc is the model with ROWS and CARDINALITY measured on the
	// data (and SIZE where the model gives none); model is it built.
	modelSrc   []byte
	modelStmts []lang.Statement
	model      *catalog.Model
	// budgetScale is the data's size over the model scale's size (both as
	// the model's field sizes estimate them); RUBiS's only.
	budgetScale float64
	// notes are what the report should say about the data: relations it
	// leaves empty.
	notes []string
}

// analyze reads the data once to measure it and sample rows: a reservoir
// of up to sampleRows rows per entity, drawn with a fixed seed. Notes go
// to notes (if not nil) as well as into the data set.
func analyze(ctx context.Context, in *input, cfg *Config, sampleRows int, notes io.Writer) (*dataSet, error) {
	m0 := in.base
	d := &dataSet{src: in.src, counts: map[string]int{}, samples: map[string][][]types.Value{}, maxKey: map[string]types.Value{}}
	tables := map[*catalog.Entity]*stats.Table{}
	for _, e := range m0.Entities {
		tables[e] = stats.NewTable(e, stats.Options{})
	}
	s := newSampler(d, sampleRows, cfg.Seed)
	err := in.src.rows(ctx, func(r exec.Row) error {
		tables[r.Entity].Add(r.Values)
		s.add(r.Entity, r.Values)
		return nil
	})
	if err != nil {
		return nil, err
	}

	// The model with the data's statistics (stats.Apply): every
	// relation's ROWS, every non-key attribute's CARDINALITY, and SIZE
	// where the model gives none.
	defs, err := catalog.Definitions(in.stmts)
	if err != nil {
		return nil, err
	}
	rels := make([]stats.Relation, 0, len(m0.Entities))
	for _, e := range m0.Entities {
		rels = append(rels, tables[e].Result())
	}
	d.notes = append(d.notes, stats.Apply(defs, rels, stats.ApplyOptions{KeepSizes: true})...)
	scaled := make([]lang.Statement, len(defs))
	for i, def := range defs {
		scaled[i] = def
	}
	head := "-- RUBiS model with statistics measured on the generated data (kvschema bench)\n"
	if !in.rubis {
		head = fmt.Sprintf("-- The model of %s with statistics measured on the data (kvschema bench): ROWS, CARDINALITY, and SIZE where the model gives none\n", in.modelName(cfg))
	}
	d.modelSrc = []byte(head + lang.PrintScript(scaled))
	if d.modelStmts, err = lang.ParseScript("model.kvs", d.modelSrc); err != nil {
		return nil, fmt.Errorf("measured model: %w", err)
	}
	if d.model, err = catalog.Build(d.modelStmts); err != nil {
		return nil, fmt.Errorf("measured model: %w", err)
	}
	if in.rubis {
		d.budgetScale = modelBytes(d.model) / modelBytes(m0)
	}
	if notes != nil {
		for _, n := range d.notes {
			fmt.Fprintf(notes, "bench: note: %s\n", n)
		}
	}
	return d, nil
}

// sampler fills a data set's counts, samples and greatest keys from the
// rows it is shown: a reservoir of up to n rows per entity (Algorithm R),
// drawn with a fixed seed.
type sampler struct {
	d   *dataSet
	n   int
	rnd *rand.Rand
}

func newSampler(d *dataSet, n int, seed uint64) *sampler {
	return &sampler{d: d, n: n, rnd: rand.New(rand.NewPCG(seed, 0x5a3b1e))}
}

// add counts row, a row of e (copied where kept), and may sample it.
func (s *sampler) add(e *catalog.Entity, row []types.Value) {
	d := s.d
	if id := e.ID(); id != nil {
		if k := row[e.Column(id)]; k != nil {
			if cur, ok := d.maxKey[e.Name]; !ok || types.Compare(k, cur) > 0 {
				if b, ok := k.([]byte); ok {
					k = append([]byte(nil), b...)
				}
				d.maxKey[e.Name] = k
			}
		}
	}
	n := d.counts[e.Name]
	d.counts[e.Name] = n + 1
	if n < s.n {
		d.samples[e.Name] = append(d.samples[e.Name], append([]types.Value(nil), row...))
	} else if j := s.rnd.IntN(n + 1); j < s.n {
		d.samples[e.Name][j] = append(d.samples[e.Name][j][:0], row...)
	}
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
