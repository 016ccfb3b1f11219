package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// hashCommitter is a Committer whose commit of turn n has a hash of its
// own, so that a test can tell which commit a hook was told about.
type hashCommitter struct{ recorder }

func turnHash(n int) string { return fmt.Sprintf("%040x", 0xc0de0000+n) }

func (h *hashCommitter) Commit(ctx context.Context, c Commit) (CommitReport, error) {
	rep, err := h.recorder.Commit(ctx, c)
	rep.Hash = turnHash(c.Iteration)
	return rep, err
}

// hookRecord is a hook command that appends its GRUB_ variables to file,
// one run a line.
func hookRecord(file string) string {
	return `printf '%s %s %s %s %s %s\n' "$GRUB_HOOK" "$GRUB_TASK_ID" "$GRUB_ITERATION" "$GRUB_STATUS" "$GRUB_FEATURE" "$GRUB_COMMIT" >> ` + file +
		` && if [ -n "$GRUB_STOP_REASON" ]; then printf 'reason %s\n' "$GRUB_STOP_REASON" >> ` + file + `; fi`
}

func TestHooksGetTheTurnAndItsCommit(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "hooks.log")
	r := newTask(t, func(st *harness.State) {
		st.Hooks = harness.Hooks{OnTurn: hookRecord(file), OnStop: hookRecord(file)}
	})
	var commits hashCommitter
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2"), Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Committer: &commits})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %s %s\n%s", err, st.Status, st.StopReason, r.stderr.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		fmt.Sprintf("on-turn %s 1 running  %s", r.id, turnHash(1)),
		fmt.Sprintf("on-turn %s 2 running feature-1 %s", r.id, turnHash(2)),
		fmt.Sprintf("on-turn %s 3 complete feature-2 %s", r.id, turnHash(3)),
		fmt.Sprintf("on-stop %s 3 complete feature-2 %s", r.id, turnHash(3)),
		"reason " + reasonComplete,
	}, "\n") + "\n"
	if string(b) != want {
		t.Errorf("the hooks saw\n%s\nwant\n%s", b, want)
	}
}

func TestFailingTurnHookPausesTheTask(t *testing.T) {
	t.Parallel()
	hook := `if [ "$GRUB_ITERATION" = 2 ]; then echo 'To origin'; echo ' ! [rejected] HEAD -> grub/x (non-fast-forward)' >&2; exit 1; fi`
	r := newTask(t, func(st *harness.State) { st.Hooks.OnTurn = hook })
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusPaused || st.CurrentIteration != 2 || st.AwaitingTurn {
		t.Fatalf("status %s at %d (%s), want paused after turn 2\n%s", st.Status, st.CurrentIteration, st.StopReason, r.stderr.String())
	}
	for _, want := range []string{"the on-turn hook (" + hook + ") failed after turn 2: exited 1", "[rejected]", "the turn's commit is kept"} {
		if !strings.Contains(st.StopReason, want) {
			t.Errorf("stop reason %q lacks %q", st.StopReason, want)
		}
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("progress lines lack %q:\n%s", want, r.stderr.String())
		}
	}
	if !strings.Contains(r.stderr.String(), "on-turn hook: To origin") {
		t.Errorf("the hook's output is not on the progress lines:\n%s", r.stderr.String())
	}
	if log := r.log(); !strings.Contains(log, "## Hook failed") || !strings.Contains(log, "      To origin\n") || !strings.Contains(log, "non-fast-forward") {
		t.Errorf("the progress log lacks the hook's failure and output:\n%s", log)
	}
	if c := r.commits.last(); c.Iteration != 2 {
		t.Errorf("last commit %+v: turn 2 is committed before its hook runs", c)
	}
	// The next run (the hook now passes) finishes the task.
	st, err = r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("resume: %v %s %s", err, st.Status, st.StopReason)
	}
}

func TestHookTimesOut(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Hooks = harness.Hooks{OnTurn: "echo waiting; sleep 30", TimeoutSeconds: 1} })
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusPaused || st.CurrentIteration != 1 || !strings.Contains(st.StopReason, "timed out after 1s (--hook-timeout): waiting") {
		t.Fatalf("status %s at %d: %s", st.Status, st.CurrentIteration, st.StopReason)
	}
}

