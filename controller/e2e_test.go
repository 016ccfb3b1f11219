//go:build linux

package controller

// End-to-end tests: the agent is a real program (this test binary playing
// the fake agent through the command backend), on the wall clock, so that
// what only real processes show is checked: a hung agent is killed, pause
// --now ends a running program, and the process group a dead runner left
// is ended.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent/backend"
	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/proc/proctest"
	"github.com/grub-dev/grub/loopstate"
)

// The test binary doubles as the fake agent program: with GRUB_FAKEAGENT
// set it runs fakeagent.Main instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("GRUB_FAKEAGENT") == "1" {
		os.Exit(fakeagent.Main())
	}
	os.Exit(m.Run())
}

// fakeCmd is an --agent-cmd running this test binary as the fake agent.
func fakeCmd(t *testing.T, args string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Without atexit_sleep_ms=0 a -race binary sleeps a second at exit.
	return "GRUB_FAKEAGENT=1 GORACE=atexit_sleep_ms=0 " + proc.ShellQuote(exe) + " " + args
}

// runProgram runs the task with the fake agent as a program, on the wall
// clock.
func (r *run) runProgram(ctx context.Context, agentArgs string, lim harness.LimitChanges) (*harness.State, error) {
	return Run(ctx, Options{Store: r.store, TaskID: r.id, Agent: backend.NewCommand(fakeCmd(r.t, agentArgs)),
		Progress: &r.stderr, Limits: lim, Heartbeat: time.Hour, Committer: &r.commits})
}

// planned runs the initializer in-process, leaving the task ready for its
// first execution turn.
func (r *run) planned() {
	r.t.Helper()
	one := 1
	if st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{MaxIterations: &one}); err != nil || st.Phase != harness.PhaseExecution {
		r.t.Fatalf("initializer: %v %v", st, err)
	}
}

func TestTurnTimeoutKillsHungAgent(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxConsecutiveFailures = 1 })
	r.planned()
	timeout, more := int64(1), 10
	st, err := r.runProgram(context.Background(), "-features 2 -plan 2:hang", harness.LimitChanges{TurnTimeoutSeconds: &timeout, MaxIterations: &more})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusFailed || !strings.Contains(st.LastError, "timed out") {
		t.Fatalf("status %s, last error %q", st.Status, st.LastError)
	}
	proctest.WaitGone(t, proctest.WaitPID(t, filepath.Join(r.store.Root, "hang.pid")))
}

func TestPauseNowCancelsTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.planned()
	go func() {
		if proctest.WaitFile(t, filepath.Join(r.store.Root, "hang.pid")) {
			if err := r.store.AppendControl(r.id, harness.ControlRequest{Kind: harness.ControlPauseNow}); err != nil {
				t.Error(err)
			}
		}
	}()
	more := 10
	st, err := r.runProgram(context.Background(), "-features 2 -plan 2:hang", harness.LimitChanges{MaxIterations: &more})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusPaused || st.LastDecision.Status != loopstate.Cancelled {
		t.Fatalf("status %s decision %+v", st.Status, st.LastDecision)
	}
	proctest.WaitGone(t, proctest.WaitPID(t, filepath.Join(r.store.Root, "hang.pid")))
}

func TestRecoveryAfterRunnerDiedMidTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxIterations = 2 })
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.FeatureListBaseline.Passing() != 1 {
		t.Fatalf("setup run: %v %v", st, err)
	}
	// Fake the aftermath of kill -9 during turn 3: state says awaiting, the
	// lock file names the agent's process group, which still runs, and the
	// agent had already finished feature-2 legally.
	orphan := exec.Command("sleep", "300")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	defer orphan.Process.Kill()
	exited := make(chan struct{})
	go func() { orphan.Wait(); close(exited) }()
	host, _ := os.Hostname()
	lockInfo := fmt.Sprintf(`{"pid":999999,"host":%q,"startedAt":"2026-01-01T00:00:00Z","agentPgid":%d}`, host, orphan.Process.Pid)
	if err := os.WriteFile(r.store.Path(r.id, harness.FileLock), []byte(lockInfo), 0o644); err != nil {
		t.Fatal(err)
	}
	st.Status, st.AwaitingTurn, st.CurrentIteration = harness.StatusRunning, true, 3
	st.Limits.MaxIterations = 10
	if err := r.store.SaveState(st); err != nil {
		t.Fatal(err)
	}
	list := *st.FeatureListBaseline
	list.Features = append([]featurelist.Feature(nil), list.Features...)
	ev := "created feature-2.done"
	list.Features[1].Passes, list.Features[1].Evidence = true, &ev
	os.WriteFile(filepath.Join(r.store.Root, "feature-2.done"), nil, 0o644)
	if err := r.store.RestoreFeatureList(r.id, &list); err != nil {
		t.Fatal(err)
	}

	st, err = r.runProgram(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("resume: %v %v %s\n%s", st.Status, err, st.StopReason, r.stderr.String())
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent left by the dead runner was not ended")
	}
	if !strings.Contains(r.log(), "outcome is unknown") {
		t.Errorf("unknown turn not logged:\n%s", r.log())
	}
	prompt, _ := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0004.prompt.md"))
	if !strings.Contains(string(prompt), "unknown") {
		t.Errorf("turn 4's prompt does not mention the unknown turn")
	}
	if st.CurrentIteration != 4 {
		t.Errorf("iteration %d: the verified flip from the dead turn should have been kept, leaving one turn to finish", st.CurrentIteration)
	}
}
