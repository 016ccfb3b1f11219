package harness

// HistoryMark is where a task's history stands in git (State.History):
// the branch HEAD must be on (a full ref name; "" when the task runs on a
// detached HEAD) and grub's last turn commit, or the commit HEAD named
// when the task first ran with this mark. A turn, and whatever happens
// between runs, may add commits on top of it; nothing may take it off
// the branch.
type HistoryMark struct {
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit"`
}