func TestHooksEditedWhileRunning(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "hooks.log")
	r := newTask(t, nil)
	a := r.agent("-features 2")
	// A hooks request queued during turn 1 applies from turn 2 on.
	queued := false
	committer := &hookQueueing{recorder: &r.commits, queue: func(c Commit) {
		if c.Iteration == 1 && !queued {
			queued = true
			if err := r.store.AppendControl(r.id, harness.ControlRequest{Kind: harness.ControlHooks, At: time.Now().Add(time.Hour), Hooks: &harness.Hooks{OnTurn: hookRecord(file)}}); err != nil {
				t.Error(err)
			}
		}
	}}
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: a, Clock: r.clock, Progress: &r.stderr, Heartbeat: time.Hour, Committer: committer})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %s", err, st.Status)
	}
	b, _ := os.ReadFile(file)
	if lines := strings.Count(string(b), "\n"); lines != 2 || !strings.HasPrefix(string(b), "on-turn "+r.id+" 2 ") {
		t.Errorf("hook runs:\n%s\nwant turns 2 and 3", b)
	}
	if st.Hooks.OnTurn != hookRecord(file) {
		t.Errorf("hooks in state: %+v\n%s", st.Hooks, r.stderr.String())
	}
	if !strings.Contains(r.log(), "- Hook: on-turn hook none → ") {
		t.Errorf("the edit is not in the log:\n%s", r.log())
	}
}

// hookQueueing is a Committer that lets a test act at each commit.
type hookQueueing struct {
	*recorder
	queue func(Commit)
}

func (h *hookQueueing) Commit(ctx context.Context, c Commit) (CommitReport, error) {
	h.queue(c)
	return h.recorder.Commit(ctx, c)
}

func TestSliceStopsAtTurnBoundaryPaused(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	// Turn 2 takes 6s of a 10s slice; turn 3 hangs and is cut when the
	// slice ends, 4s later: its timeout was clipped to what was left.
	a := r.agent("-features 3 -plan 2:slow,3:hang -sleep 6s")
	var timeouts []time.Duration
	a.OnWait = func(tn agent.Turn) {
		timeouts = append(timeouts, tn.Timeout)
		r.clock.Advance(6 * time.Second)
	}
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: a, Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Committer: &r.commits, Slice: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusPaused || !strings.HasPrefix(st.StopReason, harness.ReasonSliceEnded) || !strings.Contains(st.StopReason, "--for 10s") {
		t.Fatalf("status %s (%s), want paused by the slice\n%s", st.Status, st.StopReason, r.stderr.String())
	}
	if want := []time.Duration{10 * time.Second, 4 * time.Second}; fmt.Sprint(timeouts) != fmt.Sprint(want) {
		t.Errorf("turn timeouts %v, want %v (clipped to what is left of the slice)", timeouts, want)
	}
	if st.CurrentIteration != 3 || st.AwaitingTurn || st.ConsecutiveFailures != 0 {
		t.Errorf("state not clean: iteration %d, awaiting %v, failures %d", st.CurrentIteration, st.AwaitingTurn, st.ConsecutiveFailures)
	}
	if d := st.LastDecision; d.Status != loopstate.Cancelled || !strings.Contains(d.Summary, "slice") {
		t.Errorf("decision %+v", d)
	}
	if c := r.commits.last(); c.Iteration != 3 || c.Status != string(harness.StatusPaused) {
		t.Errorf("last commit %+v, want turn 3 committed paused", c)
	}
	if st.Limits.TimeBudgetSeconds != 0 {
		t.Errorf("the slice is not a limit of the task: %+v", st.Limits)
	}
	// The next run, without a slice, finishes the task.
	st, err = r.run(context.Background(), "-features 3", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("resume: %v %s %s", err, st.Status, st.StopReason)
	}
}

func TestSliceEndsBetweenTurns(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	// The clock passes the slice's end while turn 2 is committed: no turn
	// is cut, and the run stops before turn 3 starts.
	committer := &hookQueueing{recorder: &r.commits, queue: func(c Commit) {
		if c.Iteration == 2 {
			r.clock.Advance(time.Minute)
		}
	}}
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 3"), Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Committer: committer, Slice: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusPaused || st.CurrentIteration != 2 || st.FeatureListBaseline.Passing() != 1 || st.AwaitingTurn {
		t.Fatalf("status %s at %d, %d passing (%s)", st.Status, st.CurrentIteration, st.FeatureListBaseline.Passing(), st.StopReason)
	}
	if !strings.Contains(r.stderr.String(), "paused: the time slice of this run ended (--for 1m)") {
		t.Errorf("progress lines:\n%s", r.stderr.String())
	}
}
