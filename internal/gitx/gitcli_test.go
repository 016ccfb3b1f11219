package gitx

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// TestSameTreeAsGit builds the same work tree twice, commits one copy
// with gitx and the other with `git add -A && git commit`, and checks that
// both commits have the same tree, through a scripted series of changes.
// It also checks that git reads the index gitx writes: `git status` is
// clean after every gitx commit, and `git fsck` finds nothing wrong.
func TestSameTreeAsGit(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and the executable bit")
	}
	mine, theirs := t.TempDir(), t.TempDir()
	for _, d := range []string{mine, theirs} {
		run(d, "init", "-q")
	}
	r := mustOpen(t, mine)
	steps := sameTreeSteps()
	for i, s := range steps {
		s.apply(t, mine)
		s.apply(t, theirs)
		run(theirs, "add", "-A")
		run(theirs, "commit", "-q", "--allow-empty", "-m", s.name)
		if _, err := r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: i + 1, Summary: s.name, Status: "running"}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkSameTree(t, run, r, mine, theirs, s.name)
	}
	run(mine, "fsck", "--strict", "--no-progress")
	if n := strings.Count(run(mine, "log", "--format=%H"), "\n"); n != len(steps) {
		t.Errorf("git log shows %d commits, want %d", n, len(steps))
	}
	if out := run(mine, "reflog", "--format=%gs"); strings.Count(out, "\ncommit") != len(steps)-1 || !strings.HasPrefix(out, "commit: ") {
		t.Errorf("git reflog:\n%s\nwant one line per commit", out)
	}
	trailers := run(mine, "log", "-1", "--format=%(trailers:key=Grub-Task,valueonly)%(trailers:key=Grub-Iteration,valueonly)")
	if strings.Fields(trailers)[0] != "ab12cd34" || strings.Fields(trailers)[1] != "4" {
		t.Errorf("git reads the trailers as %q", trailers)
	}
}

// treeStep is one step of TestSameTreeAsGit: the changes made to both
// copies of the work tree before they are committed.
type treeStep struct {
	name  string
	files map[string]string
	after map[string]string // written after files
	exec  []string          // made executable
	links map[string]string
}

// sameTreeSteps is TestSameTreeAsGit's script.
func sameTreeSteps() []treeStep {
	return []treeStep{
		{
			name: "initial tree",
			files: map[string]string{
				".gitignore":             "node_modules/\n*.log\n!keep.log\n/build\ndocs/**/*.tmp\n",
				"a.txt":                  "a\n",
				"a.b/c.txt":              "sorts before a/\n",
				"a/b/c.txt":              "deep\n",
				"a-b.txt":                "sorts before a.b\n",
				"keep.log":               "negated\n",
				"x.log":                  "ignored\n",
				"build/out":              "ignored: anchored\n",
				"src/build/keep.go":      "not anchored: kept\n",
				"node_modules/m/i.js":    "ignored\n",
				"docs/a/b/x.tmp":         "ignored by **\n",
				"docs/a/b/x.md":          "kept\n",
				"web/.gitignore":         "dist/\n*.map\n",
				"web/dist/app.js":        "ignored by a nested .gitignore\n",
				"web/app.js.map":         "ignored\n",
				"web/app.js":             "kept\n",
				"web/deep/x.map":         "ignored\n",
				".grub/.gitignore":       harness.Gitignore,
				".grub/ab12cd34/lock":    "pid\n",
				".grub/ab12cd34/turns/1": "x\n",
				".grub/ab12cd34/s.json":  "{}\n",
				"empty.txt":              "",
				"unicode-é.txt":          "é\n",
				"with space.txt":         "s\n",
			},
			exec:  []string{"run.sh"},
			links: map[string]string{"link": "a.txt", "dangling": "missing/target", "dirlink": "src"},
		},
		{
			name: "edits, deletions, a file becoming a folder",
			files: map[string]string{
				"a.txt":             "a changed\n",
				"a/b/c.txt":         "\x00",
				"a-b.txt":           "\x00",
				"empty.txt":         "\x00",
				"node_modules/n.js": "still ignored\n",
				"web/dist/more.js":  "still ignored\n",
				"new/file.txt":      "new\n",
			},
			after: map[string]string{"empty.txt/now-dir": "x\n"},
			exec:  []string{"a.txt"},
			links: map[string]string{"link": "a.b/c.txt"},
		},
		{
			name:  "nothing changed",
			files: map[string]string{},
		},
		{
			name:  "a folder becoming a file, the .gitignore changing",
			files: map[string]string{"new": "\x00", ".gitignore": "*.log\n", "x.log": "still ignored\n"},
			after: map[string]string{"new": "a file now\n", "node_modules/m/i.js": "no longer ignored\n"},
		},
	}
}

