//go:build linux

package gitx

import (
	"syscall"
	"time"
)

// changeTime is the file's status change time (ctime).
func changeTime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
}
