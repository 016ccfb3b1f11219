package controller

import (
	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/harness"
)

// emitRecorded reports a recorded turn from its line of turns.jsonl, the
// one source of both: each finding and check, then turn.ended, then the
// question the agent asked, if the task stops for it.
func (c *Controller) emitRecorded(r harness.TurnRecord, out *outcome) {
	for _, f := range r.Findings {
		e := c.event(events.Finding)
		e.Finding = &events.Caught{Kind: string(f.Kind), Text: events.Clip(f.Text), Caught: f.Kind.Caught()}
		c.progress.Event(e)
	}
	for _, chk := range r.Checks {
		e := c.event(events.Check)
		e.Check = &events.Ran{Name: chk.Name, Feature: chk.Feature, Command: events.Clip(chk.Command), Result: chk.Result,
			ExitCode: chk.ExitCode, DurationSeconds: chk.DurationSeconds}
		c.progress.Event(e)
	}
	e := c.event(events.TurnEnded)
	e.Ended = turnEnded(r)
	e.Ended.TokensUsed, e.Ended.CostUSD = c.st.Usage.TokensUsed, c.st.Usage.CostUSD
	c.progress.Event(e)
	if q := asks(out); q != "" {
		e := c.event(events.Question)
		e.Question = &events.Asked{Text: events.Clip(q), Options: out.decision.Options}
		c.progress.Event(e)
	}
}

// turnEnded is a turn.ended event's data: the ledger line's fields, and
// the turn's outcome as every view has it (harness.TurnRecord.Outcome).
func turnEnded(r harness.TurnRecord) *events.Ended {
	return &events.Ended{
		Phase: string(r.Phase), Feature: r.Feature, Flipped: r.Flipped, Decision: string(r.Decision),
		Summary: events.Clip(r.Summary), Outcome: string(r.Outcome()), Findings: len(r.Findings),
		Usage: events.Usage{InputTokens: r.Usage.InputTokens, CachedInputTokens: r.Usage.CachedInputTokens,
			OutputTokens: r.Usage.OutputTokens, Requests: r.Usage.Requests, Estimated: r.Usage.Estimated, CostUSD: r.Usage.CostUSD},
		DurationSeconds: r.DurationSeconds, Passing: r.Passing, Total: r.Total,
		Status: string(r.Status), StopReason: r.StopReason,
	}
}
