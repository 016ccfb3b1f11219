package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

// status's turn record sums up the completion audit, which checks every
// passing feature, in one part: a 2,000-feature task's last turn is one
// line, not 2,000 "audit passed".
func TestTurnRecordLineSumsUpTheAudit(t *testing.T) {
	l := &harness.TurnRecord{Checks: []harness.LedgerCheck{{Name: "init.sh", Result: harness.CheckPassed}, {Name: "verify", Feature: "f-0", Result: harness.CheckPassed}}}
	for i := range 2000 {
		res := harness.CheckPassed
		if i == 7 {
			res = harness.CheckFailed
		}
		l.Checks = append(l.Checks, harness.LedgerCheck{Name: harness.CheckAudit, Feature: fmt.Sprintf("f-%d", i+1), Result: res})
	}
	got := turnRecordLine(l)
	if want := "0s, 0 tokens; init.sh passed; verify passed; completion audit 1999 of 2000 passed"; got != want {
		t.Errorf("turn record %q, want %q", got[:min(len(got), 200)], want)
	}
	if strings.Count(got, "audit") != 1 {
		t.Errorf("the audit is named %d times", strings.Count(got, "audit"))
	}
}

// An agent that failed (a model that cannot be reached) or a timeout is
// the turn's failure, not the referee's catch: status and history say so
// apart.
func TestInfrastructureFailuresAreNotCatches(t *testing.T) {
	l := harness.TurnRecord{Findings: []harness.Finding{
		{Kind: harness.FindingAgentError, Text: "connection refused"},
		{Kind: harness.FindingTimeout, Text: "ran out of time"},
		{Kind: harness.FindingIllegalEdit, Text: "description changed"},
	}}
	got := turnRecordLine(&l)
	for _, want := range []string{"failed: agent error", "failed: timeout", "caught: illegal edit"} {
		if !strings.Contains(got, want) {
			t.Errorf("turn record %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "caught: agent error") || strings.Contains(got, "caught: timeout") {
		t.Errorf("turn record %q counts a failure as a catch", got)
	}
	var h historyTurn
	h.enrich(l)
	if !slices.Equal(h.Caught, []string{"illegal_edit"}) || !slices.Equal(h.Failed, []string{"agent_error", "timeout"}) {
		t.Errorf("history caught %q, failed %q", h.Caught, h.Failed)
	}
}

// status shows grub's outcome of the last turn before the agent's
// decision (a failed verification is not "continue"), the cost as not
// reported when the backend gave none, and what to do next once the task
// stopped; the JSON has the same (lastOutcome, next) and follows its
// schema.
func TestStatusShowsOutcomeAndNext(t *testing.T) {
	e := newTestEnv(t)
	ledgerTask(t, e)
	code, out, errOut := e.run("status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"last turn    #2 failed (agent: continue): tried the cookie",
		"cost         not reported\n",
		"what next    grub resume 0a1b2c3d    (carry on where it paused)\n",
		"turn record  30s, 550 tokens; init.sh passed; verify failed; caught: verification failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = e.run("status", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := schemas.Validate(schemas.StatusOutput, "stdout", []byte(out)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"lastOutcome": "failed"`) || !strings.Contains(out, `"command": "grub resume 0a1b2c3d"`) {
		t.Errorf("status --json lacks lastOutcome or next:\n%s", out)
	}
}

// history shows each turn's outcome (not the task's status after it) and
// a cost for every turn, "not reported" when the backend gave none.
func TestHistoryShowsEachTurnsOutcome(t *testing.T) {
	var turns []historyTurn
	for i, l := range []harness.TurnRecord{
		{Decision: loopstate.Continue, Flipped: "a"},
		{Decision: loopstate.Continue, Findings: []harness.Finding{{Kind: harness.FindingIllegalEdit}}},
		{Decision: loopstate.Failed, Findings: []harness.Finding{{Kind: harness.FindingAgentError}}},
	} {
		h := historyTurn{Commit: strings.Repeat(string(rune('a'+i)), 40), Iteration: i + 1, Status: "running", Summary: "s"}
		h.enrich(l)
		turns = append(turns, h)
	}
	turns = append(turns, historyTurn{Commit: strings.Repeat("d", 40), Iteration: 4, Status: "running", Summary: "from an older grub"})
	var b strings.Builder
	if err := printHistory(&b, turns); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], "OUTCOME") || strings.Contains(lines[0], "STATUS") || !strings.Contains(lines[0], "COST") {
		t.Errorf("header %q", lines[0])
	}
	for i, want := range []string{"accepted", "rejected", "failed", "-"} {
		f := strings.Fields(lines[i+1])
		if len(f) < 8 || f[5] != want || strings.Contains(lines[i+1], "running") || !strings.Contains(lines[i+1], "not reported") {
			t.Errorf("turn %d: %q, want outcome %s and cost not reported", i+1, lines[i+1], want)
		}
	}
}
