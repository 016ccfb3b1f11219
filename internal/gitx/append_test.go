package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// appendRepo is a repository with two commits on main (the mark is the
// second) and its git runner.
func appendRepo(t *testing.T) (dir string, r *Repo, run func(string, ...string) string, mark string) {
	t.Helper()
	run = gitBin(t)
	dir = gitCommittedRepo(t, run, map[string]string{"a.txt": "one\n", "src/lib.go": "package lib\n"})
	run(dir, "branch", "-M", "main")
	write(t, dir, map[string]string{"b.txt": "two\n"})
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "turn")
	mark = strings.TrimSpace(run(dir, "rev-parse", "HEAD"))
	return dir, mustOpen(t, dir), run, mark
}

func mustCheckAppend(t *testing.T, r *Repo, branch, commit string) string {
	t.Helper()
	problem, _, err := r.CheckAppend(branch, commit)
	if err != nil {
		t.Fatal(err)
	}
	return problem
}

// TestCheckAppend: commits on top are fine; every way of taking the mark
// off the branch, or HEAD off the branch, is a problem, packed refs and
// symbolic refs included.
func TestCheckAppend(t *testing.T) {
	cases := []struct {
		name, want string
		do         func(dir string, run func(string, ...string) string)
	}{
		{"on top", "", func(dir string, run func(string, ...string) string) {
			run(dir, "commit", "-q", "--allow-empty", "-m", "more")
		}},
		{"packed refs", "", func(dir string, run func(string, ...string) string) { run(dir, "pack-refs", "--all") }},
		{"reset", "no longer descends", func(dir string, run func(string, ...string) string) { run(dir, "reset", "-q", "--hard", "HEAD~1") }},
		{"amend", "no longer descends", func(dir string, run func(string, ...string) string) {
			run(dir, "commit", "-q", "--amend", "-m", "amended")
		}},
		{"update-ref", "no longer descends", func(dir string, run func(string, ...string) string) {
			run(dir, "update-ref", "refs/heads/main", "HEAD~1")
		}},
		{"packed then reset", "no longer descends", func(dir string, run func(string, ...string) string) {
			run(dir, "pack-refs", "--all")
			run(dir, "update-ref", "refs/heads/main", "HEAD~1")
		}},
		{"other branch", "HEAD is on other instead of main", func(dir string, run func(string, ...string) string) {
			run(dir, "checkout", "-q", "-b", "other")
		}},
		{"renamed", "and main was deleted (or renamed)", func(dir string, run func(string, ...string) string) {
			run(dir, "branch", "-m", "main", "renamed")
		}},
		{"deleted", "the branch main was deleted", func(dir string, run func(string, ...string) string) {
			run(dir, "update-ref", "-d", "refs/heads/main")
		}},
		{"detached", "HEAD was detached", func(dir string, run func(string, ...string) string) {
			run(dir, "checkout", "-q", "--detach")
		}},
		{"symbolic branch", "symbolic ref", func(dir string, run func(string, ...string) string) {
			run(dir, "branch", "other")
			run(dir, "symbolic-ref", "refs/heads/main", "refs/heads/other")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, r, run, mark := appendRepo(t)
			tc.do(dir, run)
			got := mustCheckAppend(t, r, "refs/heads/main", mark)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("CheckAppend = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRestoreHistory puts a reset branch back: branch, HEAD, index and
// tracked files as the mark has them; what the reset left is kept under
// the keep ref; untracked and ignored files and the kept path stay.
func TestRestoreHistory(t *testing.T) {
	dir, r, run, mark := appendRepo(t)
	write(t, dir, map[string]string{".gitignore": "*.log\n", "keep.json": "v1\n"})
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "turn 2")
	mark = strings.TrimSpace(run(dir, "rev-parse", "HEAD"))
	first := strings.TrimSpace(run(dir, "rev-list", "--max-parents=0", "HEAD"))
	write(t, dir, map[string]string{"build.log": "ignored\n", "untracked.txt": "mine\n"})
	run(dir, "reset", "-q", "--hard", first)
	write(t, dir, map[string]string{"keep.json": "grub wrote this\n", "new.txt": "agent\n"})
	run(dir, "add", "new.txt")
	run(dir, "commit", "-q", "-m", "agent")
	agent := strings.TrimSpace(run(dir, "rev-parse", "HEAD"))
	run(dir, "checkout", "-q", "-b", "elsewhere")

	kept, err := r.RestoreHistory(context.Background(), "refs/heads/main", mark, "refs/grub/t/discarded/3", []string{"keep.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0] != "refs/grub/t/discarded/3" {
		t.Fatalf("kept %v", kept)
	}
	if got := strings.TrimSpace(run(dir, "rev-parse", "refs/grub/t/discarded/3")); got != agent {
		t.Fatalf("discarded ref at %s, want %s", got, agent)
	}
	if got := strings.TrimSpace(run(dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Fatalf("HEAD on %s", got)
	}
	if p := mustCheckAppend(t, r, "refs/heads/main", mark); p != "" {
		t.Fatalf("after the restore: %s", p)
	}
	for name, want := range map[string]string{"b.txt": "two\n", "build.log": "ignored\n", "untracked.txt": "mine\n", "keep.json": "grub wrote this\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt, tracked by the agent's commit only, is still there: %v", err)
	}
	if st := run(dir, "status", "--porcelain", "--untracked-files=no"); st != " M keep.json\n" {
		t.Errorf("git status after the restore:\n%s", st)
	}
	// Again (a crash before the refs moved): the keep ref is not doubled.
	if kept, err := r.RestoreHistory(context.Background(), "refs/heads/main", mark, "refs/grub/t/discarded/3", nil); err != nil || len(kept) != 0 {
		t.Fatalf("second restore: %v, %v", kept, err)
	}
}

// TestRestoreHistoryNoWriteThroughLink: a tracked folder the turn made a
// link to a folder outside is made a real folder again; nothing is
// written outside.
func TestRestoreHistoryNoWriteThroughLink(t *testing.T) {
	dir, r, run, mark := appendRepo(t)
	outside := t.TempDir()
	run(dir, "update-ref", "refs/heads/main", "HEAD~1")
	if err := os.RemoveAll(filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RestoreHistory(context.Background(), "refs/heads/main", mark, "refs/grub/t/discarded/2", nil); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the restore wrote through the link: %v", ents)
	}
	fi, err := os.Lstat(filepath.Join(dir, "src"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("src is not a folder again: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "src", "lib.go")); string(got) != "package lib\n" {
		t.Fatalf("src/lib.go = %q", got)
	}
}

// TestRestoreHistorySymbolicBranch: a branch made a symbolic ref is a
// plain ref at the mark again.
func TestRestoreHistorySymbolicBranch(t *testing.T) {
	dir, r, run, mark := appendRepo(t)
	run(dir, "branch", "other", "HEAD~1")
	run(dir, "symbolic-ref", "refs/heads/main", "refs/heads/other")
	if _, err := r.RestoreHistory(context.Background(), "refs/heads/main", mark, "refs/grub/t/discarded/2", nil); err != nil {
		t.Fatal(err)
	}
	if p := mustCheckAppend(t, r, "refs/heads/main", mark); p != "" {
		t.Fatalf("after the restore: %s", p)
	}
}

// TestTurnCommittedNotByTrailers: a commit with grub's trailers whose
// state.json is not the one grub wrote is not grub's commit.
func TestTurnCommittedNotByTrailers(t *testing.T) {
	dir, r, run, _ := appendRepo(t)
	write(t, dir, map[string]string{".grub/abcd0123/state.json": "{\"agent\":1}\n"})
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "grub(abcd0123) #3 f: forged\n\nGrub-Task: abcd0123\nGrub-Iteration: 3\n")
	ok, err := r.TurnCommitted("abcd0123", 3, ".grub/abcd0123/state.json", []byte("{\"grub\":1}\n"))
	if err != nil || ok {
		t.Fatalf("TurnCommitted on a forged commit = %v, %v", ok, err)
	}
	ok, err = r.TurnCommitted("abcd0123", 3, ".grub/abcd0123/state.json", []byte("{\"agent\":1}\n"))
	if err != nil || !ok {
		t.Fatalf("TurnCommitted on the commit holding the state = %v, %v", ok, err)
	}
}
