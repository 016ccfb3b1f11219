package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// History is the task's branch in git as the referee sees it: history
// only grows. internal/cli wires it on gitx. The mark (State.History) is
// the branch HEAD must be on and grub's last turn commit, from which
// HEAD must descend: commits added on top are fine, a reset, an amend, a
// rebase, another branch, a deleted or renamed branch or a detached HEAD
// are not.
type History interface {
	// Head is where HEAD is now: its branch ("" when detached) and
	// commit ("" on a branch without one).
	Head() (harness.HistoryMark, error)
	// Check says how HEAD departs from mark; "" when it does not.
	Check(mark harness.HistoryMark) (problem string, err error)
	// Restore puts mark's branch back at its commit with HEAD on it, and
	// the index and tracked files (the task's state.json aside, which
	// grub writes) as that commit has them, keeping the commits HEAD and
	// the branch named reachable under keepRef. It returns the refs it
	// wrote.
	Restore(ctx context.Context, mark harness.HistoryMark, keepRef string) (kept []string, err error)
}

// HistoryRewrittenError is a run's refusal to start on a history that
// no longer holds grub's last turn commit, changed while no run was on:
// the user's own doing, which grub does not undo. Resuming with
// --accept-history (Options.AcceptHistory) takes HEAD as the new base.
type HistoryRewrittenError struct {
	TaskID  string
	Problem string
	Mark    harness.HistoryMark
}

func (e *HistoryRewrittenError) Error() string {
	branch := strings.TrimPrefix(e.Mark.Branch, "refs/heads/")
	back := fmt.Sprintf("git checkout --detach %s", e.Mark.Commit)
	if branch != "" {
		back = fmt.Sprintf("git branch -f %s %s && git checkout %s (or git update-ref %s %s)", branch, e.Mark.Commit, branch, e.Mark.Branch, e.Mark.Commit)
	}
	return fmt.Sprintf("task %s: git's history changed since the task's last run: %s; grub only adds commits on top of its last turn commit. Put it back (%s), or take the history as it is now as the task's base: grub resume %s --accept-history",
		e.TaskID, e.Problem, back, e.TaskID)
}

// startHistory checks the history when a run starts, before anything is
// committed. A task without a mark (new, or from an older grub) takes
// HEAD as it is. A turn a crash cut short is checked by its recovery
// (recoverUnknownTurn): whatever happened since is the agent's. Else the
// last run ended cleanly and the change is the user's: HEAD on another
// branch that still holds grub's last turn commit is taken (a clone on
// another machine checks out its own branch); a history without it, or a
// detached HEAD, is refused, unless Options.AcceptHistory.
func (c *Controller) startHistory() error {
	h := c.opts.History
	if h == nil || c.opts.Committer == nil {
		return nil
	}
	if c.st.History == nil {
		return c.markHead("")
	}
	if c.st.AwaitingTurn && !c.opts.AcceptHistory {
		return nil
	}
	problem, err := h.Check(*c.st.History)
	if err != nil || problem == "" {
		return err
	}
	if c.st.History.Branch != "" {
		// Between runs the branch is the checkout's (a clone on another
		// machine, a branch renamed, one of the user's on top): what
		// matters is that HEAD, on a branch, still holds grub's commits.
		other, err := h.Check(harness.HistoryMark{Commit: c.st.History.Commit})
		head, herr := h.Head()
		if err == nil && herr == nil && other == "" && head.Branch != "" {
			c.say("HEAD is on %s, which holds the task's history: the task goes on there", strings.TrimPrefix(head.Branch, "refs/heads/"))
			c.st.History.Branch = head.Branch
			return nil
		}
	}
	if !c.opts.AcceptHistory {
		return &HistoryRewrittenError{TaskID: c.st.ID, Problem: problem, Mark: *c.st.History}
	}
	return c.markHead(problem)
}

