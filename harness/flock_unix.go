//go:build unix && !aix

package harness

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an flock on f without waiting: exclusive or shared. It
// reports false when another open file description holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// lockWait takes an exclusive flock on f, waiting for it.
func lockWait(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// unlock drops the flock on f.
func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// processGone reports whether no process has the id pid here (a pid of 0
// or less is never taken as gone).
func processGone(pid int) bool {
	return pid > 0 && errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}
