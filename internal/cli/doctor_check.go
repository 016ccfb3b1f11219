package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
)

// inspectTask runs every check of grub doctor on task id.
func inspectTask(store *harness.Store, repo *gitx.Repo, repoErr error, id string) doctorReport {
	rep := doctorReport{ID: id, Harness: store.Rel(store.Dir(id)), Findings: []finding{}}
	add := func(f finding) { rep.Findings = append(rep.Findings, f) }

	checkFiles(store, id, add)
	st, err := store.LoadState(id)
	var nr *harness.NotRegularError
	var dmg *harness.DamagedError
	switch {
	case err == nil:
		add(finding{Check: "state", Severity: findingOK, Message: fmt.Sprintf("state.json is valid: %s, iteration %d", st.Status, st.CurrentIteration)})
		checkAccepted(store, st, add)
	case errors.As(err, &dmg) && acceptedListLost(store, id, dmg):
		add(finding{Check: "accepted-list", Severity: findingProblem, Message: err.Error(), Repairable: true,
			Fix: "grub doctor --repair " + id + " restores feature-list.json from the last turn commit, which holds the accepted list"})
	case errors.As(err, &nr), errors.As(err, &dmg):
		// said by the files check
	default:
		add(finding{Check: "state", Severity: findingProblem, Message: err.Error(), Repairable: true,
			Fix: "grub doctor --repair " + id + " sets it aside and rebuilds it from the last turn commit, or else from feature-list.json and the progress log"})
	}
	checkFeatureList(store, id, st, add)
	checkControl(store, id, add)
	held := checkLock(store, id, st, add)
	if st != nil {
		done := st.CurrentIteration
		if st.AwaitingTurn || held {
			done-- // the last turn is running, or was cut short and is recorded by the next run
		}
		checkLog(store, id, st, done, add)
		if repoErr != nil && !errors.Is(repoErr, gitx.ErrNotRepo) {
			add(finding{Check: "git", Severity: findingProblem, Message: repoErr.Error(), Fix: "check the repository with git status"})
		} else {
			checkGit(repoFor(repo, st), id, st, done, add)
			checkHistory(store, repoFor(repo, st), id, st, add)
		}
		checkRecord(store, repoFor(repo, st), id, st, done, add)
		checkRecordCommits(store, repoFor(repo, st), id, st, done, add)
	}
	checkGitPrograms(store.Root, add)
	rep.Healthy = true
	for _, f := range rep.Findings {
		if f.Severity == findingProblem {
			rep.Healthy = false
		}
	}
	return rep
}

// checkControl checks the task's control requests, in its private
// folder, and notes a control.json left in the task folder, which grub
// no longer reads (the agent can write there).
func checkControl(store *harness.Store, id string, add func(finding)) {
	_, err := store.PeekControl(id)
	switch {
	case errors.Is(err, harness.ErrNoPrivate):
		add(finding{Check: "control", Severity: findingWarning, Message: err.Error(), Fix: "grub cannot run or control a task without it"})
	case err != nil:
		add(finding{Check: "control", Severity: findingProblem, Message: err.Error(), Repairable: true,
			Fix: "the requests in it cannot be read; grub doctor --repair " + id + " sets it aside (a runner then sees no request)"})
	default:
		add(finding{Check: "control", Severity: findingOK, Message: "the control requests (in grub's private folder) are valid or absent"})
	}
	if store.OldControlFile(id) {
		rel := store.Rel(store.Path(id, harness.FileControl))
		add(finding{Check: "control", Severity: findingWarning, Message: rel + " is ignored: grub keeps control requests in its private folder, outside the workspace, and never reads this file (an agent may have written it)",
			Fix: "look at it, then delete it: rm " + rel})
	}
}

// checkGitPrograms reports the hooks and the program-running config keys
// of the workspace's repository: grub never runs them (go-git runs no hook
// and no configured program, and the referee restores any a turn plants),
// but the user's own git does, so they are worth a look.
func checkGitPrograms(root string, add func(finding)) {
	progs, err := gitx.ProgramsInRepo(root)
	switch {
	case err != nil:
		add(finding{Check: "git-programs", Severity: findingWarning, Message: err.Error(), Fix: "check the repository's config with git config --list --show-origin"})
	case len(progs) == 0:
		add(finding{Check: "git-programs", Severity: findingOK, Message: "no hooks and no config key that runs a program in the repository"})
	default:
		add(finding{Check: "git-programs", Severity: findingWarning,
			Message: "your git runs these (grub never does): " + strings.Join(progs, "; "),
			Fix:     "keep those you put there yourself; remove any you do not know (git config --unset KEY, rm the hook)"})
	}
}

