package controller

import (
	"context"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// recoverUnknownTurn records the turn a dead runner left unfinished, as a
// turn is recorded (saved as pending, then its entry and commit), so that
// it has one entry and one commit whenever grub dies again. It is never
// replayed: the next prompt tells the agent to look at the workspace.
func (c *Controller) recoverUnknownTurn(ctx context.Context) error {
	st := c.st
	st.AwaitingTurn = false
	st.TurnStartedAt = nil
	d := harness.NewDecision(loopstate.Unknown, "the runner stopped during this turn; its outcome is unknown")
	d.Iteration = st.CurrentIteration
	st.LastDecision = &d
	st.Pending.RecoveredUnknownTurn = true
	out := &outcome{decision: d, phase: st.Phase}
	if err := c.recoverGit(out); err != nil {
		return err
	}
	if err := c.recoverConfig(out); err != nil {
		return err
	}
	if _, err := c.checkHistory(ctx, out, "the turn, which a crash interrupted,"); err != nil {
		return err
	}
	if err := c.setAsidePlanted(out, "the turn"); err != nil {
		return err
	}
	if _, err := c.checkRecord(out, "during the turn", st.FeatureListBaseline, c.store.KeptInitScript(st.ID)); err != nil {
		return err
	}
	if err := c.recoverProtected(out); err != nil {
		return err
	}
	// The feature list is reconciled before the lost turn is recorded and
	// committed, so that the recovery commit holds the accepted list.
	if err := c.reconcile(ctx); err != nil {
		return err
	}
	entry := templates.Entry{Iteration: st.CurrentIteration, Phase: string(st.Phase), Decision: loopstate.Unknown,
		Summary: "grub stopped during this turn (crash or kill); its outcome is unknown and it is not replayed", At: c.now().UTC(),
		Failure: strings.Join(out.failures, "\n")}
	if len(out.failures) > 0 {
		// As the end of the turn would have: a failed turn, told to the
		// agent in the next prompt.
		st.ConsecutiveFailures++
		st.LastError = entry.Failure
		st.Pending.Failure = entry.Failure
	}
	ledger := c.ledgerLine(out, entry)
	if err := c.saveRecord(entry, d.Summary, &ledger, 0, false); err != nil {
		return err
	}
	if err := c.writeRecord(context.WithoutCancel(ctx), false); err != nil {
		return err
	}
	c.emitRecorded(ledger, out)
	c.say("turn %d was interrupted by a crash; recorded as unknown", st.CurrentIteration)
	return nil
}
