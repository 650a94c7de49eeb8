package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/export"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/stats"
	"github.com/kvschema/kvschema/workload"
)

// inputs are the files the advisor commands read.
type inputs struct {
	modelFiles                 []string
	workloadFile, logFile, mix string
	target, profile            string // --target and its alias --profile
	model                      *catalog.Model
	workload                   *workload.Workload
	prof                       cost.Profile
	// defaultProf, when set, is the profile used without --target (cost:
	// the one the schema records), instead of cost.DefaultTarget's.
	defaultProf *cost.Profile
}

// targetHelp describes --target.
const targetHelp = "what to design for: pebble (kvschema's engine on Pebble, embedded), bigtable (kvschema's engine on Bigtable, 1 ms round trips), cassandra (a schema exported to Cassandra: the paper's constants) or a JSON profile file (kvschema calibrate writes one)"

func (in *inputs) flags(c *cobra.Command, targetDefault string) {
	c.Flags().StringArrayVar(&in.modelFiles, "model", nil, "conceptual model: DEFINE RELATION statements, or SQL DDL (CREATE TABLE, ALTER TABLE … ADD PRIMARY KEY / FOREIGN KEY, as a schema dump has them); repeat for several files")
	c.Flags().StringVar(&in.workloadFile, "workload", "", "workload: a file with one DEFINE WORKLOAD")
	c.Flags().StringVar(&in.logFile, "workload-log", "", "workload from a query log instead: COUNT<TAB>STATEMENT lines (pg_stat_statements, a MySQL digest, an application's log), one mix named log")
	c.Flags().StringVar(&in.mix, "mix", "", "mix of the workload to design for (default: its first mix)")
	c.Flags().StringVar(&in.target, "target", "", targetHelp+"; default "+targetDefault)
	c.Flags().StringVar(&in.profile, "profile", "", "the same as --target (its former name)")
}

// loadTarget resolves --target (or --profile) into in.prof.
func (in *inputs) loadTarget() error {
	name := in.target
	switch {
	case in.target != "" && in.profile != "" && in.target != in.profile:
		return fmt.Errorf("--target %s and --profile %s disagree (--profile is --target's former name: give one)", in.target, in.profile)
	case name == "":
		name = in.profile
	}
	if name == "" {
		if in.defaultProf != nil {
			in.prof = *in.defaultProf
			return nil
		}
		name = cost.DefaultTarget
	}
	p, err := loadProfile(name)
	if err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	in.prof = p
	return nil
}

// loadProfile loads a built-in profile or a profile file; an unknown name
// that is not a file lists the built-in ones.
func loadProfile(name string) (cost.Profile, error) {
	if _, ok := cost.Builtin[name]; !ok && !strings.ContainsAny(name, "./\\") {
		if _, err := os.Stat(name); err != nil {
			return cost.Profile{}, fmt.Errorf("unknown target %q: give one of %s, or a JSON profile file (kvschema calibrate -o FILE writes one)", name, strings.Join(cost.Targets(), ", "))
		}
	}
	return cost.Load(name)
}

// workloadHelp explains the model and workload inputs in the advisor
// commands' help.
const workloadHelp = `The model is one or more files (--model, repeated) of DEFINE RELATION
statements, or SQL DDL — the CREATE TABLE and ALTER TABLE … ADD PRIMARY KEY /
FOREIGN KEY of a pg_dump --schema-only or mysqldump --no-data — or both
mixed; a dump's other statements (SET, CREATE INDEX, …) are skipped, each
kind noted on stderr. SQL carries no statistics: give each table's row count
as a comment at the end of its CREATE TABLE line (CREATE TABLE items ( --
ROWS 20000), and optionally a column's size and number of distinct values
and a foreign key's reverse name at the end of the column's line (-- SIZE 16
CARDINALITY 50 REVERSE items_sold; for a key that an ALTER TABLE adds, the
REVERSE goes on a line of the ALTER TABLE). kvschema model --print shows the
model in kvschema's language.

The workload is a DEFINE WORKLOAD file (--workload), or a query log
(--workload-log): COUNT<TAB>STATEMENT lines, a statement going on over the
lines that follow without a count; its constants become parameters,
statements then identical add up, each count is the statement's weight in
the log's one mix (log). The statements kvschema cannot express are listed
on stderr with the reason, and their share of the log's weight.`

