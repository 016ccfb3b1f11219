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

// notedMark is, when a run starts, the mark to check the history against:
// the noted turn commit when it is the commit of the record state still
// holds as pending (the last run ended after committing it, and state was
// not written since with its hash), else state's own mark. So a reset,
// amend or deletion of the last turn commit between runs is seen like
// one of any earlier turn commit.
func (c *Controller) notedMark() {
	st := c.st
	if st.History == nil || st.RecordPending == nil || st.AwaitingTurn || c.store.Private == "" {
		return
	}
	n, ok, err := c.store.LoadTurnCommit(st.ID)
	if err != nil || !ok || n.Iteration != st.RecordPending.Iteration || n.Iteration != st.CurrentIteration ||
		n.Mark.Branch != st.History.Branch || n.Mark.Commit == "" {
		return
	}
	m := n.Mark
	st.History = &m
}
