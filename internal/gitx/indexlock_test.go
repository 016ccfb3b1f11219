package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grub-dev/grub/internal/proc"
)

// TestCommitRemovesStaleGrubLock: an index.lock that a grub process which
// is gone left behind (kill -9 mid-commit) does not block the next
// commit; one that names a live process, or is not grub's, does.
func TestCommitRemovesStaleGrubLock(t *testing.T) {
	t.Parallel()
	if _, ok := proc.StartTime(os.Getpid()); !ok {
		t.Skip("no process start times on this system")
	}
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	self, _ := proc.StartTime(os.Getpid())
	for _, tc := range []struct {
		name, content string
		stale         bool
	}{
		{"gone", fmt.Sprintf(lockMarker, dead.Process.Pid, 12345, host), true},
		{"pid reused", fmt.Sprintf(lockMarker, os.Getpid(), self+1, host), true},
		{"live", fmt.Sprintf(lockMarker, os.Getpid(), self, host), false},
		{"other host", fmt.Sprintf(lockMarker, dead.Process.Pid, 12345, host+"-elsewhere"), false},
		{"git's", "DIRC\x00\x00\x00\x02", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := initRepo(t)
			write(t, dir, map[string]string{"a.txt": "a\n", ".git/index.lock": tc.content})
			r := mustOpen(t, dir)
			// A held lock makes the commit wait until the deadline; a stale
			// one must not, but the commit itself may be slow on a busy
			// machine (-race), so it gets more time.
			wait := 100 * time.Millisecond
			if tc.stale {
				wait = 30 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			_, err := r.CommitTurn(ctx, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
			_, statErr := os.Stat(filepath.Join(dir, ".git", "index.lock"))
			if tc.stale {
				if err != nil || !os.IsNotExist(statErr) {
					t.Fatalf("CommitTurn over a stale lock: %v; the lock: %v", err, statErr)
				}
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) || statErr != nil {
				t.Fatalf("CommitTurn over a held lock: %v, want the deadline; the lock: %v", err, statErr)
			}
		})
	}
}

// A copy of the index that a grub killed inside writeIndex left in .git
// is removed by the next commit, which holds the lock.
func TestCommitRemovesLeftIndexCopies(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{"a.txt": "one\n"})
	left := filepath.Join(dir, ".git", "grub-index.12345.tmp")
	if err := os.WriteFile(left, []byte("DIRC torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"a.txt": "two\n"})
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "s", Status: "running"})
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the left index copy is still there: %v", err)
	}
}

// Commits that start at once on a lock a killed grub left remove it once:
// at no moment do two of them hold the index lock (removing the stale
// lock and checking it is stale happen under a lock on the git folder, so
// a slow remover cannot take away the live lock a faster one made).
func TestStaleLockRemovedOnceUnderContention(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{"a.txt": "one\n"})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	host, _ := os.Hostname()
	stale := fmt.Sprintf(lockMarker, dead.Process.Pid, 12345, host)
	if !staleMarker(stale) {
		t.Skip("start times cannot be read here: no lock is ever stale")
	}
	w, err := r.openWorkTree()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".git", indexLockFile)
	for round := range 30 {
		if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
			t.Fatal(err)
		}
		var holders atomic.Int32
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				l, err := lockIndex(context.Background(), w.st)
				if err != nil {
					t.Error(err)
					return
				}
				if n := holders.Add(1); n != 1 {
					t.Errorf("round %d: %d commits held the index lock at once", round, n)
				}
				time.Sleep(200 * time.Microsecond)
				holders.Add(-1)
				l.release()
			})
		}
		wg.Wait()
	}
}
