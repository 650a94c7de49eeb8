package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Example: `  kvschema version`,
		Short:   "Print kvschema's version: the module version, or the commit it was built from",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return nil
		},
	}
}

// versionText describes the binary from its build information: the
// module version (go install …@vX), else the VCS revision and its time
// (a build in a clone), with "+dirty" for uncommitted changes.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "kvschema (no build information)"
	}
	v := bi.Main.Version
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	out := "kvschema"
	if v != "" && v != "(devel)" {
		out += " " + v
	} else if rev != "" {
		out += " " + rev[:min(len(rev), 12)] + dirty
		if when != "" {
			out += " (" + when + ")"
		}
	} else {
		out += " (devel)"
	}
	return out + ", " + bi.GoVersion
}
