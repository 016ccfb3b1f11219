package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// Only grub creates tasks. A task grub made (Create) or ran here has a
// private folder (PrivateDir), which nothing a turn runs can write: such
// a task is registered. A task folder that appears in .grub during a turn
// and is not registered was made by the turn (a planted task: a paused
// task with an agent and hooks of the turn's choosing, waiting for a bare
// `grub resume`); SetAsidePlanted moves it out of the task scan, and the
// committer never takes the files of a task folder that is not
// registered (RegisteredTasks).

// fileTaskFolders, in the running task's private folder, lists the
// entries of .grub named like a task id when the turn started
// (NoteTaskFolders).
const fileTaskFolders = "task-folders.json"

// plantedSuffix is added to a planted task folder's name when it is set
// aside: the name is no task id any more, so Scan, Resolve and the
// committer leave it alone, and .grub/.gitignore keeps its content out of
// git status.
const plantedSuffix = ".planted-"

// Registered reports whether task id has its private folder: grub made
// or ran it on this machine, as this user.
func (s *Store) Registered(id string) bool {
	dir, err := s.privatePath(id)
	if err != nil {
		return false
	}
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir()
}

// RegisteredTasks lists, sorted, the task folders of .grub that are
// registered: the ones a turn commit may take files from.
func (s *Store) RegisteredTasks() ([]string, error) {
	names, err := s.taskFolderNames()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if s.Registered(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// taskFolderNames lists, sorted, the entries of .grub named like a task
// id, whatever they are (folders, links, files). No .grub: none.
func (s *Store) taskFolderNames() ([]string, error) {
	entries, err := os.ReadDir(s.GrubDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", GrubDirName, err)
	}
	var names []string
	for _, e := range entries {
		if ValidID(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// NoteTaskFolders records in task id's private folder the entries of
// .grub named like a task id: the controller calls it when a turn starts,
// so that SetAsidePlanted, after the turn or when a later run recovers
// it, knows what the turn found.
func (s *Store) NoteTaskFolders(id string) error {
	names, err := s.taskFolderNames()
	if err != nil {
		return err
	}
	dir, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	data, err := json.Marshal(names)
	if err != nil {
		return err
	}
	return s.writeKept(filepath.Join(dir, fileTaskFolders), data, 0o600)
}

// PlantedTask is a task folder a turn made, set aside.
type PlantedTask struct {
	ID string // the name it had: .grub/<ID>
	To string // where it is now, relative to the workspace root
}

// SetAsidePlanted renames every entry of .grub named like a task id that
// was not there when NoteTaskFolders last ran for task id and is not a
// registered task (a user's own `grub start` during the turn registers
// its task before making its folder) to <name>.planted-<time>, beside it,
// with its content, for the user to look at. With no note (a task last
// run by an older grub) there is nothing to compare with and nothing is
// moved.
func (s *Store) SetAsidePlanted(id string, now time.Time) ([]PlantedTask, error) {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, fileTaskFolders))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var before []string
	if err := json.Unmarshal(data, &before); err != nil {
		return nil, fmt.Errorf("read %s: %w", fileTaskFolders, err)
	}
	if fi, err := os.Lstat(s.GrubDir()); err != nil || !fi.IsDir() {
		return nil, nil // no .grub, or not a folder: nothing is scanned there
	}
	names, err := s.taskFolderNames()
	if err != nil {
		return nil, err
	}
	var out []PlantedTask
	for _, n := range names {
		if n == id || slices.Contains(before, n) || s.Registered(n) {
			continue
		}
		to := s.asideName(n, now)
		if err := os.Rename(filepath.Join(s.GrubDir(), n), to); err != nil {
			return out, fmt.Errorf("set aside the task folder %s a turn made: %w", s.Rel(filepath.Join(s.GrubDir(), n)), err)
		}
		out = append(out, PlantedTask{ID: n, To: s.Rel(to)})
	}
	if len(out) > 0 {
		return out, atomicfile.SyncDir(s.GrubDir())
	}
	return out, nil
}

// asideName is a free name for planted task folder n in .grub.
func (s *Store) asideName(n string, now time.Time) string {
	base := filepath.Join(s.GrubDir(), n+plantedSuffix+now.UTC().Format("20060102T150405Z"))
	p := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
		p = fmt.Sprintf("%s-%d", base, i)
	}
}

// Latest is the task a command given no id means: the first of tasks
// (sorted as Scan sorts them, most recently updated first) whose
// updatedAt is not after now. grub never writes a time still to come, so
// a task claiming one (planted to be taken for the current task) is never
// picked; those skipped are returned, for a note. No such task: nil.
func Latest(tasks []*State, now time.Time) (latest *State, future []*State) {
	for _, st := range tasks {
		if st.UpdatedAt.After(now) {
			future = append(future, st)
			continue
		}
		return st, future
	}
	return nil, future
}

// FutureNote is the note a command given no id prints for each task
// Latest skipped.
func FutureNote(st *State) string {
	return fmt.Sprintf("skipped task %s for the current task: it says it was last updated at %s, a time still to come, which grub never writes (a turn may have planted it); name it to look at it (grub status %s)",
		st.ID, st.UpdatedAt.UTC().Format(time.RFC3339), st.ID)
}

// futureOnlyError is Resolve's error when every healthy task was skipped
// for a time still to come.
type futureOnlyError struct{ ids []string }

func (e *futureOnlyError) Error() string {
	return fmt.Sprintf("no current grub task: every task here (%s) says it was last updated at a time still to come, which grub never writes; name one to look at it (grub status <id>)", strings.Join(e.ids, ", "))
}

func (e *futureOnlyError) Is(target error) bool { return target == ErrNoTasks }
