package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/datagen"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/progress"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/types"
)

func loadCmd() *cobra.Command {
	var url, modelFile, schemaFile, profile, dataDir, generate, tempDir string
	var scale, skew float64
	var seed uint64
	var quiet bool
	c := &cobra.Command{
		Use: "load --store URL --schema FILE [--model FILE] (--data DIR | --generate rubis|model --scale S [--seed N] [--skew s])",
		Example: `  kvschema load --store pebble:/tmp/rubis --schema rubis.kvs --generate rubis --scale 0.01
  kvschema load --store pebble:/tmp/app --model model.kvs --schema schema.kvs --data ./csv
  kvschema load --store pebble:/tmp/app --schema schema.kvs --generate model --scale 0.1 --skew 1`,
		Short: "Deploy a schema in a store and bulk-load entity data into every column family and index (or relation data into every layout)",
		Long: `Deploy the schema (DEFINE COLUMN FAMILY / SECONDARY INDEX, e.g. the output of
advise --format ddl, which carries its model's DEFINE RELATIONs; else give
the model with --model) in the store, then load entity data: one file per
entity in DIR (ENTITY.csv with a header row, or ENTITY.jsonl), or rows from
a generator: rubis (the RUBiS data set; scale 1.0 is 200,000 users) or model
(data matching the model's statistics, as kvschema generate writes it; scale
1.0 is each relation's ROWS). Every row is checked (types, keys, foreign keys) before
anything is written, and the schema is deployed only then: bad data leaves
the store as it was. An interrupted load run again resumes. A store is
loaded once; later changes are statements (INSERT, UPDATE, DELETE).

The schema file records the target it was advised for (advise --target):
a schema advised for another kind of store than this one (bigtable or
cassandra into pebble:, pebble or cassandra into bigtable:) is warned about
on stderr; mem: takes any. The runtime plans with the profile the file
records, unless --profile names another.

The files of DIR named after relations defined with DEFINE RELATION /
DEFINE SCHEMA load into every layout of their relation, as INSERT would
(an upsert), each file checked whole before any of it is written; on a
store holding both kinds, the other files are the advised schema's
entities, loaded as above.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if (dataDir == "") == (generate == "") {
				return errors.New("give exactly one of --data DIR and --generate rubis|model")
			}
			// A load deploys its schema: it may make a new store.
			db, err := open(ctx, url, nil, true)
			if err != nil {
				return err
			}
			defer db.Close()
			var errw io.Writer = cmd.ErrOrStderr()
			if quiet {
				errw = io.Discard
			}
			// The files of relations defined with DEFINE RELATION load
			// into every layout of their relation; the others are the
			// advised schema's entities.
			relation := func(name string) bool { return db.Catalog().Relation(name) != nil }
			if dataDir != "" && len(db.Catalog().Relations) > 0 {
				en, err := db.Advised(ctx)
				if err != nil {
					return err
				}
				// Without an advised schema, every file must be a relation's.
				strict := en == nil && schemaFile == "" && modelFile == ""
				loaded, others, err := loadRelations(ctx, db, dataDir, strict, errw, cmd.OutOrStdout())
				if err != nil || strict || loaded > 0 && others == 0 {
					return err
				}
			}
			en, deploy, err := prepareLoad(ctx, db, modelFile, schemaFile, profile, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			_, err = runLoad(ctx, en, deploy, dataDir, relation, generate, tempDir, datagen.Config{Scale: scale, Seed: seed, Skew: skew}, errw, cmd.OutOrStdout())
			return err
		},
	}
	storeFlag(c, &url, nil)
	c.Flags().StringVar(&modelFile, "model", "", "conceptual model (DEFINE RELATION statements); default: the schema file's own")
	c.Flags().StringVar(&schemaFile, "schema", "", "schema (DEFINE COLUMN FAMILY / SECONDARY INDEX, as advise --format ddl writes it); not needed if the store has one")
	c.Flags().StringVar(&profile, "profile", "", "cost profile the runtime plans with: pebble, bigtable, cassandra or a JSON file (default: the one the schema file records, else pebble)")
	c.Flags().StringVar(&dataDir, "data", "", "directory of entity files (ENTITY.csv or ENTITY.jsonl)")
	c.Flags().StringVar(&generate, "generate", "", "generate the data instead: rubis or model")
	c.Flags().Float64Var(&scale, "scale", 0.001, "generator scale factor (rubis: 1.0 = 200,000 users; model: 1.0 = the model's ROWS)")
	c.Flags().Uint64Var(&seed, "seed", 1, "generator seed")
	c.Flags().Float64Var(&skew, "skew", 0, "model generator: Zipf exponent of foreign keys (0: uniform)")
	c.Flags().StringVar(&tempDir, "temp-dir", "", "where the load stages the data it checks and joins (about its size; default $TMPDIR)")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bars")
	return c
}

// loadRelations loads the files of dir named after relations defined with
// DEFINE RELATION (RELATION.csv with a header row, or RELATION.jsonl),
// into every layout of their relation (DB.LoadRelation: each file checked
// whole before any of it is written), and counts the other data files
// (an advised schema's entities'); strict makes those an error, and so a
// directory with no relation file.
func loadRelations(ctx context.Context, db *kvschema.DB, dir string, strict bool, errw, out io.Writer) (loaded, others int, err error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	type file struct {
		path string
		rel  *catalog.Relation
		f    dataio.Format
	}
	var files []file
	seen := map[*catalog.Relation]string{}
	for _, de := range des {
		f, ok := dataio.FormatOf(de.Name())
		if de.IsDir() || !ok {
			continue
		}
		path := filepath.Join(dir, de.Name())
		rel := db.Catalog().Relation(strings.TrimSuffix(de.Name(), filepath.Ext(de.Name())))
		if rel == nil {
			if strict {
				return 0, 0, fmt.Errorf("%s: no relation of that name in the store (a file per relation: RELATION.csv or RELATION.jsonl)", path)
			}
			others++
			continue
		}
		if prev, dup := seen[rel]; dup {
			return 0, 0, fmt.Errorf("relation %s has two data files: %s and %s", rel.Name, prev, path)
		}
		seen[rel] = path
		files = append(files, file{path, rel, f})
	}
	if len(files) == 0 {
		if strict {
			return 0, 0, fmt.Errorf("%s holds no relation files (RELATION.csv or RELATION.jsonl)", dir)
		}
		return 0, others, nil
	}
	meter := progress.New(errw, "load", "tuples", len(files))
	defer meter.Finish()
	for _, fl := range files {
		var read int64
		n, err := db.LoadRelation(ctx, fl.rel.Name, func(yield func(exec.Row) error) error {
			fh, err := os.Open(fl.path)
			if err != nil {
				return err
			}
			defer fh.Close()
			r, err := dataio.NewReader(fh, fl.path, fl.f, fl.rel.Entity)
			if err != nil {
				return err
			}
			for read = 0; ; read++ {
				row, err := r.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if read%10000 == 0 {
					meter.Update(fl.rel.Name, read, 0)
				}
				if err := yield(exec.Row{Values: row, File: fl.path, Line: r.Line()}); err != nil {
					return err
				}
			}
		})
		if err != nil {
			return loaded, others, err
		}
		loaded++
		meter.Done(fl.rel.Name, n)
		fmt.Fprintf(out, "load: %s: %d tuples from %s\n", fl.rel.Name, n, fl.path)
	}
	return loaded, others, nil
}

// prepareLoad returns the engine a load writes through and, when the
// schema is new to the store, the deployment to make once every row has
// been read and checked (so that bad data leaves the store as it was). The
// model comes from modelFile, else from the schema file itself (advise
// --format ddl writes the model's DEFINE RELATIONs into it); without a
// schema file, the store's own advised schema is loaded. The runtime plans
// with profile, else the profile the schema file records (advise --format
// ddl), else pebble's. A schema advised for another kind of store than db's
// is warned about on errw, before any data is read.
func prepareLoad(ctx context.Context, db *kvschema.DB, modelFile, schemaFile, profile string, errw io.Writer) (*exec.Engine, func() error, error) {
	if schemaFile == "" {
		if modelFile != "" {
			return nil, nil, errors.New("--model needs --schema (without --schema, the store's own schema is loaded)")
		}
		en, err := db.Advised(ctx)
		if err == nil && en == nil {
			err = exec.ErrNoSchema
		}
		return en, nil, err
	}
	ssrc, err := os.ReadFile(schemaFile)
	if err != nil {
		return nil, nil, err
	}
	model, msrc := modelFile, ssrc
	if model == "" {
		model = schemaFile
	} else if msrc, err = os.ReadFile(modelFile); err != nil {
		return nil, nil, err
	}
	_, recorded, err := catalog.AdvisedFor(schemaFile, ssrc)
	if err != nil {
		return nil, nil, err
	}
	var prof cost.Profile
	switch {
	case profile != "":
		if prof, err = loadProfile(profile); err != nil {
			return nil, nil, fmt.Errorf("--profile: %w", err)
		}
	case recorded != nil:
		prof = *recorded
	default:
		prof = cost.Builtin[cost.DefaultTarget]
	}
	a, err := catalog.ParseAdvised(model, msrc, schemaFile, ssrc, prof)
	if err != nil {
		if modelFile == "" && strings.Contains(err.Error(), "defines no relation") {
			return nil, nil, fmt.Errorf("%s holds no DEFINE RELATION: give the model with --model FILE", schemaFile)
		}
		return nil, nil, err
	}
	cur, err := db.Advised(ctx)
	if err != nil {
		return nil, nil, err
	}
	if cur != nil {
		if !cur.Advised().Same(a) {
			return nil, nil, errors.New("the store already holds a different schema or model: load this one into a new store (or run kvschema load without --schema to load the store's own)")
		}
		return cur, nil, nil
	}
	if note := catalog.TargetNote(a.Target, db.Store().Capabilities().Engine); note != "" {
		fmt.Fprintf(errw, "kvschema: warning: %s\n", note)
	}
	deploy := func() error {
		_, err := db.Deploy(ctx, model, msrc, schemaFile, ssrc, prof) // its note was given above
		return err
	}
	exec.Realize(db.Store(), a) // as deploy will
	return exec.FromCatalog(db.Store(), a, nil), deploy, nil
}

// runLoad loads files or generated data with progress on errw and a
// summary on out.
func runLoad(ctx context.Context, en *exec.Engine, deploy func() error, dataDir string, skip func(string) bool, generate, tempDir string, cfg datagen.Config, errw, out io.Writer) (*exec.LoadStats, error) {
	m := en.Model()
	var src func(func(exec.Row) error) error
	var identity string
	switch {
	case generate == "rubis":
		if cfg.Skew != 0 {
			return nil, errors.New("--skew is for --generate model: the RUBiS generator's foreign keys are uniform")
		}
		identity = fmt.Sprintf("rubis scale %g seed %d", cfg.Scale, cfg.Seed)
		src = func(yield func(exec.Row) error) error {
			return rubis.Generate(ctx, m, rubis.Config{Scale: cfg.Scale, Seed: cfg.Seed}, func(e *catalog.Entity, row []types.Value) error {
				return yield(exec.Row{Entity: e, Values: row, File: "generated " + e.Name})
			})
		}
	case generate == "model":
		identity = fmt.Sprintf("model scale %g seed %d skew %g", cfg.Scale, cfg.Seed, cfg.Skew)
		src = func(yield func(exec.Row) error) error {
			return datagen.Generate(ctx, m, cfg, func(e *catalog.Entity, row []types.Value) error {
				return yield(exec.Row{Entity: e, Values: row, File: "generated " + e.Name})
			})
		}
	case generate != "":
		return nil, fmt.Errorf("unknown generator %q (known: rubis, model)", generate)
	default:
		files, err := dataio.FilesExcept(dataDir, m, skip)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s holds no entity files (ENTITY.csv or ENTITY.jsonl)", dataDir)
		}
		var parts []string
		for _, f := range files {
			fi, err := os.Stat(f.Path)
			if err != nil {
				return nil, err
			}
			parts = append(parts, fmt.Sprintf("%s (%d bytes, modified %s)", filepath.Base(f.Path), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano)))
		}
		identity = "files " + strings.Join(parts, ", ")
		src = func(yield func(exec.Row) error) error {
			for _, f := range files {
				fh, err := os.Open(f.Path)
				if err != nil {
					return err
				}
				r, err := dataio.NewReader(fh, f.Path, f.Format, f.Entity)
				if err != nil {
					fh.Close()
					return err
				}
				for {
					row, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						fh.Close()
						return err
					}
					if err := yield(exec.Row{Entity: f.Entity, Values: row, File: f.Path, Line: r.Line()}); err != nil {
						fh.Close()
						return err
					}
				}
				fh.Close()
			}
			return nil
		}
	}
	start := time.Now()
	read := progress.New(errw, "load: read and check", "entity rows", 0)
	var write *progress.Meter // from the first index on: its rate counts writing only
	st, err := en.Load(ctx, src, exec.LoadOptions{Identity: identity, TempDir: tempDir, BeforeWrite: deploy, Progress: func(ev exec.LoadEvent) {
		if ev.Index == "" {
			read.Update("data", ev.Rows, 0)
			return
		}
		if write == nil {
			read.Finish()
			write = progress.New(errw, "load", "rows", len(en.Schema().Indexes))
		}
		write.Task(ev.Index, ev.Rows, ev.Estimate, ev.Done, ev.Earlier)
	}})
	read.Finish()
	if write != nil {
		write.Finish()
	}
	if err != nil {
		return nil, err
	}
	total := time.Since(start)
	fmt.Fprintf(out, "loaded %d entity rows into %d index rows (%d indexes, %d already done) in %v: %.0f entity rows/s (read and check %v, write %v)\n",
		st.EntityRows, st.IndexRows, len(en.Schema().Indexes), st.Skipped, total.Round(time.Millisecond), float64(st.EntityRows)/total.Seconds(),
		st.Read.Round(time.Millisecond), st.Write.Round(time.Millisecond))
	return st, nil
}

func verifyCmd() *cobra.Command {
	var url, dataDir string
	c := &cobra.Command{
		Use:     "verify --store URL [--data DIR]",
		Example: `  kvschema verify --store pebble:/tmp/rubis`,
		Short:   "Check that every column family, index and layout holds exactly the rows its definition implies",
		Long: `Advised schema: without --data, the entity data is rebuilt from the indexes
themselves: copies that disagree are stale, and every index must hold each row
the data known from all indexes implies. With --data, the expected rows come
from the entity files. Relations defined with DEFINE RELATION / DEFINE SCHEMA:
every layout must hold the tuples of the relation's primary layout, with the
same values, and no others. Exits non-zero on any difference.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := open(ctx, url, nil, false)
			if err != nil {
				return err
			}
			defer db.Close()
			// A store of client relations alone has no advised schema:
			// their layouts are verified all the same.
			en, _, err := prepareLoad(ctx, db, "", "", "", io.Discard)
			if err != nil && (!errors.Is(err, exec.ErrNoSchema) || dataDir != "" || len(db.Catalog().Relations) == 0) {
				return err
			}
			var ref *exec.Dataset
			if dataDir != "" {
				if ref, err = readDataset(en.Model(), dataDir); err != nil {
					return err
				}
			}
			structures := len(db.Catalog().Indexes())
			read := progress.New(cmd.ErrOrStderr(), "verify: read", "rows", structures)
			read.Terse = true
			var compare *progress.Meter
			rep, err := db.Verify(ctx, exec.VerifyOptions{Reference: ref, Progress: func(ev exec.VerifyEvent) {
				m := read
				if ev.Step == "compare" {
					if compare == nil {
						read.Finish()
						compare = progress.New(cmd.ErrOrStderr(), "verify: compare", "rows", structures)
						compare.Terse = true
					}
					m = compare
				}
				if ev.Done {
					m.Done(ev.Index, ev.Rows)
				} else {
					m.Update(ev.Index, ev.Rows, ev.Estimate)
				}
			}})
			read.Finish()
			if compare != nil {
				compare.Finish()
			}
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), types.EscapeText(rep.String()))
			if !rep.Clean() {
				return fmt.Errorf("verify found %d differences", len(rep.Differences))
			}
			return nil
		},
	}
	storeFlag(c, &url, nil)
	c.Flags().StringVar(&dataDir, "data", "", "reference entity files")
	return c
}

func readDataset(m *catalog.Model, dir string) (*exec.Dataset, error) {
	files, err := dataio.Files(dir, m)
	if err != nil {
		return nil, err
	}
	d := exec.NewDataset(m)
	for _, f := range files {
		if err := dataio.ReadFile(f, func(row []types.Value) error {
			d.Add(f.Entity, row)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return d, nil
}
