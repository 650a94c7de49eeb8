package main

import (
	"fmt"
	"io"

	"github.com/kvschema/kvschema/advisor"
)

// advise --compare FILE: the given schema costed beside the
// recommendation (advisor.Compare).

// checkCompare refuses, before the advisor runs, what --compare cannot
// write.
func checkCompare(file, format, statement string) error {
	if file == "" {
		return nil
	}
	if statement != "" {
		return fmt.Errorf("--compare compares whole schemas: it does not go with --statement")
	}
	switch format {
	case "text", "json", "svg":
		return nil
	}
	return fmt.Errorf("--compare writes a comparison: --format text, json or svg, not %s", format)
}

// runCompare costs the schema of file on advise's inputs (as cost
// --schema does) and writes its comparison with the recommendation res.
func runCompare(file string, in *inputs, res *advisor.Result, format, out string, stdout io.Writer) error {
	s, _, err := readSchema(file, in.model)
	if err != nil {
		return fmt.Errorf("--compare: %w", err)
	}
	given, err := advisor.Evaluate(in.model, in.workload, s, advisor.Options{Mix: in.mix, Budget: res.Budget, Profile: in.prof})
	if err != nil {
		return fmt.Errorf("--compare: %w", err)
	}
	c, err := advisor.Compare(in.workload, res, given, file)
	if err != nil {
		return err
	}
	w, closeOut, err := output(out, stdout)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		err = c.WriteJSON(w)
	case "svg":
		err = c.WriteSVG(w)
	default:
		err = c.WriteText(w)
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	return err
}
