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
