//go:build !unix

package solver

import "os/exec"

// ownProcessGroup does nothing where process groups are not unix's.
func ownProcessGroup(*exec.Cmd) {}