// checkFiles checks that grub's files are there and are regular files.
func checkFiles(store *harness.Store, id string, add func(finding)) {
	bad := false
	for _, name := range append(harness.TrackedFiles(), harness.FileLock) {
		kind := lstatKind(store.Path(id, name))
		rel := store.Rel(store.Path(id, name))
		switch {
		case kind == "":
			continue
		case kind == "missing" && (name == harness.FileLock || name == harness.FileTurnLedger):
			continue // made when needed (the ledger by the first turn recorded with it)
		case kind == "missing" && name == harness.FileFeatureList:
			continue // checked with the phase (checkFeatureList)
		case kind == "missing":
			bad = true
			add(finding{Check: "files", Severity: findingProblem, Message: rel + " is missing", Repairable: true,
				Fix: fmt.Sprintf("grub doctor --repair %s rebuilds it from %s", id, rebuiltFrom(name))})
		default:
			bad = true
			add(finding{Check: "files", Severity: findingProblem, Message: fmt.Sprintf("%s is %s, not a regular file", rel, kind), Repairable: true,
				Fix: fmt.Sprintf("grub doctor --repair %s sets it aside and rebuilds it from %s", id, rebuiltFrom(name))})
		}
	}
	if !bad {
		add(finding{Check: "files", Severity: findingOK, Message: "grub's files are regular files"})
	}
}

// acceptedListLost tells whether LoadState's damage is the accepted list
// found nowhere (harness.Store.LoadState).
func acceptedListLost(store *harness.Store, id string, dmg *harness.DamagedError) bool {
	return dmg.File == store.Rel(store.Path(id, harness.FileAcceptedList))
}

// checkAccepted checks that accepted-list.json and the changes after it
// make the list state.json names: when they do not, grub found the list in feature-list.json, and
// a crash in the next turn, which changes that file, would lose it.
func checkAccepted(store *harness.Store, st *harness.State, add func(finding)) {
	if store.AcceptedFilesHold(st) {
		return
	}
	add(finding{Check: "accepted-list", Severity: findingProblem, Repairable: true,
		Message: store.Rel(store.Path(st.ID, harness.FileAcceptedList)) + " and the changes after it are missing or do not make the list state.json names; feature-list.json holds that list for now",
		Fix:     "grub doctor --repair " + st.ID + " writes it again from that list (so does the task's next run)"})
}

// rebuiltFrom says where --repair takes a lost file from.
func rebuiltFrom(name string) string {
	switch name {
	case harness.FileState:
		return "the last turn commit, or else from feature-list.json and the progress log"
	case harness.FileFeatureList:
		return "the list grub last accepted (state.json), or the last turn commit"
	case harness.FileChecklist:
		return "the accepted feature list"
	case harness.FileProgressLog, harness.FileInitScript:
		return "the last turn commit, or else grub's starter"
	}
	return "nothing: it is made anew when needed"
}

// checkFeatureList checks feature-list.json against its schema, and that
// a task past planning has one.
func checkFeatureList(store *harness.Store, id string, st *harness.State, add func(finding)) {
	_, _, err := store.LoadFeatureList(id)
	var nr *harness.NotRegularError
	switch {
	case err == nil:
		add(finding{Check: "feature-list", Severity: findingOK, Message: "feature-list.json is valid"})
	case errors.As(err, &nr):
		// said by the files check
	case errors.Is(err, fs.ErrNotExist) && (st == nil || st.Phase == harness.PhaseInitializer):
		add(finding{Check: "feature-list", Severity: findingOK, Message: "no feature-list.json yet (the initializer writes it)"})
	case errors.Is(err, fs.ErrNotExist):
		add(finding{Check: "feature-list", Severity: findingProblem, Message: store.Rel(store.Path(id, harness.FileFeatureList)) + " is missing", Repairable: true,
			Fix: fmt.Sprintf("grub doctor --repair %s rebuilds it from %s", id, rebuiltFrom(harness.FileFeatureList))})
	default:
		add(finding{Check: "feature-list", Severity: findingProblem, Message: err.Error(), Repairable: st != nil && st.FeatureListBaseline != nil,
			Fix: "grub doctor --repair " + id + " sets it aside and restores the list grub last accepted; a runner restores it itself at the next turn"})
	}
}

