//go:build unix

package solver

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own: signals a
// terminal sends to the program's group do not reach it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
