package gitx

import (
	"io/fs"
	"sync"
	"time"
)

// Reading a guarded file again costs an open and a read; the guard reads
// every one of them before a turn and twice after it. A file whose lstat
// data (device, inode, size, mode, modification and change times with
// nanoseconds) is what it was when its content was read still holds that
// content, and is not read again: any write to a file, a chmod, a
// rename or link over it changes its change time (ctime), which no
// program can set back (only the system clock moves it), and a file put
// in its place is another inode. Only a file whose ctime was older, by
// racyMargin, than the moment it was read is trusted that way: a second
// write within the same tick of the file system's clock as the change
// before it would leave ctime as it was (git's "racily clean" problem).
// Such a file, and any file on a system without inode data, is read
// every time.
//
// The margin is many ticks of Linux's coarse file time clock (at most
// 10 ms) for a file whose ctime has nanoseconds, and two seconds for one
// whose ctime is a whole second: file systems that keep seconds only
// (ext4 with small inodes, HFS+) or two (FAT).
const (
	racyMargin       = 100 * time.Millisecond
	racyMarginCoarse = 2 * time.Second
)

// racyMarginOf is the margin for a file whose ctime is ctime (ns).
func racyMarginOf(ctime int64) time.Duration {
	if ctime%int64(time.Second) == 0 {
		return racyMarginCoarse
	}
	return racyMargin
}

// guardStat is the lstat data of a guarded file when its content was read.
type guardStat struct {
	dev, ino     uint64
	size         int64
	mode         fs.FileMode // type and permission bits
	mtime, ctime int64       // nanoseconds since the epoch
}

// guardMemo is what a Repo keeps between guard snapshots: the last
// snapshot's entries, whose file contents the next snapshot reuses under
// the same rule as Check, and the clock (tests move it).
type guardMemo struct {
	mu   sync.Mutex
	last map[string]guardEntry
	now  func() time.Time
	// declared are the submodules .gitmodules declared when the last copy
	// was taken (guard_nested.go); nil: no copy yet.
	declared map[string]bool
}

func (m *guardMemo) previous() map[string]guardEntry {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

func (m *guardMemo) remember(entries map[string]guardEntry) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = entries
}

func (m *guardMemo) clock() func() time.Time {
	if m == nil || m.now == nil {
		return time.Now
	}
	return m.now
}

// guardRead is one reading of the guarded paths.
type guardRead struct {
	budget *guardBudget
	prev   map[string]guardEntry // an earlier reading whose file contents may be reused; nil: none
	now    func() time.Time
	reads  int // files whose content was read (tests)
}

// statOf is fi's guardStat; false when fi holds no inode data.
func statOf(fi fs.FileInfo) (guardStat, bool) {
	dev, ino, ctime, ok := fileIdentity(fi)
	if !ok {
		return guardStat{}, false
	}
	return guardStat{dev: dev, ino: ino, size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano(), ctime: ctime}, true
}

// trustedStat is fi's guardStat, and whether a later equal lstat vouches
// for the content read after start: fi holds inode data and its ctime is
// more than its racy margin older than start.
func trustedStat(fi fs.FileInfo, start time.Time) (guardStat, bool) {
	st, ok := statOf(fi)
	return st, ok && st.ctime < start.Add(-racyMarginOf(st.ctime)).UnixNano()
}

// reuse returns the earlier reading of the file at p when its lstat data
// fi is the same as then and that reading was trusted.
func (rd *guardRead) reuse(p string, fi fs.FileInfo) (guardEntry, bool) {
	old, ok := rd.prev[p]
	if !ok || old.kind != kindFile || !old.trusted {
		return guardEntry{}, false
	}
	st, ok := statOf(fi)
	if !ok || st != old.stat {
		return guardEntry{}, false
	}
	return old, true
}
