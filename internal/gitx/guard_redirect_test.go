package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Git safety II: what in the git directory can send git elsewhere or run
// a program besides hooks and config (issue 18, finding 4).

var redirectCases = []guardCase{
	{"commondir names a repository the agent made", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "init", "-q", "--bare", "evil")
		writeMode(t, filepath.Join(dir, "evil/config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = touch PLANTED; false\n", 0o644)
		writeMode(t, filepath.Join(dir, "evil/hooks/pre-commit"), plantedHook, 0o755)
		writeMode(t, filepath.Join(dir, ".git/commondir"), "../evil\n", 0o644)
	}, []string{".git/commondir was added"}},
	{"objects/info/alternates", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/objects/info/alternates"), filepath.Join(dir, "elsewhere")+"\n", 0o644)
	}, []string{".git/objects/info/alternates was added"}},
	{"info/sparse-checkout", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/info/sparse-checkout"), "/*\n", 0o644)
	}, []string{".git/info/sparse-checkout was added"}},
	{"HEAD to a ref outside refs/heads", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/HEAD"), "ref: refs/heads/../../config\n", 0o644)
	}, []string{`.git/HEAD now holds "ref: refs/heads/../../config", which names no branch or commit`}},
	{"HEAD replaced by a link", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, "myhead"), "ref: refs/heads/master\n", 0o644)
		if err := os.Remove(filepath.Join(dir, ".git/HEAD")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../myhead", filepath.Join(dir, ".git/HEAD")); err != nil {
			t.Fatal(err)
		}
	}, []string{`.git/HEAD was replaced by a link to "../myhead"`}},
	{"HEAD garbage", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/HEAD"), "nonsense", 0o644)
	}, []string{`.git/HEAD now holds "nonsense"`}},
	{"HEAD removed", func(t *testing.T, dir string, _ func(string, ...string) string) {
		if err := os.Remove(filepath.Join(dir, ".git/HEAD")); err != nil {
			t.Fatal(err)
		}
	}, []string{".git/HEAD was removed"}},
	{"a nested repository with an fsmonitor, added as a gitlink", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "init", "-q", "lib")
		writeMode(t, filepath.Join(dir, "lib/a.txt"), "a\n", 0o644)
		run(filepath.Join(dir, "lib"), "add", "a.txt")
		run(filepath.Join(dir, "lib"), "commit", "-q", "-m", "lib")
		rawGit(t, filepath.Join(dir, "lib"), "config", "core.fsmonitor", "touch ../PLANTED; false")
		run(dir, "add", "lib")
	}, []string{"lib/.git was created: a repository nested in the work tree"}},
	{"a nested .git file naming a git directory", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "init", "-q", "--bare", "hidden")
		writeMode(t, filepath.Join(dir, "hidden/config"), "[core]\n\tbare = false\n\tfsmonitor = touch ../PLANTED; false\n", 0o644)
		writeMode(t, filepath.Join(dir, "sub/deeper/.git"), "gitdir: ../../hidden\n", 0o644)
	}, []string{"sub/deeper/.git was created"}},
}

// TestGuardRedirects: each way to send git elsewhere or plant a nested
// repository is named, restored, and the user's git runs nothing after.
func TestGuardRedirects(t *testing.T) {
	t.Parallel()
	for _, c := range redirectCases {
		for _, mode := range []struct {
			suffix           string
			trusted, encoded bool
		}{{"", false, false}, {" (lstat trusted)", true, false}, {" (encoded copy)", false, true}} {
			t.Run(c.name+mode.suffix, func(t *testing.T) { testGuardCase(t, c, mode.trusted, mode.encoded) })
		}
	}
}

// TestGuardRedirectControl: without the guard, the commondir and the
// nested repository plants run on the user's next git commands, so the
// cases above test something.
func TestGuardRedirectControl(t *testing.T) {
	t.Parallel()
	for _, c := range []guardCase{redirectCases[0], redirectCases[7]} {
		dir, _, run := guardRepo(t)
		c.plant(t, dir, run)
		writeMode(t, filepath.Join(dir, "file.txt"), "x\n", 0o644)
		rawGit(t, dir, "status")
		if _, err := os.Stat(filepath.Join(dir, "PLANTED")); err != nil {
			t.Errorf("%s: the plant did not run on git status without the guard", c.name)
		}
	}
}

// TestGuardHeadMoves: git itself writing HEAD (a new branch, a detached
// HEAD) is no change.
func TestGuardHeadMoves(t *testing.T) {
	t.Parallel()
	dir, r, run := guardRepo(t)
	writeMode(t, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	run(dir, "add", "a.txt")
	run(dir, "commit", "-q", "-m", "a")
	s := record(t, r)
	run(dir, "checkout", "-q", "-b", "feature/x")
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Errorf("after git checkout -b: %q", changes)
	}
	run(dir, "checkout", "-q", "--detach")
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Errorf("after git checkout --detach: %q", changes)
	}
}

func TestValidHead(t *testing.T) {
	for _, h := range []string{"ref: refs/heads/main\n", "ref: refs/heads/feature/x-1\n", strings.Repeat("a", 40) + "\n", strings.Repeat("0", 64) + "\n"} {
		if !validHead([]byte(h)) {
			t.Errorf("validHead(%q) = false", h)
		}
	}
	for _, h := range []string{"ref: refs/heads/main", "ref: refs/remotes/x\n", "ref: refs/heads/../x\n", "ref: refs/heads/.x\n", "ref: refs/heads/a.lock\n",
		"ref: refs/heads/a\nref: refs/heads/b\n", strings.Repeat("A", 40) + "\n", "ref: ../../config\n", "ref: refs/heads/\n", "ref: refs/heads/a b\n"} {
		if validHead([]byte(h)) {
			t.Errorf("validHead(%q) = true", h)
		}
	}
}

// TestGuardModules: a submodule's git directory under .git/modules has
// config and hooks of its own, guarded like the top ones.
func TestGuardModules(t *testing.T) {
	t.Parallel()
	dir, r, run := guardRepo(t)
	run(dir, "init", "-q", "--bare", ".git/modules/vendor/lib")
	s := record(t, r)
	rawGit(t, filepath.Join(dir, ".git/modules/vendor/lib"), "config", "core.fsmonitor", "touch PLANTED")
	writeMode(t, filepath.Join(dir, ".git/modules/vendor/lib/hooks/post-checkout"), plantedHook, 0o755)
	writeMode(t, filepath.Join(dir, ".git/modules/vendor/lib/commondir"), "../../../../evil\n", 0o644)
	changes := mustCheck(t, s)
	for _, want := range []string{
		".git/modules/vendor/lib/commondir was added",
		".git/modules/vendor/lib/hooks/post-checkout was added (executable)",
		`.git/modules/vendor/lib/config: core.fsmonitor was set to "touch PLANTED"`,
	} {
		if !slices.Contains(changes, want) {
			t.Errorf("changes %q lack %q", changes, want)
		}
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Errorf("after Restore: %q", changes)
	}
}

// TestGuardNestedExisting: a repository nested in the work tree before the
// turn keeps its hooks and config guarded; one the turn removes is named,
// and Restore does not fail for it.
func TestGuardNestedExisting(t *testing.T) {
	t.Parallel()
	dir, r, run := guardRepo(t)
	run(dir, "init", "-q", "vendor/lib")
	s := record(t, r)
	rawGit(t, filepath.Join(dir, "vendor/lib"), "config", "core.fsmonitor", "touch PLANTED")
	writeMode(t, filepath.Join(dir, "vendor/lib/.git/hooks/pre-commit"), plantedHook, 0o755)
	changes := mustCheck(t, s)
	for _, want := range []string{
		"vendor/lib/.git/hooks/pre-commit was added (executable)",
		`vendor/lib/.git/config: core.fsmonitor was set to "touch PLANTED"`,
	} {
		if !slices.Contains(changes, want) {
			t.Errorf("changes %q lack %q", changes, want)
		}
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Errorf("after Restore: %q", changes)
	}
	if err := os.RemoveAll(filepath.Join(dir, "vendor/lib/.git")); err != nil {
		t.Fatal(err)
	}
	if changes := mustCheck(t, s); !slices.Contains(changes, "vendor/lib/.git was removed") {
		t.Errorf("changes %q, want the nested .git named as removed", changes)
	}
	if err := s.Restore(); err != nil {
		t.Errorf("Restore after a nested repository was removed: %v", err)
	}
}

// TestGuardGitDirGoneError: a removed .git is a *GitDirGoneError, which the
// controller turns into a stopped task.
func TestGuardGitDirGoneError(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	s := record(t, r)
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	var gone *GitDirGoneError
	if err := s.Restore(); !errors.As(err, &gone) || gone.Path != ".git" {
		t.Fatalf("Restore: %v, want a *GitDirGoneError for .git", err)
	}
}

// TestCommitKeepsOnlyDeclaredGitlinks: a gitlink the agent put in the
// index (git add of a nested repository) is not committed, and leaves the
// index; one for a submodule declared in .gitmodules when the guard copy
// was taken is kept.
func TestCommitKeepsOnlyDeclaredGitlinks(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	dir := t.TempDir()
	run(dir, "init", "-q")
	for _, sub := range []string{"lib", "declared"} {
		run(dir, "init", "-q", sub)
		writeMode(t, filepath.Join(dir, sub, "a.txt"), "a\n", 0o644)
		run(filepath.Join(dir, sub), "add", "a.txt")
		run(filepath.Join(dir, sub), "commit", "-q", "-m", sub)
	}
	writeMode(t, filepath.Join(dir, ".gitmodules"), "[submodule \"declared\"]\n\tpath = declared\n\turl = ./declared\n", 0o644)
	writeMode(t, filepath.Join(dir, "top.txt"), "top\n", 0o644)
	r := mustOpen(t, dir)
	record(t, r)
	run(dir, "add", "lib", "declared", ".gitmodules", "top.txt")
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	tree := rawGit(t, dir, "ls-tree", "-r", "HEAD")
	if strings.Contains(tree, "\tlib\n") {
		t.Errorf("HEAD holds the undeclared gitlink lib:\n%s", tree)
	}
	if !strings.Contains(tree, "160000 commit") || !strings.Contains(tree, "\tdeclared\n") {
		t.Errorf("HEAD lacks the declared submodule's gitlink:\n%s", tree)
	}
	if idx := rawGit(t, dir, "ls-files", "--stage", "lib"); idx != "" {
		t.Errorf("the index still holds lib: %q", idx)
	}
}

// TestGuardedPathsRedirects: the sandbox's read-only list holds the new
// guarded paths, but not HEAD (git checkout writes it).
func TestGuardedPathsRedirects(t *testing.T) {
	dir, _, _ := guardRepo(t)
	got, err := GuardedPaths(dir)
	if err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, ".git")
	for _, want := range []string{"commondir", "info", "objects/info/alternates"} {
		if !slices.Contains(got, filepath.Join(gitDir, want)) {
			t.Errorf("GuardedPaths lacks .git/%s: %q", want, got)
		}
	}
	if slices.Contains(got, filepath.Join(gitDir, "HEAD")) {
		t.Errorf("GuardedPaths holds HEAD: %q", got)
	}
}

// TestGuardObjectsMoved: the commondir attack moves objects/ and refs/
// into the agent's folder; the guard names both and, unable to put them
// back, Restore is a *GitDirGoneError.
func TestGuardObjectsMoved(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	s := record(t, r)
	for _, name := range []string{"objects", "refs"} {
		if err := os.Rename(filepath.Join(dir, ".git", name), filepath.Join(dir, name+"-moved")); err != nil {
			t.Fatal(err)
		}
	}
	changes := mustCheck(t, s)
	for _, want := range []string{".git/objects was removed", ".git/refs was removed"} {
		if !slices.Contains(changes, want) {
			t.Errorf("changes %q lack %q", changes, want)
		}
	}
	var gone *GitDirGoneError
	if err := s.Restore(); !errors.As(err, &gone) {
		t.Fatalf("Restore: %v, want a *GitDirGoneError", err)
	}
}

// TestGitDirs: the folders the sandbox makes read-only as a whole are the
// git directory and, for a linked work tree, the common directory too.
func TestGitDirs(t *testing.T) {
	t.Parallel()
	dir, _, run := guardRepo(t)
	writeMode(t, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	run(dir, "add", "a.txt")
	run(dir, "commit", "-q", "-m", "a")
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := GitDirs(dir)
	if err != nil || !slices.Equal(got, []string{filepath.Join(real, ".git")}) {
		t.Errorf("GitDirs of the main work tree = %q, %v", got, err)
	}
	wt := filepath.Join(t.TempDir(), "linked")
	run(dir, "worktree", "add", "-q", wt)
	got, err = GitDirs(wt)
	if err != nil || !slices.Equal(got, []string{filepath.Join(real, ".git", "worktrees", "linked"), filepath.Join(real, ".git")}) {
		t.Errorf("GitDirs of a linked work tree = %q, %v", got, err)
	}
	if _, err := GitDirs(t.TempDir()); err == nil {
		t.Error("GitDirs of a folder without .git: no error")
	}
}

// TestGuardRemovesReadOnlyPlants: a nested repository, or a hook, in a
// folder the turn made read-only is still removed.
func TestGuardRemovesReadOnlyPlants(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root removes from read-only folders anyway")
	}
	dir, r, run := guardRepo(t)
	s := record(t, r)
	run(dir, "init", "-q", "lib")
	writeMode(t, filepath.Join(dir, ".git/hooks/pre-commit"), plantedHook, 0o755)
	for _, d := range []string{"lib/.git/hooks", "lib/.git", "lib", ".git/hooks"} {
		if err := os.Chmod(filepath.Join(dir, d), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lib/.git", ".git/hooks/pre-commit"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}
