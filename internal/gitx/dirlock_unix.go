//go:build linux || darwin

package gitx

import (
	"errors"
	"os"
	"syscall"
)

// serialised runs fn holding an exclusive flock on the folder dir, so that
// two grub processes never run it at once in the same git directory (git
// itself takes no such lock, and needs none: it never removes a lock it
// does not hold). When the folder cannot be locked, fn runs anyway.
func serialised(dir string, fn func()) {
	d, err := os.Open(dir)
	if err != nil {
		fn()
		return
	}
	defer d.Close()
	for {
		err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	fn()
	if err == nil {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	}
}
