package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/termsafe"
)

// What grub does to the user's branch, said when a task starts and when
// a run stops.
//
// A new task records its base in state (harness.GitBase): the branch its
// turns are committed to and HEAD's commit when it was created, so that
// its work is always <base>..<branch>, whatever came after. With
// --branch, grub first makes the branch grub/<id> at HEAD and switches
// to it, so the user's branch does not move. When a run stops, sayReview
// prints the git commands to review that work and to undo it; grub
// itself never resets, deletes or merges.

// startBase records where task id's work starts in repo, after
// prepareRepo: with branch (--branch), the new branch grub/<id> made at
// HEAD and checked out first. HEAD must name a commit (prepareRepo made
// one in a repository without any).
func startBase(repo *gitx.Repo, id string, branch bool) (*harness.GitBase, error) {
	if branch {
		name := worktreeBranchPrefix + id
		from, err := repo.SwitchNewBranch(name)
		if errors.Is(err, gitx.ErrBranchExists) {
			return nil, usageErrorf("grub start --branch: the branch %s exists already; delete or rename it, or start without --branch", name)
		}
		if err != nil {
			return nil, fmt.Errorf("grub start --branch: %w", err)
		}
		return &harness.GitBase{Branch: "refs/heads/" + name, Commit: from.Commit, Made: true, From: from.Branch}, nil
	}
	head, err := repo.Head()
	if err != nil {
		return nil, err
	}
	if head.Commit == "" {
		return nil, fmt.Errorf("HEAD names no commit (%s)", orDetachedName(head.Branch))
	}
	return &harness.GitBase{Branch: head.Branch, Commit: head.Commit}, nil
}

// orDetachedName is a full branch ref as people name it, or "detached
// HEAD" for "".
func orDetachedName(ref string) string {
	if ref == "" {
		return "detached HEAD"
	}
	return strings.TrimPrefix(ref, "refs/heads/")
}

// sayBase is the start line that says where grub commits.
func sayBase(w io.Writer, b *harness.GitBase) {
	branch, base := termsafe.Line(orDetachedName(b.Branch)), short(b.Commit)
	switch {
	case b.Made:
		fmt.Fprintf(w, "grub: made the branch %s at %s (from %s) and switched to it: grub commits every turn there, and %s stays as it is\n",
			branch, base, termsafe.Line(orDetachedName(b.From)), termsafe.Line(orDetachedName(b.From)))
	case b.Branch == "":
		fmt.Fprintf(w, "grub: grub commits every turn on the detached HEAD, on top of %s\n", base)
	default:
		fmt.Fprintf(w, "grub: grub commits every turn to the branch %s, on top of %s (the task's base); when the run stops it prints how to review and undo that\n",
			branch, base)
	}
}

// sayReview prints, when a run stops, where the task's commits are and
// the git commands to review and to undo them. The branch is the one the
// task's history is on now (a task may go on on another branch that
// holds its history), the base the commit it started from.
func sayReview(w io.Writer, st *harness.State) {
	b := st.Base
	if b == nil || st.NoCommit {
		return
	}
	ref := b.Branch
	if st.History != nil {
		ref = st.History.Branch
	}
	q := func(s string) string { return termsafe.Line(shellQuote([]string{s})) }
	base, tip := short(b.Commit), "HEAD"
	if ref != "" {
		tip = q(strings.TrimPrefix(ref, "refs/heads/"))
	}
	fmt.Fprintf(w, "grub: the commits of task %s are %s..%s; review them:\n", st.ID, base, tip)
	fmt.Fprintf(w, "  git log --oneline %s..%s\n", base, tip)
	fmt.Fprintf(w, "  git diff %s..%s\n", base, tip)
	switch {
	case b.Made && b.From != "":
		from := q(strings.TrimPrefix(b.From, "refs/heads/"))
		fmt.Fprintf(w, "keep them: git switch %s && git merge %s; undo them: git switch %s && git branch -D %s\n", from, tip, from, tip)
	case b.Made:
		fmt.Fprintf(w, "undo them: git switch --detach %s && git branch -D %s\n", base, tip)
	case ref == "":
		fmt.Fprintf(w, "undo them: git switch --detach %s\n", base)
	default:
		fmt.Fprintf(w, "undo them: git reset --keep %s, with %s checked out (the commits stay in git's reflog)\n", base, tip)
	}
	if b.Carried {
		keep := ""
		if !b.Made {
			keep = fmt.Sprintf("; git reset %s (without --keep) leaves every file as it is, uncommitted", base)
		}
		fmt.Fprintf(w, "note: the task's first commit holds the changes your work tree had when it started (--allow-dirty): an undo takes them away too (that commit keeps them)%s\n", keep)
	}
	fmt.Fprintf(w, "after an undo, grub rm %s removes what is left of the task in .grub. grub itself never resets, merges, pushes or deletes a branch.\n", st.ID)
}

// gitLine is status's line of where the task commits: the branch and the
// base; "" for a task that records none (no repository, an older file).
func gitLine(st *harness.State) string {
	b := st.Base
	switch {
	case st.NoCommit:
		return "no commits (--no-commit)"
	case b == nil:
		return ""
	}
	ref := b.Branch
	if st.History != nil {
		ref = st.History.Branch
	}
	line := "commits to branch " + orDetachedName(ref)
	if ref == "" {
		line = "commits on a detached HEAD"
	}
	if b.Made {
		line += " (made by grub from " + orDetachedName(b.From) + ")"
	}
	return line + ", base " + short(b.Commit)
}
