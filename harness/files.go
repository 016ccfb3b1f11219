package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
)

// AppendProgress appends text to a task's progress-log.md (creating it if
// needed) and fsyncs it. A missing final newline is added, and control
// characters are escaped (termsafe.Escape), so that `cat` and `git log -p`
// of the log show the agent's text as data. The log is never written
// through a link: one the agent put in its place is repaired first
// (RepairProgressLog), and the entry says so.
func (s *Store) AppendProgress(id, text string) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	bad, err := s.RepairProgressLog(id)
	if err != nil {
		return err
	}
	text = termsafe.Escape(text)
	if bad != nil {
		text = "- Note: " + bad.Error() + "; grub put its log back\n" + text
	}
	path := s.Path(id, FileProgressLog)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	pre := stampNow(path)
	f, err := s.openOwnFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644, s.Path(id, fileKeep))
	if err != nil {
		return fmt.Errorf("append to %s: %w", s.Rel(path), err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", s.Rel(path), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: fsync: %w", s.Rel(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("append to %s: %w", s.Rel(path), err)
	}
	return s.keepWritten(id, FileProgressLog, pre)
}

// entrySearchSlack is how far before a turn's entry AppendProgressOnce
// looks: what can follow the entry before its record is finished (the
// warnings about files a commit left out, an idle task's steering) is
// much shorter.
const entrySearchSlack = 1 << 20

// AppendProgressOnce appends text to progress-log.md unless the end of
// the log (text's length and a MiB before it) already holds it: finishing
// a turn's record that a crash interrupted writes its entry once. It
// reports whether it appended.
func (s *Store) AppendProgressOnce(id, text string) (bool, error) {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	found, err := s.ProgressHasEntry(id, text)
	if err != nil || found {
		return false, err
	}
	return true, s.AppendProgress(id, text)
}

// ProgressHasEntry reports whether the end of the progress log (the last
// len(text)+entrySearchSlack bytes) holds text, a turn's entry.
func (s *Store) ProgressHasEntry(id, text string) (bool, error) {
	if !ValidID(id) {
		return false, s.notFound(id)
	}
	path := s.Path(id, FileProgressLog)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", s.Rel(path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("read %s: %w", s.Rel(path), err)
	}
	off := max(fi.Size()-int64(len(text))-entrySearchSlack, 0)
	tail, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", s.Rel(path), err)
	}
	return strings.Contains(string(tail), text), nil
}

// AppendEntry renders a turn's entry and appends it to progress-log.md.
func (s *Store) AppendEntry(id string, e templates.Entry) error {
	text, err := templates.RenderEntry(e)
	if err != nil {
		return err
	}
	return s.AppendProgress(id, text)
}

// LoadFeatureList reads, validates and decodes a task's feature-list.json,
// and returns the raw bytes too (the pre-turn snapshot the controller
// restores after a rule violation). A missing file is an error that
// matches os.ErrNotExist; an invalid one is a *schemas.Error.
func (s *Store) LoadFeatureList(id string) (*featurelist.List, []byte, error) {
	if !ValidID(id) {
		return nil, nil, s.notFound(id)
	}
	path := s.Path(id, FileFeatureList)
	rel := s.Rel(path)
	data, err := s.readRegular(path)
	if err != nil {
		var nr *NotRegularError
		if errors.As(err, &nr) {
			return nil, nil, err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s does not exist yet (the initializer writes it): %w", rel, fs.ErrNotExist)
		}
		return nil, nil, fmt.Errorf("read %s: %w", rel, err)
	}
	l, err := featurelist.Parse(rel, data)
	if err != nil {
		return nil, data, err
	}
	return l, data, nil
}

