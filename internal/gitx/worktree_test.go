package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAddWorktreeAndWorktrees(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	dir := gitCommittedRepo(t, run, map[string]string{"a.txt": "a\n"})
	r := mustOpen(t, dir)
	path := filepath.Join(t.TempDir(), "proj.grub-ab12cd34")
	if err := r.AddWorktree(context.Background(), path, "grub/ab12cd34"); err != nil {
		t.Fatal(err)
	}
	if out := run(dir, "status", "--porcelain"); out != "" {
		t.Errorf("the main work tree changed:\n%s", out)
	}
	for _, from := range []string{dir, path} {
		trees, err := mustOpen(t, from).Worktrees()
		if err != nil {
			t.Fatal(err)
		}
		if len(trees) != 2 {
			t.Fatalf("from %s: %d work trees, want 2: %+v", from, len(trees), trees)
		}
		if !trees[0].Main || realDir(t, trees[0].Root) != realDir(t, dir) {
			t.Errorf("from %s: first work tree %+v, want the main one at %s", from, trees[0], dir)
		}
		if trees[1].Main || realDir(t, trees[1].Root) != realDir(t, path) || trees[1].Branch != "grub/ab12cd34" {
			t.Errorf("from %s: second work tree %+v, want %s on grub/ab12cd34", from, trees[1], path)
		}
	}
	if got := run(path, "rev-parse", "HEAD"); got != run(dir, "rev-parse", "HEAD") {
		t.Errorf("the new branch is at %s, want HEAD", got)
	}
	// A second work tree at the same place is refused; the branch exists.
	err := r.AddWorktree(context.Background(), path, "grub/ab12cd35")
	if err == nil || !strings.Contains(err.Error(), "git worktree add") {
		t.Errorf("AddWorktree over an existing folder: %v", err)
	}
}

func TestWorktreesSkipsPruned(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	dir := gitCommittedRepo(t, run, map[string]string{"a.txt": "a\n"})
	gone := filepath.Join(t.TempDir(), "gone")
	run(dir, "worktree", "add", "-q", "-b", "x", gone)
	run(dir, "worktree", "add", "-q", "--detach", filepath.Join(t.TempDir(), "detached"))
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	trees, err := mustOpen(t, dir).Worktrees()
	if err != nil {
		t.Fatal(err)
	}
	if len(trees) != 2 || trees[1].Branch != "" {
		t.Errorf("work trees %+v: want the main one and the detached one, not the removed one", trees)
	}
}

func TestAddWorktreeWithoutGit(t *testing.T) {
	dir := initRepo(t)
	r := mustOpen(t, dir)
	t.Setenv("PATH", t.TempDir())
	err := r.AddWorktree(context.Background(), filepath.Join(t.TempDir(), "wt"), "grub/ab12cd34")
	if !errors.Is(err, ErrNoGitProgram) {
		t.Errorf("AddWorktree without git: %v, want ErrNoGitProgram", err)
	}
}

func realDir(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAddWorktreeRunsNoHook: git worktree add would run the repository's
// post-checkout hook; grub never runs the repository's hooks.
func TestAddWorktreeRunsNoHook(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	dir := gitCommittedRepo(t, run, map[string]string{"a.txt": "a\n"})
	marker := filepath.Join(t.TempDir(), "HOOK-RAN")
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "post-checkout"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mustOpen(t, dir).AddWorktree(context.Background(), filepath.Join(t.TempDir(), "wt"), "grub/00000001"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("git worktree add ran the post-checkout hook")
	}
}
