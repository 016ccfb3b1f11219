package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/termsafe"
)

// Tasks in work trees of their own (grub start --worktree).
//
// A task started with --worktree lives in a linked git work tree beside
// the repository's top folder, <top>/../<name>.grub-<id>, on the new
// branch grub/<id> made from HEAD. Beside it, not inside: a folder inside
// the work tree would be part of the agent's workspace (its tools and
// shell would see the other tasks' files, and the main checkout's git
// status would have to ignore it), while a sibling is as easy to find and
// to cd into as the project itself, on the same file system. The task's
// harness is the work tree's own .grub/<id>/, committed on its branch.
//
// Commands run in any work tree of the repository see the tasks of all of
// them: the work trees come from the git directory (gitx.Repo.Worktrees),
// and an id resolves to the store of the work tree that holds it.

// worktreeBranchPrefix starts the branch of a task run in a work tree of
// its own: grub/<id>.
const worktreeBranchPrefix = "grub/"

// worktreePath is where grub start --worktree puts task id's work tree:
// <top>/../<name>.grub-<id>, top being the repository's top folder.
func worktreePath(top, id string) string {
	return filepath.Join(filepath.Dir(top), filepath.Base(top)+".grub-"+id)
}

// startWorktree creates task id's work tree on the new branch grub/<id>
// from HEAD and returns the store of the task's workspace in it (the same
// folder of the project as store's, when that is a subfolder of the
// repository). It leaves the user's checkout as it is.
func startWorktree(ctx context.Context, w io.Writer, store *harness.Store, id string) (*harness.Store, error) {
	repo, err := openRepo(store.Root)
	if err != nil {
		return nil, err
	}
	if repo == nil {
		return nil, usageErrorf("grub start --worktree needs a git repository: %s is not in one", store.Root)
	}
	if has, err := repo.HasCommits(); err != nil {
		return nil, err
	} else if !has {
		return nil, usageErrorf("grub start --worktree needs a commit to branch from: the repository at %s has none yet; commit once, then start again", repo.Root())
	}
	path, branch := worktreePath(repo.Root(), id), worktreeBranchPrefix+id
	err = repo.AddWorktree(ctx, path, branch)
	if errors.Is(err, gitx.ErrNoGitProgram) {
		return nil, usageErrorf("grub start --worktree needs the git program on PATH (it creates the work tree with git worktree add); install git, or start without --worktree")
	}
	if err != nil {
		return nil, err
	}
	if dirty, err := repo.Dirty(); err == nil && len(dirty) > 0 {
		fmt.Fprintln(w, "grub: note: your uncommitted changes stay in your checkout; the task's work tree starts from HEAD")
	}
	fmt.Fprintf(w, "grub: work tree %s on the new branch %s (your checkout stays as it is)\n", path, branch)
	return store.At(filepath.Join(path, filepath.FromSlash(repo.Prefix())))
}

// taskStores are the stores of the project in every work tree of its
// repository, the workspace's own first. Outside a repository, or when the
// work trees cannot be read, it is the workspace's alone: listing the
// others is a convenience that never fails a command.
func taskStores(store *harness.Store) []*harness.Store {
	stores := []*harness.Store{store}
	repo, err := openRepo(store.Root)
	if err != nil || repo == nil {
		return stores
	}
	trees, err := repo.Worktrees()
	if err != nil {
		return stores
	}
	self := realPath(repo.Root())
	for _, wt := range trees {
		if realPath(wt.Root) == self {
			continue
		}
		ws := filepath.Join(wt.Root, filepath.FromSlash(repo.Prefix()))
		if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
			continue
		}
		if s, err := store.At(ws); err == nil {
			stores = append(stores, s)
		}
	}
	return stores
}

// realPath is p with its links resolved, or p when that fails.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// resolveInStores resolves id (as harness.Store.Resolve does) across the
// stores of every work tree, and returns the store that holds it. An
// empty id is the most recently updated healthy task of them all. An
// unknown or ambiguous id is the home store's kind of error, listing the
// ids of every work tree.
func resolveInStores(home *harness.Store, id string) (*harness.Store, string, error) {
	stores := taskStores(home)
	if len(stores) == 1 {
		id, err := home.Resolve(id)
		return home, id, err
	}
	if strings.TrimSpace(id) == "" {
		store, st, _, err := latestTask(stores)
		if err != nil || st == nil {
			return home, "", err
		}
		return store, st.ID, nil
	}
	var (
		found *harness.Store
		known []string
		match []string
	)
	for _, s := range stores {
		got, err := s.Resolve(id)
		var nf *harness.NotFoundError
		switch {
		case err == nil:
			found = s
			match = append(match, got)
		case errors.As(err, &nf):
			known = append(known, nf.Known...)
			match = append(match, nf.Matches...)
		default:
			return s, "", err
		}
	}
	if len(match) == 1 && found != nil {
		return found, match[0], nil
	}
	slices.Sort(known)
	slices.Sort(match)
	return home, "", &harness.NotFoundError{ID: strings.ToLower(strings.TrimSpace(id)), Known: slices.Compact(append(known, match...)), Matches: match}
}

