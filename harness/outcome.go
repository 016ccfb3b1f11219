package harness

import "github.com/grub-dev/grub/loopstate"

// Outcome is grub's verdict on one turn, derived from its ledger line by
// TurnRecord.Outcome: the one place that decides it, for the report (HTML,
// Markdown, JSON), grub history and grub status. The line's decision is
// the agent's claim (after the referee's corrections) and its status the
// task's after the turn; neither says on its own whether grub accepted
// the turn's work.
type Outcome string

// The outcomes of a turn, in the order Outcome tries them.
const (
	// OutcomeUnknown: the runner died during the turn (a crash, kill -9);
	// the next run recorded it without knowing how it ended.
	OutcomeUnknown Outcome = "unknown"
	// OutcomeRejected: the referee caught the turn breaking the rules (an
	// illegal edit, tampering, a plan not accepted, no valid decision) and
	// put back what it changed.
	OutcomeRejected Outcome = "rejected"
	// OutcomeFailed: the turn did not hold up: a check failed (a claimed
	// flip's verification, a regression the sweep found), or it failed
	// before there was anything to referee (a timeout, an agent error such
	// as a model that cannot be reached, a setup error). Its feature-list
	// edit was undone.
	OutcomeFailed Outcome = "failed"
	// OutcomeCancelled: the turn was cut short (a signal, pause --now, the
	// time budget, the run's slice, a quota refusal); it counts as neither
	// a failure nor a success.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeRegressionFound: the turn was accepted, but the completion
	// audit found a feature that passed failing again and set it back.
	OutcomeRegressionFound Outcome = "regression_found"
	// OutcomeClaimRejected: the turn's work was accepted, but its claim
	// that the task is complete was not (features still pending).
	OutcomeClaimRejected Outcome = "claim_rejected"
	// OutcomeAccepted: the referee found nothing wrong; the turn's work
	// (a verified flip, progress, an accepted plan) stands.
	OutcomeAccepted Outcome = "accepted"
	// OutcomeUnrecorded: a turn known only from its commit, with no ledger
	// line (one an older grub ran). Never returned by TurnRecord.Outcome.
	OutcomeUnrecorded Outcome = "unrecorded"
)

// Outcomes are every outcome, in the order views count them.
var Outcomes = []Outcome{OutcomeAccepted, OutcomeClaimRejected, OutcomeRegressionFound, OutcomeRejected,
	OutcomeFailed, OutcomeCancelled, OutcomeUnknown, OutcomeUnrecorded}

// Text is the outcome in words, for people: "regression found".
func (o Outcome) Text() string {
	switch o {
	case OutcomeRegressionFound:
		return "regression found"
	case OutcomeClaimRejected:
		return "completion claim rejected"
	case OutcomeUnrecorded:
		return "not recorded"
	}
	return string(o)
}

// Outcome is grub's verdict on the turn r records. In order: a turn the
// runner died in is unknown; a catch that undid the turn's work makes it
// rejected; a failed check or a failure without a catch (timeout, agent
// or setup error) failed; a turn cut short cancelled; then a regression
// the completion audit found, a rejected completion claim, and accepted.
func (r TurnRecord) Outcome() Outcome {
	if r.Decision == loopstate.Unknown {
		return OutcomeUnknown
	}
	var failed, audit, claim bool
	for _, f := range r.Findings {
		switch f.Kind {
		case FindingCompletionRejected:
			claim = true
		case FindingRegression:
			if r.sweepFailed() {
				failed = true
			} else {
				audit = true
			}
		case FindingVerification, FindingTimeout, FindingAgentError, FindingSetup:
			failed = true
		default: // illegal_edit, tampering, plan_rejected, no_decision, other
			return OutcomeRejected
		}
	}
	switch {
	case failed || r.Decision == loopstate.Failed:
		return OutcomeFailed
	case r.Decision == loopstate.Cancelled:
		return OutcomeCancelled
	case audit:
		return OutcomeRegressionFound
	case claim:
		return OutcomeClaimRejected
	}
	return OutcomeAccepted
}

// sweepFailed reports whether a check of the regression sweep failed in
// the turn: its regression fails the turn, where the completion audit's
// is a finding only.
func (r TurnRecord) sweepFailed() bool {
	for _, c := range r.Checks {
		if c.Name == CheckRecheck && c.Result != CheckPassed {
			return true
		}
	}
	return false
}
