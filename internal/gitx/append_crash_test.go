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
