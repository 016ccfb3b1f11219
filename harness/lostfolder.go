package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A turn run with --sandbox off can take the task's own folder off the
// work tree: git reset --hard to a commit from before the task removes
// every tracked file of .grub/<id>/, state.json with them. The referee's
// history check puts them back at the turn's end; a crash before it (a
// kill -9, a failpoint) leaves a task that no folder names. The private
// folder outside the workspace still registers it and notes grub's last
// turn commit (FileTurnCommit), whose state.json is the task as that turn
// recorded it: LostTask and RecoverLostState bring it back.

// LostTask reports whether task id is one grub registered (its private
// folder) whose state.json is gone from the work tree, and returns the
// noted last turn commit to read it back from.
func (s *Store) LostTask(id string) (TurnCommitNote, bool) {
	if !ValidID(id) || !s.Registered(id) {
		return TurnCommitNote{}, false
	}
	if _, err := os.Lstat(s.Path(id, FileState)); !errors.Is(err, fs.ErrNotExist) {
		return TurnCommitNote{}, false
	}
	n, ok, err := s.LoadTurnCommit(id)
	if err != nil || !ok || n.Mark.Commit == "" {
		return TurnCommitNote{}, false
	}
	return n, true
}

// LostTasks lists, sorted, the tasks of this workspace that LostTask
// reports lost: the private folders of the workspace's tasks whose
// state.json is gone, for a resume without an id.
func (s *Store) LostTasks() []string {
	probe, err := s.privatePath("00000000")
	if err != nil {
		return nil
	}
	key := strings.TrimPrefix(filepath.Base(probe), "00000000")
	entries, _ := os.ReadDir(filepath.Dir(probe)) // none: nothing lost
	var out []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), key)
		if _, lost := s.LostTask(id); ok && lost {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// RecoverLostState writes state.json of the lost task id again from
// committed, the state.json of the turn commit n names, and returns it;
// list is that commit's feature-list.json (nil when it has none), written
// back first when the work tree has none, so that the accepted list
// state.json names is found even when its own files went too (a folder
// removed whole).
// When the private folder shows that the next turn had started (the git
// guard's copy was taken for it), that turn is left awaiting, so that the
// run's recovery records it as a turn of unknown outcome and checks the
// history, the git directory and the record as its end would have; else
// the folder went between runs, and the history check when the run
// starts says so. Either way the mark is the noted commit.
func (s *Store) RecoverLostState(id string, n TurnCommitNote, committed, list []byte, now time.Time) (*State, error) {
	if err := s.ensureTaskDir(id); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(s.Path(id, FileFeatureList)); list != nil && errors.Is(err, fs.ErrNotExist) {
		if err := s.RestoreFile(id, FileFeatureList, list); err != nil {
			return nil, err
		}
	}
	st, err := s.decodeState(id, committed)
	if err != nil {
		return nil, fmt.Errorf("the state.json of grub's last turn commit %s: %w", n.Mark.Commit, err)
	}
	if st.CurrentIteration != n.Iteration {
		return nil, fmt.Errorf("the state.json of grub's last turn commit %s is of turn %d, not %d", n.Mark.Commit, st.CurrentIteration, n.Iteration)
	}
	mark := n.Mark
	st.History = &mark
	if it, _, ok, err := s.LoadGuardCopy(id); err == nil && ok && it == n.Iteration+1 {
		started := now.UTC()
		st.CurrentIteration, st.AwaitingTurn, st.TurnStartedAt = it, true, &started
		st.RecordPending = nil
		st.Status = StatusRunning
	}
	st.UpdatedAt = now.UTC()
	if err := s.SaveState(st); err != nil {
		return nil, err
	}
	return st, nil
}

// ensureTaskDir makes .grub and the task's folder again where a reset
// took them, each a real folder.
func (s *Store) ensureTaskDir(id string) error {
	for _, dir := range []string{s.GrubDir(), s.Dir(id)} {
		fi, err := os.Lstat(dir)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return &DamagedError{ID: id, File: s.Rel(dir), Problem: "is not a folder", Fix: "move it aside and run grub again"}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", s.Rel(dir), err)
		}
	}
	return s.ensureGitignore()
}
