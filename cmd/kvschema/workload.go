package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func workloadCmd() *cobra.Command {
	var url, out string
	c := &cobra.Command{
		Use:     "workload --store URL [-o FILE]",
		Example: "  kvschema workload --store pebble:db -o observed.log\n  kvschema advise --model model.kvs --workload-log observed.log --mix log",
		Short:   "Write the workload a store has served: how often each statement shape ran on its advised schema, as a query log",
		Long: `Every DB counts the statements it runs on the advised schema, per shape (the
statement with its constants made parameters: WHERE users.id = 7 and = 8 are
one shape), and keeps the counts in the store (flushed every few seconds and
when it closes; the counts of every process sharing the store add up). workload
writes them as a query log, one COUNT<TAB>STATEMENT line per shape, most
frequent first, which advise reads with --workload-log FILE (mix "log"): the
workload as it is, with measured weights, to compare with the one the schema
was designed for. An INSERT of n tuples counts as n INSERTs of one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := open(ctx, url, nil, false)
			if err != nil {
				return err
			}
			defer db.Close()
			entries, err := db.ObservedWorkload(ctx)
			if err != nil {
				return err
			}
			var b strings.Builder
			var total uint64
			for _, e := range entries {
				total += e.Count
			}
			fmt.Fprintf(&b, "# statements run on the advised schema of %s, by shape: %d shapes, %d runs\n", url, len(entries), total)
			for _, e := range entries {
				fmt.Fprintf(&b, "%d\t%s\n", e.Count, strings.Join(strings.Fields(e.Shape), " "))
			}
			if out == "" {
				_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
				return err
			}
			return os.WriteFile(out, []byte(b.String()), 0o644)
		},
	}
	storeFlag(c, &url, nil)
	c.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of stdout")
	return c
}
