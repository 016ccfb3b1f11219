package gitx

import (
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// TurnCommittedBy is TurnCommitted with the test of the file left to
// match: a commit on HEAD whose trailers name taskID's turn iteration is
// grub's own when match accepts the content its tree holds at path
// (workspace-relative). The walk from HEAD skips commits of other tasks
// and of later turns (which an agent may forge), and stops at the task's
// first commit of an earlier turn.
func (r *Repo) TurnCommittedBy(taskID string, iteration int, path string, match func(content []byte) bool) (bool, error) {
	return r.turnCommitWhere(taskID, iteration, path, func(f *object.File) bool {
		content, err := f.Contents()
		return err == nil && match([]byte(content))
	})
}

// turnCommitWhere walks from HEAD for a commit of turn iteration of
// taskID whose file at path (workspace-relative) is, by match, grub's:
// commits of other tasks and of later turns (which an agent may forge)
// are skipped, and the walk stops at the task's first commit of an
// earlier turn. A commit without the file is not grub's.
func (r *Repo) turnCommitWhere(taskID string, iteration int, path string, match func(*object.File) bool) (bool, error) {
	g, _, err := r.open()
	if err != nil {
		return false, err
	}
	head, err := headCommit(g)
	if err != nil || head.IsZero() {
		return false, err
	}
	iter, err := g.Log(&git.LogOptions{From: head})
	if err != nil {
		return false, fmt.Errorf("read the history from HEAD: %w", err)
	}
	defer iter.Close()
	name := pathJoin(r.prefix, path)
	found := false
	err = iter.ForEach(func(c *object.Commit) error {
		t, ok := parseTurn(c.Message)
		if !ok || t.TaskID != taskID || t.Iteration > iteration {
			return nil
		}
		if t.Iteration < iteration {
			return storer.ErrStop
		}
		if f, err := c.File(name); err == nil && match(f) {
			found = true
			return storer.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return false, fmt.Errorf("read the history from HEAD: %w", err)
	}
	return found, nil
}

// EachTurnFile calls visit for every commit reachable from HEAD whose
// trailers name task taskID, newest first, with the content its tree
// holds at rel (workspace-relative; nil when the commit lacks it). A
// commit's trailers say nothing of who made it: the caller tells grub's
// own commits from the file (grub doctor --repair, by the state.json a
// turn commit holds).
func (r *Repo) EachTurnFile(taskID, rel string, visit func(e HistoryEntry, content []byte)) error {
	g, _, err := r.open()
	if err != nil {
		return err
	}
	head, err := headCommit(g)
	if err != nil || head.IsZero() {
		return err
	}
	iter, err := g.Log(&git.LogOptions{From: head})
	if err != nil {
		return fmt.Errorf("read the history from HEAD: %w", err)
	}
	defer iter.Close()
	name := pathJoin(r.prefix, rel)
	err = iter.ForEach(func(c *object.Commit) error {
		e, ok := parseTurn(c.Message)
		if !ok || e.TaskID != taskID {
			return nil
		}
		e.Commit = c.Hash.String()[:12]
		e.Time = c.Committer.When
		var content []byte
		if f, err := c.File(name); err == nil {
			if s, err := f.Contents(); err == nil {
				content = []byte(s)
			}
		}
		visit(e, content)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the history from HEAD: %w", err)
	}
	return nil
}
