package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/txnstore"
)

func repairCmd() *cobra.Command {
	var url string
	c := &cobra.Command{
		Use:     "repair --store URL",
		Example: `  kvschema repair --store "bigtable://my-project/my-instance"`,
		Short:   "Finish the multi-row writes a dead client left (Bigtable); remove expired cells (Pebble)",
		Long: `On a store that is atomic per row only (bigtable://…), every multi-row write
goes through an intent log and locks the rows it changes until it is applied.
repair finishes every committed write left in the log (a reader or writer
meeting one also does), aborts the writes a dead client left uncommitted (after
waiting the store's lock timeout once, if there are any), and removes stale
locks. Embedded stores (pebble, mem) write atomically: there is nothing to
repair; there, repair removes for good the cells whose TTL (USING TTL) has
run out, which reads skip already (Pebble keeps them on disk until then).
Run verify afterwards to check every copy agrees.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			// The store alone, not a DB: repair must run even when the
			// definitions it holds cannot be read.
			url, err := storeURL(url)
			if err != nil {
				return err
			}
			st, err := store.Open(ctx, url)
			if err != nil {
				return err
			}
			defer st.Close()
			errw := cmd.ErrOrStderr()
			if sw, ok := st.(store.Sweeper); ok {
				n, err := sw.SweepExpired(ctx, func(table string, cells int64) {
					if cells > 0 {
						fmt.Fprintf(errw, "repair: %s: %d expired cells removed\n", table, cells)
					}
				})
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s writes atomically: nothing to repair; %d expired cells removed\n", url, n)
				return nil
			}
			ts, ok := st.(*txnstore.Store)
			if !ok {
				fmt.Fprintf(cmd.OutOrStdout(), "%s writes atomically: nothing to repair\n", url)
				return nil
			}
			rep, err := ts.Repair(ctx, func(table string, rows int64) {
				fmt.Fprintf(errw, "repair: %s: %d rows\n", table, rows)
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	storeFlag(c, &url, nil)
	return c
}