// readModel reads model files (lang.ParseModel), reports on errw what they
// skipped (each kind of statement once, with its count and first
// position), and returns their statements.
func readModel(files []string, errw io.Writer) ([]lang.Statement, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("give the conceptual model with --model FILE")
	}
	var stmts []lang.Statement
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ss, notes, err := lang.ParseModel(f, src)
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, ss...)
		count := map[string]int{}
		var first []lang.Note
		for _, n := range notes {
			if count[n.Kind] == 0 {
				first = append(first, n)
			}
			count[n.Kind]++
		}
		for _, n := range first {
			more := ""
			if c := count[n.Kind]; c > 1 {
				more = fmt.Sprintf(" (%d statements, the first here)", c)
			}
			fmt.Fprintf(errw, "kvschema: note: %s%s\n", n, more)
		}
	}
	return stmts, nil
}

// load reads the model and the workload; notes on the model and the
// report on a query log go to errw.
func (in *inputs) load(errw io.Writer) error {
	stmts, err := readModel(in.modelFiles, errw)
	if err != nil {
		return err
	}
	if in.model, err = catalog.Build(stmts); err != nil {
		if _, uerr := catalog.Unmeasured(stmts); uerr != nil {
			return err
		}
		// Only statistics are missing: they can be measured.
		defs, _ := catalog.Definitions(stmts) // Unmeasured read them
		var unmeasured []string
		for _, d := range defs {
			if d.Rows <= 0 {
				unmeasured = append(unmeasured, d.Name)
			}
		}
		return fmt.Errorf("%w\nrelations without ROWS: %s; measure the statistics from the data: kvschema stats --model %s --data DIR|FILE.sqlite -o model.kvs, then give --model model.kvs", err, strings.Join(unmeasured, ", "), strings.Join(in.modelFiles, " --model "))
	}
	switch {
	case (in.workloadFile == "") == (in.logFile == ""):
		return fmt.Errorf("give the workload with exactly one of --workload FILE and --workload-log FILE")
	case in.logFile != "":
		src, err := os.ReadFile(in.logFile)
		if err != nil {
			return err
		}
		var rep *workload.LogReport
		in.workload, rep, err = workload.ParseLog(in.model, in.logFile, src)
		if rep != nil {
			if werr := rep.WriteText(errw); err == nil {
				err = werr
			}
		}
		if err != nil {
			return err
		}
	default:
		src, err := os.ReadFile(in.workloadFile)
		if err != nil {
			return err
		}
		if in.workload, err = workload.Parse(in.model, in.workloadFile, src); err != nil {
			return err
		}
	}
	if in.mix == "" {
		in.mix = in.workload.Mixes[0]
	}
	return in.loadTarget()
}

// checkTag says which tags there are when w has no statement tagged tag.
func checkTag(w *workload.Workload, tag string) error {
	var tags []string
	for _, s := range w.Statements {
		if s.Tag == tag {
			return nil
		}
		tags = append(tags, s.Tag)
	}
	if len(tags) > 12 {
		tags = append(tags[:12], "…")
	}
	return fmt.Errorf("--statement %s: the workload has no statement of that tag (its tags: %s)", tag, strings.Join(tags, ", "))
}

// interruptible returns the context advise runs in. A first Ctrl-C asks
// the solver to stop with the best schema found so far (its gap is
// reported with it); a second one abandons the run.
func interruptible(parent context.Context, errw io.Writer, cbc *solver.CBC) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	soft := make(chan struct{})
	cbc.Interrupt = soft
	go func() {
		select {
		case <-sigs:
			fmt.Fprintln(errw, "advise: interrupted: the solver stops with the best schema found so far and its gap (Ctrl-C again abandons the run)")
			close(soft)
		case <-ctx.Done():
			return
		}
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// checkStats warns on errw, a line per problem, where the statistics of m
// are more than 2× off what its data (if given) measure.
func checkStats(m *catalog.Model, data string, quiet bool, errw io.Writer) error {
	if data == "" {
		return nil
	}
	rels, err := measure(m, data, quiet, errw)
	if err != nil {
		return err
	}
	warn := stats.Compare(m, rels)
	for _, w := range warn {
		fmt.Fprintf(errw, "kvschema: warning: %s\n", w)
	}
	if len(warn) > 0 {
		fmt.Fprintf(errw, "kvschema: note: kvschema stats --model … --data %s writes the model with the statistics of the data\n", data)
	}
	return nil
}

// heartbeat returns a printer of progress lines that also says, every
// 10 s without one, that the work goes on.
func heartbeat(ctx context.Context, w io.Writer) func(string) {
	var mu sync.Mutex
	start, last := time.Now(), time.Now()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				mu.Lock()
				if now.Sub(last) >= 10*time.Second {
					fmt.Fprintf(w, "advise: still working (%v so far)\n", now.Sub(start).Round(time.Second))
					last = now
				}
				mu.Unlock()
			}
		}
	}()
	return func(s string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, s)
		last = time.Now()
	}
}

