package controller

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// The regression sweep and the completion audit: grub runs the checks of
// features that pass already again, on the tree the turn left, and sets a
// feature whose check fails back to passes false itself, so that the
// accepted list tells the truth as far as grub has checked. Both run
// inside the referee, so what their commands leave running is ended with
// the rest of the verification's (endTurnProcesses, leftByChecks), and a
// flip-back is a change of the accepted list, committed with the turn.

// sweepPick returns up to n features of l to check again: passing ones
// with a verify command, other than skip (the feature the turn's flip
// just verified), least recently checked first (last holds each
// feature's last checked iteration; never checked counts as 0), in list
// order among equals.
func sweepPick(l *featurelist.List, last map[string]int, skip string, n int) []featurelist.Feature {
	if n <= 0 {
		return nil
	}
	var picks []featurelist.Feature
	for _, f := range l.Features {
		if f.Passes && f.Verify != "" && f.ID != skip {
			picks = append(picks, f)
		}
	}
	slices.SortStableFunc(picks, func(a, b featurelist.Feature) int { return cmp.Compare(last[a.ID], last[b.ID]) })
	return picks[:min(n, len(picks))]
}

// recheck runs the verify commands of feats on the workspace as it is,
// several at once (at most runtime.NumCPU), each as runCheck runs a
// check: in the sandbox, with the scrubbed environment, under
// --init-timeout. The checks come back in the order of feats. An error is
// the first machinery error, or the context's when the run is cancelled.
func (c *Controller) recheck(ctx context.Context, feats []featurelist.Feature) ([]harness.Check, error) {
	chks := make([]harness.Check, len(feats))
	errs := make([]error, len(feats))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(feats)) {
		wg.Go(func() {
			for i := range next {
				chks[i], errs[i] = c.runCheck(ctx, feats[i].Verify, c.initTimeout())
			}
		})
	}
	for i := range feats {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return chks, nil
}

// noteChecked records that feature id's check ran in this iteration.
func (c *Controller) noteChecked(id string) {
	if c.st.LastChecked == nil {
		c.st.LastChecked = map[string]int{}
	}
	c.st.LastChecked[id] = c.st.CurrentIteration
}

// settleRechecks records the rechecks of feats in the ledger under name
// (harness.CheckRecheck for the sweep, harness.CheckAudit for the
// completion audit, whose passing checks are recorded without their
// command: a line of 2,000 checks stays small), and the verification line
// counts them; it sets each feature whose check failed back to passes
// false in a new accepted list, failing the turn with a regression
// finding per feature that says what failed and in which turn. It
// returns how many features regressed.
func (c *Controller) settleRechecks(out *outcome, feats []featurelist.Feature, chks []harness.Check, name, what string) int {
	st := c.st
	var failed []int
	since := make(map[string]int) // when a failed feature's check last passed
	for i, chk := range chks {
		if !chk.Passed {
			failed = append(failed, i)
			since[feats[i].ID] = st.LastChecked[feats[i].ID]
		}
		c.noteChecked(feats[i].ID)
		lc := harness.NewLedgerCheck(name, chk)
		lc.Feature = feats[i].ID
		if name == harness.CheckAudit && chk.Passed {
			lc.Command = ""
		}
		out.checks = append(out.checks, lc)
	}
	line := fmt.Sprintf("%s: %d of %d passed", what, len(chks)-len(failed), len(chks))
	if out.verification == "" {
		out.verification = line
	} else {
		out.verification += "; " + line
	}
	if len(failed) == 0 {
		return 0
	}
	list := st.FeatureListBaseline.Clone()
	for _, i := range failed {
		id := feats[i].ID
		when := "it was accepted as passing"
		if it := since[id]; it > 0 {
			when = fmt.Sprintf("its check last passed in turn %d", it)
		}
		evidence := fmt.Sprintf("grub: its verify command failed again in turn %d (%s); set back to passes false", st.CurrentIteration, what)
		f := list.Find(id)
		f.Passes, f.Evidence = false, &evidence
		msg := fmt.Sprintf("regression found in turn %d by %s: feature `%s` passed (%s), but on the tree this turn left, its %s; grub set it back to passes: false. Restore what it needs without breaking the feature you worked on",
			st.CurrentIteration, what, id, when, describeCheck("verify command", chks[i]))
		if name == harness.CheckAudit {
			// The audit is grub's check of the task, not of the turn: a
			// finding, never a failure counted against --max-fail.
			out.audited = append(out.audited, msg)
			out.findings = append(out.findings, harness.Finding{Kind: harness.FindingRegression, Text: msg})
			continue
		}
		out.failAs(harness.FindingRegression, "%s", msg)
	}
	st.FeatureListBaseline = &list
	return len(failed)
}

