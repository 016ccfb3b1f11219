package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// The referee: a turn's decision, feature list and init.sh are checked
// here, and what breaks the rules is restored (runTurn calls referee
// between the git guard's checks).

// referee checks the turn's decision and feature list for the current phase.
// A turn whose agent failed (timeout, crash, request cap) has no decision to
// parse: its failure is reason enough, and its edits are undone.
// A decision that cannot be found in an output the backend cut (cut bytes
// dropped from its middle) says so.
func (c *Controller) referee(ctx context.Context, out *outcome, message string, agentFailed bool, cut int64) error {
	if agentFailed || out.cutShort() {
		switch {
		case agentFailed:
			out.decision = harness.NewDecision(loopstate.Failed, "the agent did not finish the turn")
		case out.decision.Status == "":
			out.decision = harness.NewDecision(loopstate.Cancelled, "the turn was cancelled before it finished")
		}
		return c.restoreIfChanged() // nothing to restore before a list was accepted
	}
	d, perr := loopstate.Parse(message)
	switch {
	case perr != nil && cut > 0:
		out.failAs(harness.FindingNoDecision, "%v\nThe output was about %d bytes and grub kept the start and the end; the middle (%d bytes) was cut. End the turn with the %s block, and keep what you print short.", perr, int64(len(message))+cut, cut, loopstate.OpenTag)
	case perr != nil:
		out.failAs(harness.FindingNoDecision, "%v", perr)
	default:
		out.decision = harness.Decision{Decision: d}
	}
	if perr != nil {
		out.decision = harness.NewDecision(loopstate.Failed, "no valid loop-state decision")
	}
	if c.st.Phase == harness.PhaseInitializer {
		return c.refereeInitializer(ctx, out, perr == nil)
	}
	return c.refereeExecution(ctx, out, perr == nil)
}

// refereeInitializer accepts the planned feature list and init.sh, or fails
// the turn naming every problem.
func (c *Controller) refereeInitializer(ctx context.Context, out *outcome, decided bool) error {
	st := c.st
	if decided && out.decision.Status == loopstate.Blocked {
		return nil
	}
	path := c.store.Path(st.ID, harness.FileFeatureList)
	rel := c.store.Rel(path)
	data, err := c.store.ReadFeatureList(st.ID)
	var list *featurelist.List
	switch {
	case out.listReplaced:
		// checkRegularFiles has failed the turn and removed what was there.
	case errors.Is(err, os.ErrNotExist):
		out.failAs(harness.FindingPlanRejected, "%s was not written; the initializer must write the feature list", rel)
	case err != nil:
		out.failAs(harness.FindingPlanRejected, "%s cannot be read (%v); write it as a regular JSON file", rel, err)
	default:
		list, err = featurelist.Parse(rel, data)
		if err != nil {
			out.failAs(harness.FindingPlanRejected, "%v", err)
		} else if vs := featurelist.CheckInitial(list, st.Goal, st.Limits.MinFeatures, st.Limits.MaxFeatures); len(vs) > 0 {
			out.failAs(harness.FindingPlanRejected, "%s breaks the rules: %s", rel, featurelist.Describe(vs))
			list = nil
		}
	}
	if problem, err := c.checkInitScript(); err != nil {
		return err
	} else if problem != "" {
		out.failAs(harness.FindingPlanRejected, "%s", problem)
	}
	if list == nil || len(out.failures) > 0 {
		return nil
	}
	chk, err := c.runInit(ctx)
	if err != nil {
		return c.cancelledBy(ctx, out, err)
	}
	out.checked("init.sh", chk)
	st.FeatureListBaseline = list
	st.Phase = harness.PhaseExecution
	if out.decision.Status == loopstate.Complete {
		out.decision.Status = loopstate.Continue
		out.decision.NextStep = "implement feature " + list.Features[0].ID
	}
	return nil
}

