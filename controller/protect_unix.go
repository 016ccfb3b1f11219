//go:build unix

package controller

import (
	"io/fs"
	"syscall"
)

// fileID is a file's device, inode and number of names (hard links).
func fileID(fi fs.FileInfo) (dev, ino, links uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink)
	}
	return 0, 0, 1
}

// links is a file's number of names.
func links(fi fs.FileInfo) uint64 { _, _, n := fileID(fi); return n }
