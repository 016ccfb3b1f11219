package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// repairer rebuilds what can be rebuilt of one task, under its lock, and
// says each step on stderr as it goes.
type repairer struct {
	opts  *DoctorOptions
	store *harness.Store
	repo  *gitx.Repo // nil: not a git repository
	id    string
	steps []string
}

// say records and prints one step.
func (r *repairer) say(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	r.steps = append(r.steps, s)
	fmt.Fprintf(r.opts.IO.ErrOut, "grub: doctor %s: %s\n", r.id, oneLine(s, 0))
}

// repairTask takes the task's lock as a short-lived command (a runner
// holding it is a *harness.LockedError: exit 75) and repairs, in order,
// state.json, the other files, control.json, the log and the last commit.
func repairTask(opts *DoctorOptions, store *harness.Store, repo *gitx.Repo, id string) (steps []string, err error) {
	lock, err := store.Lock(id)
	var locked *harness.LockedError
	if errors.As(err, &locked) && locked.Info.Runner() {
		return nil, &harness.LockedError{ID: id, Info: locked.Info} // "already running": --repair waits for no runner
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("releasing the lock of task %s: %w", id, rerr)
		}
	}()
	r := &repairer{opts: opts, store: store, repo: repo, id: id}
	st := r.repairState()
	r.repairFiles(st)
	r.repairControl()
	if st != nil {
		r.repairLog(st)
		if err := r.repairCommit(st); err != nil {
			return r.steps, err
		}
	}
	if len(r.steps) == 0 {
		r.say("nothing to repair")
	}
	return r.steps, nil
}

// setAside moves a damaged file out of the way, saying where.
func (r *repairer) setAside(name string) bool {
	if lstatKind(r.store.Path(r.id, name)) == "missing" {
		return true
	}
	to, err := r.store.SetAside(r.id, name, r.opts.Now())
	if err != nil {
		r.say("could not set %s aside: %v; left as it is", name, err)
		return false
	}
	r.say("set the damaged %s aside as %s", name, to)
	return true
}

// repairState loads state.json, or rebuilds it when it is missing, not a
// regular file or invalid: from the last turn commit's copy, else from
// feature-list.json and the progress log. It returns the state, nil when
// it could not be had.
func (r *repairer) repairState() *harness.State {
	st, err := r.store.LoadState(r.id)
	var dmg *harness.DamagedError
	if errors.As(err, &dmg) && acceptedListLost(r.store, r.id, dmg) && r.repo != nil && r.setAside(harness.FileFeatureList) && r.restoreFromGit(harness.FileFeatureList) {
		st, err = r.store.LoadState(r.id) // the last turn commit's list is the accepted one
	}
	if err == nil {
		r.repairAccepted(st)
		return st
	}
	var nf *harness.NotFoundError
	if errors.As(err, &nf) {
		return nil
	}
	if !r.setAside(harness.FileState) {
		return nil
	}
	turns, _ := r.store.LoggedTurns(r.id)
	logged := 0
	for n := range turns {
		logged = max(logged, n)
	}
	if st = r.stateFromGit(logged); st == nil {
		st = r.stateFromFiles(logged)
	}
	if st == nil {
		return nil
	}
	st.UpdatedAt = r.opts.Now().UTC()
	if err := r.store.SaveState(st); err != nil {
		r.say("could not write the rebuilt state.json: %v", err)
		return nil
	}
	return st
}

// repairAccepted writes accepted-list.json again when it does not hold
// the list state.json names (LoadState found it in feature-list.json).
func (r *repairer) repairAccepted(st *harness.State) {
	if r.store.AcceptedFilesHold(st) {
		return
	}
	if err := r.store.RewriteAccepted(st); err != nil {
		r.say("could not write accepted-list.json: %v", err)
		return
	}
	r.say("wrote accepted-list.json again from feature-list.json, which holds the list state.json names")
}

