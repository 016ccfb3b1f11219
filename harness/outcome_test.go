package harness

import (
	"testing"

	"github.com/grub-dev/grub/loopstate"
)

// TestTurnOutcome checks grub's verdict on a turn from its ledger line:
// a rolled-back edit or a failed verification is never "continue", an
// unreachable model is a failure and not a catch, and the completion
// audit's regression is a finding on an accepted turn.
func TestTurnOutcome(t *testing.T) {
	f := func(k FindingKind) Finding { return Finding{Kind: k, Text: string(k)} }
	recheck := func(res string) LedgerCheck { return LedgerCheck{Name: CheckRecheck, Feature: "a", Result: res} }
	audit := func(res string) LedgerCheck { return LedgerCheck{Name: CheckAudit, Feature: "a", Result: res} }
	cases := []struct {
		name string
		r    TurnRecord
		want Outcome
	}{
		{"a verified flip", TurnRecord{Decision: loopstate.Continue, Flipped: "a"}, OutcomeAccepted},
		{"blocked, reported", TurnRecord{Decision: loopstate.Blocked}, OutcomeAccepted},
		{"illegal edit rolled back", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingIllegalEdit)}}, OutcomeRejected},
		{"tampering", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingTampering)}}, OutcomeRejected},
		{"plan rejected", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingPlanRejected)}}, OutcomeRejected},
		{"no decision", TurnRecord{Decision: loopstate.Failed, Findings: []Finding{f(FindingNoDecision)}}, OutcomeRejected},
		{"other", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingOther)}}, OutcomeRejected},
		{"verification failed", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingVerification)}}, OutcomeFailed},
		{"timeout", TurnRecord{Decision: loopstate.Failed, Findings: []Finding{f(FindingTimeout)}}, OutcomeFailed},
		{"model unreachable", TurnRecord{Decision: loopstate.Failed, Findings: []Finding{f(FindingAgentError)}}, OutcomeFailed},
		{"setup error", TurnRecord{Decision: loopstate.Cancelled, Findings: []Finding{f(FindingSetup)}}, OutcomeFailed},
		{"a catch wins over a timeout", TurnRecord{Decision: loopstate.Failed, Findings: []Finding{f(FindingTimeout), f(FindingTampering)}}, OutcomeRejected},
		{"sweep regression", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingRegression)}, Checks: []LedgerCheck{recheck(CheckFailed)}}, OutcomeFailed},
		{"audit regression", TurnRecord{Decision: loopstate.Continue, Findings: []Finding{f(FindingRegression)}, Checks: []LedgerCheck{recheck(CheckPassed), audit(CheckFailed)}}, OutcomeRegressionFound},
		{"completion claim rejected", TurnRecord{Decision: loopstate.Continue, Flipped: "a", Findings: []Finding{f(FindingCompletionRejected)}}, OutcomeClaimRejected},
		{"cancelled", TurnRecord{Decision: loopstate.Cancelled}, OutcomeCancelled},
		{"crash", TurnRecord{Decision: loopstate.Unknown}, OutcomeUnknown},
	}
	for _, c := range cases {
		if got := c.r.Outcome(); got != c.want {
			t.Errorf("%s: Outcome() = %s, want %s", c.name, got, c.want)
		}
	}
	for _, k := range []FindingKind{FindingTimeout, FindingAgentError, FindingSetup} {
		if k.Caught() {
			t.Errorf("%s counts as a catch of the referee's", k)
		}
	}
}
