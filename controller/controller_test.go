package controller

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
	"github.com/grub-dev/grub/loopstate"
)

type run struct {
	t       *testing.T
	store   *harness.Store
	id      string
	clock   *fakeClock
	stderr  bytes.Buffer
	commits recorder
}

// recorder is a Committer that remembers the commits it was asked for.
type recorder struct {
	mu      sync.Mutex
	commits []Commit
	report  CommitReport // what every commit reports
}

func (r *recorder) Commit(_ context.Context, c Commit) (CommitReport, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits = append(r.commits, c)
	return r.report, nil
}

func (r *recorder) Committed(_ context.Context, id string, n int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.commits) - 1; i >= 0; i-- {
		if r.commits[i].TaskID == id {
			return r.commits[i].Iteration >= n, nil
		}
	}
	return false, nil
}

func (r *recorder) last() Commit {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.commits) == 0 {
		return Commit{}
	}
	return r.commits[len(r.commits)-1]
}

func newTask(t *testing.T, mutate func(*harness.State)) *run {
	t.Helper()
	store, err := harness.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store.Private = t.TempDir()
	st := &harness.State{Goal: "make marker files", Locale: "en", Status: harness.StatusRunning,
		Phase: harness.PhaseInitializer, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: harness.AgentCommand}}
	st.Limits.MinFeatures = 2
	st.Limits.InitTimeoutSeconds = 20
	st.Limits.TurnTimeoutSeconds = 60
	if mutate != nil {
		mutate(st)
	}
	if err := store.Create(st); err != nil {
		t.Fatal(err)
	}
	return &run{t: t, store: store, id: st.ID, clock: newFakeClock()}
}

// agent is the in-process fake agent playing agentArgs (its program's
// flags) on the task's fake clock.
func (r *run) agent(agentArgs string) *fakeagent.Agent {
	a, err := fakeagent.New(strings.Fields(agentArgs)...)
	if err != nil {
		r.t.Fatal(err)
	}
	a.After = r.clock.After
	return a
}

// run runs the task with the in-process fake agent playing agentArgs.
func (r *run) run(ctx context.Context, agentArgs string, lim harness.LimitChanges) (*harness.State, error) {
	return r.runAgent(ctx, r.agent(agentArgs), lim)
}

func (r *run) runAgent(ctx context.Context, a agent.Agent, lim harness.LimitChanges) (*harness.State, error) {
	return Run(ctx, Options{Store: r.store, TaskID: r.id, Agent: a, Clock: r.clock,
		Progress: &r.stderr, Limits: lim, Heartbeat: time.Hour, Committer: &r.commits})
}

func (r *run) log() string {
	b, _ := os.ReadFile(r.store.Path(r.id, harness.FileProgressLog))
	return string(b)
}

func TestHonestAgentCompletes(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	st, err := r.run(context.Background(), "-features 3", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete {
		t.Fatalf("status %s (%s), want complete\n%s", st.Status, st.StopReason, r.stderr.String())
	}
	if st.CurrentIteration != 4 || st.FeatureListBaseline.Passing() != 3 {
		t.Fatalf("iteration %d, passing %d", st.CurrentIteration, st.FeatureListBaseline.Passing())
	}
	if n := len(r.commits.commits); n != 4 {
		t.Errorf("%d commits, want one per turn", n)
	}
	if c := r.commits.last(); c.Status != string(harness.StatusComplete) || c.Feature != "feature-3" || c.Summary != "implemented feature-3" {
		t.Errorf("last commit %+v", c)
	}
	if st.AwaitingTurn || st.ConsecutiveFailures != 0 {
		t.Fatalf("state not settled: %+v", st)
	}
	if !strings.Contains(r.log(), "Turn 4") {
		t.Errorf("progress log lacks turn 4:\n%s", r.log())
	}
	if !strings.Contains(r.stderr.String(), "turn 2/25 started") {
		t.Errorf("no progress line: %s", r.stderr.String())
	}
}

func TestRefereeRejectsCheats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		behaviour string
		failure   string
	}{
		{"edit-description", "description"},
		{"add-feature", "bonus"},
		{"two-flips", "flipped"},
		{"flip-no-evidence", "evidence"},
		{"verify-fail", "verify"},
		{"no-loop-state", "loop-state"},
		{"bad-loop-state", "loop-state"},
		{"write-state", "state.json"},
		{"fail", "exited with code 3"},
		{"list-dir", "feature-list.json is a folder, not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			st, err := r.run(context.Background(), "-features 2 -plan 2:"+c.behaviour, harness.LimitChanges{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != harness.StatusComplete {
				t.Fatalf("status %s (%s)", st.Status, st.StopReason)
			}
			if st.CurrentIteration != 4 {
				t.Errorf("iterations = %d, want 4 (init, rejected turn, two honest turns)", st.CurrentIteration)
			}
			log := r.log()
			if !strings.Contains(log, c.failure) {
				t.Errorf("progress log does not name %q:\n%s", c.failure, log)
			}
			if c.behaviour == "fail" && strings.Contains(log, "loop-state") {
				t.Errorf("a turn whose agent failed is not also blamed for its missing loop-state:\n%s", log)
			}
			prompt, err := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0003.prompt.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(prompt), c.failure) {
				t.Errorf("next prompt does not carry the failure %q", c.failure)
			}
		})
	}
}

