package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/internal/progress"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/stats"
)

func statsCmd() *cobra.Command {
	var files []string
	var data, out string
	var quiet bool
	c := &cobra.Command{
		Use: "stats --model FILE... --data DIR|FILE.sqlite [-o OUT]",
		Example: `  kvschema stats --model schema.sql --data ./csv -o model.kvs
  kvschema stats --model model.kvs --data app.sqlite -o model.kvs`,
		Short: "Measure a model's statistics (ROWS, SIZE, CARDINALITY) from its data and write the model with them",
		Long: `Read the model (as advise does; its statistics may be missing) and its data —
a directory of entity files (RELATION.csv with a header row, or RELATION.jsonl,
as load reads them), or a SQLite database file (a table per relation, of the
same name; columns by name, the table's other columns ignored) — one row at a
time, and write the model in kvschema's language with, for every relation
with data:

  ROWS         its number of rows
  CARDINALITY  per attribute (not the key), its number of distinct non-NULL
               values, clamped to [1, ROWS]: exact up to 262,144 distinct
               values, then a HyperLogLog estimate (standard error 0.8%)
  SIZE         per attribute, the average size in bytes of a non-NULL value
               as the store holds it: the type's width (INT and FLOAT 4,
               BIGINT, DOUBLE and TIMESTAMP 8, BOOL 1), or the length of a
               STRING's UTF-8 text or of a BYTES value; at least 1

Foreign keys get a SIZE and CARDINALITY too; the advisor derives a
relationship's fan-out from the ROWS of its two relations. A relation without
data keeps the statistics the model gives it; one whose data has no rows gets
ROWS 1; both are warned about on stderr. The output is always kvschema's
language (DEFINE RELATION), even for an SQL model: it carries the statistics,
the keys and the relationships SQL comments would, and advise reads it.
Progress goes to stderr when it is a terminal.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			errw := cmd.ErrOrStderr()
			if data == "" {
				return fmt.Errorf("give the data with --data DIR (RELATION.csv or RELATION.jsonl files) or --data FILE (a SQLite database)")
			}
			stmts, err := readModel(files, errw)
			if err != nil {
				return err
			}
			m, err := catalog.Unmeasured(stmts)
			if err != nil {
				return err
			}
			rels, err := measure(m, data, quiet, errw)
			if err != nil {
				return err
			}
			defs, err := catalog.Definitions(stmts)
			if err != nil {
				return err
			}
			for _, w := range stats.Apply(defs, rels, stats.ApplyOptions{}) {
				fmt.Fprintf(errw, "kvschema: warning: %s\n", w)
			}
			text := fmt.Sprintf("-- The conceptual model of %s, with statistics measured from %s by kvschema stats.\n", strings.Join(files, ", "), data) + printDefs(defs)
			w, closeOut, err := output(out, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, text)
			if cerr := closeOut(); err == nil {
				err = cerr
			}
			return err
		},
	}
	c.Flags().StringArrayVar(&files, "model", nil, "model file: DEFINE RELATION statements or SQL DDL (repeat for several)")
	c.Flags().StringVar(&data, "data", "", "the data: a directory of RELATION.csv / RELATION.jsonl files, or a SQLite database file")
	c.Flags().StringVarP(&out, "output", "o", "", "write the model to FILE instead of stdout")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return c
}

// printDefs writes model definitions in kvschema's language.
func printDefs(defs []*lang.DefineRelation) string {
	ss := make([]lang.Statement, len(defs))
	for i, d := range defs {
		ss[i] = d
	}
	return lang.PrintScript(ss)
}

// terminal reports whether w is a terminal (progress meters that are not
// wanted in logs check it).
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// measure measures the relations of m from data: a directory of data files
// or a SQLite database file. Progress goes to errw if it is a terminal and
// not quiet.
func measure(m *catalog.Model, data string, quiet bool, errw io.Writer) ([]stats.Relation, error) {
	var opt stats.Options
	if !quiet && terminal(errw) {
		meter := progress.New(errw, "stats", "rows", len(m.Entities))
		defer meter.Finish()
		opt.Progress = func(rel string, rows int64, done bool) {
			if done {
				meter.Done(rel, rows)
			} else {
				meter.Update(rel, rows, 0)
			}
		}
	}
	fi, err := os.Stat(data)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		rels, err := stats.MeasureSQLite(data, m, opt)
		if err == nil && len(rels) == 0 {
			err = fmt.Errorf("%s has no table named after a relation of the model", data)
		}
		return rels, err
	}
	files, err := dataio.Files(data, m)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no data files (RELATION.csv or RELATION.jsonl)", data)
	}
	return stats.MeasureFiles(files, opt)
}
