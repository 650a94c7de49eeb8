package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/bench"
	"github.com/kvschema/kvschema/calibrate"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/store"
)

func benchCmd() *cobra.Command {
	var cfg bench.Config
	var o benchOptions
	c := &cobra.Command{
		Use: "bench --model FILE... (--workload FILE | --workload-log FILE) [--mix NAME] [--data DIR | --generate model --scale S [--skew s]] --out DIR",
		Example: `  kvschema bench --model model.kvs --workload workload.kvs --mix browsing --generate model --scale 0.1 --out /tmp/bench
  kvschema bench --model schema.sql --workload-log queries.log --data ./csv --variants cf,si --out /tmp/bench
  kvschema bench rubis --scale 0.01 --out /tmp/bench`,
		Short: "Compare the baseline, CF-only and CF+SI schemas on a model and workload, measured on the same data (bench rubis: the paper's RUBiS experiment)",
		Long: `For each schema variant — baseline (advise --normalized), cf (advise
--no-secondary-index) and si (the default) — advise a schema for the mix
under the budget (none unless --budget), load the same data, and run every
statement of the mix --iterations times with parameters sampled from the
data (an INSERT's key is new), restoring the store after statements that
write. The variants are measured together, statement by statement (each
statement's runs on every variant in turn, the order alternating), so that
a shared machine's drift falls alike on all of them. The data is the files of --data DIR (RELATION.csv with a header row,
or RELATION.jsonl, as load --data reads them), or generated from the model's
statistics (--generate model, as kvschema generate writes it: --scale is a
fraction of each relation's ROWS, --skew makes foreign keys Zipfian;
deterministic by --seed). The model the advisor sees has the data's
statistics: each relation's ROWS and each attribute's CARDINALITY measured on
it, and SIZE where the model gives none; so a model without statistics (SQL
DDL as dumped) can run on --data. Each --rtt value is one measurement pass
with that delay added to every store round trip; the last one is the
realistic setting the cost profile is calibrated for (unless --profile names
one). Writes DIR/REPORT.md (naming the model, workload and mix), results.csv,
summary.json, the measured model, the schemas, the profile and PNG charts.

` + sweepLong + `

` + workloadHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			errw := cmd.ErrOrStderr()
			if (cfg.Workload == "") == (cfg.WorkloadLog == "") {
				return errors.New("give the workload with exactly one of --workload FILE and --workload-log FILE")
			}
			f := cmd.Flags()
			if cfg.Data != "" {
				if cfg.Generator != "" {
					return errors.New("give at most one of --data DIR and --generate model")
				}
				for _, name := range []string{"scale", "skew"} {
					if f.Changed(name) {
						return fmt.Errorf("--%s is for --generate: --data runs on the files as they are", name)
					}
				}
			}
			stmts, err := readModel(cfg.ModelFiles, errw)
			if err != nil {
				return err
			}
			cfg.Model = stmts
			cfg.Notes = errw
			return runBench(cmd, cfg, o, false)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&cfg.ModelFiles, "model", nil, "conceptual model: DEFINE RELATION statements, or SQL DDL; repeat for several files")
	f.StringVar(&cfg.Workload, "workload", "", "workload: a file with one DEFINE WORKLOAD")
	f.StringVar(&cfg.WorkloadLog, "workload-log", "", "workload from a query log instead: COUNT<TAB>STATEMENT lines, one mix named log")
	f.StringVar(&cfg.Mix, "mix", "", "workload mix to advise for and run (default: the workload's first)")
	f.StringVar(&cfg.Data, "data", "", "directory of RELATION.csv / RELATION.jsonl files to run on (default: generate the data)")
	f.StringVar(&cfg.Generator, "generate", "", "generate the data (the default): model (from the model's statistics) or rubis (a RUBiS-shaped model)")
	f.Float64Var(&cfg.Scale, "scale", 1, "generated data size: fraction of each relation's ROWS (rubis: 1.0 = 200,000 users)")
	f.Float64Var(&cfg.Skew, "skew", 0, "model generator: Zipf exponent of foreign keys (0: uniform; 1: classic Zipf)")
	o.flags(c, &cfg, "")
	c.AddCommand(benchRubisCmd())
	return c
}