// latestTask is the most recently updated healthy task of the stores
// (never one updated at a time still to come: harness.Latest) and
// the damaged tasks of the first; with no healthy task, the first
// damaged one's error or the first store's "no tasks" error.
func latestTask(stores []*harness.Store) (*harness.Store, *harness.State, []harness.DamagedTask, error) {
	var (
		best      *harness.Store
		bestSt    *harness.State
		damaged   []harness.DamagedTask
		firstDmgd error
	)
	for i, s := range stores {
		tasks, dmg, err := s.Scan()
		if err != nil {
			if i == 0 {
				return nil, nil, nil, err
			}
			continue
		}
		if i == 0 {
			damaged = dmg
		}
		if len(dmg) > 0 && firstDmgd == nil {
			firstDmgd = dmg[0].Err
		}
		if st, _ := harness.Latest(tasks, time.Now()); st != nil && (bestSt == nil || st.UpdatedAt.After(bestSt.UpdatedAt)) {
			best, bestSt = s, st
		}
	}
	if bestSt != nil {
		return best, bestSt, damaged, nil
	}
	if firstDmgd != nil {
		return nil, nil, nil, firstDmgd
	}
	_, err := stores[0].Resolve("")
	return nil, nil, nil, err
}

// noteBareID prints, for a command given no task id (id blank), a note
// for each task of the workspace's stores that claims an update at a
// time still to come: latestTask skipped it.
func noteBareID(w io.Writer, open func() (*harness.Store, error), id string) {
	if strings.TrimSpace(id) != "" {
		return
	}
	home, err := open()
	if err != nil {
		return
	}
	for _, s := range taskStores(home) {
		tasks, _, err := s.Scan()
		if err != nil {
			continue
		}
		_, future := harness.Latest(tasks, time.Now())
		for _, st := range future {
			fmt.Fprintf(w, "grub: note: %s\n", harness.FutureNote(st))
		}
	}
}

// storeForID is the store a command that opens the store itself (doctor)
// works on: the one of the work tree holding task id, or the workspace's
// own when id is empty or names no task (its error then says so).
func storeForID(open func() (*harness.Store, error), id string) (*harness.Store, error) {
	store, err := open()
	if err != nil || strings.TrimSpace(id) == "" {
		return store, err
	}
	if s, _, err := resolveInStores(store, id); err == nil {
		return s, nil
	}
	return store, nil
}

// locateView fills in where a task lives when that is not the workspace
// grub was run in (home): the work tree's folder and branch.
func locateView(v *taskView, home, store *harness.Store) {
	if home == nil || store == home || realPath(store.Root) == realPath(home.Root) {
		return
	}
	v.Worktree = store.Root
	if repo, err := openRepo(store.Root); err == nil && repo != nil {
		v.Branch = worktreeBranch(repo)
	}
}

// worktreeBranch is the branch checked out in repo's work tree; "" when
// detached or unknown.
func worktreeBranch(repo *gitx.Repo) string {
	trees, err := repo.Worktrees()
	if err != nil {
		return ""
	}
	self := realPath(repo.Root())
	for _, wt := range trees {
		if realPath(wt.Root) == self {
			return wt.Branch
		}
	}
	return ""
}

