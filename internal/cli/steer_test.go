package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

func TestSteerAndAnswerArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantID    string
		wantText  string
		wantUsage bool
	}{
		{name: "message only", args: []string{"use the http client in internal/api"}, wantText: "use the http client in internal/api"},
		{name: "id and message", args: []string{"0a1b2c3d", "skip TestLogin"}, wantID: "0a1b2c3d", wantText: "skip TestLogin"},
		{name: "a short message is not an id", args: []string{"abc"}, wantText: "abc"},
		{name: "surrounding space is trimmed", args: []string{"  two\nlines \n"}, wantText: "two\nlines"},
		{name: "no message", args: nil, wantUsage: true},
		{name: "blank message", args: []string{" \n\t"}, wantUsage: true},
		{name: "id and blank message", args: []string{"0a1b2c3d", ""}, wantUsage: true},
		{name: "unquoted message", args: []string{"use", "the", "client"}, wantUsage: true},
	}
	for _, tt := range tests {
		t.Run("steer "+tt.name, func(t *testing.T) {
			var got *SteerOptions
			err := runCmd(t, NewCmdSteer(testFactory(), func(o *SteerOptions) error { got = o; return nil }), tt.args)
			checkMessageArgs(t, err, got != nil, tt.wantUsage)
			if got != nil && (got.ID != tt.wantID || got.Message != tt.wantText) {
				t.Errorf("id %q message %q, want %q %q", got.ID, got.Message, tt.wantID, tt.wantText)
			}
			if got != nil && (got.Store == nil || got.Now == nil || got.IO == nil) {
				t.Error("options not wired to the factory")
			}
		})
		t.Run("answer "+tt.name, func(t *testing.T) {
			var got *AnswerOptions
			err := runCmd(t, NewCmdAnswer(testFactory(), func(o *AnswerOptions) error { got = o; return nil }), tt.args)
			checkMessageArgs(t, err, got != nil, tt.wantUsage)
			if got != nil && (got.ID != tt.wantID || got.Answer != tt.wantText) {
				t.Errorf("id %q answer %q, want %q %q", got.ID, got.Answer, tt.wantID, tt.wantText)
			}
		})
	}
}

func checkMessageArgs(t *testing.T, err error, ran, wantUsage bool) {
	t.Helper()
	if !wantUsage {
		if err != nil || !ran {
			t.Fatalf("error %v, ran %v", err, ran)
		}
		return
	}
	var usage *UsageError
	if !errors.As(err, &usage) {
		t.Fatalf("error %v, want a usage error", err)
	}
	if ran {
		t.Error("the run function ran despite the usage error")
	}
}

func TestAnswerFlags(t *testing.T) {
	tests := []struct {
		args          []string
		wantJSON      bool
		wantHeartbeat time.Duration
		wantUsage     bool
	}{
		{args: []string{"sqlite"}, wantHeartbeat: 30 * time.Second},
		{args: []string{"sqlite", "--json", "--heartbeat", "5s"}, wantJSON: true, wantHeartbeat: 5 * time.Second},
		{args: []string{"sqlite", "--heartbeat", "0s"}, wantUsage: true},
		{args: []string{"sqlite", "--max-iter", "9"}, wantUsage: true},
	}
	for _, tt := range tests {
		var got *AnswerOptions
		err := runCmd(t, NewCmdAnswer(testFactory(), func(o *AnswerOptions) error { got = o; return nil }), tt.args)
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
		if got.JSON != tt.wantJSON || got.Heartbeat != tt.wantHeartbeat {
			t.Errorf("%q: json %v heartbeat %s, want %v %s", tt.args, got.JSON, got.Heartbeat, tt.wantJSON, tt.wantHeartbeat)
		}
		if got.Getenv == nil || got.Ctx == nil {
			t.Errorf("%q: getenv or context not wired", tt.args)
		}
	}
}

func TestHelpListsSteerAndAnswer(t *testing.T) {
	ios, _, out, _ := TestIOStreams()
	if code := Run([]string{"--help"}, ios); code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, cmd := range []string{"steer", "answer"} {
		if !strings.Contains(out.String(), "\n  "+cmd+" ") {
			t.Errorf("--help does not list %s:\n%s", cmd, out)
		}
	}
}

