package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/bench"
)

func benchMigrateCmd() *cobra.Command {
	var cfg bench.MigrationConfig
	var modelFile, profile, workloadFile, out string
	var quiet bool
	c := &cobra.Command{
		Use: "bench-migrate --from FROM.kvs --to TO.kvs --workload FILE [--mix NAME] --generate rubis|model --scale S --out DIR",
		Example: `  kvschema bench-migrate --from deployed.kvs --to advised.kvs --workload examples/rubis/workload_secondary.kvs \
      --mix bidding --generate rubis --scale 0.01 --out /tmp/migbench`,
		Short: "Measure a migration's effect on the application's writes: latency per phase, and the backfill's throughput against a load's",
		Long: `bench-migrate deploys FROM.kvs in a new Pebble store (temporary, no
round-trip delay), loads generated data (--generate rubis: the RUBiS data
set, --scale 1.0 = 200,000 users; --generate model: data matching the
model's statistics, --scale 1.0 = each relation's ROWS), and starts --writers
goroutines running the mix's write statements (INSERT, UPDATE, CONNECT; not
DELETE), drawn by weight, with parameters drawn from the data (an INSERT's
key is new), --rate statements a second in all, paced. After --warmup it
migrates the store to TO.kvs as kvschema migrate does (through
kvschema.DB.Migrate, in the writers' process, --backfill-rate bounding the
backfill), then lets the writers run for --cooldown, stops them and verifies
the store. A failed write, a failed migration or a difference verify finds
fails the run.

Writes DIR/migration.txt — per phase (before, add, backfill+catch-up,
verify, switch, drop, after) the writes that started in it, their median and
99th percentile latency and the median's ratio to the one before the
migration; the backfill's rows a second (copied and recomputed, over the
backfill phase) against the load's index rows a second — and
DIR/migration-timeline.png, every write's latency over time with the phases.
FROM.kvs and TO.kvs are advised schemas (advise --format ddl, which writes
the model into them; else give --model); the runtime plans with the profile
each records unless --profile names one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case cfg.FromFile == "" || cfg.ToFile == "":
				return errors.New("give the schemas with --from FROM.kvs and --to TO.kvs")
			case workloadFile == "":
				return errors.New("give the workload with --workload FILE: its mix's writes run during the migration")
			case cfg.Generator == "":
				return errors.New("give the data with --generate rubis|model and --scale")
			}
			var err error
			if cfg.FromSrc, err = os.ReadFile(cfg.FromFile); err != nil {
				return err
			}
			if cfg.ToSrc, err = os.ReadFile(cfg.ToFile); err != nil {
				return err
			}
			if modelFile != "" {
				cfg.ModelFile = modelFile
				if cfg.ModelSrc, err = os.ReadFile(modelFile); err != nil {
					return err
				}
			}
			cfg.WorkloadFile = workloadFile
			if cfg.WorkloadSrc, err = os.ReadFile(workloadFile); err != nil {
				return err
			}
			if profile != "" {
				p, err := loadProfile(profile)
				if err != nil {
					return fmt.Errorf("--profile: %w", err)
				}
				cfg.Profile = &p
			}
			if cfg.Writers <= 0 || !(cfg.Rate > 0) {
				return fmt.Errorf("--writers %d and --rate %g must be > 0", cfg.Writers, cfg.Rate)
			}
			for name, d := range map[string]time.Duration{"warmup": cfg.Warmup, "cooldown": cfg.Cooldown} {
				if d <= 0 {
					return fmt.Errorf("--%s %v must be > 0", name, d)
				}
			}
			if !quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			rep, err := bench.MigrationTimeline(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			text, png, err := rep.Write(out)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.String())
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s, %s\n", text, png)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&cfg.FromFile, "from", "", "the schema deployed and loaded first (advise --format ddl)")
	f.StringVar(&cfg.ToFile, "to", "", "the schema to migrate to")
	f.StringVar(&modelFile, "model", "", "the model, when the schema files hold no DEFINE RELATION")
	f.StringVar(&profile, "profile", "", "cost profile the runtime plans with (default: the one each schema file records, else pebble)")
	f.StringVar(&workloadFile, "workload", "", "workload: a file with one DEFINE WORKLOAD")
	f.StringVar(&cfg.Mix, "mix", "", "the mix whose writes run (default: the workload's first)")
	f.StringVar(&cfg.Generator, "generate", "", "data generator: rubis or model")
	f.Float64Var(&cfg.Scale, "scale", 0.01, "generated data size (rubis: 1.0 = 200,000 users; model: 1.0 = the model's ROWS)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the data generator and of the parameter sampling")
	f.IntVar(&cfg.Writers, "writers", 2, "goroutines that write")
	f.Float64Var(&cfg.Rate, "rate", 500, "write statements a second, all writers together")
	f.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "how long the writers run before the migration")
	f.DurationVar(&cfg.Cooldown, "cooldown", 3*time.Second, "how long they run after it")
	f.Float64Var(&cfg.BackfillRate, "backfill-rate", 0, "rows a second the backfills write and the drops delete (0: no bound)")
	f.StringVar(&out, "out", "bench-migrate-out", "report directory")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress lines")
	return c
}
