package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestMain points HOME and the XDG config at an empty folder and clears the
// git environment, so that no test sees the developer's git identity,
// global excludes or repository.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "gitx-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// initRepo makes an empty repository with go-git in a new folder.
func initRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := git.PlainInit(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// write creates files (path → content) under dir; a content of "\x00"
// deletes the path instead.
func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if content == "\x00" {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustOpen(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return r
}

// committedRepo makes a repository holding files (see write), opens it
// at its top folder and commits the files with InitialCommit.
func committedRepo(t testing.TB, files map[string]string) (string, *Repo) {
	t.Helper()
	dir := initRepo(t)
	write(t, dir, files)
	r := mustOpen(t, dir)
	if _, err := r.InitialCommit(context.Background(), "initial"); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func mustCommit(t testing.TB, r *Repo, turn Turn) string {
	t.Helper()
	c, err := r.CommitTurn(context.Background(), turn)
	if err != nil {
		t.Fatalf("CommitTurn(%+v): %v", turn, err)
	}
	return c.Hash
}

// headFiles lists HEAD's files as path → content (symlinks: "-> target",
// executables get a "(x)" suffix).
func headFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	tree, err := headCommitObject(t, dir).Tree()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = tree.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		if err != nil {
			return err
		}
		switch f.Mode {
		case filemode.Symlink:
			s = "-> " + s
		case filemode.Executable:
			s += "(x)"
		}
		out[f.Name] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func headCommitObject(t testing.TB, dir string) *object.Commit {
	t.Helper()
	g, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := g.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func commitCount(t testing.TB, dir string) int {
	t.Helper()
	g, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := g.Head()
	if err == plumbing.ErrReferenceNotFound {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	iter, err := g.Log(&git.LogOptions{From: ref.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = iter.ForEach(func(*object.Commit) error { n++; return nil })
	return n
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// gitBin returns a runner for the git binary in dir, or skips the test
// when git is not installed.
func gitBin(t testing.TB) func(dir string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("the git binary is not installed")
	}
	return func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-c", "user.name=Git CLI", "-c", "user.email=cli@example.com",
			"-c", "commit.gpgsign=false", "-c", "core.fsmonitor=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// gitCommittedRepo makes a repository holding files (see write) with the
// git binary (run, from gitBin) and commits them.
func gitCommittedRepo(t testing.TB, run func(dir string, args ...string) string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run(dir, "init", "-q")
	write(t, dir, files)
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "initial")
	return dir
}
