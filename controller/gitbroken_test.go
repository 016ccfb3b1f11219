package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
)

// goneError is a guard's error for a git directory it cannot restore: it
// has the GitDirBroken method internal/gitx's GitDirGoneError has.
type goneError struct{}

func (goneError) Error() string { return ".git was removed or replaced; grub cannot restore it" }
func (goneError) GitDirBroken() {}

// brokenGuard reports a change on every check, and its Restore fails
// with restoreErr.
type brokenGuard struct{ restoreErr error }

type brokenCopy struct{ restoreErr error }

func (g brokenGuard) Record() (GitSnapshot, error)     { return brokenCopy(g), nil }
func (g brokenGuard) Load([]byte) (GitSnapshot, error) { return brokenCopy(g), nil }
func (c brokenCopy) Check() ([]string, error)          { return []string{".git was removed"}, nil }
func (c brokenCopy) Restore() error                    { return c.restoreErr }
func (c brokenCopy) Encode() ([]byte, error)           { return []byte("{}"), nil }

// TestGitDirBrokenLeavesTaskFailed: a turn that removes .git beyond what
// the guard restores stops the run with an error saying what to do, and
// the task on disk is failed with that reason, never running (issue 18:
// rm -rf .git left the task running with no runner). Any other machinery
// error in a turn leaves it failed too.
func TestGitDirBrokenLeavesTaskFailed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		restoreErr error
		reason     string
	}{
		{"git directory gone", goneError{}, "restore .git (from a backup, or a fresh clone's .git)"},
		{"another error", errors.New("disk on fire"), "grub stopped on an error in turn 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			_, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2"), Clock: r.clock,
				Progress: &r.stderr, Heartbeat: time.Hour, GitGuard: brokenGuard{c.restoreErr}})
			if err == nil || !strings.Contains(err.Error(), "is left failed") {
				t.Fatalf("Run: %v, want an error saying the task is left failed", err)
			}
			st, lerr := r.store.LoadState(r.id)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if st.Status != harness.StatusFailed || !strings.Contains(st.StopReason, c.reason) || !strings.Contains(st.StopReason, "grub resume "+r.id) {
				t.Errorf("state %s, stop reason %q; want failed with %q", st.Status, st.StopReason, c.reason)
			}
			if !st.AwaitingTurn {
				t.Error("the turn is no longer awaiting: a resume would not record it")
			}
		})
	}
}
