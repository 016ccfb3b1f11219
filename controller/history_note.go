package controller

import "github.com/grub-dev/grub/harness"

// noteTurnCommit keeps grub's new turn commit in the task's private
// folder at once (harness.FileTurnCommit): state.json gets it only at its
// next write. Without a private folder (in-process tests) nothing is
// kept; a note that cannot be written is said and the run goes on (the
// start of the next run then checks against state's mark).
func (c *Controller) noteTurnCommit(iteration int, hash string) {
	if hash == "" || c.st.History == nil || c.store.Private == "" {
		return
	}
	n := harness.TurnCommitNote{Iteration: iteration, Mark: harness.HistoryMark{Branch: c.st.History.Branch, Commit: hash}}
	if err := c.store.SaveTurnCommit(c.st.ID, n); err != nil {
		c.say("warning: %v", err)
	}
}

// notedMark sets state's mark, when a run starts, to the one to check
// the history against (harness.Store.StartMark): the noted turn commit
// of the record state still holds as pending, so a reset or amend of the
// last turn commit between runs is seen like one of any earlier turn
// commit.
func (c *Controller) notedMark() {
	c.st.History = c.store.StartMark(c.st)
}
