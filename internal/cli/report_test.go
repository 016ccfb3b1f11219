package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// ledgerTask is a task with a feature list and two recorded turns, the
// second caught by the referee.
func ledgerTask(t *testing.T, e *testEnv) {
	t.Helper()
	list := &featurelist.List{Version: 1, Goal: "add OAuth login to the API",
		Features: []featurelist.Feature{feature("login-form", true), feature("session-cookie", false)}}
	e.task("0a1b2c3d", time.Minute, func(st *harness.State) {
		st.CurrentIteration = 2
		st.FeatureListBaseline = list
		st.LastDecision = &harness.Decision{Decision: loopstate.Decision{Status: loopstate.Continue, Summary: "tried the cookie"}, Iteration: 2}
	})
	if err := e.store.SaveFeatureList("0a1b2c3d", list); err != nil {
		t.Fatal(err)
	}
	cost := 0.5
	for _, r := range []harness.TurnRecord{
		{Iteration: 1, Phase: harness.PhaseExecution, Feature: "login-form", Flipped: "login-form", Decision: loopstate.Continue,
			Summary: "built the form", DurationSeconds: 61, Usage: harness.TurnUsage{InputTokens: 900, OutputTokens: 100, Requests: 3, CostUSD: &cost},
			Checks:  []harness.LedgerCheck{{Name: "init.sh", Result: harness.CheckPassed}, {Name: "verify", Result: harness.CheckPassed}},
			Passing: 1, Total: 2, Status: harness.StatusRunning, Time: e.now.Add(-time.Hour)},
		{Iteration: 2, Phase: harness.PhaseExecution, Feature: "session-cookie", Decision: loopstate.Continue,
			Summary: "tried the cookie <script>", DurationSeconds: 30, Usage: harness.TurnUsage{InputTokens: 500, OutputTokens: 50, Requests: 1},
			Checks:   []harness.LedgerCheck{{Name: "init.sh", Result: harness.CheckPassed}, {Name: "verify", Result: harness.CheckFailed, ExitCode: 1}},
			Findings: []harness.Finding{{Kind: harness.FindingVerification, Text: "feature `session-cookie` was claimed passing but its verify command exited 1"}},
			Passing:  1, Total: 2, Status: harness.StatusPaused, Time: e.now.Add(-time.Minute)},
	} {
		if err := e.store.AppendTurn("0a1b2c3d", r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReportFormats(t *testing.T) {
	e := newTestEnv(t)
	ledgerTask(t, e)

	code, out, errOut := e.run("report", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Features struct{ Items []struct{ ID string } }
		Turns    []struct {
			Iteration int
			Commit    string
			Findings  []struct{ Kind string }
		}
		Caught []struct {
			Kind  string
			Count int
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Features.Items) != 2 || len(r.Turns) != 2 || r.Turns[1].Commit != "" || len(r.Caught) != 1 || r.Caught[0].Kind != "verification_failed" {
		t.Errorf("report --format json = %s", out)
	}

	code, out, _ = e.run("report")
	if code != 0 || !strings.Contains(out, "## grub: task `0a1b2c3d` is paused") || !strings.Contains(out, "&lt;script&gt;") || !strings.Contains(out, "`session-cookie`") {
		t.Errorf("report (Markdown) exit %d:\n%s", code, out)
	}

	page := filepath.Join(t.TempDir(), "r.html")
	code, out, errOut = e.run("report", "--html", page)
	if code != 0 || out != "" || !strings.Contains(errOut, "wrote the report of task 0a1b2c3d to "+page) {
		t.Fatalf("report --html: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "session-cookie") {
		t.Fatalf("page: %v\n%.300s", err, data)
	}

	if code, _, errOut := e.run("report", "--format", "xml"); code != ExitUsage || !strings.Contains(errOut, "want md or json") {
		t.Errorf("--format xml: exit %d, %s", code, errOut)
	}
}

func TestReportRefusesABadLedger(t *testing.T) {
	e := newTestEnv(t)
	ledgerTask(t, e)
	f, err := os.OpenFile(e.store.Path("0a1b2c3d", harness.FileTurnLedger), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"iteration": "three"}` + "\n")
	f.Close()
	code, _, errOut := e.run("report", "--format", "json")
	if code != ExitUsage || !strings.Contains(errOut, "turns.jsonl:3") {
		t.Errorf("exit %d, stderr %q: want exit 2 naming the line", code, errOut)
	}
	// status still shows the task, and says what is wrong with the ledger.
	code, out, _ := e.run("status")
	if code != 0 || !strings.Contains(out, "turn ledger  .grub/0a1b2c3d/turns.jsonl:3") {
		t.Errorf("status exit %d:\n%s", code, out)
	}
}

func TestStatusShowsTheLastTurnRecord(t *testing.T) {
	e := newTestEnv(t)
	ledgerTask(t, e)
	code, out, errOut := e.run("status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "turn record  30s, 550 tokens; init.sh passed; verify failed; caught: verification failed\n"; !strings.Contains(out, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	code, out, _ = e.run("status", "--json")
	if code != 0 || !strings.Contains(out, `"lastTurn": {`) {
		t.Errorf("status --json exit %d:\n%s", code, out)
	}
}
