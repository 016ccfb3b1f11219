package harness

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveTask: the task's folder and its private folder go, a task
// another task's files and a file the folder links to stay, and a task a
// runner holds is refused with nothing removed.
func TestRemoveTask(t *testing.T) {
	s := newStore(t)
	a, b := mustCreate(t, s, newState("one")), mustCreate(t, s, newState("two"))
	privA, err := s.PrivateDir(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	privB, err := s.PrivateDir(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "keep.txt")
	if err := os.WriteFile(outside, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), s.Path(a.ID, "spill")); err != nil {
		t.Fatal(err)
	}

	runner, err := s.LockRunner(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if _, err := s.RemoveTask(b.ID); !errors.As(err, &le) {
		t.Fatalf("RemoveTask of a running task = %v, want a *LockedError", err)
	}
	if _, err := os.Stat(s.Path(b.ID, FileState)); err != nil {
		t.Fatalf("the running task lost its state: %v", err)
	}
	runner.Release()

	got, err := s.RemoveTask(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dir != filepath.Join(GrubDirName, a.ID) || got.Private != privA {
		t.Errorf("removed %+v, want %s and %s", got, filepath.Join(GrubDirName, a.ID), privA)
	}
	for _, p := range []string{s.Dir(a.ID), privA} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, p := range []string{outside, s.Path(b.ID, FileState), privB} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	var nf *NotFoundError
	if _, err := s.RemoveTask(a.ID); !errors.As(err, &nf) {
		t.Errorf("removing it again = %v, want a *NotFoundError", err)
	}
}
