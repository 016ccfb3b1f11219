package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/templates"
)

// Nothing grub writes in .grub/<id>/ is written through a link: the agent
// (whose shell may write the workspace) could otherwise make grub, which is
// not sandboxed, write where the link points. The rules, applied by every
// writer of this package:
//
//   - .grub and .grub/<id> must be real folders (checkTaskDirs); a link
//     there is an error and nothing is written.
//   - a file grub replaces (state, checklist, feature list, init.sh,
//     .gitignore, and control.json in the private folder) is written by atomicfile.WriteFile, whose
//     rename replaces a link instead of following it, after removing a
//     folder or other non-regular file in its place (writeOwnFile);
//   - a file grub appends to or keeps open (progress-log.md, lock,
//     control.lock) is opened with O_NOFOLLOW and checked through the handle
//     (openOwnFile);
//   - a folder grub writes in (turns/, spill/) that is a link or a file is
//     removed and made again (ensureOwnDir).

// NotFolderError is one of grub's folders in a task folder (turns/,
// spill/) that is there but is not a folder: a symbolic link (wherever it
// points), a file. grub removes it and makes a real folder; the referee
// counts it as an illegal edit.
type NotFolderError struct {
	Dir  string // the path relative to the workspace root
	Kind string // what was there: "a symbolic link", "a regular file", …
}

func (e *NotFolderError) Error() string {
	return fmt.Sprintf("%s was %s, not a folder; grub never writes through a link and made it a real folder again", e.Dir, e.Kind)
}

// checkTaskDirs returns an error unless .grub and .grub/<id> are real
// folders (not symbolic links). grub does not repair them: a task folder
// moved behind a link is not one grub writes in.
func (s *Store) checkTaskDirs(id string) error {
	for _, dir := range []string{s.GrubDir(), s.Dir(id)} {
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return s.notFound(id)
		}
		if err != nil {
			return fmt.Errorf("task %s: %w", id, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is %s, not a folder: grub does not write through it; make it a real folder again (restore it from git)", s.Rel(dir), kindOf(fi.Mode()))
		}
	}
	return nil
}

// writeOwnFile replaces the task file name with data (atomicfile.WriteFile)
// after checking the task folders and removing whatever non-regular file
// is in its place. The file gets mode perm.
func (s *Store) writeOwnFile(id, name string, data []byte, perm os.FileMode) error {
	return s.writeOwn(id, name, data, perm, atomicfile.WriteFile)
}

// writeDerivedFile is writeOwnFile without fsyncs
// (atomicfile.WriteFileUnsynced), for a file grub renders again from
// others when it is lost: the checklist.
func (s *Store) writeDerivedFile(id, name string, data []byte, perm os.FileMode) error {
	return s.writeOwn(id, name, data, perm, atomicfile.WriteFileUnsynced)
}

func (s *Store) writeOwn(id, name string, data []byte, perm os.FileMode, write func(string, []byte, os.FileMode) error) error {
	if err := s.checkTaskDirs(id); err != nil {
		return err
	}
	path := s.Path(id, name)
	if _, err := removeNonRegular(path, perm); err != nil {
		return fmt.Errorf("remove %s to write it: %w", s.Rel(path), err)
	}
	return write(path, data, perm)
}

// openOwnFile opens path (a file in a checked task folder) without
// following a link: O_NOFOLLOW where the platform has it, and the handle is
// checked to be a regular file that has no other name than those grub
// gives it: one, or two when keep (non-empty) is the same file. A missing
// file is created when flag has os.O_CREATE, exclusively, so that a link
// planted meanwhile makes the open fail rather than be followed. What is
// there and is not such a file is a *NotRegularError.
func (s *Store) openOwnFile(path string, flag int, perm os.FileMode, keep string) (*os.File, error) {
	before, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		f, cerr := os.OpenFile(path, flag|os.O_EXCL|oNoFollow, perm)
		if !errors.Is(cerr, fs.ErrExist) {
			return f, cerr
		}
		// Another grub process created it between the two calls (two
		// commands opening control.lock at once): open what is there now,
		// with the same checks.
		before, err = os.Lstat(path)
	}
	switch {
	case err != nil:
		return nil, err
	case !before.Mode().IsRegular():
		return nil, &NotRegularError{File: s.Rel(path), Kind: kindOf(before.Mode())}
	}
	f, err := os.OpenFile(path, (flag&^(os.O_CREATE|os.O_EXCL|os.O_TRUNC))|oNoFollow, perm)
	if err != nil {
		return nil, err
	}
	now, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !now.Mode().IsRegular() || !os.SameFile(before, now) {
		f.Close()
		return nil, &NotRegularError{File: s.Rel(path), Kind: "a file that was replaced while grub opened it"}
	}
	if !ownLinks(now, keep) {
		f.Close()
		return nil, &NotRegularError{File: s.Rel(path), Kind: "a hard link to another file"}
	}
	return f, nil
}