// output opens -o FILE, or stdout.
func output(path string, stdout io.Writer) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		return stdout, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

func adviseCmd() *cobra.Command {
	var in inputs
	var budget, maxPartition, format, out, statement string
	var noSI, normalized, quiet, static, bucketPartitions bool
	var data, compare, current, amortize, migrationBudget string
	var reload, keepData bool
	var rate float64
	var timeLimit time.Duration
	c := &cobra.Command{
		Use: "advise --model FILE... (--workload FILE | --workload-log FILE) [--mix NAME] [--budget SIZE] [--target pebble|bigtable|cassandra|FILE.json]",
		Example: `  kvschema advise --model examples/rubis/model.kvs --workload examples/rubis/workload.kvs \
      --mix bidding --budget 161MB --format ddl -o rubis.kvs
  kvschema advise --model schema.sql --workload-log queries.log --target bigtable --format ddl -o schema.kvs
  kvschema advise … --target cassandra --format ddl -o schema.kvs && kvschema export --schema schema.kvs --to cql`,
		Short: "Recommend column families, secondary indexes and plans for a workload",
		Long: `Recommend column families, secondary indexes and the plan of every
statement for a workload over a conceptual model, within a storage budget.

The target is what the schema is designed for, by its cost profile: pebble
(the default: kvschema's engine on an embedded Pebble store), bigtable
(kvschema's engine on Bigtable, assuming 1 ms network round trips),
cassandra (the paper's Cassandra constants, for a schema exported to
Cassandra with kvschema export --to cql), or a JSON profile that kvschema
calibrate measured on your own store. --format ddl records the target and
the profile in the schema file; kvschema load warns when the store it goes
into is of another kind, and plans with that profile.

` + workloadHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if noSI && normalized {
				return fmt.Errorf("--no-secondary-index and --normalized exclude each other")
			}
			if err := in.load(cmd.ErrOrStderr()); err != nil {
				return err
			}
			if err := checkStats(in.model, data, quiet, cmd.ErrOrStderr()); err != nil {
				return err
			}
			if statement != "" {
				if format != "dot" && format != "svg" {
					return fmt.Errorf("--statement draws one plan: it goes with --format dot or svg")
				}
				if err := checkTag(in.workload, statement); err != nil {
					return err
				}
			}
			if err := checkCompare(compare, format, statement); err != nil {
				return err
			}
			b, err := units.Parse(budget)
			if err != nil {
				return err
			}
			mp, err := units.Parse(maxPartition)
			if err != nil {
				return fmt.Errorf("--max-partition: %v", err)
			}
			cbc := &solver.CBC{TimeLimit: timeLimit}
			opt := advisor.Options{Mix: in.mix, Budget: b, Profile: in.prof, Solver: cbc, MaxPartition: mp, BucketPartitions: bucketPartitions, StaticColumns: static, KeepData: keepData}
			if current != "" {
				if opt.Current, _, err = readSchema(current, in.model); err != nil {
					return err
				}
				if rate <= 0 {
					return fmt.Errorf("--current: give the workload's rate, --rate STATEMENTS_PER_SECOND")
				}
				if opt.Amortize, err = parseHorizon(amortize); err != nil {
					return fmt.Errorf("--amortize: %v", err)
				}
				opt.Rate = rate
				opt.Reload = reload
				if migrationBudget != "" {
					opt.MigrationLimited = true
					if strings.TrimSpace(migrationBudget) != "0" { // 0: build nothing
						if opt.MigrationLimit, err = units.Parse(migrationBudget); err != nil {
							return fmt.Errorf("--migration-budget: %v", err)
						}
					}
				}
			} else if migrationBudget != "" {
				return fmt.Errorf("--migration-budget needs --current")
			}
			switch {
			case noSI:
				opt.Mode = advisor.NoSI
			case normalized:
				opt.Mode = advisor.Normalized
			}
			ctx, stop := interruptible(cmd.Context(), cmd.ErrOrStderr(), cbc)
			defer stop()
			if !quiet {
				say := heartbeat(ctx, cmd.ErrOrStderr())
				opt.Progress = func(s string) { say("advise: " + s) }
				cbc.Progress = func(s string) { say("advise: cbc: " + s) }
			}
			if err := (&solver.CBC{}).Available(); err != nil {
				return err
			}
			res, err := advisor.Advise(ctx, in.model, in.workload, opt)
			if err != nil {
				return err
			}
			if compare != "" {
				return runCompare(compare, &in, res, format, out, cmd.OutOrStdout())
			}
			w, closeOut, err := output(out, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			switch format {
			case "text":
				err = res.WriteText(w)
			case "json":
				err = res.WriteJSON(w)
			case "ddl":
				err = res.WriteDDL(w, in.model.Defs)
			case "dot":
				err = res.WriteDOT(w, statement)
			case "svg":
				err = res.WriteSVG(w, statement)
			default:
				err = fmt.Errorf("unknown --format %q (text, json, ddl, dot or svg)", format)
			}
			if cerr := closeOut(); err == nil {
				err = cerr
			}
			return err
		},
	}
	in.flags(c, cost.DefaultTarget)
	c.Flags().StringVar(&budget, "budget", "unlimited", "storage budget in bytes; suffixes kB, MB, GB, TB (×1000) and KiB, MiB, GiB, TiB (×1024), any letter case; unlimited for none")
	c.Flags().StringVar(&maxPartition, "max-partition", "100MB", "refuse column families and indexes whose average partition (from the model's statistics) is larger; unlimited for none")
	c.Flags().BoolVar(&bucketPartitions, "bucket-partitions", false, "spread column families whose average partition exceeds --max-partition over partition buckets (PARTITION_BUCKETS: a bucket in the partition key; a read of a partition reads every bucket) instead of refusing them")
	c.Flags().BoolVar(&noSI, "no-secondary-index", false, "column families only (NoSE)")
	c.Flags().StringVar(&current, "current", "", "the schema deployed now (DDL): keeping its structures costs nothing, a new one its backfill, amortized over --amortize at --rate; the output says what to keep, add and drop")
	c.Flags().Float64Var(&rate, "rate", 0, "with --current: statements the workload runs a second")
	c.Flags().BoolVar(&keepData, "keep-data", false, "keep every attribute and relationship of the model, whatever the mix reads (each entity's fields and references by its key, at no cost in the objective): the store then holds all the data loaded into it, and a schema advised later for another mix can be built from it by kvschema migrate")
	c.Flags().BoolVar(&reload, "reload", false, "with --current: the new structures will be loaded from the source data, not built from the store (kvschema migrate builds only what the deployed structures hold the data of)")
	c.Flags().StringVar(&migrationBudget, "migration-budget", "", "with --current: the most bytes the new structures may hold (0: build nothing)")
	c.Flags().StringVar(&amortize, "amortize", "30d", "with --current: the time a backfill is paid over (e.g. 30d, 12h)")
	c.Flags().BoolVar(&static, "static-columns", false, "also consider column families keeping their root entity's fields as static columns (Cassandra's STATIC: once per partition)")
	c.Flags().BoolVar(&normalized, "normalized", false, "the paper's baseline: one CF per entity plus CFs from equality attributes to keys")
	c.Flags().StringVar(&format, "format", "text", "output: text, json, ddl (kvschema language), dot (Graphviz) or svg (a picture)")
	c.Flags().StringVar(&statement, "statement", "", "with --format dot or svg: draw the plan of the workload statement of this tag only")
	c.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of stdout")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	c.Flags().StringVar(&data, "data", "", "the model's data (a directory of RELATION.csv / RELATION.jsonl files, or a SQLite database file): warn where the model's statistics are more than 2× off it")
	// Among the schemas of least cost, the smallest is now always chosen:
	// --exact-ties, which asked for it, is accepted and does nothing.
	c.Flags().Bool("exact-ties", false, "no effect: the smallest of the schemas of least cost is always chosen")
	_ = c.Flags().MarkDeprecated("exact-ties", "the smallest of the schemas of least cost is always chosen now")
	c.Flags().StringVar(&compare, "compare", "", "also cost this schema file (DEFINE COLUMN FAMILY / SECONDARY INDEX, as --format ddl writes) and compare it with the recommendation, statement by statement, naming any of its structures the enumeration missed when it is the cheaper (--format text, json or svg)")
	c.Flags().DurationVar(&timeLimit, "time-limit", 0, "stop the solver after this long with its best schema (0: prove optimality)")
	return c
}

