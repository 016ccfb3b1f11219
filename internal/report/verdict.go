package report

import (
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// OutcomeText is the turn's outcome in words ("regression found").
func (t Turn) OutcomeText() string { return t.Outcome.Text() }

// GrubSays is what grub found and did in the turn, in one line, shown
// before the agent's claim; the findings follow it. "" for a turn known
// only from git.
func (t Turn) GrubSays() string {
	switch t.Outcome {
	case harness.OutcomeUnknown:
		return "grub stopped during this turn (a crash or a kill); what the turn did is not known, and it was not replayed"
	case harness.OutcomeCancelled:
		return "the turn was cut short; it counts neither as a failure nor as a success"
	case harness.OutcomeRejected:
		return "rejected: the referee caught the turn breaking the rules and put back what it changed"
	case harness.OutcomeFailed:
		if t.infrastructure() {
			return "failed before there was anything to referee; its feature-list edit was undone"
		}
		return "failed: a check did not pass, and the claim was not accepted"
	case harness.OutcomeRegressionFound:
		return "accepted, but the completion audit found a feature failing again and set it back"
	case harness.OutcomeClaimRejected:
		return "accepted the turn's work, not its claim that the task is complete"
	case harness.OutcomeAccepted:
		if t.Flipped != "" {
			return "verified feature " + t.Flipped + " and accepted the turn"
		}
		return "accepted the turn"
	}
	return ""
}

// infrastructure reports whether every finding of the turn is one that is
// not a catch (a timeout, an agent or setup error).
func (t Turn) infrastructure() bool {
	for _, f := range t.Findings {
		if harness.FindingKind(f.Kind).Caught() {
			return false
		}
	}
	return len(t.Findings) > 0
}

// OutcomesText is the turns counted by outcome: "3 accepted, 1 rejected".
func (r *Report) OutcomesText() string {
	parts := make([]string, len(r.Outcomes))
	for i, o := range r.Outcomes {
		parts[i] = harness.FormatCount(int64(o.Count)) + " " + o.Outcome.Text()
	}
	return strings.Join(parts, ", ")
}

// CostText is the task's reported cost, or "not reported" when the
// backend gave none.
func (b Budgets) CostText() string {
	if !b.CostReported || b.CostUSD == nil {
		return "not reported"
	}
	return templates.FormatUSD(b.CostUSD.Used)
}

// CostLimitText is the cost budget, or "none".
func (b Budgets) CostLimitText() string {
	if b.CostUSD == nil || b.CostUSD.Limit <= 0 {
		return "none"
	}
	return templates.FormatUSD(b.CostUSD.Limit)
}

// ClaimLabel is how the turn's summary is labelled: the agent's claim
// with its decision when the agent reported one (continue, complete,
// blocked, as the referee left it), grub's note when grub wrote the
// summary itself (a failed, cancelled or unknown turn), and "summary"
// for a turn known only from its commit.
func (t Turn) ClaimLabel() string {
	switch {
	case !t.Recorded:
		return "summary"
	case loopstate.Status(t.Decision).Reported():
		return "agent's claim (" + t.Decision + ")"
	}
	return "grub's note"
}
