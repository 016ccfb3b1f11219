//go:build !unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// groupAttr returns attr: process groups are Unix only.
func groupAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// stopCommand kills the command's own process; its children are out of
// reach without process groups.
func stopCommand(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// KillGroup reports errors.ErrUnsupported: process groups are Unix only.
func KillGroup(pgid int) error { return errors.ErrUnsupported }

// GroupAlive reports false: process groups are Unix only.
func GroupAlive(pgid int) bool { return false }

// exitStatus returns the process's exit code.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
