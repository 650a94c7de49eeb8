package kvschema

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kvschema/kvschema/types"
)

// WriteTable prints the rows as an aligned text table with a row count.
// Column names and values are escaped (types.Display), so no stored value
// can put a control byte or invalid UTF-8 on a terminal, nor a tab or a
// line break into the table.
func (r *Rows) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cells := make([]string, len(r.cols))
	for i, c := range r.cols {
		cells[i] = types.Escape(c)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
	for _, row := range r.All() {
		cells = cells[:0]
		for _, v := range row {
			cells = append(cells, Display(v))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d row%s)\n", r.n, map[bool]string{true: "", false: "s"}[r.n == 1])
	return err
}

// Display formats a value for people: strings bare, everything else as a
// literal, with every byte that is not part of a printable UTF-8 rune (and
// every backslash) as \xNN. It is types.Display, the rule every printer of
// kvschema follows.
func Display(v types.Value) string { return types.Display(v) }
