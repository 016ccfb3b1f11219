package gitx

import (
	"errors"
	"fmt"
	"io"
	"path"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ErrNoTurnFile is matched (errors.Is) by the error TurnFile returns when
// no turn commit of the task holds the file.
var ErrNoTurnFile = errors.New("no turn commit of the task holds the file")

// TurnFile returns the content of rel (a path relative to the workspace,
// slash-separated) as committed by the last turn commit of task taskID
// reachable from HEAD (git show <commit>:<path>), with that commit's
// entry. grub doctor --repair restores a lost harness file from it.
func (r *Repo) TurnFile(taskID, rel string) ([]byte, HistoryEntry, error) {
	g, _, err := r.open()
	if err != nil {
		return nil, HistoryEntry{}, err
	}
	head, err := headCommit(g)
	if err != nil {
		return nil, HistoryEntry{}, err
	}
	if head.IsZero() {
		return nil, HistoryEntry{}, ErrNoTurnFile
	}
	iter, err := g.Log(&git.LogOptions{From: head})
	if err != nil {
		return nil, HistoryEntry{}, fmt.Errorf("read the history from HEAD: %w", err)
	}
	defer iter.Close()
	var (
		found *object.Commit
		entry HistoryEntry
	)
	err = iter.ForEach(func(c *object.Commit) error {
		e, ok := parseTurn(c.Message)
		if !ok || e.TaskID != taskID {
			return nil
		}
		e.Commit = c.Hash.String()[:12]
		e.Time = c.Committer.When
		found, entry = c, e
		return storer.ErrStop
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, HistoryEntry{}, fmt.Errorf("read the history from HEAD: %w", err)
	}
	if found == nil {
		return nil, HistoryEntry{}, ErrNoTurnFile
	}
	full := rel
	if r.prefix != "" {
		full = path.Join(r.prefix, rel)
	}
	f, err := found.File(full)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, entry, fmt.Errorf("%s in commit %s: %w", rel, entry.Commit, ErrNoTurnFile)
	}
	if err != nil {
		return nil, entry, fmt.Errorf("read %s from commit %s: %w", rel, entry.Commit, err)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, entry, fmt.Errorf("read %s from commit %s: %w", rel, entry.Commit, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, entry, fmt.Errorf("read %s from commit %s: %w", rel, entry.Commit, err)
	}
	return data, entry, nil
}

// FileAt returns the content of rel (workspace-relative, slash-separated)
// in commit (a full hash): grub resume reads the state.json of grub's
// last turn commit, as its private folder notes it, when a turn's reset
// took the task's files off the work tree. A commit without the file is
// ErrNoTurnFile.
func (r *Repo) FileAt(commit, rel string) ([]byte, error) {
	g, _, err := r.open()
	if err != nil {
		return nil, err
	}
	c, err := g.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", shortHash(commit), err)
	}
	f, err := c.File(pathJoin(r.prefix, rel))
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, fmt.Errorf("%s in commit %s: %w", rel, shortHash(commit), ErrNoTurnFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s from commit %s: %w", rel, shortHash(commit), err)
	}
	s, err := f.Contents()
	if err != nil {
		return nil, fmt.Errorf("read %s from commit %s: %w", rel, shortHash(commit), err)
	}
	return []byte(s), nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
