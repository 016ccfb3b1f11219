package controller

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/proc"
)

// fakeReaper counts the calls the controller makes.
type fakeReaper struct {
	mu    sync.Mutex
	ended int
}

func (f *fakeReaper) Descendants() []harness.ProcessRef { return nil }

func (f *fakeReaper) EndOrphans() ([]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended++
	return []int{4242}, nil
}

// TestReaperAfterEveryTurn: the controller asks the reaper to end what
// each turn left twice, before the referee reads the work tree and after
// the verification, and says so.
func TestReaperAfterEveryTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	reaper := &fakeReaper{}
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2"), Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Reaper: reaper})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("run: %v, %v", st.Status, err)
	}
	if reaper.ended != 2*st.CurrentIteration {
		t.Errorf("EndOrphans called %d times for %d turns, want twice a turn", reaper.ended, st.CurrentIteration)
	}
	if !strings.Contains(r.stderr.String(), "turn 1 left 1 process(es) running; ended them before the referee looked: [4242]") ||
		!strings.Contains(r.stderr.String(), "turn 1: init.sh or a verify command left 1 process(es) running; ended them before the commit: [4242]") {
		t.Errorf("progress lacks the reaper's line:\n%s", r.stderr.String())
	}
}

// TestRunEndsProcessesLeftOnRecord: processes a dead runner recorded in
// the lock are ended by the next run if they are still the same process
// (pid and start time); a reused pid is left alone.
func TestRunEndsProcessesLeftOnRecord(t *testing.T) {
	t.Parallel()
	if _, ok := proc.StartTime(os.Getpid()); !ok {
		t.Skip("needs /proc start times (Linux)")
	}
	r := newTask(t, func(st *harness.State) { st.Status = harness.StatusPaused })
	left := exec.Command("sleep", "703")
	kept := exec.Command("sleep", "704")
	for _, c := range []*exec.Cmd{left, kept} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Process.Kill(); _, _ = c.Process.Wait() }()
	}
	leftStart, _ := proc.StartTime(left.Process.Pid)
	keptStart, _ := proc.StartTime(kept.Process.Pid)
	l, err := r.store.LockRunner(r.id)
	if err != nil {
		t.Fatal(err)
	}
	refs := []harness.ProcessRef{{PID: left.Process.Pid, Start: leftStart}, {PID: kept.Process.Pid, Start: keptStart + 1}}
	if err := l.SetProcesses(refs); err != nil {
		t.Fatal(err)
	}
	_ = l.Release()

	if _, err := r.run(context.Background(), "-features 2", harness.LimitChanges{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- left.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorded process was not ended")
	}
	if _, ok := proc.StartTime(kept.Process.Pid); !ok {
		t.Error("a process whose start time differs from the record was ended")
	}
	if info, _, _ := r.store.Holder(r.id); len(info.Processes) != 0 {
		t.Errorf("processes still on record: %v", info.Processes)
	}
	if !strings.Contains(r.stderr.String(), "left behind by a runner that died") {
		t.Errorf("progress does not say it ended them:\n%s", r.stderr.String())
	}
}

// stubbornReaper is a reaper that cannot end what the turn left: a
// process tree that forks faster than it is killed.
type stubbornReaper struct{}

func (stubbornReaper) Descendants() []harness.ProcessRef {
	return []harness.ProcessRef{{PID: 1 << 22, Start: 1}}
}
func (stubbornReaper) EndOrphans() ([]int, error) {
	return []int{1 << 22}, errors.New("orphans kept appearing")
}

// TestTurnFailsWhenProcessesSurvive: when what a turn left cannot be
// ended, the referee does not accept the turn's work: the turn fails and
// no feature is taken as passing.
func TestTurnFailsWhenProcessesSurvive(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxIterations = 3 })
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2"), Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Reaper: stubbornReaper{}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status == harness.StatusComplete || st.FeatureListBaseline != nil && st.FeatureListBaseline.Passing() > 0 {
		t.Errorf("status %s with %v: work accepted although the turn's processes lived on", st.Status, st.FeatureListBaseline)
	}
	if !strings.Contains(st.LastError, "the turn left processes that grub could not end (orphans kept appearing)") {
		t.Errorf("last error %q does not name the processes", st.LastError)
	}
}
