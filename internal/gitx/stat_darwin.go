//go:build darwin

package gitx

import (
	"syscall"
	"time"
)

// changeTime is the file's status change time (ctime).
func changeTime(st *syscall.Stat_t) time.Time {
	return time.Unix(st.Ctimespec.Sec, st.Ctimespec.Nsec)
}
