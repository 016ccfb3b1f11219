package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

const strongTest = "package a\n\nfunc TestStrong(t *testing.T) { t.Fatal(\"strong\") }\n"

// protectedTask is a task protecting **/*_test.go, with two tests in the
// workspace: one at the top, one in a folder.
func protectedTask(t *testing.T) *run {
	t.Helper()
	r := newTask(t, func(st *harness.State) { st.Limits.Protect = []string{"**/*_test.go"} })
	if err := os.MkdirAll(filepath.Join(r.store.Root, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"top_test.go", "pkg/a_test.go"} {
		if err := os.WriteFile(filepath.Join(r.store.Root, p), []byte(strongTest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestProtectedFilesAreRestored plays each attack on a protected test in
// turn 2: the tests are put back as they were (content, mode, a regular
// file with one name), turn 2 fails naming them and its flip is not
// accepted, and the task completes with honest turns.
func TestProtectedFilesAreRestored(t *testing.T) {
	t.Parallel()
	for _, cheat := range []string{"weaken-tests", "rename-tests", "link-tests", "chmod-tests", "recreate-tests", "hardlink-tests"} {
		t.Run(cheat, func(t *testing.T) {
			t.Parallel()
			r := protectedTask(t)
			st, err := r.run(context.Background(), "-features 2 -plan 2:"+cheat, harness.LimitChanges{})
			if err != nil {
				t.Fatal(err, r.stderr.String())
			}
			if st.Status != harness.StatusComplete || st.CurrentIteration != 4 {
				t.Fatalf("status %s after %d turns, want complete after 4 (init, cheat, two honest)\n%s", st.Status, st.CurrentIteration, r.log())
			}
			turns, err := r.store.LoadTurns(r.id)
			if err != nil {
				t.Fatal(err)
			}
			t2 := turns[1]
			if t2.Flipped != "" || len(t2.Findings) == 0 || t2.Findings[0].Kind != harness.FindingIllegalEdit ||
				!strings.Contains(t2.Findings[0].Text, "pkg/a_test.go") || !strings.Contains(t2.Findings[0].Text, "top_test.go") {
				t.Errorf("turn 2 was not failed naming both tests: %+v", t2)
			}
			for _, p := range []string{"top_test.go", "pkg/a_test.go"} {
				path := filepath.Join(r.store.Root, p)
				fi, err := os.Lstat(path)
				if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || links(fi) != 1 {
					t.Fatalf("%s after the turn: %v %v", p, fi, err)
				}
				if b, _ := os.ReadFile(path); string(b) != strongTest {
					t.Errorf("%s holds %q", p, b)
				}
			}
			if cheat == "hardlink-tests" {
				// The other name no longer reaches the protected file.
				if err := os.WriteFile(filepath.Join(r.store.Root, "pkg/a_test.go.alias"), []byte("weak"), 0o644); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(filepath.Join(r.store.Root, "pkg/a_test.go")); string(b) != strongTest {
					t.Errorf("a write through the hard link reached the protected test: %q", b)
				}
			}
		})
	}
}

// TestProtectNewFilesAndOthersAreFine: a turn may add files the patterns
// match and change files they do not; a protected file it leaves alone
// is not read back into anything.
func TestProtectNewFilesAndOthersAreFine(t *testing.T) {
	r := protectedTask(t)
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{st: st, store: r.store}
	set, err := c.snapshotProtected()
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 2 {
		t.Fatalf("snapshot holds %d files, want the 2 tests: %v", len(set), set)
	}
	for p, data := range map[string]string{"pkg/new_test.go": "package a\n", "main.go": "package main\n", "pkg/a.go": "package a\n"} {
		if err := os.WriteFile(filepath.Join(r.store.Root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := &outcome{}
	if changed, err := c.checkProtected(out, set, "during the turn"); err != nil || changed || len(out.failures) > 0 {
		t.Fatalf("changed %v, err %v, failures %v", changed, err, out.failures)
	}
}

// TestProtectFolderSwappedForLink: a folder of protected files replaced
// by a link to a folder elsewhere is made a real folder again and the
// files written there, never through the link.
func TestProtectFolderSwappedForLink(t *testing.T) {
	r := protectedTask(t)
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{st: st, store: r.store}
	set, err := c.snapshotProtected()
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	pkg := filepath.Join(r.store.Root, "pkg")
	if err := os.RemoveAll(pkg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, pkg); err != nil {
		t.Fatal(err)
	}
	out := &outcome{}
	if changed, err := c.checkProtected(out, set, "during the turn"); err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if fi, err := os.Lstat(pkg); err != nil || !fi.IsDir() {
		t.Fatalf("pkg is not a real folder again: %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("grub wrote through the link: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(pkg, "a_test.go")); string(b) != strongTest {
		t.Errorf("pkg/a_test.go holds %q", b)
	}
}

// TestProtectFolderSwappedForLinkToCopy: the folder of a protected test
// replaced by a link to a copy of it (same bytes, one name each) would
// hide the test from the next turn's walk, and a later turn could weaken
// the copy freely: it is a change, and the folder is made real again.
func TestProtectFolderSwappedForLinkToCopy(t *testing.T) {
	r := protectedTask(t)
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{st: st, store: r.store}
	set, err := c.snapshotProtected()
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(r.store.Root, "pkg")
	if err := os.Rename(pkg, filepath.Join(r.store.Root, "copy")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("copy", pkg); err != nil {
		t.Fatal(err)
	}
	out := &outcome{}
	if changed, err := c.checkProtected(out, set, "during the turn"); err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if !strings.Contains(out.failures[0], "pkg/a_test.go is now reached through pkg") {
		t.Errorf("failure: %s", out.failures[0])
	}
	if fi, err := os.Lstat(pkg); err != nil || !fi.IsDir() {
		t.Fatalf("pkg is not a real folder again: %v %v", fi, err)
	}
	if next, err := c.snapshotProtected(); err != nil || next["pkg/a_test.go"].Data == nil {
		t.Errorf("the next turn does not protect pkg/a_test.go (%v): %v", err, next)
	}
}

// TestProtectModeBits: a new mode, setuid included, is a change.
func TestProtectModeBits(t *testing.T) {
	r := protectedTask(t)
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{st: st, store: r.store}
	set, err := c.snapshotProtected()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(r.store.Root, "top_test.go")
	if err := os.Chmod(p, 0o644|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	out := &outcome{}
	if changed, err := c.checkProtected(out, set, "during the turn"); err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if fi, _ := os.Lstat(p); fi.Mode()&modeBits != 0o644 {
		t.Errorf("mode after the restore: %v", fi.Mode())
	}
}

// TestProtectGivenOnResume: globs given to a run (grub resume --protect,
// or an edit's limits) are stored and hold from the next turn.
func TestProtectGivenOnResume(t *testing.T) {
	t.Parallel()
	r := protectedTask(t)
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	st.Limits.Protect = nil
	if err := r.store.SaveState(st); err != nil {
		t.Fatal(err)
	}
	globs := []string{"pkg/**"}
	st, err = r.run(context.Background(), "-features 2 -plan 2:weaken-tests", harness.LimitChanges{Protect: &globs})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if len(st.Limits.Protect) != 1 || st.Limits.Protect[0] != "pkg/**" {
		t.Errorf("stored globs %q", st.Limits.Protect)
	}
	if b, _ := os.ReadFile(filepath.Join(r.store.Root, "pkg/a_test.go")); string(b) != strongTest {
		t.Errorf("pkg/a_test.go holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(r.store.Root, "top_test.go")); string(b) == strongTest {
		t.Error("top_test.go, which pkg/** does not match, was put back")
	}
	if !strings.Contains(r.log(), "pkg/a_test.go was changed") {
		t.Errorf("the log does not name pkg/a_test.go:\n%s", r.log())
	}
}

// TestProtectedFilesAfterACrash: a turn grub did not live to referee
// (killed mid-turn) has its protected files checked by the run that
// recovers it, from the copy kept in the private folder when the turn
// started: the weakened test is put back and the lost turn's entry and
// ledger line name it.
func TestProtectedFilesAfterACrash(t *testing.T) {
	t.Parallel()
	r := protectedTask(t)
	r.plannedInProcess()
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	// What prepareTurn leaves before the agent runs, then the agent's cheat.
	st.CurrentIteration++
	st.AwaitingTurn = true
	c := &Controller{st: st, store: r.store}
	if _, err := c.keepProtected(); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SaveState(st); err != nil {
		t.Fatal(err)
	}
	weak := filepath.Join(r.store.Root, "pkg", "a_test.go")
	if err := os.WriteFile(weak, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(context.Background(), "-features 2", harness.LimitChanges{}); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if b, _ := os.ReadFile(weak); string(b) != strongTest {
		t.Errorf("pkg/a_test.go after the recovery holds %q", b)
	}
	turns, err := r.store.LoadTurns(r.id)
	if err != nil {
		t.Fatal(err)
	}
	var lost *harness.TurnRecord
	for i := range turns {
		if turns[i].Iteration == st.CurrentIteration {
			lost = &turns[i]
		}
	}
	if lost == nil || len(lost.Findings) == 0 || !strings.Contains(lost.Findings[0].Text, "pkg/a_test.go was changed") {
		t.Errorf("the lost turn's line does not name the test: %+v", lost)
	}
}
