//go:build !linux

package sandbox

import (
	"errors"
	"io"
	"syscall"
)

// InNamespace reports false: namespaces are Linux only, Wrap's command
// line is the one to run.
func InNamespace(self string, p Policy, argv []string) (wrapped []string, attr *syscall.SysProcAttr, ok bool) {
	return nil, nil, false
}

// Namespaces reports whether the launcher can make paths read-only here:
// user and mount namespaces are Linux only, so never.
func Namespaces() (ok bool, why string) {
	return false, "user and mount namespaces are a Linux feature: git's hooks and config and grub's state files are guarded by the referee's check only"
}

// runStaged is never reached: the launcher only makes paths read-only
// where Namespaces reports it can.
func runStaged(p Policy, args []string) error { return errors.ErrUnsupported }

func protect(p Policy, stderr io.Writer) {}

func existing(paths []string) []string { return nil }