// stateFromGit is the state.json of the last turn commit, brought up to
// the turns the log records; nil when there is none.
func (r *repairer) stateFromGit(logged int) *harness.State {
	if r.repo == nil {
		return nil
	}
	rel := r.store.Rel(r.store.Path(r.id, harness.FileState))
	data, e, err := r.turnFile(rel)
	if err != nil {
		if !errors.Is(err, gitx.ErrNoTurnFile) {
			r.say("could not read state.json from git: %v", err)
		}
		return nil
	}
	st, err := r.store.DecodeState(r.id, data)
	if err != nil {
		r.say("the state.json of commit %s (turn %d) is not valid either: %v", e.Commit, e.Iteration, err)
		return nil
	}
	r.say("rebuilt state.json from the copy in commit %s, turn %d's commit (git show %s:%s)", e.Commit, e.Iteration, e.Commit, rel)
	if logged > st.CurrentIteration {
		r.say("the progress log records turn %d, after that commit: iteration set to %d", logged, logged)
		st.CurrentIteration, st.AwaitingTurn, st.TurnStartedAt = logged, false, nil
	}
	return st
}

// stateFromFiles rebuilds a state from feature-list.json (or the log's
// goal) and the progress log; nil when not even a goal is left.
func (r *repairer) stateFromFiles(logged int) *harness.State {
	list, _, err := r.store.LoadFeatureList(r.id)
	if err != nil {
		list = nil
	}
	goal := r.store.LogGoal(r.id)
	if list != nil && list.Goal != "" {
		goal = list.Goal
	}
	if goal == "" {
		r.say("cannot rebuild state.json: no turn commit holds it, and neither feature-list.json nor the progress log gives the goal; start a new task with grub start")
		return nil
	}
	if list != nil {
		list = r.verifiedOnly(list)
	}
	st := harness.RebuildState(r.id, goal, list, logged, r.opts.Now())
	from := "the progress log's goal (no valid feature-list.json: the initializer plans again)"
	if list != nil {
		from = fmt.Sprintf("feature-list.json (%d features, %d passing, taken as accepted)", len(list.Features), list.Passing())
	}
	r.say("rebuilt state.json from %s and the progress log (%d turns): left paused, with default limits and the openai agent; check them with grub status %s and change them with grub edit or grub resume --agent", from, logged, r.id)
	return st
}

// verifiedOnly is list with every passing feature that neither a turn's
// ledger line nor one of grub's own turn commits says grub verified (its
// flip accepted by the referee) reset to pending, each with a note: a
// list nothing vouches for is not taken as accepted as it stands (a clone
// of a commit whose list a process changed after the referee looked, a
// hand edit). A commit's Grub-Verified trailer counts for nothing, since
// a turn can make a commit with any trailers: a commit vouches for a
// flip only through the state.json it holds, the turn's pending record
// grub wrote just before committing it, whose ledger line names the flip
// (committedFlips). feature-list.json is written again when something
// was reset.
func (r *repairer) verifiedOnly(list *featurelist.List) *featurelist.List {
	turns, _ := r.store.LoadTurns(r.id) // none: nothing was verified
	verified := r.committedFlips()
	for _, t := range turns {
		if t.Flipped != "" {
			verified[t.Flipped] = true
		}
	}
	out := *list
	out.Features = slices.Clone(list.Features)
	var reset []string
	for i, f := range out.Features {
		if f.Passes && !verified[f.ID] {
			out.Features[i].Passes, out.Features[i].Evidence = false, nil
			reset = append(reset, f.ID)
		}
	}
	if len(reset) == 0 {
		return list
	}
	r.say("feature-list.json marks %s passing, but no turn's line in turns.jsonl nor grub's record in a turn commit says grub verified it: reset to pending (the next turn verifies it again)", strings.Join(reset, ", "))
	if err := r.store.RestoreFeatureList(r.id, &out); err != nil {
		r.say("could not write feature-list.json: %v", err)
	}
	return &out
}

// turnFile is rel as grub's last turn commit holds it: the commit grub's
// private folder notes (harness.FileTurnCommit) when there is the note
// (this machine) and the repository still has that commit, else the
// newest commit with the task's trailers (a clone has no note; trailers
// are all it has).
func (r *repairer) turnFile(rel string) ([]byte, gitx.HistoryEntry, error) {
	if n, ok, err := r.store.LoadTurnCommit(r.id); err == nil && ok && n.Mark.Commit != "" {
		e := gitx.HistoryEntry{TaskID: r.id, Iteration: n.Iteration, Commit: short(n.Mark.Commit)}
		data, err := r.repo.FileAt(n.Mark.Commit, rel)
		if err == nil || errors.Is(err, gitx.ErrNoTurnFile) {
			return data, e, err
		}
		r.say("grub's last turn commit %s, which its private folder notes, cannot be read (%v): taking the newest commit with the task's trailers", short(n.Mark.Commit), err)
	}
	return r.repo.TurnFile(r.id, rel)
}

