package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

func TestStatusWatchFlags(t *testing.T) {
	tests := []struct {
		args         []string
		wantWatch    bool
		wantInterval time.Duration
		wantUsage    bool
	}{
		{args: nil, wantInterval: 2 * time.Second},
		{args: []string{"--watch"}, wantWatch: true, wantInterval: 2 * time.Second},
		{args: []string{"--watch", "--interval", "30s", "0a1b2c3d"}, wantWatch: true, wantInterval: 30 * time.Second},
		{args: []string{"--watch", "--interval", "100ms", "--json", "--exit-status"}, wantWatch: true, wantInterval: 100 * time.Millisecond},
		{args: []string{"--interval", "5s"}, wantUsage: true},
		{args: []string{"--watch", "--interval", "50ms"}, wantUsage: true},
		{args: []string{"--watch", "--interval", "-1s"}, wantUsage: true},
		{args: []string{"--watch", "--interval", "often"}, wantUsage: true},
	}
	for _, tt := range tests {
		var got *StatusOptions
		err := runCmd(t, NewCmdStatus(testFactory(), func(o *StatusOptions) error { got = o; return nil }), tt.args)
		if tt.wantUsage {
			if err == nil || got != nil {
				t.Errorf("%q: error %v, ran %v; want a usage error", tt.args, err, got != nil)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if got.Watch != tt.wantWatch || got.Interval != tt.wantInterval {
			t.Errorf("%q: watch %v interval %s, want %v %s", tt.args, got.Watch, got.Interval, tt.wantWatch, tt.wantInterval)
		}
		if got.Sleep == nil || got.Ctx == nil {
			t.Errorf("%q: sleep or context not wired", tt.args)
		}
	}
}

// watchRun runs status --watch on task 0a1b2c3d of e; each call of the
// injected sleep runs the next step, and a sleep after the last step fails
// the test.
type watchRun struct {
	e      *testEnv
	opts   *StatusOptions
	out    *bytes.Buffer
	errOut *bytes.Buffer
	sleeps int
}

func newWatchRun(e *testEnv, steps ...func()) *watchRun {
	ios, _, out, errOut := TestIOStreams()
	w := &watchRun{e: e, out: out, errOut: errOut}
	w.opts = &StatusOptions{
		IO:       ios,
		Store:    func() (*harness.Store, error) { return e.store, nil },
		Now:      func() time.Time { return e.now },
		Ctx:      context.Background(),
		Watch:    true,
		Interval: 2 * time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if d != 2*time.Second {
				e.t.Errorf("slept %s, want the interval 2s", d)
			}
			if w.sleeps >= len(steps) {
				e.t.Fatalf("the watch went on after %d steps; output so far:\n%s", len(steps), out)
			}
			w.sleeps++
			steps[w.sleeps-1]()
			return ctx.Err()
		},
	}
	return w
}

// update changes the state of task 0a1b2c3d as a controller would.
func (e *testEnv) update(edit func(*harness.State)) func() {
	return func() {
		st := e.state("0a1b2c3d")
		edit(st)
		if err := e.store.SaveState(st); err != nil {
			e.t.Fatal(err)
		}
	}
}

// runningTask creates a running task whose lock this test holds, and
// returns the steps of a run: the next turn, a frame without a change, the
// final status saved, and the runner's exit (the lock released).
func runningTask(e *testEnv, final harness.Status) []func() {
	e.task("0a1b2c3d", 0, func(st *harness.State) { st.Status = harness.StatusRunning; st.CurrentIteration = 1 })
	lock, err := e.store.LockRunner("0a1b2c3d")
	if err != nil {
		e.t.Fatal(err)
	}
	released := false
	e.t.Cleanup(func() {
		if !released {
			_ = lock.Release()
		}
	})
	return []func(){
		e.update(func(st *harness.State) { st.CurrentIteration = 2 }),
		func() {},
		e.update(func(st *harness.State) { st.Status = final; st.StopReason = "the end" }),
		func() {
			released = true
			if err := lock.Release(); err != nil {
				e.t.Fatal(err)
			}
		},
	}
}

func TestStatusWatchPrintsEachChangeOnce(t *testing.T) {
	e := newTestEnv(t)
	w := newWatchRun(e, runningTask(e, harness.StatusComplete)...)
	if err := statusRun(w.opts); err != nil {
		t.Fatalf("watch: %v", err)
	}
	if w.sleeps != 4 {
		t.Errorf("%d sleeps, want 4", w.sleeps)
	}
	frames := strings.Split(w.out.String(), "\n\n")
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4 (running at 1, running at 2, complete with its runner, complete):\n%s", len(frames), w.out)
	}
	for i, want := range []string{"iteration    1 of 25", "iteration    2 of 25", "status       complete (runner: pid", "status       complete\n"} {
		if !strings.HasPrefix(frames[i], "task         0a1b2c3d\n") || !strings.Contains(frames[i], want) {
			t.Errorf("frame %d lacks %q:\n%s", i+1, want, frames[i])
		}
	}
	if !strings.Contains(frames[0], "status       running (runner: pid") {
		t.Errorf("frame 1 does not show the runner:\n%s", frames[0])
	}
	if strings.Contains(w.out.String(), clearScreen) {
		t.Error("the screen was cleared on a stdout that is not a terminal")
	}
	if w.errOut.Len() != 0 {
		t.Errorf("stderr %q", w.errOut)
	}
}

