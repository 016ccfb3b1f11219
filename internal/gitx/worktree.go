package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoGitProgram is matched (errors.Is) by the error AddWorktree returns
// when the git program is not on PATH: creating a work tree is the one
// thing grub asks of the git binary.
var ErrNoGitProgram = errors.New("the git program is not on PATH")

// Worktree is one work tree of a repository: the main one or a linked one
// (`git worktree add`).
type Worktree struct {
	// Root is the absolute path of the work tree's top folder.
	Root string
	// Branch is the branch checked out there ("grub/0a1b2c3d"), empty on
	// a detached HEAD.
	Branch string
	// Main is set for the main work tree, the one whose .git is the
	// repository's folder.
	Main bool
}

// Worktrees lists the work trees of r's repository that still exist on
// disk: the main one first (unless the repository is bare), then the
// linked ones in the order of their names under .git/worktrees. It reads
// the git directory (`<common>/worktrees/*/gitdir`, as `git worktree list`
// does) and needs no git program.
func (r *Repo) Worktrees() ([]Worktree, error) {
	gitDir, err := resolveGitDir(r.root)
	if err != nil {
		return nil, err
	}
	common := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = absFrom(gitDir, strings.TrimSpace(string(data)))
	}
	var out []Worktree
	if filepath.Base(common) == ".git" {
		main := filepath.Dir(common)
		if fi, err := os.Lstat(filepath.Join(main, ".git")); err == nil && fi.IsDir() {
			out = append(out, Worktree{Root: main, Branch: headBranch(common), Main: true})
		}
	}
	entries, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil && !isNotExist(err) {
		return nil, fmt.Errorf("list the work trees: %w", err)
	}
	for _, e := range entries {
		admin := filepath.Join(common, "worktrees", e.Name())
		data, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue // not a work tree's folder, or one being created
		}
		dotGit := absFrom(admin, strings.TrimSpace(string(data)))
		root := filepath.Dir(dotGit)
		if fi, err := os.Stat(dotGit); err != nil || fi.IsDir() {
			continue // pruned, moved, or not a linked work tree's .git file
		}
		out = append(out, Worktree{Root: root, Branch: headBranch(admin)})
	}
	return out, nil
}

// headBranch is the short name of the branch a git directory's HEAD
// names; "" when it is detached or unreadable.
func headBranch(gitDir string) string {
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref:")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}

// AddWorktree creates a linked work tree at path on a new branch made
// from HEAD: `git worktree add -b <branch> <path> HEAD`, run by the git
// program (go-git cannot create linked work trees). path must not exist
// yet; the branch must be new. Without git on PATH the error matches
// ErrNoGitProgram. AddWorktree never touches r's own work tree.
//
// Two `git worktree add` at once in one repository can fail (git reads
// the other's half-made folder under .git/worktrees): a failure that left
// no work tree at path is tried again a few times, on the branch if the
// failed attempt made it.
func (r *Repo) AddWorktree(ctx context.Context, path, branch string) error {
	if !HasGitProgram() {
		return ErrNoGitProgram
	}
	run := func(args ...string) (string, error) {
		// grub never runs the repository's hooks or its fsmonitor: git
		// worktree add would run post-checkout (gitCommand).
		cmd, err := gitCommand(ctx, r.root, args...)
		if err != nil {
			return "", err
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		return strings.TrimSpace(stderr.String()), err
	}
	args := []string{"worktree", "add", "--quiet", "-b", branch, path, "HEAD"}
	for attempt := 1; ; attempt++ {
		msg, err := run(args...)
		if err == nil {
			return nil
		}
		if msg == "" {
			msg = err.Error()
		}
		err = fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		if _, serr := os.Lstat(path); serr == nil || attempt == addAttempts || ctx.Err() != nil {
			return err
		}
		if _, verr := run("rev-parse", "--verify", "--quiet", "refs/heads/"+branch); verr == nil {
			args = []string{"worktree", "add", "--quiet", path, branch}
		}
		time.Sleep(time.Duration(attempt*50+rand.IntN(100)) * time.Millisecond)
	}
}

// addAttempts is how many times AddWorktree runs git worktree add.
const addAttempts = 5
