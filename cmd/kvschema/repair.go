package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/txnstore"
)

func repairCmd() *cobra.Command {
	var url string
	var tombstoneAge time.Duration
	c := &cobra.Command{
		Use:   "repair --store URL [--tombstone-age 10m]",
		Short: "Finish the multi-row writes a dead client left, and tidy their bookkeeping (Bigtable)",
		Long: `On a store that is atomic per row only (bigtable://…), every multi-row write
goes through an intent log. repair rolls forward every write left in it (a
reader meeting such a write, or the next client, also does), clears markers of
finished writes and removes the tombstones of rows deleted more than
--tombstone-age ago. Embedded stores (pebble, mem) write atomically: there is
nothing to repair. Run verify afterwards to check every copy agrees.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			st, err := store.Open(ctx, url)
			if err != nil {
				return err
			}
			defer st.Close()
			ts, ok := st.(*txnstore.Store)
			if !ok {
				fmt.Fprintf(cmd.OutOrStdout(), "%s writes atomically: nothing to repair\n", url)
				return nil
			}
			errw := cmd.ErrOrStderr()
			rep, err := ts.Repair(ctx, tombstoneAge, func(table string, rows int64) {
				fmt.Fprintf(errw, "repair: %s: %d rows\n", table, rows)
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	c.Flags().StringVar(&url, "store", "", "store URL (required)")
	c.Flags().DurationVar(&tombstoneAge, "tombstone-age", 10*time.Minute, "remove tombstones of rows deleted longer ago than this")
	_ = c.MarkFlagRequired("store")
	return c
}
