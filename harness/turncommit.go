package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileTurnCommit is the file of a task's private folder (PrivateDir) that
// names grub's last turn commit as soon as it is made. state.json cannot
// hold it (the commit holds state.json) and gets it only at its next
// write, so without this note a run starting after a clean end would
// check the history against the turn before: a reset or an amend of the
// last turn commit made between runs would go unseen. It is outside the
// workspace, and on another machine (a clone) absent: state's mark then
// stands alone.
const FileTurnCommit = "turn-commit.json"

// TurnCommitNote is FileTurnCommit's content.
type TurnCommitNote struct {
	Iteration int         `json:"iteration"`
	Mark      HistoryMark `json:"mark"`
}

// SaveTurnCommit notes grub's commit of turn iteration of task id. The
// note is in place at once and synced with the next turn's copies
// (SyncKept, before that turn's state, which names the commit, is saved)
// or when the run ends: a machine crash before then leaves the note of
// the turn before, and the next run checks against state's mark.
func (s *Store) SaveTurnCommit(id string, n TurnCommitNote) error {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	out, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if err := s.writeDeferred(filepath.Join(dir, FileTurnCommit), out, 0o600); err != nil {
		return fmt.Errorf("note the turn commit: %w", err)
	}
	return nil
}

// LoadTurnCommit reads the note SaveTurnCommit wrote for task id; ok is
// false when there is none.
func (s *Store) LoadTurnCommit(id string) (n TurnCommitNote, ok bool, err error) {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return n, false, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, FileTurnCommit))
	if errors.Is(err, fs.ErrNotExist) {
		return n, false, nil
	}
	if err != nil {
		return n, false, fmt.Errorf("read the turn commit note: %w", err)
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return n, false, fmt.Errorf("read the turn commit note %s: %w", filepath.Join(dir, FileTurnCommit), err)
	}
	return n, true, nil
}

// StartMark is the mark a run starting on st checks the history against
// (and grub doctor): the noted turn commit when it is the commit of the
// record st still holds as pending (the last run ended after committing
// it, and state was not written since with its hash), else st's own
// mark; nil when st has none. A turn left awaiting has st's mark, written
// when the turn started.
func (s *Store) StartMark(st *State) *HistoryMark {
	if st.History == nil || st.RecordPending == nil || st.AwaitingTurn || s.Private == "" {
		return st.History
	}
	n, ok, err := s.LoadTurnCommit(st.ID)
	if err != nil || !ok || n.Iteration != st.RecordPending.Iteration || n.Iteration != st.CurrentIteration ||
		n.Mark.Branch != st.History.Branch || n.Mark.Commit == "" {
		return st.History
	}
	return &n.Mark
}
