package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Removed is what RemoveTask took away: the task's folder (relative to
// the workspace) and its private folder ("" when it had none).
type Removed struct {
	Dir     string
	Private string
}

// RemoveTask removes task id's folder in .grub and its private folder,
// under the task's lock: a task a live process runs is a *LockedError
// and nothing is removed. A damaged task (its state.json gone or
// unreadable) is removed like any other. The lock is held until both are
// gone; the task folder goes first, so that what a crash in between
// leaves is a private folder no task names, never a task without one.
// Nothing in git is touched: the task's commits stay. os.RemoveAll never
// follows a link, so nothing outside the two folders is removed.
func (s *Store) RemoveTask(id string) (Removed, error) {
	l, err := s.Lock(id)
	if err != nil {
		return Removed{}, err
	}
	defer l.Release()
	var out Removed
	dir := s.Dir(id)
	if err := os.RemoveAll(dir); err != nil {
		return out, fmt.Errorf("remove %s: %w", s.Rel(dir), err)
	}
	out.Dir = s.Rel(dir)
	if s.Private == "" {
		return out, nil
	}
	priv, err := s.privatePath(id)
	if err != nil {
		return out, err
	}
	if _, err := os.Lstat(priv); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err := os.RemoveAll(priv); err != nil {
		return out, fmt.Errorf("remove the task's private folder %s: %w", priv, err)
	}
	out.Private = priv
	return out, nil
}
