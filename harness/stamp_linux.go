//go:build linux

package harness

import (
	"os"
	"syscall"
)

// fileStamp is what changes when a file's content may have: any write
// sets its change time, a replacement gives another inode.
type fileStamp struct {
	dev, ino, size uint64
	ctimeSec       int64
	ctimeNsec      int64
	mtimeNsec      int64
}

// stampOf is fi's stamp; the zero stamp, which stampOf never gives for a
// file, when the platform's data is not there.
func stampOf(fi os.FileInfo) fileStamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}
	}
	return fileStamp{dev: uint64(st.Dev), ino: st.Ino, size: uint64(st.Size),
		ctimeSec: int64(st.Ctim.Sec), ctimeNsec: int64(st.Ctim.Nsec), mtimeNsec: fi.ModTime().UnixNano()}
}
