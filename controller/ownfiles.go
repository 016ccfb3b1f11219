package controller

import (
	"strings"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// checkOwnFiles is the referee's check of the files grub writes after a
// turn: a progress-log.md the agent replaced by a link (to ~/.bashrc, say),
// a folder or a hard link to another file, and a turns/ or spill/ folder
// replaced by a link or a file, are illegal edits. grub puts its own back
// (the log with its content, kept at the turn's start, the folders empty)
// and fails the turn naming each. Nothing grub writes afterwards goes
// through the agent's link.
func (c *Controller) checkOwnFiles(out *outcome) error {
	id := c.st.ID
	bad, err := c.store.RepairProgressLog(id)
	if err != nil {
		return err
	}
	if bad != nil {
		out.fail("illegal edit: %v; grub put its log back as a regular file with its content (append notes to it, never replace it)", bad)
	}
	dirs, err := c.store.CheckTurnDirs(id)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		out.fail("illegal edit: %v", d)
	}
	return nil
}

// setAsidePlanted is the referee's check that only grub creates tasks: a
// task folder the turn made in .grub (a paused task with an agent and
// hooks of its choosing, waiting for a bare grub resume) is moved out of
// the task scan, content kept, and fails the turn; the committer never
// takes it either. It runs after the verification, since init.sh and
// verify commands are the agent's too.
func (c *Controller) setAsidePlanted(out *outcome, who string) error {
	planted, err := c.store.SetAsidePlanted(c.st.ID, c.now())
	for _, p := range planted {
		out.failAs(harness.FindingTampering, "%s made the task folder .grub/%s; only grub creates tasks, so it is not committed and was set aside as %s (look at it, then delete it)", who, p.ID, p.To)
		c.say("turn %d: %s made the task folder .grub/%s; set aside as %s", c.st.CurrentIteration, who, p.ID, p.To)
	}
	return err
}

// setAsidePlantedAtStart is setAsidePlanted for the init.sh the run ran
// when it started (reconcileGuarded), logged as a reconciliation entry.
func (c *Controller) setAsidePlantedAtStart() error {
	out := &outcome{}
	err := c.setAsidePlanted(out, "init.sh, run to check the feature list when the run started,")
	if len(out.failures) > 0 {
		c.appendLog(logEntry{decision: loopstate.Reconciled, summary: "init.sh made a task folder when the run started; grub set it aside",
			failure: strings.Join(out.failures, "\n")})
	}
	return err
}

// checkWorkspaceConfig is the referee's check of the workspace's
// .grub/config.toml, the user's defaults file: settings in it can run
// programs as the user once trusted, so a turn that creates, changes,
// replaces or deletes it is an illegal edit. grub puts back what was there
// when the turn started and fails the turn naming it.
func (c *Controller) checkWorkspaceConfig(out *outcome, before harness.ConfigSnapshot) error {
	what, err := c.store.RestoreConfig(before)
	if err != nil {
		return err
	}
	if what != "" {
		out.failAs(harness.FindingIllegalEdit, "illegal edit: %s during the turn; it is the user's file (grub's settings, some of which run programs), and grub put back what was there before the turn", what)
	}
	return nil
}

// recoverConfig is checkWorkspaceConfig for a turn a crash interrupted:
// .grub/config.toml is compared with the copy kept in the private folder
// when the turn started, and put back.
func (c *Controller) recoverConfig(out *outcome) error {
	if c.store.Private == "" {
		return nil
	}
	iteration, before, ok, err := c.store.LoadConfigCopy(c.st.ID)
	if err != nil || !ok || iteration != c.st.CurrentIteration {
		return err
	}
	return c.checkWorkspaceConfig(out, before)
}

// checkConfigAfterVerify checks .grub/config.toml again after the referee
// ran init.sh and the verify command (programs the agent wrote): a change
// then is the same illegal edit, and what the referee accepted is undone.
func (c *Controller) checkConfigAfterVerify(out *outcome, before harness.ConfigSnapshot, base *featurelist.List, phase harness.Phase) error {
	what, err := c.store.RestoreConfig(before)
	if err != nil || what == "" {
		return err
	}
	out.failAs(harness.FindingIllegalEdit, "illegal edit: %s by init.sh or a verify command, run by grub to verify the turn; it is the user's file, and grub put back what was there before the turn", what)
	c.st.FeatureListBaseline, c.st.Phase = base, phase
	out.flipped, out.complete = "", false
	return c.restoreIfChanged()
}
