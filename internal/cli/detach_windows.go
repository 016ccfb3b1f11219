package cli

import (
	"errors"
	"os"
	"syscall"
)

func sessionAttr() *syscall.SysProcAttr { return nil }

func closeOnExec(int) {}

func redirectFd(*os.File, int) error { return errors.New("not supported on Windows") }
