package gitx

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// trustAll moves r's guard clock an hour ahead, so that every guarded
// file looks old enough for its lstat data to vouch for its content: the
// guard then reads a file again only when that data changed.
func trustAll(t *testing.T, r *Repo) {
	t.Helper()
	r.guard.now = func() time.Time { return time.Now().Add(time.Hour) }
}

// ctimeOf is p's change time.
func ctimeOf(t *testing.T, p string) time.Time {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no inode data on this system")
	}
	return changeTime(st)
}

// waitForNextCtime returns once a file written now gets a later change
// time than p has: the file system's clock has moved on, so a write to p
// changes its ctime.
func waitForNextCtime(t *testing.T, p string) {
	t.Helper()
	old := ctimeOf(t, p)
	probe := filepath.Join(t.TempDir(), "probe")
	for {
		if err := os.WriteFile(probe, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if ctimeOf(t, probe).After(old) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// An unchanged file is not read again by Check, nor by the next Record.
func TestGuardReadsOnlyChangedFiles(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	trustAll(t, r)
	s := record(t, r)
	if s.reads == 0 {
		t.Fatal("the first copy read no file")
	}
	if changes := mustCheck(t, s); len(changes) != 0 || s.reads != 0 {
		t.Fatalf("changes %q, %d files read, want none", changes, s.reads)
	}
	next := record(t, r)
	if next.reads != 0 {
		t.Fatalf("the next copy read %d files, want none", next.reads)
	}
	// A changed one is read again, by Check and by the next Record.
	p := filepath.Join(dir, ".git/hooks/pre-commit.sample")
	waitForNextCtime(t, p)
	writeMode(t, p, plantedHook, 0o755)
	if changes := mustCheck(t, next); len(changes) != 1 || next.reads != 1 {
		t.Fatalf("changes %q, %d files read, want the changed hook", changes, next.reads)
	}
	last := record(t, r)
	if last.reads != 1 || string(last.entries[p].data) != plantedHook {
		t.Fatalf("the next copy read %d files and holds %q", last.reads, last.entries[p].data)
	}
}

// A file changed within racyMargin of its reading is always read again:
// a second write in the same tick of the file system's clock would leave
// its lstat data as it was. One changed longer ago is not.
func TestGuardRereadsRecentlyChangedFiles(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	p := filepath.Join(dir, ".git/hooks/pre-commit")
	writeMode(t, p, "#!/bin/sh\n", 0o755)
	margin := racyMarginOf(ctimeOf(t, p).UnixNano())
	for _, c := range []struct {
		after   time.Duration // the reading's time after p's change time
		trusted bool
	}{
		{0, false},
		{margin, false},
		{margin + time.Millisecond, true},
	} {
		r.guard.now = func() time.Time { return ctimeOf(t, p).Add(c.after) }
		r.guard.remember(nil)
		s := record(t, r)
		if e := s.entries[p]; e.kind != kindFile || e.trusted != c.trusted {
			t.Fatalf("read %v after its change: the hook's entry is trusted=%v, want %v", c.after, e.trusted, c.trusted)
		}
		reads := 0
		for _, e := range s.entries {
			if e.kind == kindFile && !e.trusted {
				reads++
			}
		}
		if changes := mustCheck(t, s); len(changes) != 0 || s.reads != reads {
			t.Fatalf("changes %q, %d files read, want the %d untrusted ones", changes, s.reads, reads)
		}
	}
}

// A same-size edit with the modification time set back is caught: the
// write changed the change time, which no program can set back.
func TestGuardCatchesSameSizeEditWithOldMtime(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	trustAll(t, r)
	p := filepath.Join(dir, ".git/hooks/pre-commit.sample")
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	s := record(t, r)
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	evil := []byte(strings.Repeat("#", len(old)-len(plantedHook)) + plantedHook)
	evil[0], evil[1] = '#', '!'
	waitForNextCtime(t, p)
	if err := os.WriteFile(p, evil[:len(old)], 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.Lstat(p); now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) || now.Mode() != fi.Mode() {
		t.Fatalf("the edit changed the size, time or mode: %v %v %v", now.Size(), now.ModTime(), now.Mode())
	}
	changes := mustCheck(t, s)
	if len(changes) != 1 || !strings.Contains(changes[0], ".git/hooks/pre-commit.sample was changed") {
		t.Fatalf("changes %q, want the edited hook", changes)
	}
}

// A file replaced by another of the same size, mode and modification
// time (a rename over it) is caught: it is another inode.
func TestGuardCatchesFileReplacedByRename(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	trustAll(t, r)
	p := filepath.Join(dir, ".git/hooks/pre-push.sample")
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := record(t, r)
	evil := []byte(strings.Repeat("#", len(old)-len(plantedHook)) + plantedHook)
	evil[0], evil[1] = '#', '!'
	tmp := filepath.Join(dir, ".git/hooks/new")
	writeMode(t, tmp, string(evil), fi.Mode().Perm())
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	changes := mustCheck(t, s)
	if len(changes) != 1 || !strings.Contains(changes[0], ".git/hooks/pre-push.sample was changed") {
		t.Fatalf("changes %q, want the replaced hook", changes)
	}
}

func TestRacyMarginOf(t *testing.T) {
	whole := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	if got := racyMarginOf(whole); got != racyMarginCoarse {
		t.Errorf("a ctime in whole seconds: margin %v, want %v", got, racyMarginCoarse)
	}
	if got := racyMarginOf(whole + 1234); got != racyMargin {
		t.Errorf("a ctime with nanoseconds: margin %v, want %v", got, racyMargin)
	}
}
