package gitx

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrBranchExists is SwitchNewBranch's refusal of a branch name the
// repository already has.
var ErrBranchExists = errors.New("the branch exists already")

// SwitchNewBranch makes the new branch (a short name: grub/<id>) at
// HEAD's commit and puts HEAD on it, as git switch -c does when the
// branch starts where HEAD is: the index and the work tree, which
// already match that commit, stay as they are (uncommitted changes
// included). It returns where HEAD was before. The branch's file is
// written as setRef writes refs, so a kill leaves it whole or absent.
func (r *Repo) SwitchNewBranch(branch string) (from Head, err error) {
	g, st, err := r.open()
	if err != nil {
		return Head{}, err
	}
	from, err = readHead(g)
	if err != nil {
		return Head{}, err
	}
	if from.Commit == "" || from.Indirect {
		return from, fmt.Errorf("HEAD names no commit to branch from")
	}
	ref := plumbing.NewBranchReferenceName(branch)
	if !validBranch(branch) {
		return from, fmt.Errorf("%q is not a branch name git takes", branch)
	}
	if _, err := st.Reference(ref); err == nil {
		return from, fmt.Errorf("%s: %w", branch, ErrBranchExists)
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return from, err
	}
	if err := setRef(st, ref, plumbing.ZeroHash, plumbing.NewHash(from.Commit), false); err != nil {
		return from, fmt.Errorf("make the branch %s: %w", branch, err)
	}
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
		return from, fmt.Errorf("switch to the branch %s: %w", branch, err)
	}
	return from, nil
}