// readSchema reads DEFINE COLUMN FAMILY / SECONDARY INDEX statements; the
// model comes from modelStmts, or from the schema file's own relations.
// layoutCatalog reads the client definitions of a script that defines
// layouts (DEFINE SCHEMA) and no column family; ok is false for any other
// script. Its other statements (INSERT, SELECT, …) are not run.
func layoutCatalog(file string) (c *catalog.Catalog, ok bool, err error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, false, err
	}
	stmts, err := lang.ParseScript(file, src)
	if err != nil {
		return nil, false, err
	}
	layouts := false
	for _, st := range stmts {
		switch st.(type) {
		case *lang.DefineColumnFamily, *lang.DefineIndex:
			return nil, false, nil
		case *lang.DefineSchema:
			layouts = true
		}
	}
	if !layouts {
		return nil, false, nil
	}
	c = catalog.NewCatalog()
	for _, st := range stmts {
		switch st.(type) {
		case *lang.DefineRelation, *lang.DefineSchema:
			if err := c.Define(st); err != nil {
				return nil, false, err
			}
		}
	}
	return c, true, nil
}

func readSchema(file string, m *catalog.Model) (*catalog.Schema, *catalog.Model, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	stmts, err := lang.ParseScript(file, src)
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		if m, err = catalog.Build(stmts); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (the schema file holds no usable model; pass --model)", file, err)
		}
	}
	s, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		return nil, nil, err
	}
	if len(s.Indexes) == 0 {
		return nil, nil, fmt.Errorf("%s defines no column family", file)
	}
	return s, m, nil
}

