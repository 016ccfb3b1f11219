//go:build !linux

package sandbox

// FilterSupported reports whether the launcher can install the network
// filter: seccomp is Linux only.
func FilterSupported() (ok bool, why string) { return false, "seccomp is a Linux feature" }

// applySeccomp has nothing to install; enforce already refuses every
// confining policy here.
func applySeccomp(Policy, bool) error { return nil }
