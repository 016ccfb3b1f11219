package controller

import (
	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
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
