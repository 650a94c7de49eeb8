package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/datagen"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/internal/progress"
	"github.com/kvschema/kvschema/types"
)

func generateCmd() *cobra.Command {
	var files []string
	var dir, format string
	var cfg datagen.Config
	var quiet bool
	c := &cobra.Command{
		Use: "generate --model FILE... --scale S [--seed N] [--skew s] [--format csv|jsonl] -o DIR",
		Example: `  kvschema generate --model examples/rubis/model.kvs --scale 1 -o ./data
  kvschema generate --model schema.sql --scale 0.1 --skew 1 --format jsonl -o ./data`,
		Short: "Write deterministic data matching a model's statistics: one file per relation",
		Long: `Generate data for every relation of the model (as advise reads it: DEFINE
RELATION or SQL DDL with its statistics) and write it to DIR, one file per
relation (RELATION.csv with a header row, or RELATION.jsonl), ready for
load --data. At scale S a relation of ROWS n has max(1, round(n·S)) rows,
keyed 1..N; an attribute has min(CARDINALITY, N) distinct values (N when
its CARDINALITY is its relation's ROWS: unique stays unique), STRING and
BYTES values of lowercase letters, SIZE of them; foreign keys are uniform
over the referenced relation's keys, or Zipfian with --skew s. The same
model, scale, seed and skew give the same files. Rows stream to the files:
memory does not grow with the scale. Progress goes to stderr when it is a
terminal.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("give the output directory with -o DIR")
			}
			f, ok := dataio.ParseFormat(format)
			if !ok {
				return fmt.Errorf("--format %s: want csv or jsonl", format)
			}
			errw := cmd.ErrOrStderr()
			stmts, err := readModel(files, errw)
			if err != nil {
				return err
			}
			m, err := catalog.Build(stmts)
			if err != nil {
				return err
			}
			if quiet || !terminal(errw) {
				errw = io.Discard
			}
			ents := dataio.ParentsFirst(m)
			meter := progress.New(errw, "generate", "rows", len(ents))
			defer meter.Finish()
			var cur *catalog.Entity
			var n, total int64
			err = datagen.WriteDir(dir, ents, f, func(emit datagen.Emit) error {
				return datagen.Generate(cmd.Context(), m, cfg, func(e *catalog.Entity, row []types.Value) error {
					if e != cur {
						if cur != nil {
							meter.Done(cur.Name, n)
						}
						cur, n = e, 0
					}
					total++
					if n++; n%10000 == 0 {
						meter.Update(e.Name, n, datagen.Rows(e.Count, cfg.Scale))
					}
					return emit(e, row)
				})
			})
			if err != nil {
				return err
			}
			if cur != nil {
				meter.Done(cur.Name, n)
			}
			meter.Finish()
			fmt.Fprintf(cmd.OutOrStdout(), "generate: %d rows of %d relations (scale %g, seed %d, skew %g) in %s\n", total, len(ents), cfg.Scale, cfg.Seed, cfg.Skew, dir)
			return nil
		},
	}
	c.Flags().StringArrayVar(&files, "model", nil, "model file: DEFINE RELATION statements or SQL DDL with statistics (repeat for several)")
	c.Flags().StringVarP(&dir, "output", "o", "", "directory to write RELATION.csv or RELATION.jsonl files into (created if needed)")
	c.Flags().StringVar(&format, "format", "csv", "file format: csv or jsonl")
	c.Flags().Float64Var(&cfg.Scale, "scale", 1, "fraction of each relation's ROWS")
	c.Flags().Uint64Var(&cfg.Seed, "seed", 1, "generator seed")
	c.Flags().Float64Var(&cfg.Skew, "skew", 0, "Zipf exponent of foreign keys (0: uniform; 1: classic Zipf)")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return c
}