// refereeExecution checks the turn's feature-list edit against the accepted
// list, verifies a claimed feature, and applies the completion gate.
func (c *Controller) refereeExecution(ctx context.Context, out *outcome, decided bool) error {
	st := c.st
	if !decided || len(out.failures) > 0 {
		return c.restoreIfChanged()
	}
	change, list, err := c.checkListEdit(ctx, out)
	if err != nil {
		return err
	}
	if list == nil { // restored: the features that passed are still swept
		return c.sweepUnlessCancelled(ctx, out)
	}
	st.FeatureListBaseline = list
	if len(change.Flipped) == 1 {
		out.flipped = change.Flipped[0]
		c.noteChecked(out.flipped)
	}
	if list.Passing() == len(list.Features) {
		return c.completionGate(ctx, out)
	}
	if err := c.sweep(ctx, out); err != nil {
		return err
	}
	list = st.FeatureListBaseline // the sweep may have flipped features back
	if out.decision.Status == loopstate.Complete {
		next := list.FirstPending()
		st.Pending.CompletionRejected = fmt.Sprintf("you reported complete, but %d of %d features do not pass yet; the first pending one is %s",
			len(list.Features)-list.Passing(), len(list.Features), next.ID)
		out.note = "Completion claim rejected: " + st.Pending.CompletionRejected
		out.findings = append(out.findings, harness.Finding{Kind: harness.FindingCompletionRejected, Text: st.Pending.CompletionRejected})
		out.decision.Status = loopstate.Continue
		out.decision.NextStep = "implement feature " + next.ID
	}
	return nil
}

// checkListEdit validates the feature list the agent left against the
// accepted baseline and verifies a flip. It returns the list to accept, or
// nil after restoring the baseline and recording why.
func (c *Controller) checkListEdit(ctx context.Context, out *outcome) (featurelist.Change, *featurelist.List, error) {
	st := c.st
	base := st.FeatureListBaseline
	path := c.store.Path(st.ID, harness.FileFeatureList)
	rel := c.store.Rel(path)
	// A file that is not a regular file (a link, even to a valid list; a
	// folder) is an illegal edit in itself. One that is missing or cannot
	// be read is checked as an empty one: a violation, and restored.
	data, err := c.store.ReadFeatureList(st.ID)
	if nr := (*harness.NotRegularError)(nil); errors.As(err, &nr) {
		out.failAs(harness.FindingIllegalEdit, "illegal edit of %s, restored to the accepted list: %v", rel, nr)
		return featurelist.Change{}, nil, c.store.RestoreFeatureList(st.ID, base)
	}
	// The accepted list's bytes, which the store encoded when it saved
	// state: an edit of one feature is read alone against them (without
	// them, nil, the list is read in full).
	baseData, _ := c.store.ListBytes(base)
	change, vs, err := featurelist.CheckTurnBytes(rel, base, baseData, data)
	if err != nil {
		return change, nil, err
	}
	if len(vs) > 0 {
		out.failAs(harness.FindingIllegalEdit, "illegal edit of %s, restored to the accepted list: %s", rel, featurelist.Describe(vs))
		return change, nil, c.store.RestoreFeatureList(st.ID, base)
	}
	list := change.After // parsed and schema-checked by CheckTurnBytes
	if len(change.Flipped) == 0 {
		return change, list, nil
	}
	id := change.Flipped[0]
	chk, err := c.runInit(ctx)
	if err != nil {
		return change, nil, c.cancelledBy(ctx, out, err)
	}
	out.checked("init.sh", chk)
	if !chk.Passed {
		out.failAs(harness.FindingVerification, "feature `%s` was claimed passing but %s; the claim was reverted", id, describeCheck("init.sh", chk))
		return change, nil, c.store.RestoreFeatureList(st.ID, base)
	}
	if cmd := list.Find(id).Verify; cmd != "" {
		vchk, err := c.runCheck(ctx, cmd, c.initTimeout())
		if err != nil {
			return change, nil, c.cancelledBy(ctx, out, err)
		}
		out.checked("verify", vchk)
		if !vchk.Passed {
			out.failAs(harness.FindingVerification, "feature `%s` was claimed passing but its %s; the claim was reverted", id, describeCheck("verify command", vchk))
			return change, nil, c.store.RestoreFeatureList(st.ID, base)
		}
	}
	return change, list, nil
}

