package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/internal/progress"
	"github.com/spf13/cobra"
)

func migrateCmd() *cobra.Command {
	var url, schemaFile, modelFile, profile string
	var dryRun bool
	var rate float64
	var grace time.Duration
	c := &cobra.Command{
		Use: "migrate --store URL --schema NEW.kvs [--dry-run] [--rate ROWS/S]",
		Example: `  kvschema advise --model model.kvs --workload workload.kvs --mix bidding \
      --current deployed.kvs --rate 200 --amortize 30d --format ddl -o new.kvs
  kvschema migrate --store pebble:db --schema new.kvs --dry-run
  kvschema migrate --store pebble:db --schema new.kvs --rate 20000`,
		Short: "Change a loaded store's advised schema online: add, backfill and drop column families and indexes while it serves",
		Long: `migrate moves the advised schema deployed in a store to NEW.kvs (the same model;
other column families and secondary indexes), as F1's online schema change
and Phoenix's asynchronous index build do, through catalog versions every
client follows (each write checks the catalog's version first):

  1. each new index is registered write-only: every write keeps it, no plan
     reads it;
  2. it is backfilled from the indexes the store has (a bulk copy, then the
     rows writes changed meanwhile, recomputed under their writers' locks)
     and verified against the data the others hold;
  3. the new indexes become readable and the dropped ones unread, in one
     version;
  4. the dropped ones leave the schema, then their rows are deleted.

--dry-run shows the steps: what is added, dropped and kept, with sizes by
the model's statistics, those to add scaled to the tuples the store holds
(each relation of theirs counted through the readable indexes: a full
read of a column family of it, or of its keys), and the build's estimated time at the profile's costs
(or at --rate). Every state is stored, so a migration interrupted at
any point (a crash, ^C) resumes when run again with the same NEW.kvs; kvschema
verify is clean at the end. A new index whose rows need an attribute no
index of the store holds cannot be built from the store: migrate says which.

Writers in other processes sharing the store (Bigtable) see each new catalog
version at their next write statement; migrate waits --grace after each
change for them (default 2s there, none on an embedded store, which one
process has open: run migrate in the application's process through
kvschema.DB.Migrate, or while it is stopped).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if schemaFile == "" {
				return errors.New("--schema NEW.kvs is required: the schema to migrate to (kvschema advise --format ddl writes one)")
			}
			ssrc, err := os.ReadFile(schemaFile)
			if err != nil {
				return err
			}
			model, msrc := modelFile, ssrc
			if model == "" {
				model = schemaFile
			} else if msrc, err = os.ReadFile(modelFile); err != nil {
				return err
			}
			_, recorded, err := catalog.AdvisedFor(schemaFile, ssrc)
			if err != nil {
				return err
			}
			var prof cost.Profile
			switch {
			case profile != "":
				if prof, err = loadProfile(profile); err != nil {
					return fmt.Errorf("--profile: %w", err)
				}
			case recorded != nil:
				prof = *recorded
			default:
				prof = cost.Builtin[cost.DefaultTarget]
			}
			db, err := open(ctx, url, nil, false)
			if err != nil {
				return err
			}
			defer db.Close()
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			counting := progress.New(errw, "count", "tuples", 0)
			plan, err := db.Migrate(ctx, model, msrc, schemaFile, ssrc, prof, kvschema.MigrateOptions{DryRun: true, Rate: rate, Progress: func(ev kvschema.MigrateEvent) {
				if ev.Phase == "count" {
					counting.Done("count "+ev.Index, ev.Rows)
				}
			}})
			counting.Finish()
			if err != nil {
				if modelFile == "" && strings.Contains(err.Error(), "defines no relation") {
					return fmt.Errorf("%s holds no DEFINE RELATION: give the model with --model FILE", schemaFile)
				}
				return err
			}
			fmt.Fprint(out, plan)
			if dryRun || !plan.Changes() {
				return nil
			}
			meter := progress.New(errw, "migrate", "rows", len(plan.Add)+len(plan.Drop))
			defer meter.Finish()
			start := time.Now()
			res, err := db.Migrate(ctx, model, msrc, schemaFile, ssrc, prof, kvschema.MigrateOptions{Rate: rate, Grace: grace, Counts: plan.Counts, Progress: func(ev kvschema.MigrateEvent) {
				switch ev.Phase {
				case "catch-up":
					if ev.Done && ev.Rows > 0 {
						meter.Done("catch-up "+ev.Index, ev.Rows)
					}
				case "backfill", "drop":
					name := ev.Phase + " " + ev.Index
					if ev.Done && ev.Whole {
						meter.Skip(name, "its table dropped")
					} else if ev.Done {
						meter.Done(name, ev.Rows)
					} else {
						meter.Update(name, ev.Rows, ev.Estimate)
					}
				case "verify", "switch":
					if ev.Done && ev.Index == "" {
						meter.Skip(ev.Phase, map[string]string{"verify": "the new indexes agree with the data", "switch": "the new indexes are readable, the dropped ones unread"}[ev.Phase])
					}
				}
			}})
			meter.Finish()
			if err != nil && res != nil && res.Started {
				return fmt.Errorf("%w\n(the store is left in a state a rerun of the same command resumes from)", err)
			}
			if err != nil {
				return err
			}
			for _, x := range res.Add {
				if s, ok := res.Stats[x.Name]; ok {
					fmt.Fprintf(out, "migrate: %s: %d rows copied, %d changed by writes meanwhile and recomputed, in %v\n", x.Name, s.Rows, s.Recounted, s.Elapsed.Round(time.Millisecond))
				}
			}
			fmt.Fprintf(out, "migrate: done in %v\n", time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	storeFlag(c, &url, nil)
	c.Flags().StringVar(&schemaFile, "schema", "", "the schema to migrate to (DEFINE COLUMN FAMILY / SECONDARY INDEX; advise --format ddl)")
	c.Flags().StringVar(&modelFile, "model", "", "its model, when NEW.kvs holds no DEFINE RELATION")
	c.Flags().StringVar(&profile, "profile", "", "the cost profile its plans are chosen with (default: the one NEW.kvs records)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "show what would change, change nothing")
	c.Flags().Float64Var(&rate, "rate", 0, "rows a second the backfills write and the drops delete (0: as fast as the store takes them)")
	c.Flags().DurationVar(&grace, "grace", 0, "wait after each catalog change for writers of other processes (0: 2s on stores other processes share, none on embedded ones; <0: none)")
	return c
}
