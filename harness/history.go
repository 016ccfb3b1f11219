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

// GitBase is where a task's work starts in git (State.Base), recorded
// when the task is created: the branch grub commits its turns to (a full
// ref name; "" when HEAD was detached) and the commit HEAD named then, so
// that the task's work is <Commit>..<Branch>. From is the branch the user
// was on when grub start --branch made Branch ("" when that HEAD was
// detached: Commit is then the way back).
type GitBase struct {
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit"`
	// Made is set when grub made Branch for the task (--branch).
	Made bool   `json:"made,omitempty"`
	From string `json:"from,omitempty"`
	// Carried is set when the work tree had uncommitted changes the
	// first turn's commit took in (--allow-dirty): an undo back to Commit
	// would take them away too.
	Carried bool `json:"carried,omitempty"`
}
