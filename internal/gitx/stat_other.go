//go:build !linux && !darwin

package gitx

import (
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillSys records nothing beyond size and modification time here.
func fillSys(*index.Entry, fs.FileInfo) {}

// sysMatches cannot check more than size and modification time here.
func sysMatches(*index.Entry, fs.FileInfo) bool { return true }

// fileIdentity has no inode data here: nothing is cached by it.
func fileIdentity(fs.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	return 0, 0, 0, false
}