// committedFlips is the set of features whose flip one of grub's own
// turn commits records, from the pending record, with its ledger line,
// that the commit's state.json holds (harness.Store.CommittedRecord);
// trailers are never read for it. On this machine grub's commits are
// known: from the commit the private folder notes, each commit's
// state.json names the one before as its mark, and commits a turn added
// in between are never looked at (chainFlips). Without the note (a
// clone), every commit with the task's trailers whose state.json holds
// the pending record of the turn its trailers name counts.
func (r *repairer) committedFlips() map[string]bool {
	flips := map[string]bool{}
	if r.repo == nil {
		return flips
	}
	rel := r.store.Rel(r.store.Path(r.id, harness.FileState))
	if n, ok, err := r.store.LoadTurnCommit(r.id); err == nil && ok && n.Mark.Commit != "" {
		r.chainFlips(n.Mark.Commit, rel, flips)
		return flips
	}
	_ = r.repo.EachTurnFile(r.id, rel, func(e gitx.HistoryEntry, state []byte) { // unreadable history: nothing vouched for
		if p, _ := r.store.CommittedRecord(r.id, state); p != nil && p.Iteration == e.Iteration && p.Ledger != nil && p.Ledger.Flipped != "" {
			flips[p.Ledger.Flipped] = true
		}
	})
	return flips
}

// chainFlips adds to flips what grub's commits from commit back record,
// following each state.json's mark to the commit before.
func (r *repairer) chainFlips(commit, rel string, flips map[string]bool) {
	seen := map[string]bool{}
	for commit != "" && !seen[commit] {
		seen[commit] = true
		data, err := r.repo.FileAt(commit, rel)
		if err != nil {
			return // the task's first commit, or one the repository lost
		}
		p, mark := r.store.CommittedRecord(r.id, data)
		if p != nil && p.Ledger != nil && p.Ledger.Flipped != "" {
			flips[p.Ledger.Flipped] = true
		}
		if mark == nil {
			return
		}
		commit = mark.Commit
	}
}

// repairFiles restores the other tracked files that are missing or not
// regular files, and a feature list that breaks its schema.
func (r *repairer) repairFiles(st *harness.State) {
	for _, name := range harness.TrackedFiles() {
		if name == harness.FileState {
			continue
		}
		kind := lstatKind(r.store.Path(r.id, name))
		switch {
		case kind == "" && name == harness.FileFeatureList:
			if _, _, err := r.store.LoadFeatureList(r.id); err != nil && st != nil && st.FeatureListBaseline != nil && r.setAside(name) {
				r.restore(name, st)
			}
		case kind == "":
		case kind == "missing" && name == harness.FileFeatureList && (st == nil || st.Phase == harness.PhaseInitializer):
		case kind == "missing" && name == harness.FileTurnLedger: // made by the next turn recorded
		case kind == "missing":
			r.restore(name, st)
		default:
			if r.setAside(name) {
				r.restore(name, st)
			}
		}
	}
}

// restore writes a lost file anew from the state, the last turn commit or
// grub's starter, saying which.
func (r *repairer) restore(name string, st *harness.State) {
	var err error
	switch {
	case name == harness.FileFeatureList && st != nil && st.FeatureListBaseline != nil:
		err = r.store.RestoreFeatureList(r.id, st.FeatureListBaseline)
		r.say("restored feature-list.json from the list grub last accepted (state.json)")
	case name == harness.FileChecklist && st != nil:
		err = r.store.WriteChecklist(r.id, st.Goal, st.FeatureListBaseline)
		r.say("rendered feature-checklist.md again from the accepted list")
	default:
		if r.restoreFromGit(name) {
			return
		}
		switch {
		case name == harness.FileInitScript:
			err = r.store.ResetInitScript(r.id)
			r.say("no commit holds init.sh: wrote grub's starter init.sh (the agent's setup steps are lost; the next turn is told nothing of it)")
		case name == harness.FileProgressLog && st != nil:
			err = r.store.RestoreFile(r.id, name, []byte(templates.ProgressLogHeader(r.id, st.Goal)))
			r.say("no commit holds progress-log.md: started a new one with its header (the earlier entries are lost)")
		default:
			r.say("cannot rebuild %s: no commit holds it", name)
		}
	}
	if err != nil {
		r.say("could not write %s: %v", name, err)
	}
}