func TestStatusWatchJSONLines(t *testing.T) {
	e := newTestEnv(t)
	w := newWatchRun(e, runningTask(e, harness.StatusBlocked)...)
	w.opts.JSON = true
	if err := statusRun(w.opts); err != nil {
		t.Fatalf("watch: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(w.out.String(), "\n"), "\n")
	want := []struct {
		status    string
		iteration int
		running   bool
	}{{"running", 1, true}, {"running", 2, true}, {"blocked", 2, true}, {"blocked", 2, false}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), w.out)
	}
	for i, line := range lines {
		if err := schemas.Validate(schemas.StatusOutput, "line", []byte(line)); err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
		var got struct {
			Status    string `json:"status"`
			Iteration int    `json:"iteration"`
			Running   bool   `json:"running"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if got.Status != want[i].status || got.Iteration != want[i].iteration || got.Running != want[i].running {
			t.Errorf("line %d: %+v, want %+v", i+1, got, want[i])
		}
	}
}

func TestStatusWatchOnATerminalRedrawsEveryFrame(t *testing.T) {
	e := newTestEnv(t)
	w := newWatchRun(e, runningTask(e, harness.StatusComplete)...)
	w.opts.IO.OutTTY = true
	if err := statusRun(w.opts); err != nil {
		t.Fatalf("watch: %v", err)
	}
	frames := strings.Split(w.out.String(), clearScreen)
	if len(frames) != 6 || frames[0] != "" {
		t.Fatalf("%d frames, want 5, each after a screen clear:\n%q", len(frames)-1, w.out)
	}
	if !strings.Contains(frames[2], "iteration    2 of 25") || frames[2] != frames[3] {
		t.Errorf("frames 2 and 3 should both show iteration 2:\n%s\n---\n%s", frames[2], frames[3])
	}
	if !strings.Contains(frames[5], "status       complete\n") {
		t.Errorf("last frame:\n%s", frames[5])
	}
}

func TestStatusWatchExitStatus(t *testing.T) {
	tests := []struct {
		final harness.Status
		want  int
	}{
		{harness.StatusComplete, ExitOK},
		{harness.StatusBlocked, ExitBlocked},
		{harness.StatusPaused, ExitPaused},
		{harness.StatusBudgetLimited, ExitBudget},
	}
	for _, tt := range tests {
		t.Run(string(tt.final), func(t *testing.T) {
			e := newTestEnv(t)
			w := newWatchRun(e, runningTask(e, tt.final)...)
			w.opts.ExitStatus = true
			if code := ExitCode(statusRun(w.opts)); code != tt.want {
				t.Errorf("exit %d, want %d", code, tt.want)
			}
		})
	}
}

func TestStatusWatchEndsAtOnce(t *testing.T) {
	tests := []struct {
		name     string
		status   harness.Status
		want     string
		wantCode int
	}{
		{"not running", harness.StatusPaused, "status       paused\n", ExitPaused},
		{"runner died", harness.StatusRunning, "status       running (no runner: interrupted, run grub resume)\n", ExitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.task("0a1b2c3d", time.Minute, func(st *harness.State) { st.Status = tt.status })
			w := newWatchRun(e) // any sleep fails the test
			w.opts.ExitStatus = true
			if code := ExitCode(statusRun(w.opts)); code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if strings.Count(w.out.String(), "task         0a1b2c3d") != 1 || !strings.Contains(w.out.String(), tt.want) {
				t.Errorf("want one frame with %q:\n%s", tt.want, w.out)
			}
		})
	}
}

// Ctrl-C ends a watch with exit 0; with --exit-status the task has no final
// status to report yet, so 130 keeps `watch --exit-status && next` from
// going on.
func TestStatusWatchCtrlC(t *testing.T) {
	for _, tt := range []struct {
		exitStatus bool
		want       int
	}{{false, 0}, {true, 130}} {
		e := newTestEnv(t)
		steps := runningTask(e, harness.StatusComplete)
		ctx, cancel := context.WithCancel(context.Background())
		w := newWatchRun(e, cancel, steps[1])
		w.opts.Ctx = ctx
		w.opts.ExitStatus = tt.exitStatus
		if code := ExitCode(statusRun(w.opts)); code != tt.want {
			t.Errorf("--exit-status=%v: exit %d, want %d", tt.exitStatus, code, tt.want)
		}
		if w.sleeps != 1 {
			t.Errorf("%d sleeps, want the watch to end at the first", w.sleeps)
		}
		cancel()
	}
}

func TestStatusWatchWarnsOfABrokenFeatureListOnlyAtTheEnd(t *testing.T) {
	for _, fixed := range []bool{true, false} {
		t.Run(fmt.Sprintf("fixed before the end %v", fixed), func(t *testing.T) {
			e := newTestEnv(t)
			steps := runningTask(e, harness.StatusPaused)
			// The agent is halfway through rewriting the list.
			path := e.store.Path("0a1b2c3d", harness.FileFeatureList)
			if err := os.WriteFile(path, []byte(`{"version": 1, "features": [`), 0o644); err != nil {
				t.Fatal(err)
			}
			if fixed {
				steps[1] = func() {
					list := &featurelist.List{Version: 1, Goal: "add OAuth login to the API", Features: []featurelist.Feature{feature("one", false)}}
					if err := e.store.SaveFeatureList("0a1b2c3d", list); err != nil {
						t.Fatal(err)
					}
				}
			}
			w := newWatchRun(e, steps...)
			if err := statusRun(w.opts); err != nil {
				t.Fatalf("watch: %v", err)
			}
			want := 1
			if fixed {
				want = 0
			}
			if n := strings.Count(w.errOut.String(), "grub: warning: .grub/0a1b2c3d/feature-list.json"); n != want {
				t.Errorf("stderr has %d warnings, want %d:\n%s", n, want, w.errOut)
			}
		})
	}
}