// sweepLong is the bench commands' help on budget sweeps and executors.
const sweepLong = `A list of budgets (--budget 60MB,80MB,100MB) runs a budget sweep: every
variant advised and measured at each budget on the same data (the cf and si
variants advised at each; the baseline's optimum reused at the smaller
budgets it fits; a schema identical to one already measured shares that
measurement), a variant without a schema within a budget reported as
infeasible. DIR/REPORT.md then gives per budget each variant's predicted and
measured weighted means and SIs, whether the cf and si schemas are
identical, the si/cf ratios and a chart of both against the budget
(sweep-rtt*.png); each budget's own report is in DIR/budget-SIZE/.
--executor per-partition runs join steps as NoSE's Cassandra executor did,
one store request per partition probed, instead of one batched request per
step.`

// benchOptions are the flags every bench command shares that need
// parsing.
type benchOptions struct {
	variants, rtts, budget, executor, pebbleCache string
	sweep, quiet                                  bool
}

// flags adds the flags every bench command has; budgetHelp describes the
// default budget.
func (o *benchOptions) flags(c *cobra.Command, cfg *bench.Config, budgetHelp string) {
	f := c.Flags()
	if budgetHelp == "" {
		budgetHelp = "none"
	}
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the data generator and of the parameter sampling")
	f.StringVar(&o.variants, "variants", "baseline,cf,si", "schema variants to compare")
	f.StringVar(&o.budget, "budget", "", "storage budget (e.g. 161MB; default: "+budgetHelp+"); a list (60MB,80MB,100MB) runs a budget sweep")
	f.BoolVar(&o.sweep, "sweep", false, "budget sweep over the default budgets: "+sweepHelp()+" (RUBiS only)")
	f.StringVar(&o.executor, "executor", "batched", "how join steps read the partitions they probe: batched (one store request per step) or per-partition (one request per partition, as NoSE's Cassandra executor)")
	f.StringVar(&cfg.Store, "store", "pebble", "pebble (temporary), pebble:DIR (kept) or mem:")
	f.StringVar(&o.pebbleCache, "pebble-cache", "", "Pebble's block cache (default 64MiB), e.g. 512MB")
	f.StringVar(&o.rtts, "rtt", "0,1ms", "simulated round-trip delays, one measurement pass each; the last is the realistic one")
	f.IntVar(&cfg.Iterations, "iterations", 100, "timed runs per statement")
	f.IntVar(&cfg.Warmup, "warmup", 5, "untimed runs per statement before them")
	f.StringVar(&cfg.Profile, "profile", "", "cost profile (built-in name or JSON file); default: calibrate the store")
	f.StringVar(&cfg.Out, "out", "bench-out", "report directory")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress output")
}

func benchRubisCmd() *cobra.Command {
	var cfg bench.Config
	var o benchOptions
	c := &cobra.Command{
		Use:     "rubis --scale S --out DIR",
		Example: `  kvschema bench rubis --scale 0.01 --out /tmp/bench`,
		Short:   "Compare the baseline, CF-only and CF+SI schemas on the RUBiS workload (the paper's experiment)",
		Long: `kvschema bench on RUBiS's own model (examples/rubis/model.kvs), one of its
shipped workloads and its data generator (package rubis), under the paper's
budget scaled to the data: for each schema variant — baseline (advise
--normalized), cf (advise --no-secondary-index) and si (the default) — advise
a schema for the mix under the budget, load the same generated RUBiS data,
and run every statement of the mix --iterations times with parameters
sampled from the data, restoring the store after statements that write. Each
--rtt value is one measurement pass with that delay added to every store
round trip; the last one is the realistic setting the cost profile is
calibrated for (unless --profile names one). Writes DIR/REPORT.md (with the
SI schema's ratios to the others against the paper's targets, and the
paper's Fig. 4 comparison), results.csv, summary.json, the schemas, the
profile and PNG charts.

` + sweepLong + ` --sweep runs the default budgets: ` + sweepHelp() + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, cfg, o, true)
		},
	}
	f := c.Flags()
	f.Float64Var(&cfg.Scale, "scale", 0.01, "data size: fraction of the full RUBiS data set (1.0 = 200,000 users)")
	f.StringVar(&cfg.Mix, "mix", "bidding", "workload mix")
	f.StringVar(&cfg.Workload, "workload", "workload_secondary.kvs", "workload: workload.kvs (36 statements) or workload_secondary.kvs (the paper's 61)")
	o.flags(c, &cfg, "the paper's 161,000,000 bytes scaled to the data")
	return c
}

