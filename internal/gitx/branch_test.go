package gitx

import (
	"errors"
	"strings"
	"testing"
)

// TestSwitchNewBranch: the new branch starts at HEAD's commit with HEAD on
// it, git sees the same work tree and index (an uncommitted change stays
// uncommitted), and a branch that exists is refused.
func TestSwitchNewBranch(t *testing.T) {
	dir, r, run, mark := appendRepo(t)
	write(t, dir, map[string]string{"a.txt": "changed\n"})
	from, err := r.SwitchNewBranch("grub/0a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	if from.Branch != "refs/heads/main" || from.Commit != mark {
		t.Errorf("from = %+v, want main at %s", from, mark)
	}
	if got := strings.TrimSpace(run(dir, "symbolic-ref", "HEAD")); got != "refs/heads/grub/0a1b2c3d" {
		t.Errorf("HEAD = %q", got)
	}
	if got := strings.TrimSpace(run(dir, "rev-parse", "grub/0a1b2c3d")); got != mark {
		t.Errorf("grub/0a1b2c3d at %s, want %s", got, mark)
	}
	if got := strings.TrimSpace(run(dir, "status", "--porcelain")); got != "M a.txt" {
		t.Errorf("git status = %q, want the change to a.txt alone", got)
	}
	if _, err := r.SwitchNewBranch("main"); !errors.Is(err, ErrBranchExists) {
		t.Errorf("SwitchNewBranch(main) = %v, want ErrBranchExists", err)
	}
	if _, err := r.SwitchNewBranch("bad..name"); err == nil {
		t.Error("SwitchNewBranch(bad..name) = nil, want an error")
	}
}
