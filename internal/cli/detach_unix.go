//go:build unix

package cli

import "syscall"

// sessionAttr starts a detached runner in a session of its own, away from
// the terminal's signals.
func sessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
