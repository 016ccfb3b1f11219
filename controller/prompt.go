package controller

import (
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/prompts"
)

// buildPrompt renders the prompt of the next turn from state and the notes
// pending for it. It returns the prompt and the feature it proposes.
func (c *Controller) buildPrompt(p harness.Pending) (string, string, error) {
	st := c.st
	paths := prompts.Paths{
		HarnessDir:  c.store.Rel(c.store.Dir(st.ID)),
		FeatureList: c.store.Rel(c.store.Path(st.ID, harness.FileFeatureList)),
		ProgressLog: c.store.Rel(c.store.Path(st.ID, harness.FileProgressLog)),
		InitScript:  c.store.Rel(c.store.Path(st.ID, harness.FileInitScript)),
		Checklist:   c.store.Rel(c.store.Path(st.ID, harness.FileChecklist)),
		StateFile:   c.store.Rel(c.store.Path(st.ID, harness.FileState)),
	}
	var goalChange *prompts.GoalChange
	if g := p.ObjectiveUpdated; g != nil {
		goalChange = &prompts.GoalChange{Old: g.Old, New: g.New}
	}
	if st.Phase == harness.PhaseInitializer {
		text, err := prompts.RenderInitializer(prompts.Initializer{
			Locale: st.Locale, TaskID: st.ID, Goal: st.Goal, Paths: paths,
			MinFeatures: st.Limits.MinFeatures, MaxFeatures: st.Limits.MaxFeatures,
			Iteration: st.CurrentIteration, Failure: p.Failure,
			RecoveredUnknownTurn: p.RecoveredUnknownTurn,
			Answer:               p.Answer,
			Question:             p.AnswerTo,
			Options:              p.AnswerOptions,
			Choice:               p.AnswerChoice,
			ObjectiveUpdated:     goalChange, Steer: p.Steer,
		})
		return text, "", err
	}
	e := prompts.Execution{
		Locale: st.Locale, TaskID: st.ID, Goal: st.Goal, Paths: paths,
		Iteration: st.CurrentIteration, MaxIterations: st.Limits.MaxIterations,
		Failure:              p.Failure,
		RecoveredUnknownTurn: p.RecoveredUnknownTurn,
		CompletionRejected:   p.CompletionRejected,
		AuditRegression:      p.AuditRegression,
		BlockedReexamine:     p.BlockedReexamine,
		ObjectiveUpdated:     goalChange,
		Steer:                p.Steer,
		Answer:               p.Answer,
		Question:             p.AnswerTo,
		Options:              p.AnswerOptions,
		Choice:               p.AnswerChoice,
		TokensUsed:           st.Usage.TokensUsed,
		TokenBudget:          st.Limits.TokenBudget,
	}
	feature := ""
	if b := st.FeatureListBaseline; b != nil {
		e.Passing, e.Total = b.Passing(), len(b.Features)
		if f := b.FirstPending(); f != nil {
			feature = f.ID
			e.Next = &prompts.FeatureRef{ID: f.ID, Category: f.Category, Description: f.Description, Steps: f.Steps, Verify: f.Verify}
		}
	}
	if li := st.LastInit; li != nil {
		e.LastInit = &prompts.Check{Command: li.Command, ExitCode: li.ExitCode, Passed: li.Passed, TimedOut: li.TimedOut, OutputTail: li.OutputTail}
	}
	if d := st.LastDecision; d != nil {
		e.LastDecision = &prompts.Decision{Status: string(d.Status), Summary: d.Summary, NextStep: d.NextStep, Blocker: d.Blocker, Question: d.Question}
	}
	text, err := prompts.RenderExecution(e)
	return text, feature, err
}
