package gitx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/grub-dev/grub/internal/proc"
)

// indexLock is git's .git/index.lock, held for the whole commit as git
// does: other git commands that write the index wait or fail meanwhile.
//
// grub's lock names its holder: the file is made whole (a temporary file
// linked into place, so it never exists empty) with a line naming grub's
// pid, start time and host. The new index is written to a temporary file
// and renamed over .git/index, then the lock removed. So a lock a killed
// grub left behind (kill -9 mid-commit) names a process that is gone, and
// the next commit removes it instead of waiting for it forever; a lock a
// git command holds is never touched.
type indexLock struct {
	root string // the git directory
	mark string // the lock's content
	sync bool   // flush the new index before renaming it into place (core.fsync)
	done bool
}

const (
	indexFile     = "index"
	indexLockFile = "index.lock"
)

// lockMarker is the content of an index.lock grub holds.
const lockMarker = "grub index lock: pid %d start %d host %s\n"

func lockIndex(ctx context.Context, st *filesystem.Storage) (*indexLock, error) {
	root := st.Filesystem().Root()
	path := filepath.Join(root, indexLockFile)
	l := &indexLock{root: root, mark: ownMarker()}
	deadline := time.Now().Add(lockWait)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err := l.create(path)
		if err == nil {
			l.removeTemps()
			return l, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		if removeStale(path) {
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s exists: another git process is using this repository; wait for it to finish, or delete the file if no git process is running", path)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// removeTemps removes the index copies a grub killed inside writeIndex
// left: only the lock's holder writes one, and the lock is now this
// process's.
func (l *indexLock) removeTemps() {
	left, _ := filepath.Glob(filepath.Join(l.root, "grub-index.*.tmp"))
	for _, p := range left {
		_ = os.Remove(p)
	}
}

// ownMarker names this process as a lock's holder.
func ownMarker() string {
	host, _ := os.Hostname()
	start, _ := proc.StartTime(os.Getpid())
	return fmt.Sprintf(lockMarker, os.Getpid(), start, host)
}

// create makes the lock file with its marker in one step: a temporary file
// hard-linked to path, which fails with os.ErrExist when path exists.
func (l *indexLock) create(path string) error {
	f, err := os.CreateTemp(l.root, fmt.Sprintf("grub-index-lock.%d.*.tmp", os.Getpid()))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o644) // as git makes it
	if err == nil {
		_, err = f.WriteString(l.mark)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Link(f.Name(), path)
}

// removeStale removes the index.lock at path when a grub process that is
// gone holds it (same host, and no process with its pid and start time),
// and reports whether it did. Where start times cannot be read, nothing
// is ever stale. The check and the removal run under a lock on the git
// directory (serialised): otherwise a grub that read the stale lock could
// remove the live one another grub took after removing it first. Nothing
// else changes a lock that exists: git never removes one it does not
// hold, and no one can create it while it is there.
func removeStale(path string) bool {
	removed := false
	serialised(filepath.Dir(path), func() {
		data, err := os.ReadFile(path)
		if err != nil || !staleMarker(string(data)) || os.Remove(path) != nil {
			return
		}
		removed = true
		var pid int
		var start uint64
		var host string
		if _, err := fmt.Sscanf(string(data), lockMarker, &pid, &start, &host); err == nil {
			// The dead grub's temporary lock files (named so by this grub,
			// and by older ones without the random part).
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), fmt.Sprintf("grub-index-lock.%d.*.tmp", pid)))
			for _, p := range append(left, filepath.Join(filepath.Dir(path), fmt.Sprintf("grub-index-lock.%d.tmp", pid))) {
				_ = os.Remove(p)
			}
		}
	})
	return removed
}

// staleMarker reports whether data is the marker of a grub process on this
// host that is gone.
func staleMarker(data string) bool {
	var pid int
	var start uint64
	var host string
	if _, err := fmt.Sscanf(data, lockMarker, &pid, &start, &host); err != nil || fmt.Sprintf(lockMarker, pid, start, host) != data {
		return false
	}
	if _, ok := proc.StartTime(os.Getpid()); !ok {
		return false // no start times here: cannot tell
	}
	if me, _ := os.Hostname(); host != me {
		return false
	}
	now, alive := proc.StartTime(pid)
	return !alive || now != start
}

// writeIndex writes idx to a temporary file and renames it over
// .git/index; the caller releases the lock.
func (l *indexLock) writeIndex(idx *index.Index) error {
	f, err := os.CreateTemp(l.root, "grub-index.*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, nothing
	err = f.Chmod(0o644)      // as git writes it
	bw := bufio.NewWriterSize(f, 1<<16)
	if err == nil {
		err = index.NewEncoder(bw).Encode(idx)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && l.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(l.root, indexFile))
	}
	return err
}

// release removes the lock, if it is still this process's.
func (l *indexLock) release() {
	if l.done {
		return
	}
	l.done = true
	path := filepath.Join(l.root, indexLockFile)
	if data, err := os.ReadFile(path); err == nil && string(data) == l.mark {
		_ = os.Remove(path)
	}
}

// setRef moves ref from old (zero: it does not exist yet) to new as git
// does, never in place: the new value is written to a temporary file in
// the ref's folder (a name starting with a dot, which git skips there) and
// renamed over the ref, so a kill leaves the old value or the new one,
// never an empty ref (go-git's own update truncates the file and writes it
// again). The caller holds the index lock; a ref another command moved
// meanwhile is refused. With sync the new value is flushed to disk before
// the rename (core.fsync names references; git's default does not).
func setRef(st *filesystem.Storage, ref plumbing.ReferenceName, old, new plumbing.Hash, sync bool) error {
	cur, err := st.Reference(ref)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if !old.IsZero() {
			return fmt.Errorf("%s is gone", ref)
		}
	case err != nil:
		return err
	case cur.Type() != plumbing.HashReference || cur.Hash() != old:
		return fmt.Errorf("%s has changed", ref)
	}
	return writeRefFile(st, ref, new, sync)
}

// writeRef points ref at new whatever it held (a symbolic ref, a packed
// one, none), as setRef writes it.
func writeRef(st *filesystem.Storage, ref plumbing.ReferenceName, new plumbing.Hash) error {
	return writeRefFile(st, ref, new, false)
}

func writeRefFile(st *filesystem.Storage, ref plumbing.ReferenceName, new plumbing.Hash, sync bool) error {
	fs := st.Filesystem()
	name := filepath.FromSlash(ref.String())
	dir := filepath.Dir(name)
	if err := fs.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	tmp := fs.Join(dir, fmt.Sprintf(".grub-ref-%d.tmp", os.Getpid()))
	f, err := fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(new.String() + "\n"))
	if s, ok := f.(interface{ Sync() error }); ok && err == nil && sync {
		err = s.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		_ = fs.Remove(tmp)
	}
	return err
}
