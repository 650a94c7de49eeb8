package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema/catalog"
)

func modelCmd() *cobra.Command {
	var files []string
	var print bool
	c := &cobra.Command{
		Use: "model --model FILE... [--print]",
		Example: `  kvschema model --model schema.sql
  kvschema model --model schema.sql --model more.kvs --print > model.kvs`,
		Short: "Read a conceptual model (DEFINE RELATION or SQL DDL): check it, or print it in kvschema's language",
		Long: `Read a conceptual model as advise does and check it: each relation with its
row count, key, attributes and relationships (a summary on stdout), or, with
--print, write it in kvschema's language — DEFINE RELATION statements with
their statistics, keys, foreign keys and reverse relationships, the names
derived where the SQL gave none — which reads back as the same model.
--print needs no statistics (the output is where to add them); advise does,
and a note says which are missing.

` + workloadHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stmts, err := readModel(files, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if print {
				defs, err := catalog.Definitions(stmts)
				if err != nil {
					return err
				}
				text := fmt.Sprintf("-- The conceptual model of %s, as kvschema reads it.\n", strings.Join(files, ", ")) + printDefs(defs)
				if _, err := io.WriteString(cmd.OutOrStdout(), text); err != nil {
					return err
				}
				if _, err := catalog.Build(stmts); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "kvschema: note: advise cannot take this model yet: %v\n", err)
				}
				return nil
			}
			m, err := catalog.Build(stmts)
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), summary(m))
			return err
		},
	}
	c.Flags().StringArrayVar(&files, "model", nil, "model file: DEFINE RELATION statements or SQL DDL (repeat for several)")
	c.Flags().BoolVar(&print, "print", false, "write the model as DEFINE RELATION statements")
	return c
}

// summary describes a model, a relation per line: its row count, its key,
// its attributes and its relationships.
func summary(m *catalog.Model) string {
	var b strings.Builder
	nrel := 0
	for _, e := range m.Entities {
		nrel += len(e.Navs)
	}
	fmt.Fprintf(&b, "%d relations, %d relationships\n", len(m.Entities), nrel/2)
	for _, e := range m.Entities {
		var rels []string
		for _, n := range e.Navs {
			arrow := "→"
			if n.Many {
				arrow = "→*"
			}
			rels = append(rels, n.Name+" "+arrow+" "+n.To.Name)
		}
		fmt.Fprintf(&b, "%s: %g rows, key %s; attributes %s", e.Name, e.Count, e.ID().Name, strings.Join(e.FieldNames(), ", "))
		if len(rels) > 0 {
			fmt.Fprintf(&b, "; relationships %s", strings.Join(rels, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