// checkRegularFiles enforces that the referee's files are regular files
// inside the harness, and grub's folders real folders (checkOwnFiles): an
// init.sh or feature-list.json that the agent
// replaced by a symbolic link (even to a valid file), a folder or anything
// else is an illegal edit, whatever the turn did otherwise. init.sh gets
// its content from before the turn back (initBefore; the starter when
// there was none), feature-list.json the accepted list; before a list was
// accepted, what is there is removed. It runs before anything executes
// init.sh.
func (c *Controller) checkRegularFiles(out *outcome, initBefore []byte) error {
	st := c.st
	if err := c.checkOwnFiles(out); err != nil {
		return err
	}
	var nr *harness.NotRegularError
	if _, err := c.store.ReadInitScript(st.ID); errors.As(err, &nr) {
		if initBefore == nil {
			initBefore = []byte(templates.InitScript)
		}
		if err := c.store.RestoreInitScript(st.ID, initBefore); err != nil {
			return err
		}
		out.failAs(harness.FindingIllegalEdit, "illegal edit: %v; grub restored it as a regular file with its content from before the turn", nr)
	}
	if _, err := c.store.ReadFeatureList(st.ID); errors.As(err, &nr) {
		out.listReplaced = true
		if base := st.FeatureListBaseline; base != nil {
			if err := c.store.RestoreFeatureList(st.ID, base); err != nil {
				return err
			}
			out.failAs(harness.FindingIllegalEdit, "illegal edit: %v; grub restored the accepted list as a regular file", nr)
		} else {
			if err := c.store.RemoveNotRegular(st.ID, harness.FileFeatureList); err != nil {
				return err
			}
			out.failAs(harness.FindingIllegalEdit, "illegal edit: %v; grub removed it: write the feature list as a regular JSON file", nr)
		}
	}
	return nil
}

// reconcileInitScript runs before the first turn of a run: an init.sh
// left as something other than a regular file (a runner died mid-turn, or
// it was replaced between runs) is replaced by the starter, since the
// content it had is not known here, and the log says so.
func (c *Controller) reconcileInitScript() error {
	var nr *harness.NotRegularError
	if _, err := c.store.ReadInitScript(c.st.ID); !errors.As(err, &nr) {
		return nil
	}
	if err := c.store.ResetInitScript(c.st.ID); err != nil {
		return err
	}
	msg := fmt.Sprintf("%v; grub wrote the starter in its place (the last committed version is in git)", nr)
	c.say("%s", msg)
	c.appendLog(logEntry{decision: loopstate.Reconciled, summary: "init.sh was not a regular file when the run started", failure: msg})
	c.st.Pending.Failure = strings.TrimSpace(c.st.Pending.Failure + "\n" + msg)
	return nil
}

// cancelledBy turns an error from a check into a cancelled turn when the
// run itself was cancelled, and returns other errors.
func (c *Controller) cancelledBy(ctx context.Context, out *outcome, err error) error {
	if ctx.Err() == nil {
		return err
	}
	out.cancelled = true
	out.decision = harness.NewDecision(loopstate.Cancelled, "cancelled while grub verified the turn")
	return c.restoreIfChanged()
}

// restoreIfChanged puts the accepted feature list back if the file differs.
func (c *Controller) restoreIfChanged() error {
	base := c.st.FeatureListBaseline
	if base == nil {
		return nil
	}
	return c.store.RestoreFeatureListIfChanged(c.st.ID, base)
}

// reconcileFeatureList runs before the first turn of a run: a feature list
// that differs from the accepted one (a runner died mid-turn, or the file
// was edited between runs) is checked like a turn's edit, so a legal,
// verified flip is kept and anything else is restored.
func (c *Controller) reconcileFeatureList(ctx context.Context) error {
	if c.st.FeatureListBaseline == nil {
		return nil
	}
	out := &outcome{}
	_, list, err := c.checkListEdit(ctx, out)
	if err != nil {
		return err
	}
	if len(out.failures) > 0 {
		c.say("feature-list.json differed from the accepted list: %s", strings.Join(out.failures, "; "))
		c.appendLog(logEntry{decision: loopstate.Reconciled, summary: "feature-list.json differed from the accepted list when the run started", failure: strings.Join(out.failures, "; ")})
		return nil
	}
	if list != nil && !featurelist.Equal(list, c.st.FeatureListBaseline) {
		c.say("feature-list.json differed from the accepted list; the change is legal and verified, so it is kept")
		c.st.FeatureListBaseline = list
	}
	return nil
}
