//go:build unix

package controller

import (
	"io/fs"
	"syscall"
)

// links is a file's number of names (hard links).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