// ensureOwnDir makes the folder name of task id a real folder: a link or
// anything else in its place is removed (the link itself, never its
// target) and a folder made. It returns a *NotFolderError describing what
// it replaced, nil when nothing was wrong. With create unset a missing
// folder stays missing.
func (s *Store) ensureOwnDir(id, name string, create bool) (*NotFolderError, error) {
	if err := s.checkTaskDirs(id); err != nil {
		return nil, err
	}
	dir := s.Path(id, name)
	fi, err := os.Lstat(dir)
	var bad *NotFolderError
	switch {
	case err == nil && fi.IsDir():
		return nil, nil
	case err == nil:
		bad = &NotFolderError{Dir: s.Rel(dir), Kind: kindOf(fi.Mode())}
		if err := os.RemoveAll(dir); err != nil {
			return bad, fmt.Errorf("remove %s: %w", s.Rel(dir), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case !create:
		return nil, nil
	}
	if bad == nil && !create {
		return nil, nil
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return bad, fmt.Errorf("make %s: %w", s.Rel(dir), err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return bad, fmt.Errorf("make %s: something else took its place", s.Rel(dir))
	}
	return bad, nil
}

// CheckTurnDirs makes turns/ and spill/ of task id real folders again if
// the agent replaced one by a link or a file (turns/ is made, spill/ only
// if it was there), and returns what it replaced: the referee counts each
// as an illegal edit.
func (s *Store) CheckTurnDirs(id string) ([]*NotFolderError, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	var bad []*NotFolderError
	for _, name := range SkippedDirs() {
		nf, err := s.ensureOwnDir(id, name, false)
		if nf != nil {
			bad = append(bad, nf)
		}
		if err != nil {
			return bad, err
		}
	}
	return bad, nil
}

// fileKeep is the hard link to progress-log.md that KeepProgressLog makes
// at the start of a turn; a dot name that .grub/.gitignore and the commit
// rule keep out of git.
const fileKeep = ".progress-log.keep"

// KeepProgressLog makes .grub/<id>/.progress-log.keep a hard link to
// progress-log.md (its inode), after putting the log right (see
// RepairProgressLog). The controller calls it when a turn starts; if the
// agent then replaces the log by a link or anything else, RepairProgressLog
// puts this inode back, with the entries and the notes the agent appended
// to it. Where hard links are not supported nothing is kept.
func (s *Store) KeepProgressLog(id string) error {
	if _, err := s.RepairProgressLog(id); err != nil {
		return err
	}
	keep := s.Path(id, fileKeep)
	if log, err := os.Lstat(s.Path(id, FileProgressLog)); err == nil && log.Mode().IsRegular() {
		if k, err := os.Lstat(keep); err == nil && k.Mode().IsRegular() && os.SameFile(log, k) {
			return nil // kept already: the usual case, a turn after a turn
		}
	}
	if err := os.RemoveAll(keep); err != nil {
		return fmt.Errorf("remove %s: %w", s.Rel(keep), err)
	}
	// Without hard links (some file systems) nothing is kept, and a repair
	// writes a fresh log.
	_ = os.Link(s.Path(id, FileProgressLog), keep)
	return nil
}

// RepairProgressLog checks that progress-log.md of task id is grub's
// regular file: a regular file with no other name, or the same file as
// the keep KeepProgressLog made. Anything else (a symbolic link, a folder,
// a fifo, a hard link to another file) is removed and the kept file put
// back in its place (a fresh log with a note when there is none), and the
// returned *NotRegularError says what was there. A missing log is made
// again the same way, without an error: the log is not the referee's to
// defend against deletion, but it is grub's to write. A regular file the
// agent wrote anew (an editor's save) is accepted.
func (s *Store) RepairProgressLog(id string) (*NotRegularError, error) {
	if err := s.checkTaskDirs(id); err != nil {
		return nil, err
	}
	path, keep := s.Path(id, FileProgressLog), s.Path(id, fileKeep)
	fi, err := os.Lstat(path)
	var bad *NotRegularError
	switch {
	case err == nil && fi.Mode().IsRegular():
		if ownLinks(fi, keep) {
			return nil, nil
		}
		bad = &NotRegularError{File: s.Rel(path), Kind: "a hard link to another file"}
	case err == nil:
		bad = &NotRegularError{File: s.Rel(path), Kind: kindOf(fi.Mode())}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := os.RemoveAll(path); err != nil {
		return bad, fmt.Errorf("remove %s to restore it: %w", s.Rel(path), err)
	}
	if kfi, err := os.Lstat(keep); err == nil && kfi.Mode().IsRegular() {
		if n, _ := linkCount(kfi); n <= 1 {
			if err := os.Link(keep, path); err == nil {
				return bad, atomicfile.SyncDir(s.Dir(id))
			}
		}
	}
	text := "# Progress log\n\nThe log was replaced and grub could not restore it here; its last committed version is in git.\n"
	if st, err := s.LoadState(id); err == nil {
		text = templates.ProgressLogHeader(st.ID, st.Goal)
	}
	if err := atomicfile.WriteFile(path, []byte(text), 0o644); err != nil {
		return bad, err
	}
	return bad, nil
}

// ownLinks reports whether fi, a regular file of grub's, has no name
// outside the task folder: one link, or two when keep (non-empty) is the
// other. Platforms without link counts always pass.
func ownLinks(fi os.FileInfo, keep string) bool {
	n, ok := linkCount(fi)
	if !ok || n <= 1 {
		return true
	}
	if keep == "" || n != 2 {
		return false
	}
	kfi, err := os.Lstat(keep)
	return err == nil && os.SameFile(fi, kfi)
}

// openLockFile opens (creating) the flock file name of task id for
// reading and writing, never through a link: a link or folder in its
// place is removed first (it is not the lock; the lock file itself, a
// regular file, is never deleted), and a lock file with another name
// outside the task folder (a hard link) is an error.
func (s *Store) openLockFile(id, name string) (*os.File, error) {
	if err := s.checkTaskDirs(id); err != nil {
		return nil, err
	}
	path := s.Path(id, name)
	if _, err := removeNonRegular(path, 0); err != nil {
		return nil, err
	}
	return s.openOwnFile(path, os.O_RDWR|os.O_CREATE, 0o644, "")
}