func TestStopConditions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		args   string
		mutate func(*harness.State)
		want   harness.Status
		reason string
		iters  int
	}{
		{"complete claimed early is downgraded", "-features 2 -plan 2:complete-early", nil, harness.StatusComplete, "every feature passes", 4},
		{"blocked accepted at the limit", "-features 2 -default blocked", nil, harness.StatusBlocked, "API credential", 4},
		{"question stops at once", "-features 2 -plan 2:question", nil, harness.StatusBlocked, "Postgres or SQLite?", 2},
		{"no progress", "-features 2 -default idle", func(st *harness.State) { st.Limits.MaxIterations = 50 }, harness.StatusBlocked, "no progress in 5", 6},
		{"consecutive failures", "-features 2 -default fail", nil, harness.StatusFailed, "3 consecutive failed execution turns", 4},
		{"initializer failures", "-features 2 -default bad-plan", func(st *harness.State) { st.Limits.MaxInitializerFailures = 2 }, harness.StatusFailed, "initializer", 2},
		{"iteration budget", "-features 3", func(st *harness.State) { st.Limits.MaxIterations = 2 }, harness.StatusFailed, "iteration budget spent", 2},
		{"token budget", "-features 3 -usage 1000,200,100", func(st *harness.State) { st.Limits.TokenBudget = 1800 }, harness.StatusBudgetLimited, "token budget spent (1,800 of 1,800", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, c.mutate)
			st, err := r.run(context.Background(), c.args, harness.LimitChanges{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != c.want || !strings.Contains(st.StopReason, c.reason) {
				t.Fatalf("status %s (%q), want %s (%q)\n%s", st.Status, st.StopReason, c.want, c.reason, r.stderr.String())
			}
			if st.CurrentIteration != c.iters {
				t.Errorf("iterations = %d, want %d", st.CurrentIteration, c.iters)
			}
			reloaded, err := r.store.LoadState(r.id)
			if err != nil || reloaded.Status != c.want {
				t.Fatalf("persisted status %v, %v", reloaded, err)
			}
		})
	}
}

func TestInitializerThatDeletesInitScript(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	st, err := r.run(context.Background(), "-features 2 -plan 1:no-init", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %v", st.Status, err)
	}
	if st.CurrentIteration != 4 || !strings.Contains(r.log(), "init.sh was missing or unreadable; grub wrote the starter again") {
		t.Fatalf("iteration %d; log:\n%s", st.CurrentIteration, r.log())
	}
}

func TestIterationBudgetThenResumeCompletes(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxIterations = 2 })
	st, err := r.run(context.Background(), "-features 3", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusFailed {
		t.Fatalf("first run: %v %v", st.Status, err)
	}
	more := 10
	st, err = r.run(context.Background(), "-features 3", harness.LimitChanges{MaxIterations: &more})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("resume: %v %v %s", st.Status, err, st.StopReason)
	}
	if st.CurrentIteration != 4 || st.Limits.MaxIterations != 10 {
		t.Fatalf("counters not kept: iteration %d, max %d", st.CurrentIteration, st.Limits.MaxIterations)
	}
	// The first run stopped cleanly: its last record was all written, so
	// the resume has nothing to finish and says nothing of a crash.
	if strings.Contains(r.stderr.String(), "which a crash interrupted") {
		t.Errorf("a resume after a clean stop reports a crash:\n%s", r.stderr.String())
	}
}

func TestTimeBudgetEndsTask(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.TimeBudgetSeconds = 6 })
	a := r.agent("-features 2 -plan 2:hang")
	var hung agent.Turn
	a.OnWait = func(tn agent.Turn) { hung = tn; r.clock.Advance(6 * time.Second) }
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusBudgetLimited || !strings.Contains(st.StopReason, "time budget") {
		t.Fatalf("status %s (%s)", st.Status, st.StopReason)
	}
	// The agent is told what is left, for the built-in agent's turn context.
	if hung.TimeBudgetLeft != 6*time.Second || hung.Timeout != 6*time.Second || hung.MaxIterations != st.Limits.MaxIterations || hung.MaxIterations == 0 {
		t.Errorf("turn 2 was given time budget left %s, timeout %s, max iterations %d; want 6s, 6s, %d",
			hung.TimeBudgetLeft, hung.Timeout, hung.MaxIterations, st.Limits.MaxIterations)
	}
	if st.ConsecutiveFailures != 0 {
		t.Errorf("a turn cut short by the time budget is not a failure: %d", st.ConsecutiveFailures)
	}
	if c := r.commits.last(); c.Iteration != 2 || c.Status != string(harness.StatusBudgetLimited) {
		t.Errorf("last commit %+v, want turn 2 committed with the final status budget_limited", c)
	}
	if d := st.LastDecision; d.Status != loopstate.Cancelled || d.Summary != "stopped when the time budget ran out" {
		t.Errorf("decision %+v, want the turn cancelled by the time budget", d)
	}
}

func TestSignalLeavesTaskPausedAndResumable(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := r.agent("-features 2 -plan 2:hang")
	a.OnWait = func(agent.Turn) { cancel() }
	st, err := r.runAgent(ctx, a, harness.LimitChanges{})
	if err != ErrInterrupted {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if st.Status != harness.StatusPaused || st.AwaitingTurn || st.LastDecision.Status != loopstate.Cancelled {
		t.Fatalf("state after signal: %s awaiting=%v decision=%+v", st.Status, st.AwaitingTurn, st.LastDecision)
	}
	st, err = r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("resume: %v %v", st.Status, err)
	}
}

func TestControlAtTurnBoundary(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	for _, req := range []harness.ControlRequest{
		{Kind: harness.ControlEdit, Goal: "make better marker files"},
		{Kind: harness.ControlSteer, Message: "prefer small commits"},
		{Kind: harness.ControlStop},
	} {
		if err := r.store.AppendControl(r.id, req); err != nil {
			t.Fatal(err)
		}
	}
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusStopped || st.CurrentIteration != 0 {
		t.Fatalf("status %s after %d turns", st.Status, st.CurrentIteration)
	}
	if st.Goal != "make better marker files" || st.Pending.ObjectiveUpdated == nil || len(st.Pending.Steer) != 1 {
		t.Fatalf("edit/steer not applied: %+v", st.Pending)
	}
	log := r.log()
	if !strings.Contains(log, "Old goal: make marker files") || !strings.Contains(log, "prefer small commits") {
		t.Errorf("log lacks the edit or the guidance:\n%s", log)
	}
}

func TestSecondRunnerIsRefused(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	lock, err := r.store.LockRunner(r.id)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_, err = r.run(context.Background(), "-features 2", harness.LimitChanges{})
	var locked *harness.LockedError
	if !errors.As(err, &locked) || locked.Info.PID != os.Getpid() {
		t.Fatalf("err = %v, want a LockedError naming pid %d", err, os.Getpid())
	}
}

func TestHeartbeatDuringLongTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	var progress syncBuffer
	a := r.agent("-features 2 -plan 2:slow -sleep 1s")
	a.OnWait = func(agent.Turn) { r.clock.Advance(time.Second) }
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Clock: r.clock,
		Agent: a, Progress: &progress, Heartbeat: 100 * time.Millisecond})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %v", st.Status, err)
	}
	out := progress.String()
	if n := strings.Count(out, "still running"); n != 10 {
		t.Errorf("%d heartbeats in a 1s turn at 100ms, want 10:\n%s", n, out)
	}
	for _, want := range []string{"turn 2/25 started: execution, feature feature-1", "turn 2 still running (0s, feature feature-1)",
		"turn 2 still running (1s, feature feature-1)", "turn 2/25 ended after 1s"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A runner that dies during the initializer: the next initializer prompt
// says the files may be half written.
func TestRecoveryDuringInitializer(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) {
		st.AwaitingTurn, st.CurrentIteration = true, 1
	})
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %v", st.Status, err)
	}
	prompt, _ := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0002.prompt.md"))
	if !strings.Contains(string(prompt), "Recovered after an interruption") {
		t.Errorf("the initializer prompt after a crash does not say so:\n%s", prompt)
	}
}

// Notes for the next turn survive a turn that never really ran: guidance
// queued before a turn that pause --now cancels reaches the turn after.
func TestPendingNotesSurviveACancelledTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxIterations = 1 })
	if st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{}); err != nil || st.Phase != harness.PhaseExecution {
		t.Fatalf("setup: %v %v", st, err)
	}
	if err := r.store.AppendControl(r.id, harness.ControlRequest{Kind: harness.ControlSteer, Message: "keep commits small"}); err != nil {
		t.Fatal(err)
	}
	a := r.agent("-features 2 -plan 2:hang")
	a.OnWait = func(agent.Turn) {
		if err := r.store.AppendControl(r.id, harness.ControlRequest{Kind: harness.ControlPauseNow}); err != nil {
			t.Error(err)
		}
	}
	more := 10
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{MaxIterations: &more})
	if err != nil || st.Status != harness.StatusPaused {
		t.Fatalf("%v %v", st.Status, err)
	}
	if len(st.Pending.Steer) != 1 {
		t.Fatalf("pending after the cancelled turn: %+v", st.Pending)
	}
	if st, err = r.run(context.Background(), "-features 2", harness.LimitChanges{}); err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %v", st.Status, err)
	}
	prompt, _ := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0003.prompt.md"))
	if !strings.Contains(string(prompt), "keep commits small") {
		t.Error("the turn after the cancelled one does not carry the guidance")
	}
	next, _ := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0004.prompt.md"))
	if strings.Contains(string(next), "keep commits small") {
		t.Error("guidance delivered twice")
	}
}

func TestLimitsChangedWhileRunningAreLogged(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	more := 40
	if err := r.store.AppendControl(r.id, harness.ControlRequest{Kind: harness.ControlLimits, Limits: &harness.LimitChanges{MaxIterations: &more}}); err != nil {
		t.Fatal(err)
	}
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete || st.Limits.MaxIterations != 40 {
		t.Fatalf("%v %v %d", st.Status, err, st.Limits.MaxIterations)
	}
	if !strings.Contains(r.log(), "- Limit: max iterations 25 → 40") {
		t.Errorf("limits change not logged:\n%s", r.log())
	}
}

// A turn cut short keeps what its requests cost: the backend returns the
// usage it saw with agent.ErrTimeout or the cancellation, and the tokens
// and cost count towards the totals and the budgets.
func TestTimedOutAndCancelledTurnsKeepTheirUsage(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, st *harness.State) {
		t.Helper()
		u := st.Usage
		if u.InputTokens != 2000 || u.CachedInputTokens != 400 || u.OutputTokens != 200 || u.TokensUsed != 1800 || u.Requests != 2 {
			t.Errorf("usage %+v, want both turns' tokens", u)
		}
		if u.CostUSD == nil || *u.CostUSD != 0.25 {
			t.Errorf("cost %v, want both turns' $0.125", u.CostUSD)
		}
	}
	fake := func(r *run) *fakeagent.Agent {
		a := r.agent("-features 2 -plan 2:hang -usage 1000,200,100")
		a.Usage.CostUSD, a.Usage.CostReported = 0.125, true
		return a
	}
	t.Run("timed out", func(t *testing.T) {
		t.Parallel()
		r := newTask(t, func(st *harness.State) { st.Limits.CostBudgetUSD = 0.25 })
		a := fake(r)
		a.OnWait = func(agent.Turn) { r.clock.Advance(61 * time.Second) }
		st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, st)
		if st.ConsecutiveFailures != 1 || !strings.Contains(st.LastError, "timed out") {
			t.Errorf("failures %d, last error %q: want the timed-out turn failed", st.ConsecutiveFailures, st.LastError)
		}
		// The timed-out turn's cost reaches the budget.
		if st.Status != harness.StatusBudgetLimited || st.StopReason != "cost budget spent ($0.25 of $0.25); raise it with grub resume --cost-budget USD" {
			t.Errorf("status %s (%s), want budget_limited by the cost budget", st.Status, st.StopReason)
		}
		if log := r.log(); !strings.Contains(log, "- Usage: 900 tokens (1,000 input, 200 cached, 100 output), 1 request, cost $0.125, 1m1s") {
			t.Errorf("the timed-out turn's entry lacks its usage:\n%s", log)
		}
		if c := r.commits.last(); c.Iteration != 2 || !c.Usage.CostReported || c.Usage.CostUSD != 0.125 {
			t.Errorf("last commit %+v, want turn 2 with its cost", c)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		r := newTask(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		a := fake(r)
		a.OnWait = func(agent.Turn) { cancel() }
		st, err := r.runAgent(ctx, a, harness.LimitChanges{})
		if err != ErrInterrupted {
			t.Fatalf("err = %v, want ErrInterrupted", err)
		}
		check(t, st)
		if st.Status != harness.StatusPaused || st.ConsecutiveFailures != 0 {
			t.Errorf("status %s, failures %d: want paused, no failure", st.Status, st.ConsecutiveFailures)
		}
	})
}

// countingChanges counts the workspace snapshots a run takes.
type countingChanges struct {
	ChangeDetector
	n int
}

func (c *countingChanges) Snapshot() (string, error) {
	c.n++
	return c.ChangeDetector.Snapshot()
}

// A turn starts from the snapshot that ended the last one (one walk of
// the work tree a turn, not two), unless the on-turn hook ran between
// them: what the hook changes is not the next turn's progress.
func TestTurnsShareTheirBoundarySnapshot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hook           string
		snapshots      int
		noProgressTurn int
	}{
		{"", 4, 2},
		{"echo run >> hook.txt", 6, 2},
	} {
		r := newTask(t, func(st *harness.State) { st.Hooks.OnTurn = tc.hook })
		cc := &countingChanges{ChangeDetector: &treeFingerprint{root: r.store.Root}}
		three := 3
		st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2 -plan 2:idle,3:idle"),
			Clock: r.clock, Progress: &r.stderr, Limits: harness.LimitChanges{MaxIterations: &three}, Heartbeat: time.Hour,
			Committer: &r.commits, Changes: cc})
		if err != nil {
			t.Fatal(err, r.stderr.String())
		}
		if st.CurrentIteration != 3 || cc.n != tc.snapshots || st.NoProgressTurns != tc.noProgressTurn {
			t.Errorf("hook %q: %d turns, %d snapshots, %d turns without progress; want 3, %d, %d\n%s",
				tc.hook, st.CurrentIteration, cc.n, st.NoProgressTurns, tc.snapshots, tc.noProgressTurn, r.stderr.String())
		}
	}
}

// A turn without failures clears the last error: status does not show,
// after the task completed, a failure later turns got past (the log and
// the ledger keep it).
func TestSuccessClearsTheLastError(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	st, err := r.run(context.Background(), "-features 2 -plan 2:flip-no-evidence", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete || st.LastError != "" {
		t.Fatalf("status %s, last error %q; want complete with none\n%s", st.Status, st.LastError, r.stderr.String())
	}
	if !strings.Contains(r.log(), "evidence") {
		t.Errorf("the log lost the failed turn:\n%s", r.log())
	}
}
