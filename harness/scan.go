package harness

import (
	"errors"
	"fmt"
	"os"
)

// DamagedError is a harness file or folder that is there (or should be)
// but cannot be used as it is: a task's state.json gone while its other
// files remain, a .grub that is a file. It says what is wrong and how to
// fix it; grub exits 2 for it, as for an invalid harness file.
type DamagedError struct {
	ID      string // the task, "" for .grub itself
	File    string // the path relative to the workspace root
	Problem string // what is wrong, e.g. "is missing, though …"
	Fix     string // what to do about it
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.File, e.Problem, e.Fix)
}

// DamagedTask is a task folder whose state cannot be loaded, and why.
type DamagedTask struct {
	ID  string
	Err error // a *schemas.Error, *NotRegularError, *DamagedError or a read error
}

// Scan loads every task: the healthy ones, most recently updated first, and
// the damaged ones (state.json corrupt, missing or not a regular file),
// sorted by id, each with the reason. One damaged task does not hide the
// others. err is set only when .grub itself cannot be read.
func (s *Store) Scan() (tasks []*State, damaged []DamagedTask, err error) {
	ids, err := s.taskIDs()
	if err != nil {
		return nil, nil, err
	}
	tasks = make([]*State, 0, len(ids))
	for _, id := range ids {
		st, err := s.LoadState(id)
		if err != nil {
			var nf *NotFoundError
			if errors.As(err, &nf) {
				continue // removed since it was listed
			}
			damaged = append(damaged, DamagedTask{ID: id, Err: err})
			continue
		}
		tasks = append(tasks, st)
	}
	sortTasks(tasks)
	return tasks, damaged, nil
}

// hasTaskFiles reports whether the folder of task id holds one of grub's
// tracked files other than state.json: a task, even without its state.
func (s *Store) hasTaskFiles(id string) bool {
	for _, name := range TrackedFiles() {
		if name == FileState {
			continue
		}
		if _, err := os.Lstat(s.Path(id, name)); err == nil {
			return true
		}
	}
	return false
}