// runBench runs a benchmark and prints its summary; rubis adds the SI
// schema's ratios against the paper's targets.
func runBench(cmd *cobra.Command, cfg bench.Config, o benchOptions, rubis bool) error {
	cfg.Variants = splitList(o.variants)
	for _, s := range splitList(o.rtts) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("--rtt %q: %v", s, err)
		}
		cfg.RTTs = append(cfg.RTTs, d)
	}
	if err := o.parse(&cfg); err != nil {
		return err
	}
	if !o.quiet {
		cfg.Progress = cmd.ErrOrStderr()
	}
	rep, err := bench.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if rep.Sweep != nil {
		printSweep(out, rep)
		fmt.Fprintf(out, "report: %s/REPORT.md (%v)\n", rep.Config.Out, rep.Took.Round(time.Second))
		return nil
	}
	for _, v := range rep.Variants {
		for _, p := range v.Passes {
			fmt.Fprintf(out, "%-8s rtt %-6v weighted mean %-12v Spearman %.3f  (%d structures, %d SIs, size %s, model cost %.6g)\n",
				v.Name, p.RTT, time.Duration(p.WeightedMean*1e9).Round(time.Microsecond), p.Spearman, v.Structures, v.SIs, units.Format(v.Size), v.ModelCost)
		}
	}
	for _, rtt := range rep.Config.RTTs {
		switch {
		case rubis:
			fmt.Fprintf(out, "rtt %v: si/cf %.3f (predicted %.3f; the paper's %.3f), si/baseline %.4f (predicted %.4f; the paper's %.3f)\n", rtt,
				rep.Ratio("cf", rtt), rep.PredictedRatio("cf"), bench.PaperVsCF, rep.Ratio("baseline", rtt), rep.PredictedRatio("baseline"), bench.PaperVsBaseline)
		case rep.Variant("si") != nil:
			var parts []string
			for _, other := range []string{"cf", "baseline"} {
				if rep.Variant(other) != nil {
					parts = append(parts, fmt.Sprintf("si/%s %.3f", other, rep.Ratio(other, rtt)))
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(out, "rtt %v: %s\n", rtt, strings.Join(parts, ", "))
			}
		}
	}
	fmt.Fprintf(out, "report: %s/REPORT.md (%v)\n", rep.Config.Out, rep.Took.Round(time.Second))
	return nil
}

// parse reads the budget, sweep and executor flags into cfg: one budget
// is Config.Budget, several a sweep (Config.Budgets).
func (o benchOptions) parse(cfg *bench.Config) error {
	var err error
	if o.pebbleCache != "" {
		n, err := units.Parse(o.pebbleCache)
		if err != nil || n < 1<<20 {
			return fmt.Errorf("--pebble-cache %q: want a size of at least 1MiB", o.pebbleCache)
		}
		cfg.PebbleCache = int64(n)
	}
	if cfg.Executor, err = exec.ParseExecutor(o.executor); err != nil {
		return fmt.Errorf("--executor: %v", err)
	}
	budgets := splitList(o.budget)
	if o.budget != "" && len(budgets) == 0 {
		return fmt.Errorf("--budget %q: no budget", o.budget)
	}
	if o.sweep && len(budgets) > 0 {
		return errors.New("give --budget or --sweep, not both")
	}
	cfg.Sweep = o.sweep
	if len(budgets) == 1 {
		if cfg.Budget, err = units.Parse(budgets[0]); err != nil {
			return fmt.Errorf("--budget: %v", err)
		}
		return nil
	}
	for _, s := range budgets {
		b, err := units.Parse(s)
		if err != nil {
			return fmt.Errorf("--budget: %v", err)
		}
		if math.IsInf(b, 1) {
			return fmt.Errorf("--budget %s: a sweep's budgets are sizes (for one that does not bind, give a large one)", o.budget)
		}
		cfg.Budgets = append(cfg.Budgets, b)
	}
	return nil
}

