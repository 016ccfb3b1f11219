package cli

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// An id resolves to the store of the work tree that holds it; an unknown
// or ambiguous one lists the ids of every work tree.
func TestResolveInStores(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git binary makes the work trees")
	}
	main := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", main, "-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "start")
	home, _ := harness.Open(main)
	wt, err := startWorktree(t.Context(), &strings.Builder{}, home, "ab12cd34")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(main), filepath.Base(main)+".grub-ab12cd34"); wt.Root != want {
		t.Errorf("work tree at %s, want %s", wt.Root, want)
	}
	t.Cleanup(func() { git("worktree", "remove", "--force", wt.Root) })
	for _, c := range []struct {
		s  *harness.Store
		id string
	}{{home, "ab000001"}, {wt, "ab12cd34"}} {
		st := &harness.State{ID: c.id, Goal: "g", Status: harness.StatusPaused, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: "command", Command: "x"}}
		if err := c.s.Create(st); err != nil {
			t.Fatal(err)
		}
	}
	store, id, err := resolveInStores(home, "ab12")
	if err != nil || id != "ab12cd34" || store.Root != wt.Root {
		t.Errorf("resolve ab12: %v %s %v, want the work tree's task", store.Root, id, err)
	}
	if store, id, err = resolveInStores(home, "ab000001"); err != nil || store != home || id != "ab000001" {
		t.Errorf("resolve ab000001: %v %s %v, want the home task", store.Root, id, err)
	}
	var nf *harness.NotFoundError
	if _, _, err = resolveInStores(home, "ab"); !errors.As(err, &nf) || len(nf.Matches) != 2 {
		t.Errorf("resolve ab: %v, want ambiguous between both", err)
	}
	if _, _, err = resolveInStores(home, "ff"); !errors.As(err, &nf) || !strings.Contains(err.Error(), "ab000001, ab12cd34") {
		t.Errorf("resolve ff: %v, want both known ids", err)
	}
	views, _, err := scanViews(home)
	if err != nil || len(views) != 2 {
		t.Fatalf("scanViews: %d views, %v", len(views), err)
	}
	for _, v := range views {
		if inWT := v.State.ID == "ab12cd34"; inWT != (v.Worktree == wt.Root) || inWT != (v.Branch == "grub/ab12cd34") {
			t.Errorf("view of %s: worktree %q branch %q", v.State.ID, v.Worktree, v.Branch)
		}
	}
}