func costCmd() *cobra.Command {
	var in inputs
	var schemaFile, format string
	c := &cobra.Command{
		Use: "cost --schema FILE [--model FILE...] (--workload FILE | --workload-log FILE) [--mix NAME] [--target pebble|bigtable|cassandra|FILE.json]",
		Example: `  kvschema cost --schema rubis.kvs --workload examples/rubis/workload.kvs --mix browsing
  kvschema cost --schema cfs.kvs --model examples/rubis/model.kvs --workload examples/rubis/workload.kvs`,
		Short: "Cost a given schema: best plan and cost of every statement, total cost and size",
		Long: `Cost a given schema: the best plan and cost of every statement of the
workload, the total cost and size. The model comes from --model, else from
the schema file itself (advise --format ddl writes it there). The costs are
the target's: --target, else the profile the schema file records (advise
--format ddl writes it), else pebble's.

` + workloadHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(in.modelFiles) == 0 {
				in.modelFiles = []string{schemaFile}
			}
			if src, err := os.ReadFile(schemaFile); err == nil {
				if _, in.defaultProf, err = catalog.AdvisedFor(schemaFile, src); err != nil {
					return err
				}
			}
			if err := in.load(cmd.ErrOrStderr()); err != nil {
				return err
			}
			s, _, err := readSchema(schemaFile, in.model)
			if err != nil {
				return err
			}
			res, err := advisor.Evaluate(in.model, in.workload, s, advisor.Options{Mix: in.mix, Profile: in.prof})
			if err != nil {
				return err
			}
			if format == "json" {
				return res.WriteJSON(cmd.OutOrStdout())
			}
			return res.WriteText(cmd.OutOrStdout())
		},
	}
	in.flags(c, "the profile the schema file records, else "+cost.DefaultTarget)
	c.Flags().StringVar(&schemaFile, "schema", "", "schema file (DEFINE COLUMN FAMILY / DEFINE SECONDARY INDEX), e.g. from advise --format ddl (required)")
	c.Flags().StringVar(&format, "format", "text", "output: text or json")
	_ = c.MarkFlagRequired("schema")
	return c
}

