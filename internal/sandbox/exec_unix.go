//go:build unix

package sandbox

import "syscall"

// execve replaces the process with path; it returns only on failure.
func execve(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }
