package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

// testEnv is a workspace in a temporary folder and a fixed clock.
type testEnv struct {
	t        *testing.T
	root     string
	home     string // HOME: the trusted files live under it
	xdgState string // $XDG_STATE_HOME: grub's private folder is its grub/
	store    *harness.Store
	now      time.Time
}

// getenv is the environment the commands under test see: HOME (the
// trusted files) and XDG_STATE_HOME (grub's private folder) only.
func (e *testEnv) getenv(k string) string {
	switch k {
	case "HOME":
		return e.home
	case "XDG_STATE_HOME":
		return e.xdgState
	}
	return ""
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	root := t.TempDir()
	store, err := harness.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, root: root, home: t.TempDir(), xdgState: t.TempDir(), store: store, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	store.Private = harness.PrivateRoot(e.getenv)
	return e
}

// plant creates a task as a clone or a copied folder brings one: with no
// trust record of this user's grub.
func (e *testEnv) plant(id string, age time.Duration, edit func(*harness.State)) *harness.State {
	e.t.Helper()
	st := e.task(id, age, edit)
	if err := e.store.UntrustTask(id); err != nil {
		e.t.Fatal(err)
	}
	return st
}

// task creates a task updated `age` before the clock's now; edit adjusts
// the state before it is written.
func (e *testEnv) task(id string, age time.Duration, edit func(*harness.State)) *harness.State {
	e.t.Helper()
	st := &harness.State{
		ID:        id,
		Goal:      "add OAuth login to the API",
		Status:    harness.StatusPaused,
		Phase:     harness.PhaseExecution,
		CreatedAt: e.now.Add(-age - time.Hour),
		UpdatedAt: e.now.Add(-age),
		Limits:    harness.DefaultLimits(),
		Agent:     harness.Agent{Kind: "openai", Model: "gpt-test"},
	}
	if edit != nil {
		edit(st)
	}
	if err := e.store.Create(st); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.TrustTask(st); err != nil { // as grub start does
		e.t.Fatal(err)
	}
	return st
}

// run runs grub in the workspace and returns the exit code and output.
func (e *testEnv) run(args ...string) (code int, stdout, stderr string) {
	ios, _, out, errOut := TestIOStreams()
	f := NewFactory(ios)
	f.Now = func() time.Time { return e.now }
	f.Getenv = e.getenv
	code = execute(context.Background(), f, append([]string{"-C", e.root}, args...))
	return code, out.String(), errOut.String()
}

func (e *testEnv) state(id string) *harness.State {
	e.t.Helper()
	st, err := e.store.LoadState(id)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func (e *testEnv) stateBytes(id string) []byte {
	e.t.Helper()
	data, err := os.ReadFile(e.store.Path(id, harness.FileState))
	if err != nil {
		e.t.Fatal(err)
	}
	return data
}

// lock holds the task's lock as a running controller would; flock locks
// belong to the open file, so the commands under test see it held.
func (e *testEnv) lock(id string) {
	e.t.Helper()
	l, err := e.store.LockRunner(id)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := l.Release(); err != nil {
			e.t.Error(err)
		}
	})
}

func feature(id string, passes bool) featurelist.Feature {
	f := featurelist.Feature{ID: id, Category: "functional", Description: id + " works", Steps: []string{"try " + id}, Passes: passes}
	if passes {
		ev := "go test ./... passes"
		f.Evidence = &ev
	}
	return f
}

func TestStatusText(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", 5*time.Minute, func(st *harness.State) {
		st.CurrentIteration = 7
		st.Limits.TokenBudget = 2_000_000
		st.Limits.TimeBudgetSeconds = 3 * 3600
		st.Usage = harness.Usage{InputTokens: 1_300_000, CachedInputTokens: 100_000, OutputTokens: 34_567, TokensUsed: 1_234_567, TimeUsedSeconds: 4320, Requests: 40}
		st.LastDecision = &harness.Decision{Decision: loopstate.Decision{Status: loopstate.Continue, Summary: "implemented the callback", NextStep: "add the cookie", Feature: "oauth-callback"}, Iteration: 7}
		st.LastError = "verify of login-form exited 1"
		st.StopReason = "paused by user"
		st.Sandbox = harness.Sandbox{Mode: "off", NoNetwork: false, PassEnv: []string{"GH_TOKEN"}}
	})
	list := &featurelist.List{Version: 1, Goal: "add OAuth login to the API",
		Features: []featurelist.Feature{feature("login-form", true), feature("oauth-callback", true), feature("session-cookie", false)}}
	if err := e.store.SaveFeatureList("0a1b2c3d", list); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := e.run("status")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := `task         0a1b2c3d
goal         add OAuth login to the API
status       paused
phase        execution
iteration    7 of 25
features     2/3 passing, next: session-cookie
rechecks     3 other passing feature(s) checked again each turn, least recently checked first
tokens       1,234,567 of 2,000,000 (61%)
cost         not reported
time         1h12m of 3h (40%)
sandbox      off (--sandbox), passing GH_TOKEN
last turn    #7 continue [oauth-callback]: implemented the callback
next step    add the cookie
last error   verify of login-form exited 1
stop reason  paused by user
what next    grub resume 0a1b2c3d    (carry on where it paused)
updated      2026-03-01 11:55:00 UTC (5m ago)
harness      .grub/0a1b2c3d
`
	if out != want {
		t.Errorf("status printed\n%s\nwant\n%s", out, want)
	}
}

func TestStatusFeatureListFallsBackToBaseline(t *testing.T) {
	e := newTestEnv(t)
	baseline := &featurelist.List{Version: 1, Goal: "g", Features: []featurelist.Feature{feature("one", true), feature("two", false)}}
	e.task("0a1b2c3d", time.Minute, func(st *harness.State) { st.FeatureListBaseline = baseline })
	// The agent is halfway through rewriting the list.
	if err := os.WriteFile(e.store.Path("0a1b2c3d", harness.FileFeatureList), []byte(`{"version": 1, "goal": "g", "features": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "features     1/2 passing, next: two\n") {
		t.Errorf("status did not count the baseline:\n%s", out)
	}
	if !strings.Contains(errOut, "warning: .grub/0a1b2c3d/feature-list.json") || !strings.Contains(errOut, "counting the last accepted list") {
		t.Errorf("stderr %q lacks the warning", errOut)
	}
}

func TestStatusRunner(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Minute, func(st *harness.State) { st.Status = harness.StatusRunning })

	code, out, _ := e.run("status", "--exit-status")
	if code != ExitFailed {
		t.Errorf("interrupted task: exit %d, want 1", code)
	}
	if !strings.Contains(out, "status       running (no runner: interrupted, run grub resume)\n") {
		t.Errorf("interrupted task:\n%s", out)
	}

	e.lock("0a1b2c3d")
	code, out, _ = e.run("status", "--exit-status")
	if code != ExitLocked {
		t.Errorf("running task: exit %d, want 75", code)
	}
	if want := fmt.Sprintf("status       running (runner: pid %d on ", os.Getpid()); !strings.Contains(out, want) {
		t.Errorf("running task: no %q in\n%s", want, out)
	}
	code, out, _ = e.run("status", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	if err := schemas.Validate(schemas.StatusOutput, "stdout", []byte(out)); err != nil {
		t.Error(err)
	}
	if !strings.Contains(out, fmt.Sprintf(`"pid": %d`, os.Getpid())) || !strings.Contains(out, `"running": true`) {
		t.Errorf("--json lacks the runner:\n%s", out)
	}
}

func TestListOrderAndJSON(t *testing.T) {
	e := newTestEnv(t)
	e.task("11111111", 3*time.Hour, func(st *harness.State) { st.Goal = "oldest" })
	e.task("22222222", time.Minute, func(st *harness.State) { st.Goal = "newest"; st.Status = harness.StatusRunning })
	e.task("33333333", time.Hour, func(st *harness.State) { st.Goal = "middle"; st.Status = harness.StatusBlocked })

	code, out, errOut := e.run("list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `ID        STATUS               ITER  FEATURES  UPDATED  GOAL
22222222  running (no runner)  0/25  -         1m ago   newest
33333333  blocked              0/25  -         1h ago   middle
11111111  paused               0/25  -         3h ago   oldest
`
	if out != want {
		t.Errorf("list printed\n%s\nwant\n%s", out, want)
	}

	_, out, _ = e.run("list", "--json")
	if err := schemas.Validate(schemas.ListOutput, "stdout", []byte(out)); err != nil {
		t.Fatal(err)
	}
	i1, i2, i3 := strings.Index(out, "22222222"), strings.Index(out, "33333333"), strings.Index(out, "11111111")
	if i1 < 0 || i1 > i2 || i2 > i3 {
		t.Errorf("--json is not newest first:\n%s", out)
	}
}

func TestPauseStopIdle(t *testing.T) {
	tests := []struct {
		cmd        []string
		from       harness.Status
		want       harness.Status
		wantReason string
		wantMsg    string
	}{
		{[]string{"pause"}, harness.StatusRunning, harness.StatusPaused, "paused by user", "paused task 0a1b2c3d (its runner had stopped)"},
		{[]string{"pause", "--now"}, harness.StatusRunning, harness.StatusPaused, "paused by user", "paused task 0a1b2c3d"},
		{[]string{"pause"}, harness.StatusPaused, harness.StatusPaused, "", "task 0a1b2c3d is already paused"},
		{[]string{"pause"}, harness.StatusBlocked, harness.StatusBlocked, "", "task 0a1b2c3d is not running (status blocked); nothing to pause"},
		{[]string{"stop"}, harness.StatusRunning, harness.StatusStopped, "stopped by user", "stopped task 0a1b2c3d (it was running)"},
		{[]string{"stop"}, harness.StatusBudgetLimited, harness.StatusStopped, "stopped by user", "stopped task 0a1b2c3d (it was budget_limited)"},
		{[]string{"stop"}, harness.StatusStopped, harness.StatusStopped, "", "task 0a1b2c3d is already stopped"},
		{[]string{"stop"}, harness.StatusComplete, harness.StatusComplete, "", "task 0a1b2c3d is complete; nothing to stop"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s from %s", strings.Join(tt.cmd, " "), tt.from), func(t *testing.T) {
			e := newTestEnv(t)
			e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Status = tt.from })
			before := e.stateBytes("0a1b2c3d")
			code, out, errOut := e.run(tt.cmd...)
			if code != 0 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if !strings.Contains(errOut, tt.wantMsg) {
				t.Errorf("stderr %q lacks %q", errOut, tt.wantMsg)
			}
			st := e.state("0a1b2c3d")
			if st.Status != tt.want || st.StopReason != tt.wantReason {
				t.Errorf("status %s (%q), want %s (%q)", st.Status, st.StopReason, tt.want, tt.wantReason)
			}
			if tt.from == tt.want && !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
				t.Error("state.json was rewritten although nothing changed")
			}
			if tt.from != tt.want && !st.UpdatedAt.Equal(e.now) {
				t.Errorf("updatedAt %v, want the clock's %v", st.UpdatedAt, e.now)
			}
			if _, err := os.Stat(e.store.Path("0a1b2c3d", harness.FileControl)); err == nil {
				t.Error("control.json written for an idle task")
			}
		})
	}
}

func TestEditIdle(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.CurrentIteration = 7 })

	code, _, errOut := e.run("edit", "--goal", "add OAuth login, GitHub only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st := e.state("0a1b2c3d")
	if st.Goal != "add OAuth login, GitHub only" {
		t.Errorf("goal %q", st.Goal)
	}
	if p := st.Pending.ObjectiveUpdated; p == nil || p.Old != "add OAuth login to the API" || p.New != st.Goal {
		t.Errorf("pending objective %+v", p)
	}
	log, err := os.ReadFile(e.store.Path("0a1b2c3d", harness.FileProgressLog))
	if err != nil {
		t.Fatal(err)
	}
	wantEntry := "\n## Edited by the user\n\n- At: 2026-03-01T12:00:00Z\n- Old goal: add OAuth login to the API\n- New goal: add OAuth login, GitHub only\n"
	if !strings.HasSuffix(string(log), wantEntry) {
		t.Errorf("progress log ends\n%s\nwant the entry\n%s", log, wantEntry)
	}

	// Editing back to the goal the agent last saw drops the note.
	if code, _, errOut := e.run("edit", "0a1b2c3d", "--goal", "add OAuth login to the API"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if p := e.state("0a1b2c3d").Pending.ObjectiveUpdated; p != nil {
		t.Errorf("pending objective %+v after editing back", p)
	}

	// Limits.
	code, _, errOut = e.run("edit", "--max-iter", "5", "--time-budget", "45m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st = e.state("0a1b2c3d")
	if st.Limits.MaxIterations != 5 || st.Limits.TimeBudgetSeconds != 45*60 || st.Limits.MaxConsecutiveFailures != 3 {
		t.Errorf("limits %+v", st.Limits)
	}
	for _, want := range []string{"task 0a1b2c3d: max iterations 25 → 5", "task 0a1b2c3d: time budget none → 45m", "note: task 0a1b2c3d has already run 7 iterations"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}

	// The same limits again change nothing.
	before := e.stateBytes("0a1b2c3d")
	code, _, errOut = e.run("edit", "--max-iter", "5")
	if code != 0 || !strings.Contains(errOut, "already has these settings; nothing changed") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
		t.Error("state.json rewritten")
	}
}

func TestEditCompleteTaskIsRefused(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Status = harness.StatusComplete })
	before := e.stateBytes("0a1b2c3d")
	code, _, errOut := e.run("edit", "--max-iter", "50")
	if code != ExitUsage || !strings.Contains(errOut, "task 0a1b2c3d is complete") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
		t.Error("state.json rewritten")
	}
}

func TestChangesOnARunningTaskQueueControlRequests(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Status = harness.StatusRunning })
	e.lock("0a1b2c3d")
	before := e.stateBytes("0a1b2c3d")
	logBefore, err := os.ReadFile(e.store.Path("0a1b2c3d", harness.FileProgressLog))
	if err != nil {
		t.Fatal(err)
	}

	runs := []struct {
		args []string
		msg  string
	}{
		{[]string{"pause"}, fmt.Sprintf("requested pause of task 0a1b2c3d (pid %d); it takes effect at the next turn boundary", os.Getpid())},
		{[]string{"pause", "--now"}, "requested immediate pause of task 0a1b2c3d"},
		{[]string{"stop", "0a1b2c3d"}, "requested stop of task 0a1b2c3d"},
		{[]string{"edit", "--goal", "new goal", "--token-budget", "9000"}, "requested edit of task 0a1b2c3d"},
	}
	for _, r := range runs {
		code, out, errOut := e.run(r.args...)
		if code != 0 || out != "" || !strings.Contains(errOut, r.msg) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", r.args, code, out, errOut, r.msg)
		}
	}
	if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
		t.Error("state.json changed while a controller held the lock")
	}
	logAfter, err := os.ReadFile(e.store.Path("0a1b2c3d", harness.FileProgressLog))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(logBefore, logAfter) {
		t.Error("progress-log.md changed: the controller logs queued edits")
	}

	reqs, err := e.store.TakeControl("0a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range reqs {
		kinds = append(kinds, string(r.Kind))
		if !r.At.Equal(e.now) {
			t.Errorf("%s request at %v, want the clock's %v", r.Kind, r.At, e.now)
		}
	}
	if got, want := strings.Join(kinds, ","), "pause,pause-now,stop,edit,limits"; got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}
	if reqs[3].Goal != "new goal" {
		t.Errorf("edit request goal %q", reqs[3].Goal)
	}
	if l := reqs[4].Limits; l == nil || l.TokenBudget == nil || *l.TokenBudget != 9000 || l.MaxIterations != nil {
		t.Errorf("limits request %+v", l)
	}
}

func TestEditInEditor(t *testing.T) {
	tests := []struct {
		name     string
		write    string
		wantGoal string
		wantCode int
	}{
		{"new goal", "  a goal from the editor\n\n", "a goal from the editor", 0},
		{"unchanged", "add OAuth login to the API\n", "add OAuth login to the API", 0},
		{"empty aborts", "\n \n", "add OAuth login to the API", ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.task("0a1b2c3d", time.Hour, nil)
			ios, _, _, errOut := TestIOStreams()
			var seen string
			opts := &EditOptions{
				IO:     ios,
				Store:  func() (*harness.Store, error) { return e.store, nil },
				Now:    func() time.Time { return e.now },
				Getenv: e.getenv,
				Editor: func(_ *EditOptions, path string) error {
					data, err := os.ReadFile(path)
					if err != nil {
						return err
					}
					seen = string(data)
					return os.WriteFile(path, []byte(tt.write), 0o600)
				},
			}
			err := editRun(opts)
			if code := ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit %d (%v), want %d; stderr %q", code, err, tt.wantCode, errOut)
			}
			if seen != "add OAuth login to the API\n" {
				t.Errorf("the editor saw %q, want the current goal", seen)
			}
			if g := e.state("0a1b2c3d").Goal; g != tt.wantGoal {
				t.Errorf("goal %q, want %q", g, tt.wantGoal)
			}
		})
	}
}

func TestLog(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	want, err := os.ReadFile(e.store.Path("0a1b2c3d", harness.FileProgressLog))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("log")
	if code != 0 || out != string(want) {
		t.Errorf("exit %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
}

func TestNoTasks(t *testing.T) {
	e := newTestEnv(t)
	for _, args := range [][]string{{"status"}, {"pause"}, {"stop"}, {"edit", "--goal", "goal"}, {"log"}} {
		code, _, errOut := e.run(args...)
		if code != ExitUsage || !strings.Contains(errOut, `grub start "<goal>"`) {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, out, errOut := e.run("list")
	if code != 0 || out != "" || !strings.Contains(errOut, "no tasks in .grub yet") {
		t.Errorf("list: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