func (e *testEnv) progressLog(id string) string {
	e.t.Helper()
	data, err := os.ReadFile(e.store.Path(id, harness.FileProgressLog))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func TestSteerIdle(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*harness.State)
		wantMsg string
	}{
		{"paused", nil, "task 0a1b2c3d is not running (status paused); continue it with: grub resume 0a1b2c3d"},
		{"runner died", func(st *harness.State) { st.Status = harness.StatusRunning },
			"task 0a1b2c3d lost its runner; continue it with: grub resume 0a1b2c3d"},
		{"open question", func(st *harness.State) {
			st.Status = harness.StatusBlocked
			st.LastDecision = &harness.Decision{Decision: loopstate.Decision{Status: loopstate.Blocked, Summary: "s", Blocker: "b", Question: "Postgres or SQLite?"}}
		}, `the agent's question is still open (Postgres or SQLite?); answer it and continue with: grub answer 0a1b2c3d "<text>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.task("0a1b2c3d", time.Hour, func(st *harness.State) {
				st.CurrentIteration = 4
				if tt.edit != nil {
					tt.edit(st)
				}
			})
			before := e.state("0a1b2c3d")

			code, out, errOut := e.run("steer", "prefer small commits")
			if code != 0 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			for _, want := range []string{"queued guidance for task 0a1b2c3d; the next turn's prompt carries it\n", tt.wantMsg} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q lacks %q", errOut, want)
				}
			}
			st := e.state("0a1b2c3d")
			if got := strings.Join(st.Pending.Steer, "|"); got != "prefer small commits" {
				t.Errorf("pending steer %q", got)
			}
			if st.Status != before.Status || !st.UpdatedAt.Equal(e.now) {
				t.Errorf("status %s updatedAt %v; want %s and the clock's %v", st.Status, st.UpdatedAt, before.Status, e.now)
			}
			wantEntry := "\n## Turn 4: execution\n\n- At: 2026-03-01T12:00:00Z\n- Decision: steer\n- Summary: guidance from the user for the next turn\n\nprefer small commits\n"
			if log := e.progressLog("0a1b2c3d"); !strings.HasSuffix(log, wantEntry) {
				t.Errorf("progress log ends\n%s\nwant the entry\n%s", log, wantEntry)
			}
			if _, err := os.Stat(e.store.Path("0a1b2c3d", harness.FileControl)); err == nil {
				t.Error("control.json written for an idle task")
			}

			// A second message joins the first, in order.
			code, _, errOut = e.run("steer", "0a1b", "then run go vet")
			if code != 0 {
				t.Fatalf("second steer: exit %d: %s", code, errOut)
			}
			if got := strings.Join(e.state("0a1b2c3d").Pending.Steer, "|"); got != "prefer small commits|then run go vet" {
				t.Errorf("pending steer %q", got)
			}
			if !strings.Contains(errOut, "has 2 messages of guidance waiting") {
				t.Errorf("stderr %q does not count the waiting messages", errOut)
			}
			if n := strings.Count(e.progressLog("0a1b2c3d"), "- Decision: steer"); n != 2 {
				t.Errorf("%d steer entries in the log, want 2", n)
			}
		})
	}
}

func TestSteerRunningQueuesAControlRequest(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Status = harness.StatusRunning })
	e.lock("0a1b2c3d")
	before := e.stateBytes("0a1b2c3d")
	logBefore := e.progressLog("0a1b2c3d")

	code, out, errOut := e.run("steer", "prefer small commits")
	want := fmt.Sprintf("queued guidance for task 0a1b2c3d (pid %d); the next turn's prompt carries it\n", os.Getpid())
	if code != 0 || out != "" || errOut != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want stderr %q", code, out, errOut, want)
	}
	if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
		t.Error("state.json changed while a controller held the lock")
	}
	if e.progressLog("0a1b2c3d") != logBefore {
		t.Error("progress-log.md changed: the controller logs the guidance when it applies it")
	}
	reqs, err := e.store.TakeControl("0a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].Kind != harness.ControlSteer || reqs[0].Message != "prefer small commits" || !reqs[0].At.Equal(e.now) {
		t.Errorf("control requests %+v, want one steer with the message at the clock's now", reqs)
	}
}

func TestSteerCompleteTaskIsRefused(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Status = harness.StatusComplete })
	before := e.stateBytes("0a1b2c3d")
	code, out, errOut := e.run("steer", "one more thing")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "grub: task 0a1b2c3d is complete") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
		t.Error("state.json rewritten")
	}
}
