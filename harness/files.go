package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
)

// AppendProgress appends text to a task's progress-log.md (creating it if
// needed) and fsyncs it. A missing final newline is added.
func (s *Store) AppendProgress(id, text string) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	if _, err := os.Stat(s.Dir(id)); errors.Is(err, fs.ErrNotExist) {
		return s.notFound(id)
	}
	path := s.Path(id, FileProgressLog)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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
	return nil
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
	data, err := os.ReadFile(path)
	if err != nil {
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

// SaveFeatureList validates l and writes it to feature-list.json atomically
// (the controller uses it to revert a flip that failed verification), in
// the stable form featurelist.Marshal gives.
func (s *Store) SaveFeatureList(id string, l *featurelist.List) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	path := s.Path(id, FileFeatureList)
	data, err := featurelist.Marshal(l)
	if err != nil {
		var se *schemas.Error
		if errors.As(err, &se) {
			se.File = s.Rel(path)
			return se
		}
		return fmt.Errorf("encode %s: %w", s.Rel(path), err)
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// ReadFeatureList returns the raw content of a task's feature-list.json,
// as the agent left it. Its error is os.ReadFile's, unwrapped: a missing
// file matches os.ErrNotExist.
func (s *Store) ReadFeatureList(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	return os.ReadFile(s.Path(id, FileFeatureList))
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
	perm := os.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("remove %s to restore the feature list: %w", rel, err)
		}
	} else if err == nil {
		perm = fi.Mode().Perm()
	}
	data, err := featurelist.Marshal(l)
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
	want, err := featurelist.Marshal(l)
	if err != nil {
		return err
	}
	if got, err := s.ReadFeatureList(id); err == nil && string(got) == string(want) {
		return nil
	}
	return s.RestoreFeatureList(id, l)
}

// ReadInitScript returns the raw content of a task's init.sh. Its error is
// os.ReadFile's, unwrapped.
func (s *Store) ReadInitScript(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	return os.ReadFile(s.Path(id, FileInitScript))
}

// ResetInitScript writes the starter init.sh (templates.InitScript, mode
// 0755) again, first removing whatever the agent left in its place if that
// is not a regular file.
func (s *Store) ResetInitScript(id string) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	path := s.Path(id, FileInitScript)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	}
	return atomicfile.WriteFile(path, []byte(templates.InitScript), 0o755)
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
// and writes it atomically.
func (s *Store) WriteChecklist(id, goal string, l *featurelist.List) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	text, err := templates.RenderChecklist(goal, ChecklistItems(l))
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.Path(id, FileChecklist), []byte(text), 0o644)
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

// SetGoal changes a task's goal: the state, the note the next prompt
// carries (edits made before the next turn fold into one note from the goal
// the agent last saw), and the goal recorded in the accepted feature list
// and in feature-list.json, which only grub may change. The caller holds
// the task's lock and saves the state.
func (s *Store) SetGoal(st *State, goal string) error {
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
