package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/datagen"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// The data generators Config.Generator names.
const (
	GenerateRUBiS = "rubis" // package rubis: RUBiS's own data set
	GenerateModel = "model" // package datagen: data matching the model's statistics
)

// rubisModelFile is how messages and the report name RUBiS's model.
const rubisModelFile = "examples/rubis/model.kvs"

// input is what a run reads, resolved from its Config: the model, the
// workload and where the rows come from.
type input struct {
	rubis bool             // RUBiS's benchmark: no model was given
	stmts []lang.Statement // the model as given
	// base is the model as given, built: with its own statistics when the
	// data is generated from them, without (catalog.Unmeasured) when the
	// data comes from files, whose statistics the run measures.
	base         *catalog.Model
	workloadFile string // as messages name it
	workloadSrc  []byte
	log          bool // workloadSrc is a query log
	src          rowSource
}

// rowSource is where a run's rows come from.
type rowSource struct {
	desc     string // for the report and the progress lines
	identity string // exec.LoadOptions.Identity
	// rows emits every row of the data set as rows of the base model's
	// entities, with their file and line when they come from files.
	rows func(ctx context.Context, emit func(exec.Row) error) error
}

// rowsOf emits the rows of src as rows of m's entities (the same
// definitions built again, with other statistics).
func (src rowSource) rowsOf(ctx context.Context, m *catalog.Model, emit func(exec.Row) error) error {
	to := map[*catalog.Entity]*catalog.Entity{}
	return src.rows(ctx, func(r exec.Row) error {
		e, ok := to[r.Entity]
		if !ok {
			if e = m.Entity(r.Entity.Name); e == nil {
				return fmt.Errorf("%s: entity %s is not in the deployed model", r.File, r.Entity.Name)
			}
			to[r.Entity] = e
		}
		r.Entity = e
		return emit(r)
	})
}

// isRUBiS reports whether the config runs RUBiS's benchmark: it names no
// model.
func (c *Config) isRUBiS() bool { return c.Model == nil && len(c.ModelFiles) == 0 }

// resolve reads the model and the workload (checking that the workload
// resolves against the model and has the mix) and says where the rows come
// from. Notes on the inputs (what a query log could not use) go to notes.
func (cfg *Config) resolve(notes io.Writer) (*input, error) {
	in := &input{rubis: cfg.isRUBiS()}
	var err error
	switch {
	case in.rubis:
		if in.stmts, err = lang.ParseScript(rubisModelFile, []byte(examples.RUBiSModel)); err != nil {
			return nil, err
		}
	case cfg.Model != nil:
		in.stmts = cfg.Model
	default:
		for _, f := range cfg.ModelFiles {
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("model: %w", err)
			}
			ss, _, err := lang.ParseModel(f, src)
			if err != nil {
				return nil, err
			}
			in.stmts = append(in.stmts, ss...)
		}
	}

	switch {
	case cfg.Workload != "" && cfg.WorkloadLog != "":
		return nil, errors.New("give one workload: a DEFINE WORKLOAD file or a query log, not both")
	case cfg.WorkloadLog != "":
		in.workloadFile, in.log = cfg.WorkloadLog, true
		if in.workloadSrc, err = os.ReadFile(cfg.WorkloadLog); err != nil {
			return nil, fmt.Errorf("workload log: %w", err)
		}
	case in.rubis:
		src, err := rubis.WorkloadSource(cfg.Workload)
		if err != nil {
			return nil, err
		}
		in.workloadFile, in.workloadSrc = "examples/rubis/"+cfg.Workload, []byte(src)
	case cfg.Workload == "":
		return nil, errors.New("give the workload: a DEFINE WORKLOAD file or a query log")
	default:
		in.workloadFile = cfg.Workload
		if in.workloadSrc, err = os.ReadFile(cfg.Workload); err != nil {
			return nil, fmt.Errorf("workload: %w", err)
		}
	}

	if cfg.Data != "" {
		in.base, err = catalog.Unmeasured(in.stmts)
	} else {
		in.base, err = catalog.Build(in.stmts)
	}
	if err != nil {
		if _, uerr := catalog.Unmeasured(in.stmts); cfg.Data == "" && uerr == nil {
			// Only statistics are missing: the data can measure them.
			return nil, fmt.Errorf("model %s: %w\ngenerating data needs the model's statistics: give them, or run on data files (--data DIR), whose statistics the bench measures", in.modelName(cfg), err)
		}
		return nil, fmt.Errorf("model %s: %w", in.modelName(cfg), err)
	}
	w, err := in.parseWorkload(in.base, notes)
	if err != nil {
		return nil, err
	}
	if cfg.Mix == "" {
		cfg.Mix = w.Mixes[0]
	}
	if !w.HasMix(cfg.Mix) {
		return nil, fmt.Errorf("workload %s has no mix %q (its mixes: %s)", in.workloadFile, cfg.Mix, strings.Join(w.Mixes, ", "))
	}
	weighted := false
	for _, s := range w.Statements {
		weighted = weighted || s.Weight(cfg.Mix) > 0
	}
	if !weighted {
		return nil, fmt.Errorf("workload %s: no statement has a weight in mix %s", in.workloadFile, cfg.Mix)
	}
	if in.src, err = cfg.rowSource(in.base); err != nil {
		return nil, err
	}
	return in, nil
}