// apply makes the step's changes in dir.
func (s treeStep) apply(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, s.files)
	write(t, dir, s.after)
	for _, x := range s.exec {
		p := filepath.Join(dir, x)
		if _, err := os.Stat(p); os.IsNotExist(err) {
			write(t, dir, map[string]string{x: "#!/bin/sh\n"})
		}
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range s.links {
		p := filepath.Join(dir, name)
		_ = os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSameTree checks, after step name, that the HEAD commit gitx made in
// mine has the tree of the one git made in theirs, and that git and gitx
// both see mine clean.
func checkSameTree(t *testing.T, run func(dir string, args ...string) string, r *Repo, mine, theirs, name string) {
	t.Helper()
	want := strings.TrimSpace(run(theirs, "rev-parse", "HEAD^{tree}"))
	got := strings.TrimSpace(run(mine, "rev-parse", "HEAD^{tree}"))
	if got != want {
		t.Errorf("%s: gitx committed tree %s, git committed %s\ngitx:\n%s\ngit:\n%s", name, got, want,
			run(mine, "ls-tree", "-r", "HEAD"), run(theirs, "ls-tree", "-r", "HEAD"))
	}
	if st := run(mine, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("%s: git status after a gitx commit is not clean:\n%s", name, st)
	}
	if dirty, err := r.Dirty(); err != nil || len(dirty) != 0 {
		t.Errorf("%s: Dirty after the commit = %v, %v", name, dirty, err)
	}
}

// TestGitStagedChangesOutsideWorkspaceStayStaged: with a subfolder
// workspace, a change the user staged elsewhere is neither committed nor
// unstaged by a grub commit (git commit --only semantics).
func TestGitStagedChangesOutsideWorkspaceStayStaged(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	dir := t.TempDir()
	run(dir, "init", "-q")
	write(t, dir, map[string]string{"other.txt": "v1\n", "ws/a.txt": "a\n"})
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "initial")
	write(t, dir, map[string]string{"other.txt": "v2\n", "ws/a.txt": "b\n"})
	run(dir, "add", "other.txt")
	r := mustOpen(t, filepath.Join(dir, "ws"))
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if got := run(dir, "show", "HEAD:other.txt"); got != "v1\n" {
		t.Errorf("other.txt in HEAD = %q, want the old content", got)
	}
	if got := run(dir, "show", "HEAD:ws/a.txt"); got != "b\n" {
		t.Errorf("ws/a.txt in HEAD = %q", got)
	}
	if st := run(dir, "status", "--porcelain"); st != "M  other.txt\n" {
		t.Errorf("git status = %q, want other.txt still staged", st)
	}
}

// TestLinkedWorktree: a workspace checked out with `git worktree add`
// commits on its own branch, with the shared object database.
func TestLinkedWorktree(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	primary := t.TempDir()
	run(primary, "init", "-q")
	write(t, primary, map[string]string{"a.txt": "a\n"})
	run(primary, "add", "-A")
	run(primary, "commit", "-q", "-m", "initial")
	wt := filepath.Join(t.TempDir(), "wt")
	run(primary, "worktree", "add", "-q", "-b", "grub-task", wt)
	write(t, wt, map[string]string{"b.txt": "b\n"})
	r := mustOpen(t, wt)
	if dirty, err := r.Dirty(); err != nil || len(dirty) != 1 || dirty[0] != "b.txt" {
		t.Fatalf("Dirty in a linked worktree = %v, %v", dirty, err)
	}
	h := mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "in a worktree", Status: "running"})
	if got := strings.TrimSpace(run(primary, "rev-parse", "grub-task")); got != h {
		t.Errorf("branch grub-task at %s, want %s", got, h)
	}
	if st := run(wt, "status", "--porcelain"); st != "" {
		t.Errorf("git status in the worktree after the commit:\n%s", st)
	}
	if st := run(primary, "status", "--porcelain"); st != "" {
		t.Errorf("git status in the main checkout changed:\n%s", st)
	}
	if hist, err := r.History("ab12cd34"); err != nil || len(hist) != 1 || hist[0].Commit != h[:12] {
		t.Errorf("History in the worktree = %v, %v", hist, err)
	}
}