// checkLock says who holds the lock, and finds a dead runner's leftovers.
// It reports whether a runner holds it.
func checkLock(store *harness.Store, id string, st *harness.State, add func(finding)) bool {
	info, held, err := store.Holder(id)
	switch {
	case err != nil:
		add(finding{Check: "lock", Severity: findingProblem, Message: err.Error(), Fix: "check the permissions of " + store.Rel(store.Path(id, harness.FileLock))})
		return false
	case held && info.Runner():
		add(finding{Check: "lock", Severity: findingOK, Message: fmt.Sprintf("held by a runner: pid %d on %s since %s", info.PID, info.Host, info.StartedAt.Format("2006-01-02 15:04:05 MST"))})
		return true
	case held:
		add(finding{Check: "lock", Severity: findingOK, Message: fmt.Sprintf("held for a moment by a short-lived grub command (pid %d on %s)", info.PID, info.Host)})
		return false
	}
	switch {
	case info.AgentPGID > 0 || len(info.Processes) > 0:
		add(finding{Check: "lock", Severity: findingProblem,
			Message: fmt.Sprintf("stale: no runner holds the lock, but runner pid %d on %s died leaving agent process group %d and %d process(es) on record", info.PID, info.Host, info.AgentPGID, len(info.Processes)),
			Fix:     fmt.Sprintf("grub resume %s ends them (when they still run on this host) before it runs; or grub stop %s and end them yourself", id, id)})
	case st != nil && st.Status == harness.StatusRunning:
		add(finding{Check: "lock", Severity: findingProblem, Message: "the task is \"running\" but no runner holds its lock: its runner died",
			Fix: fmt.Sprintf("grub resume %s picks it up again (or grub stop %s)", id, id)})
	default:
		add(finding{Check: "lock", Severity: findingOK, Message: "not held; nothing left on record"})
	}
	return false
}

// checkLog compares the progress log's turn entries with the turns the
// state counts as done.
func checkLog(store *harness.Store, id string, st *harness.State, done int, add func(finding)) {
	turns, err := store.LoggedTurns(id)
	if err != nil {
		add(finding{Check: "log", Severity: findingProblem, Message: err.Error(), Fix: "see the files check"})
		return
	}
	var missing, twice, beyond []int
	for n := 1; n <= done; n++ {
		switch {
		case turns[n] == 0:
			missing = append(missing, n)
		case turns[n] > 1:
			twice = append(twice, n)
		}
	}
	for n := range turns {
		if n > st.CurrentIteration {
			beyond = append(beyond, n)
		}
	}
	sort.Ints(beyond)
	ok := true
	if len(missing) > 0 {
		ok = false
		add(finding{Check: "log", Severity: findingProblem, Repairable: true,
			Message: fmt.Sprintf("state.json counts %d turns done but the progress log has no entry for turn(s) %v", done, missing),
			Fix:     "grub doctor --repair " + id + " appends an entry for each, with outcome unknown"})
	}
	if len(twice) > 0 {
		ok = false
		add(finding{Check: "log", Severity: findingWarning, Message: fmt.Sprintf("turn(s) %v are logged more than once (a crash between a turn's entry and its state)", twice),
			Fix: "nothing to do: the log is append-only and the last entry of a turn stands"})
	}
	if len(beyond) > 0 {
		ok = false
		add(finding{Check: "log", Severity: findingProblem, Message: fmt.Sprintf("the progress log records turn(s) %v beyond the %d state.json counts", beyond, st.CurrentIteration),
			Fix: "state.json is older than the log: restore it with git (git log -- " + store.Rel(store.Path(id, harness.FileState)) + ")"})
	}
	if ok {
		add(finding{Check: "log", Severity: findingOK, Message: fmt.Sprintf("one entry for each of the %d turns done", max(done, 0))})
	}
}

// checkGit looks for one commit per turn done.
func checkGit(repo *gitx.Repo, id string, st *harness.State, done int, add func(finding)) {
	if repo == nil {
		add(finding{Check: "git", Severity: findingOK, Message: "turns are not committed (--no-commit, or not a git repository)"})
		return
	}
	hist, err := repo.History(id)
	if err != nil {
		add(finding{Check: "git", Severity: findingProblem, Message: err.Error(), Fix: "check the repository with git log"})
		return
	}
	commits := map[int]int{}
	for _, h := range hist {
		commits[h.Iteration]++
	}
	var older []int
	ok := true
	for n := 1; n <= done; n++ {
		switch {
		case commits[n] > 0:
		case n == done:
			ok = false
			add(finding{Check: "git", Severity: findingProblem, Repairable: true,
				Message: fmt.Sprintf("turn %d, the last one done, has no commit", n),
				Fix:     "grub doctor --repair " + id + " commits the workspace as that turn's recovery commit"})
		default:
			older = append(older, n)
		}
	}
	if len(older) > 0 {
		ok = false
		add(finding{Check: "git", Severity: findingWarning, Message: fmt.Sprintf("turn(s) %v have no commit of their own", older),
			Fix: "a commit failed, or the history was rewritten (a reset, an amend, a rebase): look at git log and git reflog; a later turn's commit holds their files"})
	}
	if ok {
		add(finding{Check: "git", Severity: findingOK, Message: fmt.Sprintf("one commit for each of the %d turns done", max(done, 0))})
	}
}
