package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/bench"
	"github.com/kvschema/kvschema/calibrate"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/rttstore"
)

func benchCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "bench",
		Short: "Run benchmarks",
	}
	c.AddCommand(benchRubisCmd())
	return c
}

func benchRubisCmd() *cobra.Command {
	var cfg bench.Config
	var variants, rtts, budget string
	var quiet bool
	c := &cobra.Command{
		Use:     "rubis --scale S --out DIR",
		Example: `  kvschema bench rubis --scale 0.01 --out /tmp/bench`,
		Short:   "Compare the baseline, CF-only and CF+SI schemas on the RUBiS workload (the paper's experiment)",
		Long: `For each schema variant — baseline (advise --normalized), cf (advise
--no-secondary-index) and si (the default) — advise a schema for the mix under
the budget, load the same generated RUBiS data, and run every statement of the
mix --iterations times with parameters sampled from the data, restoring the
store after statements that write. Each --rtt value is one measurement pass
with that delay added to every store round trip; the last one is the realistic
setting the cost profile is calibrated for (unless --profile names one).
Writes DIR/REPORT.md, results.csv, summary.json, the schemas, the profile and
PNG charts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Variants = splitList(variants)
			for _, s := range splitList(rtts) {
				d, err := time.ParseDuration(s)
				if err != nil {
					return fmt.Errorf("--rtt %q: %v", s, err)
				}
				cfg.RTTs = append(cfg.RTTs, d)
			}
			if budget != "" {
				b, err := units.Parse(budget)
				if err != nil {
					return fmt.Errorf("--budget: %v", err)
				}
				cfg.Budget = b
			}
			if !quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			rep, err := bench.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, v := range rep.Variants {
				for _, p := range v.Passes {
					fmt.Fprintf(out, "%-8s rtt %-6v weighted mean %-12v Spearman %.3f  (%d structures, %d SIs, size %s, model cost %.6g)\n",
						v.Name, p.RTT, time.Duration(p.WeightedMean*1e9).Round(time.Microsecond), p.Spearman, v.Structures, v.SIs, units.Format(v.Size), v.ModelCost)
				}
			}
			for _, rtt := range cfg.RTTs {
				fmt.Fprintf(out, "rtt %v: si/cf %.3f (target ≤ %.2f), si/baseline %.4f (target ≤ %.2f)\n", rtt,
					rep.Ratio("cf", rtt), bench.TargetVsCF, rep.Ratio("baseline", rtt), bench.TargetVsBaseline)
			}
			fmt.Fprintf(out, "report: %s/REPORT.md (%v)\n", cfg.Out, rep.Took.Round(time.Second))
			return nil
		},
	}
	f := c.Flags()
	f.Float64Var(&cfg.Scale, "scale", 0.01, "data size: fraction of the full RUBiS data set (1.0 = 200,000 users)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the data generator and of the parameter sampling")
	f.StringVar(&cfg.Mix, "mix", "bidding", "workload mix")
	f.StringVar(&cfg.Workload, "workload", "workload_secondary.kvs", "workload: workload.kvs (36 statements) or workload_secondary.kvs (the paper's 61)")
	f.StringVar(&variants, "variants", "baseline,cf,si", "schema variants to compare")
	f.StringVar(&budget, "budget", "", "storage budget (e.g. 161MB; default: the paper's 161,000,000 bytes scaled to the data)")
	f.StringVar(&cfg.Store, "store", "pebble", "pebble (temporary), pebble:DIR (kept) or mem:")
	f.StringVar(&rtts, "rtt", "0,1ms", "simulated round-trip delays, one measurement pass each; the last is the realistic one")
	f.IntVar(&cfg.Iterations, "iterations", 100, "timed runs per statement")
	f.IntVar(&cfg.Warmup, "warmup", 5, "untimed runs per statement before them")
	f.StringVar(&cfg.Profile, "profile", "", "cost profile (built-in name or JSON file); default: calibrate the store")
	f.StringVar(&cfg.Out, "out", "bench-out", "report directory")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return c
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

func calibrateCmd() *cobra.Command {
	var url, outFile, name string
	var rtt time.Duration
	var runs int
	c := &cobra.Command{
		Use:     "calibrate --store URL [--rtt D] -o profile.json",
		Example: `  kvschema calibrate --store pebble:/tmp/cal -o profile.json`,
		Short:   "Measure a store's cost constants and write a profile advise --profile accepts",
		Long: `Micro-benchmarks through the engine (lookups of 1 partition returning 1 to
1,024 rows, joins probing 1 to 1,024 partitions, single-row queries through a
column family and through a secondary index) and through the store (batches
putting and deleting 1 to 16 rows) measure the constants of the cost model:
index, partition and row costs (a non-negative least-squares fit), insert and
delete costs per row, and the latency of a plain CF query and of an SI query.
Runs in the table namespace "calibrate." of the store, emptied afterwards.`,
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
			res, err := calibrate.Run(ctx, rttstore.New(st, rtt), name, calibrate.Options{Runs: runs})
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
