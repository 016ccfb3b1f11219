package controller

import (
	"context"
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
// each turn left, and says so.
func TestReaperAfterEveryTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	reaper := &fakeReaper{}
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2"), Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Reaper: reaper})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("run: %v, %v", st.Status, err)
	}
	if reaper.ended != st.CurrentIteration {
		t.Errorf("EndOrphans called %d times for %d turns", reaper.ended, st.CurrentIteration)
	}
	if !strings.Contains(r.stderr.String(), "turn 1 left 1 process(es) running; ended them: [4242]") {
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
