//go:build linux

package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestHelperKilledMidCommit is not a test: run by
// TestKillBetweenIndexAndBranch in a child process, it commits and dies
// by SIGKILL (no deferred release) between the index write and the
// branch's move.
func TestHelperKilledMidCommit(t *testing.T) {
	dir := os.Getenv("GRUB_TEST_KILL_DIR")
	if dir == "" {
		t.Skip("helper")
	}
	beforeRefMove = func() error {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("GRUB_TEST_KILL_INITIAL") != "" {
		_, err = r.InitialCommit(context.Background(), "initial")
	} else {
		_, err = r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "s", Status: "running"})
	}
	t.Fatalf("the commit returned (%v) instead of being killed", err)
}

func killMidCommit(t *testing.T, dir string, initial bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKilledMidCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GRUB_TEST_KILL_DIR="+dir)
	if initial {
		cmd.Env = append(cmd.Env, "GRUB_TEST_KILL_INITIAL=1")
	}
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child not killed at the hook: %v\n%s", err, out)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestKillBetweenIndexAndBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip(err)
	}
	for _, mode := range []string{"branch", "detached", "initial"} {
		t.Run(mode, func(t *testing.T) {
			var dir string
			var r *Repo
			var parent plumbing.Hash
			switch mode {
			case "initial":
				dir = initRepo(t)
				write(t, dir, map[string]string{"a.txt": "one\n"})
				r = mustOpen(t, dir)
			default:
				dir, r = committedRepo(t, map[string]string{"a.txt": "one\n"})
				parent = headCommitObject(t, dir).Hash
				if mode == "detached" {
					g, _ := git.PlainOpen(dir)
					if err := g.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, parent)); err != nil {
						t.Fatal(err)
					}
				}
				write(t, dir, map[string]string{"a.txt": "two\n"})
			}
			killMidCommit(t, dir, mode == "initial")
			if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err != nil {
				t.Fatalf("no index.lock after the kill: %v", err)
			}
			// git status in between: the turn shows staged, the branch did not move.
			st := gitOut(t, dir, "status", "--porcelain")
			t.Logf("git status after the kill: %q", st)
			if !strings.HasPrefix(st, "M  a.txt") && !strings.HasPrefix(st, "A  a.txt") {
				t.Errorf("git status after the kill = %q, want a.txt staged only", st)
			}
			// The next commit (grub resume) removes the stale lock and commits.
			var err error
			if mode == "initial" {
				_, err = r.InitialCommit(context.Background(), "initial")
			} else {
				_, err = r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "s", Status: "running"})
			}
			if err != nil {
				t.Fatalf("commit after the kill: %v", err)
			}
			if got := headCommitObject(t, dir); len(got.ParentHashes) > 0 && got.ParentHashes[0] != parent || parent.IsZero() != (len(got.ParentHashes) == 0) {
				t.Errorf("new commit's parents %v, want %v", got.ParentHashes, parent)
			}
			if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status after the recommit = %q, want clean", st)
			}
			if out := gitOut(t, dir, "fsck", "--no-dangling"); strings.TrimSpace(out) != "" {
				t.Errorf("git fsck: %s", out)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, ".git"))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "grub-") {
					t.Logf("left in .git: %s", e.Name())
				}
			}
		})
	}
}