// LoadFeatureListAs is LoadFeatureList for a reader that already holds
// a valid list, usually the accepted one (state.json's baseline): when
// feature-list.json holds exactly the bytes grub writes for accepted, it
// returns accepted itself (not a copy) without parsing the file again;
// otherwise it parses the file as LoadFeatureList does. A nil accepted
// is LoadFeatureList.
func (s *Store) LoadFeatureListAs(id string, accepted *featurelist.List) (*featurelist.List, []byte, error) {
	if accepted == nil || !ValidID(id) {
		return s.LoadFeatureList(id)
	}
	data, err := s.readRegular(s.Path(id, FileFeatureList))
	if err != nil {
		return s.LoadFeatureList(id) // the same error, worded as LoadFeatureList does
	}
	if want, err := s.ListBytes(accepted); err == nil && bytes.Equal(data, want) {
		return accepted, data, nil
	}
	l, err := featurelist.Parse(s.Rel(s.Path(id, FileFeatureList)), data)
	if err != nil {
		return nil, data, err
	}
	return l, data, nil
}

// SaveFeatureList validates l and writes it to feature-list.json atomically
// (the controller uses it to revert a flip that failed verification), in
// the stable form featurelist.Marshal gives.
func (s *Store) SaveFeatureList(id string, l *featurelist.List) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	path := s.Path(id, FileFeatureList)
	data, err := s.ListBytes(l)
	if err != nil {
		var se *schemas.Error
		if errors.As(err, &se) {
			se.File = s.Rel(path)
			return se
		}
		return fmt.Errorf("encode %s: %w", s.Rel(path), err)
	}
	return s.writeOwnFile(id, FileFeatureList, data, 0o644)
}

// ReadFeatureList returns the raw content of a task's feature-list.json,
// as the agent left it. A missing file is os.ReadFile's error, unwrapped
// (it matches os.ErrNotExist); anything there that is not a regular file
// (a symbolic link, even to a valid list, a folder, a fifo) is a
// *NotRegularError, and is not read.
func (s *Store) ReadFeatureList(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	return s.readRegular(s.Path(id, FileFeatureList))
}

// readRegular reads path if it is a regular file, without following a
// symbolic link: the file is checked with Lstat, opened, and checked again
// through the open handle, so that a link swapped in between is not read.
// A missing file is os.Lstat's error, unwrapped; anything else there is a
// *NotRegularError.
func (s *Store) readRegular(path string) ([]byte, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, &NotRegularError{File: s.Rel(path), Kind: kindOf(before.Mode())}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !now.Mode().IsRegular() || !os.SameFile(before, now) {
		return nil, &NotRegularError{File: s.Rel(path), Kind: "a file that was replaced while grub read it"}
	}
	return io.ReadAll(f)
}

// kindOf names what a non-regular file is, for NotRegularError.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a fifo"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// removeNonRegular removes whatever is at path if it is not a regular
// file (a folder with its content, a link itself, not its target), and
// returns the mode a restored file keeps: the file's when it is regular,
// else perm.
func removeNonRegular(path string, perm os.FileMode) (os.FileMode, error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return perm, nil
	case fi.Mode().IsRegular():
		return fi.Mode().Perm(), nil
	}
	return perm, os.RemoveAll(path)
}

// RestoreFeatureList puts l back as a task's feature-list.json, atomically
// and in the form featurelist.Marshal gives, first removing whatever the
// agent left in its place if that is not a regular file (a folder, a
// symbolic link). A deleted file is recreated. The file keeps its mode when
// it exists, and gets 0644 otherwise. An invalid l is an error and nothing
// is written.
func (s *Store) RestoreFeatureList(id string, l *featurelist.List) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	path := s.Path(id, FileFeatureList)
	rel := s.Rel(path)
	if err := s.checkTaskDirs(id); err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	perm, err := removeNonRegular(path, 0o644)
	if err != nil {
		return fmt.Errorf("remove %s to restore the feature list: %w", rel, err)
	}
	data, err := s.ListBytes(l)
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	if err := atomicfile.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}

// RestoreFeatureListIfChanged restores l (RestoreFeatureList) unless
// feature-list.json already holds exactly featurelist.Marshal(l).
func (s *Store) RestoreFeatureListIfChanged(id string, l *featurelist.List) error {
	want, err := s.ListBytes(l)
	if err != nil {
		return err
	}
	if got, err := s.ReadFeatureList(id); err == nil && string(got) == string(want) {
		return nil
	}
	return s.RestoreFeatureList(id, l)
}

