package controller

import (
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/templates"
)

// ledgerLine is the turn's line of turns.jsonl, from the referee's outcome
// and the state after the turn (its final status included). It is saved
// with the turn's record in state and appended after the progress-log
// entry, before the turn is committed, so the commit holds it.
func (c *Controller) ledgerLine(out *outcome, entry templates.Entry) harness.TurnRecord {
	st := c.st
	r := harness.TurnRecord{
		Iteration:       st.CurrentIteration,
		Phase:           out.phase,
		Feature:         entry.Feature,
		Flipped:         out.flipped,
		Decision:        out.decision.Status,
		Summary:         out.decision.Summary,
		Findings:        out.findings,
		Checks:          out.checks,
		DurationSeconds: max(out.elapsed.Seconds(), 0),
		Usage: harness.TurnUsage{
			InputTokens:       out.usage.InputTokens,
			CachedInputTokens: out.usage.CachedInputTokens,
			OutputTokens:      out.usage.OutputTokens,
			Requests:          out.usage.Requests,
			Estimated:         out.usage.Estimated,
		},
		Status:     st.Status,
		StopReason: st.StopReason,
		Time:       entry.At,
	}
	if out.usage.CostReported && out.usage.CostUSD >= 0 {
		cost := out.usage.CostUSD
		r.Usage.CostUSD = &cost
	}
	if b := st.FeatureListBaseline; b != nil {
		r.Passing, r.Total = b.Passing(), len(b.Features)
	}
	return r
}
