package cli

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// askQuestion makes st a task the agent stopped with a question.
func askQuestion(st *harness.State) {
	st.Status = harness.StatusBlocked
	st.StopReason = "the agent asks: Postgres or SQLite?"
	st.ConsecutiveBlocked = 1
	st.LastDecision = &harness.Decision{Decision: loopstate.Decision{Status: loopstate.Blocked, Summary: "need a decision", Blocker: "two database choices",
		Question: "Postgres or SQLite?", Options: []string{"postgres", "sqlite"}}, Iteration: 4}
}

func TestAnswerWithoutAnOpenQuestionIsRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(*harness.State)
		want string
	}{
		{"paused", nil,
			"grub: task 0a1b2c3d has no open question (status paused); use grub steer to give guidance or grub resume to continue\n"},
		{"blocked without a question", func(st *harness.State) {
			st.Status = harness.StatusBlocked
			st.LastDecision = &harness.Decision{Decision: loopstate.Decision{Status: loopstate.Blocked, Summary: "s", Blocker: "no credential"}}
		}, "has no open question (status blocked)"},
		{"question already answered by a later turn", func(st *harness.State) {
			askQuestion(st)
			st.Status = harness.StatusFailed
		}, "has no open question (status failed)"},
		{"complete", func(st *harness.State) { st.Status = harness.StatusComplete },
			"grub: task 0a1b2c3d is complete; it has no question to answer\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.task("0a1b2c3d", time.Hour, tt.edit)
			before := e.stateBytes("0a1b2c3d")
			logBefore := e.progressLog("0a1b2c3d")
			code, out, errOut := e.run("answer", "sqlite")
			if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.want)
			}
			if strings.Contains(errOut, "--help") {
				t.Errorf("stderr %q points to the help, which does not help here", errOut)
			}
			if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) || e.progressLog("0a1b2c3d") != logBefore {
				t.Error("state.json or progress-log.md changed")
			}
		})
	}
}

func TestAnswerWhileAControllerRunsTheTask(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, askQuestion)
	e.lock("0a1b2c3d")
	before := e.stateBytes("0a1b2c3d")
	code, _, errOut := e.run("answer", "sqlite")
	if code != ExitLocked || !strings.Contains(errOut, "task 0a1b2c3d is already running") {
		t.Errorf("exit %d, stderr %q; want 75", code, errOut)
	}
	if !bytes.Equal(before, e.stateBytes("0a1b2c3d")) {
		t.Error("state.json changed while a controller held the lock")
	}
}

// TestAnswerRecordsTheAnswerAndResumes answers a task whose iteration
// budget is spent, so the resumed controller stops before any agent turn:
// the answer stays pending for the turn after a raised --max-iter.
func TestAnswerRecordsTheAnswerAndResumes(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) {
		askQuestion(st)
		st.Phase = harness.PhaseInitializer
		st.CurrentIteration = 4
		st.Limits.MaxIterations = 4
		st.Agent = harness.Agent{Kind: "command", Command: "false"}
	})

	code, out, errOut := e.run("answer", "use sqlite;\none file is enough")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (iteration budget spent); stderr:\n%s", code, errOut)
	}
	wantErr := "grub: task 0a1b2c3d asked: Postgres or SQLite?\n  1. postgres\n  2. sqlite\n" +
		"grub: your answer: use sqlite;\n  one file is enough\n" +
		"grub: resuming task 0a1b2c3d at iteration 4 (blocked)\n"
	if !strings.HasPrefix(errOut, wantErr) {
		t.Errorf("stderr starts\n%s\nwant\n%s", errOut, wantErr)
	}
	if !strings.Contains(out, "status       failed") {
		t.Errorf("stdout lacks the final status:\n%s", out)
	}

	st := e.state("0a1b2c3d")
	if st.Pending.Answer != "use sqlite;\none file is enough" {
		t.Errorf("pending answer %q", st.Pending.Answer)
	}
	if st.ConsecutiveBlocked != 0 {
		t.Errorf("consecutiveBlocked %d: resuming a blocked task clears it", st.ConsecutiveBlocked)
	}
	log := e.progressLog("0a1b2c3d")
	wantEntry := "\n## Turn 4: initializer\n\n- At: 2026-03-01T12:00:00Z\n- Decision: answer\n- Summary: the user answered the agent's question\n\n" +
		"Question: Postgres or SQLite?\n\nAnswer: use sqlite;\n  one file is enough\n"
	if !strings.Contains(log, wantEntry) {
		t.Errorf("progress log\n%s\nlacks the entry\n%s", log, wantEntry)
	}
	// The lock was released: a controller could take it.
	l, err := e.store.Lock("0a1b2c3d")
	if err != nil {
		t.Fatalf("the lock is still held: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestRecordAnswerRefusesAChangedQuestion(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, askQuestion)
	_, err := recordAnswer(e.store, "0a1b2c3d", "an older question?", "sqlite", e.now)
	var exitErr *ExitError
	if !errors.As(err, &exitErr) || exitErr.Code != ExitUsage || !strings.Contains(err.Error(), "asked another question") {
		t.Errorf("error %v, want exit 2 naming the new question", err)
	}
	if e.state("0a1b2c3d").Pending.Answer != "" {
		t.Error("the answer was recorded")
	}
	l, err := e.store.Lock("0a1b2c3d")
	if err != nil {
		t.Fatalf("the lock is still held: %v", err)
	}
	_ = l.Release()
}

// An answer that is an option's number is recorded with the question's
// options and the choice, which the next prompt renders as the option's
// text (prompts' tests and answer.txtar); the echo and the log name the
// option too.
func TestAnswerByOptionNumberRecordsTheOption(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) {
		askQuestion(st)
		st.Phase = harness.PhaseInitializer
		st.CurrentIteration = 4
		st.Limits.MaxIterations = 4
		st.Agent = harness.Agent{Kind: "command", Command: "false"}
	})
	_, _, errOut := e.run("answer", "2")
	if !strings.Contains(errOut, "grub: your answer: 2 (option 2: sqlite)\n") {
		t.Errorf("stderr does not name the chosen option:\n%s", errOut)
	}
	if log := e.progressLog("0a1b2c3d"); !strings.Contains(log, "Answer: 2 (option 2: sqlite)\n") {
		t.Errorf("progress log does not name the chosen option:\n%s", log)
	}
	p := e.state("0a1b2c3d").Pending
	if p.Answer != "2" || p.AnswerChoice != 2 || !reflect.DeepEqual(p.AnswerOptions, []string{"postgres", "sqlite"}) {
		t.Errorf("pending answer %q, choice %d, options %q; want 2, 2, [postgres sqlite]", p.Answer, p.AnswerChoice, p.AnswerOptions)
	}
}

func TestChosenOption(t *testing.T) {
	options := []string{"postgres", "sqlite", " "}
	cases := []struct {
		answer string
		want   int
	}{
		{"1", 1}, {" 2 ", 2}, {"#2", 2}, {"2.", 2}, {"Option 2", 2}, {"option2", 2},
		{"0", 0}, {"3", 0}, {"4", 0}, {"sqlite", 0}, {"2 please", 0}, {"use 2 files", 0}, {"", 0},
	}
	for _, c := range cases {
		if got := chosenOption(c.answer, options); got != c.want {
			t.Errorf("chosenOption(%q) = %d, want %d", c.answer, got, c.want)
		}
	}
	if got := chosenOption("1", nil); got != 0 {
		t.Errorf("chosenOption without options = %d, want 0", got)
	}
}
