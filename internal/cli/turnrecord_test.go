package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
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
