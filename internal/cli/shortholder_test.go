package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
)

// holdBriefly takes the task's lock as a short-lived command would and
// releases it after d, in the background.
func (e *testEnv) holdBriefly(id string, d time.Duration) <-chan struct{} {
	e.t.Helper()
	l, err := e.store.Lock(id)
	if err != nil {
		e.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(d)
		l.Release()
	}()
	return done
}

func (e *testEnv) noRequests(id string) {
	e.t.Helper()
	if reqs, err := e.store.PeekControl(id); err != nil || len(reqs) != 0 {
		e.t.Fatalf("control.json holds %+v (%v); want no request: nothing runs the task", reqs, err)
	}
}

// issue 11: an edit made while a short-lived command holds the lock of an
// idle task waits for it and changes state.json; it is not queued as if a
// runner were there, where the next resume would apply it over a later
// edit.
func TestEditWaitsForShortLivedHolder(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	done := e.holdBriefly("0a1b2c3d", 200*time.Millisecond)
	code, _, stderr := e.run("edit", "--max-iter", "50")
	<-done
	if code != 0 || strings.Contains(stderr, "requested") {
		t.Fatalf("edit = %d, %s; want the change made directly", code, stderr)
	}
	e.noRequests("0a1b2c3d")
	if code, _, stderr := e.run("edit", "--max-iter", "60"); code != 0 {
		t.Fatalf("second edit = %d, %s", code, stderr)
	}
	if got := e.state("0a1b2c3d").Limits.MaxIterations; got != 60 {
		t.Fatalf("max iterations %d, want 60", got)
	}
	e.noRequests("0a1b2c3d")
}

// issue 11: a pause of a paused task while a short-lived command holds the
// lock queues nothing (the next resume ended at once, exit 5).
func TestPauseWaitsForShortLivedHolder(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil) // paused
	done := e.holdBriefly("0a1b2c3d", 200*time.Millisecond)
	code, _, stderr := e.run("pause")
	<-done
	if code != 0 || !strings.Contains(stderr, "already paused") {
		t.Fatalf("pause = %d, %s; want already paused", code, stderr)
	}
	e.noRequests("0a1b2c3d")
}

// A short-lived holder that does not let go in time is reported (exit 75)
// as busy, not as a runner, and nothing is queued.
func TestShortLivedHolderThatStays(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	old := harness.ShortHolderWait
	harness.ShortHolderWait = 100 * time.Millisecond
	t.Cleanup(func() { harness.ShortHolderWait = old })
	done := e.holdBriefly("0a1b2c3d", time.Second)
	code, _, stderr := e.run("stop")
	<-done
	if code != ExitLocked || !strings.Contains(stderr, "busy: a short-lived grub command") {
		t.Fatalf("stop = %d, %s; want 75, busy", code, stderr)
	}
	e.noRequests("0a1b2c3d")
	if code, out, _ := e.run("status", "--json"); code != 0 || !strings.Contains(out, `"running": false`) {
		t.Errorf("status after = %d %s", code, out)
	}
}
