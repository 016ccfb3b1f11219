package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestRestoreHistoryAfterCrashMidway: grub dies in RestoreHistory after
// it kept the departed commit and wrote the files and the index, before
// the branch and HEAD moved (played by running only those steps). The
// departure is still there for the next check, and the restore run again
// finishes it: the keep ref is neither doubled nor moved, and HEAD, the
// branch and the files are the mark's.
func TestRestoreHistoryAfterCrashMidway(t *testing.T) {
	for _, cheat := range []string{"reset", "checkout -b"} {
		t.Run(cheat, func(t *testing.T) {
			dir, r, run, mark := appendRepo(t)
			first := strings.TrimSpace(run(dir, "rev-list", "--max-parents=0", "HEAD"))
			if cheat == "reset" {
				run(dir, "reset", "-q", "--hard", first)
			} else {
				run(dir, "checkout", "-q", "-b", "other", first)
			}
			write(t, dir, map[string]string{"agent.txt": "agent\n"})
			run(dir, "add", "-A")
			run(dir, "commit", "-q", "-m", "agent")
			agent := strings.TrimSpace(run(dir, "rev-parse", "HEAD"))
			const keep = "refs/grub/t/discarded/3"

			// The first steps of RestoreHistory, then the crash.
			g, st, err := r.open()
			if err != nil {
				t.Fatal(err)
			}
			head, err := readHead(g)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := keepDeparted(g, st, head, "refs/heads/main", plumbing.NewHash(mark), keep); err != nil {
				t.Fatal(err)
			}
			c, err := object.GetCommit(st, plumbing.NewHash(mark))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.restoreTree(context.Background(), st, c, nil); err != nil {
				t.Fatal(err)
			}
			if p := mustCheckAppend(t, r, "refs/heads/main", mark); p == "" {
				t.Fatal("after the crash the departure is no longer seen: the next run would not finish the restore")
			}

			kept, err := r.RestoreHistory(context.Background(), "refs/heads/main", mark, keep, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(kept) != 1 || kept[0] != keep {
				t.Fatalf("kept %v, want [%s]", kept, keep)
			}
			if got := strings.TrimSpace(run(dir, "rev-parse", keep)); got != agent {
				t.Fatalf("%s at %s, want the agent's commit %s", keep, got, agent)
			}
			if refs := run(dir, "for-each-ref", "--format=%(refname)", "refs/grub/"); strings.TrimSpace(refs) != keep {
				t.Fatalf("refs under refs/grub/: %q", refs)
			}
			if p := mustCheckAppend(t, r, "refs/heads/main", mark); p != "" {
				t.Fatalf("after the second restore: %s", p)
			}
			if got := strings.TrimSpace(run(dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
				t.Fatalf("HEAD on %s", got)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "b.txt")); err != nil || string(got) != "two\n" {
				t.Fatalf("b.txt = %q, %v", got, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "agent.txt")); !os.IsNotExist(err) {
				t.Fatalf("agent.txt, tracked only by the agent's commit, is still there: %v", err)
			}
			if st := run(dir, "status", "--porcelain"); st != "" {
				t.Fatalf("git status after the restore:\n%s", st)
			}
		})
	}
}

// TestCheckAppendShallowClone: in a shallow clone (a CI checkout), a
// reset below grub's last turn commit is a departure grub names and puts
// back, not an error on the missing parent at the clone's boundary (go-git's
// IsAncestor: "object not found", which stopped the run).
func TestCheckAppendShallowClone(t *testing.T) {
	run := gitBin(t)
	src := gitCommittedRepo(t, run, map[string]string{"a.txt": "1\n"})
	run(src, "branch", "-M", "main")
	for i := range 4 {
		write(t, src, map[string]string{"a.txt": strings.Repeat("x", i+2) + "\n"})
		run(src, "commit", "-qam", "turn")
	}
	clone := t.TempDir()
	run(clone, "clone", "-q", "--depth", "2", "file://"+src, ".")
	mark := strings.TrimSpace(run(clone, "rev-parse", "HEAD"))
	r := mustOpen(t, clone)
	// Commits on top are fine, as in a full clone.
	write(t, clone, map[string]string{"b.txt": "agent\n"})
	run(clone, "add", "-A")
	run(clone, "commit", "-q", "-m", "agent")
	if p := mustCheckAppend(t, r, "refs/heads/main", mark); p != "" {
		t.Fatalf("a commit on top: %s", p)
	}
	run(clone, "reset", "-q", "--hard", "HEAD~2") // the boundary commit
	if p := mustCheckAppend(t, r, "refs/heads/main", mark); !strings.Contains(p, "no longer descends") {
		t.Fatalf("reset in a shallow clone: %q", p)
	}
	if _, err := r.RestoreHistory(context.Background(), "refs/heads/main", mark, "refs/grub/t/discarded/3", nil); err != nil {
		t.Fatal(err)
	}
	if p := mustCheckAppend(t, r, "refs/heads/main", mark); p != "" {
		t.Fatalf("after the restore: %s", p)
	}
	if h, err := r.HiddenHistory(mark); err != nil || h.Problem() != "" {
		t.Fatalf("the clone's own shallow boundary: %q, %v", h.Problem(), err)
	}
}