// modelName names the model's files.
func (in *input) modelName(cfg *Config) string {
	switch {
	case in.rubis:
		return rubisModelFile
	case len(cfg.ModelFiles) > 0:
		return strings.Join(cfg.ModelFiles, ", ")
	}
	return "(given)"
}

// parseWorkload resolves the workload against m. The report on a query
// log, if notes is not nil, goes there.
func (in *input) parseWorkload(m *catalog.Model, notes io.Writer) (*workload.Workload, error) {
	if !in.log {
		return workload.Parse(m, in.workloadFile, in.workloadSrc)
	}
	w, rep, err := workload.ParseLog(m, in.workloadFile, in.workloadSrc)
	if rep != nil && notes != nil {
		if werr := rep.WriteText(notes); err == nil {
			err = werr
		}
	}
	return w, err
}

// rowSource says where the rows of a run come from: the files of
// cfg.Data, or cfg.Generator run on the model as given (m).
func (cfg *Config) rowSource(m *catalog.Model) (rowSource, error) {
	emit := func(emit func(exec.Row) error) func(*catalog.Entity, []types.Value) error {
		return func(e *catalog.Entity, row []types.Value) error {
			return emit(exec.Row{Entity: e, Values: row, File: "generated " + e.Name})
		}
	}
	switch cfg.Generator {
	case GenerateRUBiS:
		return rowSource{
			desc:     fmt.Sprintf("RUBiS generated at scale %g (1.0 = 200,000 users), seed %d", cfg.Scale, cfg.Seed),
			identity: fmt.Sprintf("rubis scale %g seed %d", cfg.Scale, cfg.Seed),
			rows: func(ctx context.Context, yield func(exec.Row) error) error {
				return rubis.Generate(ctx, m, rubis.Config{Scale: cfg.Scale, Seed: cfg.Seed}, emit(yield))
			},
		}, nil
	case GenerateModel:
		gc := datagen.Config{Scale: cfg.Scale, Seed: cfg.Seed, Skew: cfg.Skew}
		skew := "foreign keys uniform"
		if cfg.Skew != 0 {
			skew = fmt.Sprintf("foreign keys Zipfian with exponent %g", cfg.Skew)
		}
		return rowSource{
			desc:     fmt.Sprintf("generated from the model's statistics (package datagen) at scale %g (1.0 = the model's ROWS), seed %d, %s", cfg.Scale, cfg.Seed, skew),
			identity: fmt.Sprintf("model scale %g seed %d skew %g", cfg.Scale, cfg.Seed, cfg.Skew),
			rows: func(ctx context.Context, yield func(exec.Row) error) error {
				return datagen.Generate(ctx, m, gc, emit(yield))
			},
		}, nil
	case "":
		files, err := dataio.Files(cfg.Data, m)
		if err != nil {
			return rowSource{}, fmt.Errorf("data: %w", err)
		}
		if len(files) == 0 {
			return rowSource{}, fmt.Errorf("data: %s holds no data files (RELATION.csv or RELATION.jsonl)", cfg.Data)
		}
		return rowSource{
			desc:     "the files of " + cfg.Data,
			identity: "files " + cfg.Data,
			rows: func(ctx context.Context, yield func(exec.Row) error) error {
				for _, f := range files {
					err := dataio.ReadLines(f, func(row []types.Value, line int) error {
						if err := ctx.Err(); err != nil {
							return err
						}
						return yield(exec.Row{Entity: f.Entity, Values: row, File: f.Path, Line: line})
					})
					if err != nil {
						return err
					}
				}
				return nil
			},
		}, nil
	}
	return rowSource{}, fmt.Errorf("unknown generator %q (known: %s, %s)", cfg.Generator, GenerateModel, GenerateRUBiS)
}
