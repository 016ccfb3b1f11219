//go:build unix

package harness

import (
	"os"
	"syscall"
)

// oNoFollow makes an open fail on a last element that is a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// linkCount is the number of names (hard links) of the file fi describes.
func linkCount(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