// markHead takes HEAD as the task's mark; accepted names the departure
// the user accepted, for the progress lines and the log.
func (c *Controller) markHead(accepted string) error {
	head, err := c.opts.History.Head()
	if err != nil {
		return fmt.Errorf("read git's HEAD: %w", err)
	}
	if head.Commit == "" {
		return nil // nothing committed yet: the first commit sets it
	}
	if accepted != "" {
		c.say("accepted the history as it is now (%s): HEAD %s is the task's new base", accepted, short12(head.Commit))
		c.appendLog(logEntry{decision: loopstate.Reconciled,
			summary: fmt.Sprintf("the user accepted git's history as it is now (--accept-history): %s; HEAD %s is the task's new base", accepted, short12(head.Commit))})
	}
	c.st.History = &head
	return nil
}

// advanceHistory moves the mark to HEAD once a run has checked it (and
// recovered a turn a crash cut short), so that commits added on top
// since are part of what may not be taken off.
func (c *Controller) advanceHistory() error {
	if c.opts.History == nil || c.st.History == nil || c.opts.Committer == nil {
		return nil
	}
	if problem, err := c.opts.History.Check(*c.st.History); err != nil || problem != "" {
		return err // the turn's check restores it
	}
	head, err := c.opts.History.Head()
	if err != nil || head.Commit == "" {
		return err
	}
	c.st.History.Commit = head.Commit
	return nil
}

// committedHistory moves the mark to grub's own new turn commit.
func (c *Controller) committedHistory(hash string) {
	if hash == "" || c.st.History == nil {
		return
	}
	c.st.History.Commit = hash
}

// checkHistory checks, after what who ran, that HEAD is still on the
// task's branch and descends from grub's last turn commit. If not, the
// turn fails and the history is put back: the branch at that commit,
// HEAD on it, the index and tracked files as committed, and the commits
// taken off kept under refs/grub/<id>/discarded/<iteration>. rewritten
// tells whether it was. A history that cannot be put back stops the run.
func (c *Controller) checkHistory(ctx context.Context, out *outcome, who string) (rewritten bool, err error) {
	h, m := c.opts.History, c.st.History
	if h == nil || m == nil || c.opts.Committer == nil {
		return false, nil
	}
	problem, err := h.Check(*m)
	if err != nil {
		return false, fmt.Errorf("check git's history after turn %d: %w", c.st.CurrentIteration, err)
	}
	if problem == "" {
		return false, nil
	}
	keep := fmt.Sprintf("refs/grub/%s/discarded/%d", c.st.ID, c.st.CurrentIteration)
	kept, err := h.Restore(context.WithoutCancel(ctx), *m, keep)
	if err != nil {
		return true, fmt.Errorf("%s rewrote git's history (%s) and grub could not put it back: %w; check the branch with git log before running grub again (grub resume %s --accept-history takes the history as it is then)", who, problem, err, c.st.ID)
	}
	where := "grub's last turn commit " + short12(m.Commit)
	if m.Branch != "" {
		where = strings.TrimPrefix(m.Branch, "refs/heads/") + " at " + where
	}
	saved := "nothing was taken off"
	if len(kept) > 0 {
		saved = "the commits taken off are kept as " + strings.Join(kept, ", ")
	}
	out.failAs(harness.FindingTampering, "%s rewrote git's history: %s. grub put HEAD back on %s and restored the tracked files and the index; %s. Do not rewrite history (no reset, amend, rebase, checkout of another branch, update-ref or branch deletion): add commits on top, or leave committing to grub",
		who, problem, where, saved)
	c.say("turn %d: %s rewrote git's history (%s); put back on %s", c.st.CurrentIteration, who, problem, where)
	return true, nil
}

// historyAfterVerify checks the history again once grub's verification
// has run (init.sh and verify commands are the agent's too); a rewrite
// then also undoes what the verification accepted.
func (c *Controller) historyAfterVerify(ctx context.Context, out *outcome, base *featurelist.List, phase harness.Phase) error {
	rewritten, err := c.checkHistory(ctx, out, "init.sh or a verify command, run by grub to verify the turn,")
	if err != nil || !rewritten {
		return err
	}
	c.st.FeatureListBaseline, c.st.Phase = base, phase
	out.flipped, out.complete = "", false
	return c.restoreIfChanged()
}

func short12(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