// sayWorktreeNext tells, when a run stops, where the work of a task run in
// a linked work tree is, and when it completed how to review and merge it
// from the main checkout. grub itself never merges, pushes or deletes.
// It reports whether it said how to review the work (on completion).
func sayWorktreeNext(w io.Writer, store *harness.Store, st *harness.State) bool {
	repo, err := openRepo(store.Root)
	if err != nil || repo == nil {
		return false
	}
	trees, err := repo.Worktrees()
	if err != nil {
		return false
	}
	self := realPath(repo.Root())
	var here, main *gitx.Worktree
	for i := range trees {
		switch {
		case realPath(trees[i].Root) == self:
			here = &trees[i]
		case trees[i].Main:
			main = &trees[i]
		}
	}
	if here == nil || here.Main || here.Branch == "" {
		return false
	}
	if st.Status != harness.StatusComplete {
		fmt.Fprintf(w, "grub: the work of task %s is on branch %s in %s\n", st.ID, termsafe.Line(here.Branch), termsafe.Line(here.Root))
		return false // sayReview says how to review and undo it
	}
	fmt.Fprintf(w, "grub: task %s is complete on branch %s (work tree %s). Review and merge it yourself:\n", st.ID, termsafe.Line(here.Branch), termsafe.Line(here.Root))
	q := func(s string) string { return termsafe.Line(shellQuote([]string{s})) }
	c := ""
	if main != nil {
		c = "-C " + q(main.Root) + " "
	}
	fmt.Fprintf(w, "  git %slog --stat %s\n", c, q(here.Branch))
	fmt.Fprintf(w, "  git %sdiff HEAD...%s\n", c, q(here.Branch))
	fmt.Fprintf(w, "  git %smerge %s    (or look around first: cd %s)\n", c, q(here.Branch), q(here.Root))
	fmt.Fprintf(w, "  git %sworktree remove %s    (when you are done with it)\n", c, q(here.Root))
	fmt.Fprintf(w, "  git %sbranch -D %s    (after that, to drop the task's work)\n", c, q(here.Branch))
	fmt.Fprintln(w, "grub never merges, pushes or deletes the branch or the work tree.")
	return true
}

// sayOtherHost says, before a run takes over a task whose status is
// running, that the runner on record was on another machine: its lock
// there is no runner here, and this run continues the task.
func sayOtherHost(w io.Writer, store *harness.Store, st *harness.State) {
	if st.Status != harness.StatusRunning {
		return
	}
	info, held, err := store.Holder(st.ID)
	if err != nil || held || info.Host == "" || info.Host == store.HostName() {
		return
	}
	fmt.Fprintf(w, "grub: task %s was running on host %s (not this machine); its runner there is not a runner here: continuing it on %s\n",
		st.ID, termsafe.Line(info.Host), termsafe.Line(store.HostName()))
}

// allowPaths are a task's --sandbox-allow paths as absolute paths in the
// workspace at root: state.json keeps those inside the workspace relative
// to it (harness.Store.ResolvePath).
func allowPaths(root string, stored []string) []string {
	if len(stored) == 0 {
		return nil
	}
	s := &harness.Store{Root: root}
	out := make([]string, 0, len(stored))
	for _, p := range stored {
		out = append(out, s.ResolvePath(p))
	}
	return out
}

// worktreeLine is where a task in another work tree lives, for people:
// the folder and its branch.
func worktreeLine(v *taskView) string {
	if v.Branch == "" {
		return v.Worktree
	}
	return v.Worktree + " (branch " + v.Branch + ")"
}

// storeDamaged is a damaged task and the store it is in.
type storeDamaged struct {
	harness.DamagedTask
	Store *harness.Store
}

// scanViews loads the view of every task of every work tree's store (the
// workspace's own first: its errors fail the scan, another work tree's
// only leave its tasks out), most recently updated first, and the
// damaged tasks.
func scanViews(home *harness.Store) ([]*taskView, []storeDamaged, error) {
	var (
		views   []*taskView
		damaged []storeDamaged
	)
	for i, store := range taskStores(home) {
		states, dmg, err := store.Scan()
		if err != nil {
			if i == 0 {
				return nil, nil, err
			}
			continue
		}
		for _, st := range states {
			v, err := loadTaskView(store, st)
			if err != nil {
				return nil, nil, err
			}
			locateView(v, home, store)
			views = append(views, v)
		}
		for _, d := range dmg {
			damaged = append(damaged, storeDamaged{DamagedTask: d, Store: store})
		}
	}
	slices.SortStableFunc(views, func(a, b *taskView) int { return b.State.UpdatedAt.Compare(a.State.UpdatedAt) })
	return views, damaged, nil
}

// worktreeCell is the WORKTREE cell of grub list: "-" for a task of this
// workspace, else its work tree's folder relative to the workspace.
func worktreeCell(home *harness.Store, v *taskView) string {
	if v.Worktree == "" {
		return "-"
	}
	if rel, err := filepath.Rel(home.Root, v.Worktree); err == nil {
		return oneLine(filepath.ToSlash(rel), 0)
	}
	return oneLine(v.Worktree, 0)
}
