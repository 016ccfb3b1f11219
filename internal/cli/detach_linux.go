package cli

import (
	"os"
	"syscall"
)

// redirectFd makes file descriptor fd another name of f (dup3).
func redirectFd(f *os.File, fd int) error { return syscall.Dup3(int(f.Fd()), fd, 0) }
