package kvschema

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kvschema/kvschema/types"
)

// WriteTable prints the rows as an aligned text table with a row count.
func (r *Rows) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(r.cols, "\t"))
	for _, row := range r.All() {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = Display(v)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d row%s)\n", r.n, map[bool]string{true: "", false: "s"}[r.n == 1])
	return err
}

// Display formats a value for people: strings bare (non-printable bytes as
// \xNN), everything else as a literal.
func Display(v types.Value) string {
	s, ok := v.(string)
	if !ok {
		return types.Format(v)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}