func exportCmd() *cobra.Command {
	var schemaFile, modelFile, to, keyspace, namespace string
	c := &cobra.Command{
		Use: "export --schema FILE --to cql|hbase|cbt [--model FILE] [--keyspace KS] [--namespace NS]",
		Example: `  kvschema export --schema rubis.kvs --to cql --keyspace shop
  kvschema export --schema rubis.kvs --to cbt`,
		Short: "Write a schema as another system's DDL (cql: Cassandra; hbase, cbt: the engine's tables on HBase or Bigtable)",
		Long: `Write a schema as another system's DDL.

  cql    Cassandra CREATE TABLE / CREATE INDEX, one table per column family
         (--keyspace qualifies the names).
  hbase  an HBase shell script (hbase shell -n FILE) creating the tables
         kvschema's engine uses: one per column family and secondary index
         (family v), or, for a script of DEFINE SCHEMA layouts, one per
         layout table with its families; one version, pre-split at every
         salt bucket and SPLIT ON point (--namespace puts them in a
         namespace it creates).
  cbt    the same tables as a POSIX shell script of cbt createtable commands
         for Bigtable; project and instance come from ~/.cbtrc. Split keys
         cbt cannot take (a 0x00 byte or a comma) are left out, with a
         comment saying so.

The model comes from --model, else from the schema file itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case keyspace != "" && to != "cql":
				return fmt.Errorf("--keyspace is for --to cql")
			case namespace != "" && to != "hbase":
				return fmt.Errorf("--namespace is for --to hbase")
			}
			// The tables to create: a client script's layouts', or the
			// column families and indexes of an advised schema.
			var tables []export.Table
			var s *catalog.Schema
			c, layouts, err := layoutCatalog(schemaFile)
			switch {
			case err != nil:
				return err
			case layouts && to == "cql":
				return fmt.Errorf("%s defines layouts (DEFINE SCHEMA): byte-level encodings that CQL cannot express; export their tables --to hbase or --to cbt (--to cql takes column families, DEFINE COLUMN FAMILY)", schemaFile)
			case layouts:
				tables = export.LayoutTables(c)
			default:
				var m *catalog.Model
				if modelFile != "" {
					stmts, err := readModel([]string{modelFile}, cmd.ErrOrStderr())
					if err != nil {
						return err
					}
					if m, err = catalog.Build(stmts); err != nil {
						return err
					}
				}
				if s, _, err = readSchema(schemaFile, m); err != nil {
					return err
				}
				if to != "cql" {
					tables = export.SchemaTables(s)
				}
			}
			var out string
			switch to {
			case "cql":
				out, err = export.CQL(s, keyspace)
			case "hbase":
				out, err = export.HBase(tables, namespace)
			case "cbt":
				out, err = export.CBT(tables)
			default:
				return fmt.Errorf("unknown --to %q (supported: cql, hbase, cbt)", to)
			}
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), out)
			return err
		},
	}
	c.Flags().StringVar(&schemaFile, "schema", "", "schema file, e.g. from advise --format ddl (required)")
	c.Flags().StringVar(&modelFile, "model", "", "model file, when the schema file has no DEFINE RELATION statements")
	c.Flags().StringVar(&to, "to", "cql", "target: cql, hbase or cbt")
	c.Flags().StringVar(&keyspace, "keyspace", "", "CQL keyspace to qualify table names with")
	c.Flags().StringVar(&namespace, "namespace", "", "HBase namespace to create and put the tables in")
	_ = c.MarkFlagRequired("schema")
	return c
}

// parseHorizon reads a duration, with d for days beside Go's units.
func parseHorizon(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q: want a positive number of days (30d) or a duration (12h)", s)
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive number of days (30d) or a duration (12h)", s)
	}
	return d, nil
}
