//go:build unix && !linux

package cli

import (
	"os"
	"syscall"
)

// redirectFd makes file descriptor fd another name of f (dup2).
func redirectFd(f *os.File, fd int) error { return syscall.Dup2(int(f.Fd()), fd) }
