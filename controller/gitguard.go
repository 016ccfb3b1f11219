package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// GitGuard copies, before a turn, everything in the repository's git
// directory that can make git run a program (hooks, config keys that name
// one, the files the config includes, attributes), so that the referee can
// undo a turn that plants one: the user's next `git status` or `git
// commit` would run it with the user's rights, outside any sandbox.
type GitGuard interface {
	Record() (GitSnapshot, error)
	// Load reads back a copy its snapshot's Encode wrote.
	Load(data []byte) (GitSnapshot, error)
}

// GitSnapshot is one copy taken by a GitGuard.
type GitSnapshot interface {
	// Check names each change since the copy, in words for the log and
	// the next prompt; nil when nothing changed.
	Check() ([]string, error)
	// Restore puts the copy back.
	Restore() error
	// Encode writes the copy (as JSON) for GitGuard.Load: it is kept
	// with the turn's record, so that a resume after a crash mid-turn
	// compares and restores as the end of the turn would have.
	Encode() ([]byte, error)
}

// recordGit takes the copy of the git directory's guarded files; nil
// without a guard (no repository).
func (c *Controller) recordGit() (GitSnapshot, error) {
	if c.opts.GitGuard == nil {
		return nil, nil
	}
	snap, err := c.opts.GitGuard.Record()
	if err != nil {
		return nil, fmt.Errorf("copy git's hooks and configuration before the turn: %w", err)
	}
	return snap, nil
}

// keepGitCopy keeps the copy taken before the turn in the task's private
// folder, outside the workspace where nothing the turn runs can write it,
// before state says the turn is awaited: a run that finds the turn
// awaited after a crash compares with it (recoverGit). Without a private
// folder (in-process tests) nothing is kept.
func (c *Controller) keepGitCopy(snap GitSnapshot) error {
	if snap == nil || c.store.Private == "" {
		return nil
	}
	data, err := snap.Encode()
	if err != nil {
		return fmt.Errorf("keep the copy of git's hooks and configuration: %w", err)
	}
	return c.store.SaveGuardCopy(c.st.ID, c.st.CurrentIteration, data)
}

// recoverGit compares the git directory with the copy kept before the
// turn a crash interrupted (keepGitCopy), as the end of that turn would
// have: each change is restored and named in out, the unknown turn's
// record. A copy of another turn (or none: an older grub) is not used.
func (c *Controller) recoverGit(out *outcome) error {
	if c.opts.GitGuard == nil || c.store.Private == "" {
		return nil
	}
	iteration, data, ok, err := c.store.LoadGuardCopy(c.st.ID)
	if err != nil {
		return err
	}
	if !ok || iteration != c.st.CurrentIteration {
		return nil
	}
	snap, err := c.opts.GitGuard.Load(data)
	if err != nil {
		c.say("warning: the copy of git's hooks and configuration kept before turn %d cannot be read (%v); check .git yourself", iteration, err)
		return nil
	}
	_, err = c.guardGit(out, snap, "the turn, which a crash interrupted,")
	return err
}

// guardGit compares the git directory with the copy; on any change it
// restores the copy, fails the turn naming each change (who made it says
// what ran) and reports it. planted tells whether anything changed. A
// copy that cannot be put back is an error: the run stops rather than
// leave a planted program behind unsaid.
func (c *Controller) guardGit(out *outcome, snap GitSnapshot, who string) (planted bool, err error) {
	if snap == nil {
		return false, nil
	}
	changes, err := snap.Check()
	if err != nil {
		return false, fmt.Errorf("check git's hooks and configuration after turn %d: %w", c.st.CurrentIteration, err)
	}
	if len(changes) == 0 {
		return false, nil
	}
	list := strings.Join(changes, "; ")
	if err := snap.Restore(); err != nil {
		var broken interface{ GitDirBroken() }
		if errors.As(err, &broken) {
			return true, fmt.Errorf("%s removed or broke the git directory (%s): %w", who, list, err)
		}
		return true, fmt.Errorf("%s changed git's configuration or hooks (%s) and grub could not restore them: %w; do not run git in this repository before checking .git", who, list, err)
	}
	out.failAs(harness.FindingTampering, "%s changed git's configuration or hooks, which can run programs with the user's rights; restored: %s", who, list)
	c.say("turn %d: %s changed git's configuration or hooks; restored: %s", c.st.CurrentIteration, who, list)
	return true, nil
}

// refereeGuarded referees the turn between two checks of the git
// directory: after the agent (a plant fails the turn before grub runs
// anything of the agent's), and after grub's own verification, since
// init.sh and verify commands are the agent's too. A plant found by the
// second check also undoes what the verification accepted.
func (c *Controller) refereeGuarded(ctx context.Context, out *outcome, message string, agentFailed bool, snap GitSnapshot, outputCut int64) error {
	if _, err := c.guardGit(out, snap, "the turn"); err != nil {
		return err
	}
	if _, err := c.checkHistory(ctx, out, "the turn"); err != nil {
		return err // after the guard, which names a removed .git
	}
	st := c.st
	base, phase := st.FeatureListBaseline, st.Phase
	if err := c.referee(ctx, out, message, agentFailed, outputCut); err != nil {
		return err
	}
	ended := c.endTurnProcesses(out, leftByChecks)
	planted, err := c.guardGit(out, snap, "init.sh or a verify command, run by grub to verify the turn,")
	if err != nil || (!planted && ended) {
		return err
	}
	st.FeatureListBaseline, st.Phase = base, phase
	out.flipped, out.complete = "", false
	return c.restoreIfChanged()
}

// reconcileGuarded is reconcileFeatureList (which may run init.sh) under
// the same guard as a turn; a plant is restored and logged, and a flip
// the reconciliation accepted is undone.
func (c *Controller) reconcileGuarded(ctx context.Context) error {
	snap, err := c.recordGit()
	if err != nil {
		return err
	}
	config, err := c.store.SnapshotConfig()
	if err != nil {
		return err
	}
	base := c.st.FeatureListBaseline
	if err := c.reconcileFeatureList(ctx); err != nil {
		return err
	}
	out := &outcome{}
	ended := c.endTurnProcesses(out, leftByChecks)
	planted, err := c.guardGit(out, snap, "init.sh, run to check the feature list when the run started,")
	if err != nil {
		return err
	}
	configChanged, err := c.store.RestoreConfig(config)
	if err != nil {
		return err
	}
	if configChanged != "" {
		out.failAs(harness.FindingIllegalEdit, "illegal edit: %s by init.sh, run to check the feature list when the run started; it is the user's file, and grub put back what was there before", configChanged)
	}
	if !planted && configChanged == "" && ended {
		return nil
	}
	c.st.FeatureListBaseline = base
	summary := "init.sh changed git's configuration or hooks when the run started; grub restored them"
	switch {
	case configChanged != "" && !planted:
		summary = "init.sh changed .grub/config.toml when the run started; grub put it back"
	case !planted:
		summary = "init.sh left processes grub could not end when the run started; the feature list was not reconciled"
	}
	c.appendLog(logEntry{decision: loopstate.Reconciled, summary: summary, failure: strings.Join(out.failures, "\n")})
	return c.restoreIfChanged()
}
