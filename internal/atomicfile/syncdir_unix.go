//go:build unix && !aix

package atomicfile

import (
	"errors"
	"syscall"
)

// syncDirUnsupported reports a folder fsync error that some file systems
// give and that is safe to ignore.
func syncDirUnsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}
