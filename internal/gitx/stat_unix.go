//go:build linux || darwin

package gitx

import (
	"io/fs"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillSys copies the inode data git keeps in an index entry, so that git
// itself trusts the entries grub writes without re-reading the files.
func fillSys(e *index.Entry, info fs.FileInfo) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		e.CreatedAt = changeTime(st)
		e.Dev = uint32(st.Dev)
		e.Inode = uint32(st.Ino)
		e.UID = st.Uid
		e.GID = st.Gid
	}
}

// sysMatches reports whether the file is still the inode the entry
// describes, with the same change time (git's check for a file replaced
// or chmod-ed behind the index's back).
func sysMatches(e *index.Entry, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return e.Inode == uint32(st.Ino) && e.CreatedAt.Equal(changeTime(st))
}

// fileIdentity is the device, inode and change time (nanoseconds) of a
// file; false when info does not hold them.
func fileIdentity(info fs.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), changeTime(st).UnixNano(), true
}
