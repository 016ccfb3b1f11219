//go:build windows

package harness

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows locks are mandatory byte-range locks, so lock one byte far past
// the content: readers of the lock file are not blocked.
const lockOffsetHigh = 0x7fffffff

func lockFile(f *os.File, flags uint32) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}

// tryLock takes a lock on f without waiting: exclusive or shared. It reports
// false when another handle holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := lockFile(f, flags)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// lockWait takes an exclusive lock on f, waiting for it.
func lockWait(f *os.File) error { return lockFile(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// unlock drops the lock on f.
func unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// processGone is not known here: a recorded runner is taken as alive.
func processGone(int) bool { return false }