// sweep is the regression sweep of an execution turn whose list edit was
// accepted: the checks of up to --regression-checks other passing
// features run again, least recently checked first, after init.sh (run
// here when the turn's flip did not run it; a failing init.sh skips the
// sweep, as it is the turn's to fix).
func (c *Controller) sweep(ctx context.Context, out *outcome) error {
	st := c.st
	feats := sweepPick(st.FeatureListBaseline, st.LastChecked, out.flipped, st.Limits.RegressionChecks)
	if len(feats) == 0 {
		return nil
	}
	if ok, err := c.initForRecheck(ctx, out); err != nil || !ok {
		return err
	}
	chks, err := c.recheck(ctx, feats)
	if err != nil {
		return c.cancelledBy(ctx, out, err)
	}
	c.settleRechecks(out, feats, chks, harness.CheckRecheck, "the regression sweep")
	return nil
}

// audit is the completion audit: before a task whose features all pass is
// complete, init.sh and the verify command of every passing feature (but
// the one whose flip this turn verified) run on the final tree. It
// reports whether the task may complete; a feature whose check fails is
// set back to passes false (settleRechecks) and the task goes on.
func (c *Controller) audit(ctx context.Context, out *outcome) (bool, error) {
	st := c.st
	if ok, err := c.initForRecheck(ctx, out); err != nil || !ok {
		return false, err
	}
	feats := sweepPick(st.FeatureListBaseline, nil, out.flipped, len(st.FeatureListBaseline.Features))
	if len(feats) == 0 {
		return true, nil
	}
	chks, err := c.recheck(ctx, feats)
	if err != nil {
		return false, c.cancelledBy(ctx, out, err)
	}
	return c.settleRechecks(out, feats, chks, harness.CheckAudit, "the completion audit") == 0, nil
}

// initForRecheck runs init.sh unless the turn's verification ran it, and
// reports whether it passed.
func (c *Controller) initForRecheck(ctx context.Context, out *outcome) (bool, error) {
	if !strings.HasPrefix(out.verification, "init.sh ") {
		chk, err := c.runInit(ctx)
		if err != nil {
			return false, c.cancelledBy(ctx, out, err)
		}
		out.checked("init.sh", chk)
	}
	return c.st.LastInit != nil && c.st.LastInit.Passed, nil
}

// sweepUnlessCancelled sweeps after a turn whose list edit was restored,
// unless the verification was cancelled.
func (c *Controller) sweepUnlessCancelled(ctx context.Context, out *outcome) error {
	if out.cancelled {
		return nil
	}
	return c.sweep(ctx, out)
}

// completionGate decides whether a turn that leaves every feature passing
// completes the task: init.sh must pass and the completion audit find no
// regression. A regression sets the task going on with the feature to
// restore next.
func (c *Controller) completionGate(ctx context.Context, out *outcome) error {
	st := c.st
	ok, err := c.audit(ctx, out)
	switch {
	case err != nil || out.cancelled:
		return err
	case ok:
		out.complete = true
	case st.LastInit != nil && !st.LastInit.Passed:
		out.failAs(harness.FindingVerification, "every feature passes but %s", describeCheck("init.sh", *st.LastInit))
	default:
		out.decision.Status = loopstate.Continue
		out.decision.NextStep = "restore feature " + st.FeatureListBaseline.FirstPending().ID
	}
	return nil
}
