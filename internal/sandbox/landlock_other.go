//go:build !linux

package sandbox

import "errors"

// Supported reports the Landlock ABI version of the kernel: Landlock is
// Linux only, so 0 and false here.
func Supported() (abi int, ok bool) { return 0, false }

func landlockMissing() string { return "Landlock is a Linux feature" }

// enforce refuses any confining policy: there is nothing to enforce it
// with.
func enforce(p Policy, ownNet bool) error {
	if p.Confines() {
		return errors.New("Landlock is a Linux feature")
	}
	return nil
}
