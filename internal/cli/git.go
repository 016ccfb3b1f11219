package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/termsafe"
)

// gitCommitter commits the work tree after every turn, with grub's
// message and trailers; it never pushes, resets, rebases or amends. Of
// .grub it commits only what the repository's harness rule takes in
// (openRepo), and it writes grub's own .grub/.gitignore back first if the
// agent changed it.
type gitCommitter struct {
	repo  *gitx.Repo
	store *harness.Store
}

func (g gitCommitter) Commit(ctx context.Context, c controller.Commit) (controller.CommitReport, error) {
	if err := g.store.EnsureGitignore(); err != nil {
		return controller.CommitReport{MaxSize: gitx.MaxFileSize}, err
	}
	done, err := onlyGrubTasks(g.repo, c.TaskID).CommitTurn(ctx, gitx.Turn{TaskID: c.TaskID, Iteration: c.Iteration, Feature: c.Feature, Summary: c.Summary, Status: c.Status,
		Verified: c.Verified, CostUSD: c.Usage.CostUSD, CostReported: c.Usage.CostReported})
	rep := controller.CommitReport{Hash: done.Hash, MaxSize: gitx.MaxFileSize}
	for _, f := range done.LeftOut {
		rep.LeftOut = append(rep.LeftOut, controller.LeftOutFile{Path: f.Path, Size: f.Size})
	}
	return rep, err
}

// Committed recognises grub's own commit of the turn, not any commit with
// its trailers (which an agent can write): the commit holds the task's
// state.json exactly as it is on disk, which grub wrote for the turn's
// record just before committing it (gitx.Repo.TurnCommitted).
func (g gitCommitter) Committed(_ context.Context, taskID string, iteration int) (bool, error) {
	data, err := g.store.StateBytes(taskID)
	if err != nil {
		return false, err
	}
	return g.repo.TurnCommittedBy(taskID, iteration, g.store.Rel(g.store.Path(taskID, harness.FileState)), ownTurnCommit(g.store, taskID, data))
}

// gitChanges tells whether a turn changed the workspace from git's view of
// the work tree; grub's own folder is not progress.
type gitChanges struct{ repo *gitx.Repo }

func (g gitChanges) Snapshot() (string, error) { return g.repo.TreeHash(harness.GrubDirName) }

// openRepo opens the workspace's git repository; nil without error when the
// workspace is not in one. Its scans and commits take in, of .grub, only
// .grub/.gitignore and each task's tracked files (harness.TrackedFiles),
// whatever the ignore rules say.
func openRepo(root string) (*gitx.Repo, error) {
	repo, err := gitx.Open(root)
	if errors.Is(err, gitx.ErrNotRepo) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return repo.WithHarness(harnessFiles(nil)), nil
}

// harnessFiles is grub's rule for .grub in scans and commits: each task's
// tracked files, the workspace's config.toml kept as the index has it,
// and, when tasks is set, only the task folders it names.
func harnessFiles(tasks func(string) bool) gitx.HarnessFiles {
	return gitx.HarnessFiles{Dir: harness.GrubDirName, Tracked: harness.TrackedFiles(),
		Keep: []string{harness.FileWorkspaceConfig}, Tasks: tasks}
}

// onlyGrubTasks is repo for a commit of task id's turn that takes, of
// .grub, the files of id only: never a task folder a turn planted, even
// one the referee did not set aside, nor another task's files a turn
// rewrote (their committed versions stay as they are; each task's own
// commits carry its files).
func onlyGrubTasks(repo *gitx.Repo, id string) *gitx.Repo {
	return repo.WithHarness(harnessFiles(func(name string) bool { return name == id }))
}

// checkConversion refuses, before any turn, to commit in a repository that
// asks git to convert files on their way into a commit (a clean filter
// such as Git LFS's, end-of-line conversion: gitx.Repo.Conversion) when
// the git program, which grub's commits there have hash the files, is not
// on PATH. With git on PATH it costs nothing: the commits find out
// themselves.
func checkConversion(repo *gitx.Repo) error {
	if gitx.HasGitProgram() {
		return nil
	}
	reasons, err := repo.Conversion()
	if err != nil {
		return err
	}
	if len(reasons) > 0 {
		return usageErrorf("this repository asks git to convert files when they are committed (%s); grub's commits have the git program do that, and git is not on PATH: install git, or run with --no-commit and commit yourself",
			termsafe.Line(strings.Join(capList(reasons, 3), "; ")))
	}
	return nil
}

// capList is xs, its first n and how many more.
func capList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), fmt.Sprintf("and %d more", len(xs)-n))
}

// prepareRepo readies a repository for a new task: a repository without
// commits gets grub's first commit of the existing tree; a work tree with
// uncommitted changes is refused unless allowDirty, and then the note says
// that the first turn's commit takes them (carried).
func prepareRepo(ctx context.Context, repo *gitx.Repo, id string, allowDirty bool) (note string, carried bool, err error) {
	if err := checkConversion(repo); err != nil {
		return "", false, err
	}
	has, err := repo.HasCommits()
	if err != nil {
		return "", false, err
	}
	if !has {
		done, err := repo.InitialCommit(ctx, fmt.Sprintf("grub: the project before task %s", id))
		if err != nil {
			return "", false, fmt.Errorf("make the first commit of this repository: %w", err)
		}
		note = fmt.Sprintf("the repository had no commits: committed the existing tree as %s", short(done.Hash))
		for _, f := range done.LeftOut {
			note += fmt.Sprintf("\nwarning: %s (%d bytes) is larger than %d MiB and was left out of that commit; it stays in the work tree", termsafe.Line(f.Path), f.Size, gitx.MaxFileSize>>20)
		}
		return note, false, nil
	}
	all, err := repo.Dirty()
	if err != nil {
		return "", false, err
	}
	// grub's own files change between turns (an idle pause, stop or
	// edit writes state.json); they are not the user's uncommitted work.
	var dirty []string
	for _, p := range all {
		if !strings.HasPrefix(p, harness.GrubDirName+"/") {
			dirty = append(dirty, p)
		}
	}
	if len(dirty) == 0 {
		return "", false, nil
	}
	shown := dirty
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(dirty)-5))
	}
	if allowDirty {
		return fmt.Sprintf("--allow-dirty: the uncommitted changes in the work tree (%s) go into the first turn's commit", termsafe.Line(strings.Join(shown, ", "))), true, nil
	}
	return "", false, usageErrorf("the work tree has uncommitted changes (%s): grub commits every turn, so commit or stash them first, or pass --allow-dirty to let the first turn's commit include them",
		strings.Join(shown, ", "))
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// gitGuard copies, before each turn, what in the repository's git
// directory can make git run a program, so the referee can undo a turn
// that plants one (see controller.GitGuard).
type gitGuard struct{ repo *gitx.Repo }

func (g gitGuard) Record() (controller.GitSnapshot, error) {
	s, err := g.repo.GuardGitDir()
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (g gitGuard) Load(data []byte) (controller.GitSnapshot, error) {
	s, err := gitx.DecodeGitDirSnapshot(data)
	if err != nil {
		return nil, err
	}
	return s, nil
}
