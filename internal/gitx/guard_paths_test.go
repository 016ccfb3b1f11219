package gitx

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestGuardedPaths: the list the sandbox makes read-only is the guard's
// own, included config files and a hooks folder named by core.hooksPath
// among them, missing files listed too.
func TestGuardedPaths(t *testing.T) {
	dir, _, run := guardRepo(t)
	run(dir, "config", "include.path", "../extra.cfg")
	run(dir, "config", "core.hooksPath", "githooks")
	got, err := GuardedPaths(dir)
	if err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, ".git")
	for _, want := range []string{
		gitDir,
		filepath.Join(gitDir, "hooks"),
		filepath.Join(gitDir, "config"),
		filepath.Join(gitDir, "config.worktree"),
		filepath.Join(gitDir, "info"),
		filepath.Join(dir, "extra.cfg"),
		filepath.Join(dir, "githooks"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("GuardedPaths lacks %s: %q", want, got)
		}
	}
	if _, err := GuardedPaths(t.TempDir()); err == nil {
		t.Error("GuardedPaths of a folder without .git: no error")
	}
}
