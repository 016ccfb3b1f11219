package cli

import (
	"context"

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

func (g gitHistory) Check(m harness.HistoryMark) (string, error) {
	problem, _, err := g.repo.CheckAppend(m.Branch, m.Commit)
	return problem, err
}

func (g gitHistory) Restore(ctx context.Context, m harness.HistoryMark, keepRef string) ([]string, error) {
	keep := []string{g.store.Rel(g.store.Path(g.id, harness.FileState))}
	return g.repo.RestoreHistory(ctx, m.Branch, m.Commit, keepRef, keep)
}
