package cli

import (
	"context"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
)

// gitHistory is controller.History on gitx: the task's branch, which may
// only grow. Its restore leaves the task's state.json as it is on disk:
// grub writes it.
type gitHistory struct {
	repo  *gitx.Repo
	store *harness.Store
	id    string
}

func (g gitHistory) Head() (harness.HistoryMark, error) {
	h, err := g.repo.Head()
	if h.Indirect {
		h.Commit = "" // a symbolic branch is no base to keep
	}
	return harness.HistoryMark{Branch: h.Branch, Commit: h.Commit}, err
}

// Check also names what hides the history from the user's git though
// the refs are right (a replace ref, a planted shallow line: gitx.Hidden).
func (g gitHistory) Check(m harness.HistoryMark) (string, error) {
	problem, _, err := g.repo.CheckAppend(m.Branch, m.Commit)
	if err != nil {
		return "", err
	}
	hidden, err := g.repo.HiddenHistory(m.Commit)
	if err != nil {
		return "", err
	}
	return strings.Trim(problem+"; "+hidden.Problem(), "; "), nil
}

func (g gitHistory) Restore(ctx context.Context, m harness.HistoryMark, keepRef string) ([]string, error) {
	var kept []string
	problem, _, err := g.repo.CheckAppend(m.Branch, m.Commit)
	if err != nil {
		return nil, err
	}
	if problem != "" {
		keep := []string{g.store.Rel(g.store.Path(g.id, harness.FileState))}
		if kept, err = g.repo.RestoreHistory(ctx, m.Branch, m.Commit, keepRef, keep); err != nil {
			return kept, err
		}
	}
	more, err := g.repo.UnhideHistory(m.Commit, keepRef)
	return append(kept, more...), err
}