// restoreFromGit writes name from the last turn commit; false when no
// commit holds it.
func (r *repairer) restoreFromGit(name string) bool {
	if r.repo == nil {
		return false
	}
	rel := r.store.Rel(r.store.Path(r.id, name))
	data, e, err := r.turnFile(rel)
	if err != nil {
		if !errors.Is(err, gitx.ErrNoTurnFile) {
			r.say("could not read %s from git: %v", name, err)
		}
		return false
	}
	if err := r.store.RestoreFile(r.id, name, data); err != nil {
		r.say("could not write %s: %v", name, err)
		return true
	}
	r.say("restored %s from commit %s, turn %d's commit (git show %s:%s)", name, e.Commit, e.Iteration, e.Commit, rel)
	return true
}

// repairControl sets aside a control.json that cannot be read.
func (r *repairer) repairControl() {
	if _, err := r.store.PeekControl(r.id); err == nil {
		return
	}
	to, err := r.store.SetAsideControl(r.id, r.opts.Now())
	if err != nil {
		r.say("could not set the control requests aside: %v; left as they are", err)
		return
	}
	if to != "" {
		r.say("set the damaged control requests aside as %s; the requests they held are not applied: make them again (grub pause, edit, steer) if they still matter", to)
	}
}

// repairLog appends an entry for each turn done that the log lacks.
func (r *repairer) repairLog(st *harness.State) {
	turns, err := r.store.LoggedTurns(r.id)
	if err != nil {
		return
	}
	done := st.CurrentIteration
	if st.AwaitingTurn {
		done--
	}
	var missing []int
	for n := 1; n <= done; n++ {
		if turns[n] == 0 {
			missing = append(missing, n)
		}
	}
	for _, n := range missing {
		err := r.store.AppendEntry(r.id, templates.Entry{Iteration: n, Phase: string(st.Phase), Decision: loopstate.Unknown,
			Summary: "the record of this turn was lost; grub doctor --repair added this entry. What the turn did is in the workspace and in git.",
			At:      r.opts.Now().UTC()})
		if err != nil {
			r.say("could not append to progress-log.md: %v", err)
			return
		}
	}
	if len(missing) > 0 {
		r.say("appended an entry with outcome unknown to progress-log.md for turn(s) %v", missing)
	}
}

// repairCommit commits the workspace as the last turn's recovery commit
// when that turn has none.
func (r *repairer) repairCommit(st *harness.State) error {
	repo := repoFor(r.repo, st)
	done := st.CurrentIteration
	if st.AwaitingTurn {
		done--
	}
	if repo == nil || done < 1 {
		return nil
	}
	hist, err := repo.History(r.id)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(hist, func(h gitx.HistoryEntry) bool { return h.Iteration == done }) {
		return nil
	}
	if err := checkConversion(repo); err != nil {
		r.say("cannot commit: %v", err)
		return nil
	}
	c, err := onlyGrubTasks(repo, r.id).CommitTurn(context.Background(), gitx.Turn{TaskID: r.id, Iteration: done, Status: string(st.Status),
		Summary: fmt.Sprintf("recovery commit by grub doctor --repair: turn %d had no commit", done), When: r.opts.Now()})
	if err != nil {
		return fmt.Errorf("recovery commit of turn %d: %w", done, err)
	}
	r.say("committed the workspace as turn %d's recovery commit %s", done, short(c.Hash))
	for _, f := range c.LeftOut {
		r.say("%s (%d bytes) is over %d MiB and was left out of that commit", f.Path, f.Size, gitx.MaxFileSize>>20)
	}
	return nil
}