// ReadInitScript returns the raw content of a task's init.sh. Like
// ReadFeatureList, a missing file is os.Lstat's error, unwrapped, and
// anything that is not a regular file is a *NotRegularError.
func (s *Store) ReadInitScript(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	return s.readRegular(s.Path(id, FileInitScript))
}

// ResetInitScript writes the starter init.sh (templates.InitScript, mode
// 0755) again, first removing whatever the agent left in its place if that
// is not a regular file.
func (s *Store) ResetInitScript(id string) error {
	return s.RestoreInitScript(id, []byte(templates.InitScript))
}

// RestoreInitScript puts data back as a task's init.sh, atomically, first
// removing whatever is in its place if that is not a regular file (a link
// is removed, its target is left alone), with mode 0755.
func (s *Store) RestoreInitScript(id string, data []byte) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	return s.writeOwnFile(id, FileInitScript, data, 0o755)
}

// ChecklistItems converts a feature list for templates.RenderChecklist. A
// nil list gives nil: not planned yet.
func ChecklistItems(l *featurelist.List) []templates.ChecklistItem {
	if l == nil {
		return nil
	}
	items := make([]templates.ChecklistItem, 0, len(l.Features))
	for _, f := range l.Features {
		it := templates.ChecklistItem{ID: f.ID, Category: f.Category, Description: f.Description, Passes: f.Passes}
		if f.Evidence != nil {
			it.Evidence = *f.Evidence
		}
		items = append(items, it)
	}
	return items
}

// WriteChecklist renders feature-checklist.md from l (nil: not planned yet)
// and writes it atomically, without fsync: a checklist lost by a crash of
// the machine is rendered again by the next record (and grub doctor).
func (s *Store) WriteChecklist(id, goal string, l *featurelist.List) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	text, err := templates.RenderChecklist(goal, ChecklistItems(l))
	if err != nil {
		return err
	}
	if err := s.writeDerivedFile(id, FileChecklist, []byte(text), 0o644); err != nil {
		return err
	}
	return s.keepWritten(id, FileChecklist, fileStamp{})
}

// SteerEntry is the progress-log entry of guidance the user queued for the
// next turn, whether grub wrote it at once (an idle task) or the running
// controller did at its next turn boundary.
func SteerEntry(st *State, message string, at time.Time) templates.Entry {
	return templates.Entry{
		Iteration: st.CurrentIteration,
		Phase:     string(st.Phase),
		Decision:  loopstate.Steer,
		Summary:   "guidance from the user for the next turn",
		Note:      message,
		At:        at.UTC(),
	}
}

// validText is s with each byte that is not valid UTF-8 replaced by
// U+FFFD, as JSON readers decode it: a goal typed in another encoding is
// kept as grub will read it back.
func validText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// SetGoal changes a task's goal: the state, the note the next prompt
// carries (edits made before the next turn fold into one note from the goal
// the agent last saw), and the goal recorded in the accepted feature list
// and in feature-list.json, which only grub may change. The caller holds
// the task's lock and saves the state.
func (s *Store) SetGoal(st *State, goal string) error {
	goal = validText(goal)
	old := st.Goal
	if p := st.Pending.ObjectiveUpdated; p != nil {
		old = p.Old
	}
	st.Goal = goal
	if old == goal {
		st.Pending.ObjectiveUpdated = nil
	} else {
		st.Pending.ObjectiveUpdated = &GoalChange{Old: old, New: goal}
	}
	if b := st.FeatureListBaseline; b != nil && b.Goal != goal {
		b.Goal = goal
		return s.SaveFeatureList(st.ID, b)
	}
	return nil
}

// RemoveNotRegular removes a task file that is not a regular file (a
// folder with its content, a symbolic link itself, never its target); a
// regular or missing file is left alone. The controller uses it on a
// feature-list.json that an initializer made a link or a folder, when
// there is no accepted list to restore.
func (s *Store) RemoveNotRegular(id, name string) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	if err := s.checkTaskDirs(id); err != nil {
		return err
	}
	path := s.Path(id, name)
	if _, err := removeNonRegular(path, 0); err != nil {
		return fmt.Errorf("remove %s: %w", s.Rel(path), err)
	}
	return nil
}