// sweepHelp describes the default sweep's budgets.
func sweepHelp() string {
	var fs []string
	for _, f := range bench.SweepFactors {
		fs = append(fs, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return strings.Join(fs, ", ") + " × the paper's 161,000,000 bytes scaled to the data"
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// printSweep prints a budget sweep's summary: per budget each variant's
// predicted and measured weighted means, or why it has no schema, and the
// SI schema's ratio to the CF-only one.
func printSweep(out io.Writer, rep *bench.Report) {
	for _, pt := range rep.Sweep {
		budget := units.Format(pt.Budget)
		for _, inf := range pt.Infeasible {
			fmt.Fprintf(out, "budget %-8s %-8s infeasible (the smallest schema takes %s)\n", budget, inf.Name, units.Format(inf.MinBudget))
		}
		for _, v := range pt.Variants {
			for _, p := range v.Passes {
				fmt.Fprintf(out, "budget %-8s %-8s rtt %-6v weighted mean %-12v predicted %-12v (%d structures, %d SIs, size %s)\n", budget, v.Name, p.RTT,
					time.Duration(p.WeightedMean*1e9).Round(time.Microsecond), time.Duration(p.PredictedMean*1e9).Round(time.Microsecond), v.Structures, v.SIs, units.Format(v.Size))
			}
		}
		same, ok := pt.Identical("cf", "si")
		if !ok {
			continue
		}
		schemas := "schemas differ"
		if same {
			schemas = "identical schemas"
		}
		for _, rtt := range rep.Config.RTTs {
			fmt.Fprintf(out, "budget %-8s rtt %v: si/cf measured %.3f, predicted %.3f (%s)\n", budget, rtt, pt.Ratio("cf", rtt), pt.PredictedRatio("cf"), schemas)
		}
	}
}

func calibrateCmd() *cobra.Command {
	var url, outFile, name string
	var rtt time.Duration
	var runs int
	c := &cobra.Command{
		Use: "calibrate --store URL [--rtt D] -o profile.json",
		Example: `  kvschema calibrate --store pebble:/tmp/cal -o profile.json
  kvschema calibrate --store 'bigtable://p/i?emulator=127.0.0.1:8086' --rtt 1ms -o bigtable.json`,
		Short: "Measure a store's cost constants and write a profile advise --target accepts",
		Long: `Micro-benchmarks through the engine (lookups of 1 partition returning 1 to
1,024 rows, joins probing 1 to 1,024 partitions, single-row queries through a
column family and through a secondary index), through the store (batches
putting and deleting 1 to 16 rows) and on the client (sorting 16 to 4,096
rows as a query's client sort does) measure the constants of the cost model:
index, partition and row costs (a non-negative least-squares fit), insert and
delete costs per row, the latency of a plain CF query and of an SI query,
and the cost per row of a client sort. --rtt adds a round trip to every call
to the store's server (on bigtable:, to each call of the intent log under
a multi-row write). The profile records the store's kind (pebble, bigtable)
as its engine, and the rtt. Runs in the table namespace "calibrate." of the
store, emptied afterwards.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outFile == "" {
				return errors.New("give -o FILE for the profile")
			}
			ctx := cmd.Context()
			st, err := store.Open(ctx, url)
			if err != nil {
				return err
			}
			defer st.Close()
			if name == "" {
				name = fmt.Sprintf("calibrated %s rtt=%v", url, rtt)
			}
			res, err := calibrate.Run(ctx, calibrate.WithRTT(st, rtt), name, calibrate.Options{Runs: runs, RTT: rtt})
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(res.Profile, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(outFile, append(b, '\n'), 0o644); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), res.Report())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", outFile)
			return nil
		},
	}
	c.Flags().StringVar(&url, "store", "", "store URL (required)")
	c.Flags().DurationVar(&rtt, "rtt", 0, "simulated round-trip delay added to every store call")
	c.Flags().StringVarP(&outFile, "output", "o", "", "profile file to write")
	c.Flags().StringVar(&name, "name", "", "profile name (default: from the store URL and rtt)")
	c.Flags().IntVar(&runs, "runs", 30, "timed runs per micro-benchmark")
	_ = c.MarkFlagRequired("store")
	return c
}
