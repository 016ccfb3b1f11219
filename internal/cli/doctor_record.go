package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
)

// checkRecord checks the task's record against itself: the ledger
// (turns.jsonl) and the progress log name the same turns, neither goes
// past state.json's count, the files hold what grub last wrote of them
// (kept in the private folder), and the last turn commit's ledger and log
// are where the work tree's begin (grub only appends to them).
func checkRecord(store *harness.Store, repo *gitx.Repo, id string, st *harness.State, done int, add func(finding)) {
	ok := checkLedgerLog(store, id, st, done, add)
	checkAudit(store, id, st, add)
	if changes, err := store.RecordDiffers(id); err != nil {
		ok = false
		add(finding{Check: "record", Severity: findingWarning, Message: "grub's record of the task cannot be read: " + err.Error()})
	} else {
		for _, c := range changes {
			ok = false
			add(finding{Check: "record", Severity: findingProblem, Message: c.File + " " + c.What + " (kept in grub's private folder)",
				Fix: "grub writes its record only by appending: restore it from the last turn commit (git checkout <commit> -- " + c.File + ") unless you made the change"})
		}
	}
	if repo != nil && !checkCommittedRecord(store, repo, id, add) {
		ok = false
	}
	if ok {
		add(finding{Check: "record", Severity: findingOK, Message: "the ledger, the progress log and the last turn commit agree"})
	}
}

// checkLedgerLog compares the turns the ledger and the log name.
func checkLedgerLog(store *harness.Store, id string, st *harness.State, done int, add func(finding)) bool {
	turns, err := store.LoadTurns(id)
	if err != nil {
		add(finding{Check: "record", Severity: findingProblem, Message: err.Error(), Fix: "restore turns.jsonl from the last turn commit"})
		return false
	}
	logged, err := store.LoggedTurns(id)
	if err != nil || len(turns) == 0 {
		return true // the log check says it; a task of an older grub has no ledger
	}
	first := turns[0].Iteration // older turns were recorded before the ledger was
	var unlogged, unledgered []int
	inLedger := map[int]bool{}
	for _, t := range harness.LatestTurns(turns) {
		inLedger[t.Iteration] = true
		if logged[t.Iteration] == 0 {
			unlogged = append(unlogged, t.Iteration)
		}
	}
	for n := first; n <= done; n++ {
		if !inLedger[n] && logged[n] > 0 {
			unledgered = append(unledgered, n)
		}
	}
	ok := true
	if last := turns[len(turns)-1].Iteration; last > st.CurrentIteration {
		ok = false
		add(finding{Check: "record", Severity: findingProblem, Message: fmt.Sprintf("turns.jsonl records turn %d, beyond the %d state.json counts", last, st.CurrentIteration),
			Fix: "restore turns.jsonl from the last turn commit"})
	}
	if len(unlogged) > 0 {
		ok = false
		add(finding{Check: "record", Severity: findingProblem, Message: fmt.Sprintf("turns.jsonl records turn(s) %v that the progress log has no entry for", unlogged),
			Fix: "restore the progress log from the last turn commit"})
	}
	if len(unledgered) > 0 {
		// grub doctor --repair logs a lost turn without a ledger line.
		ok = false
		add(finding{Check: "record", Severity: findingWarning, Message: fmt.Sprintf("the progress log has turn(s) %v that turns.jsonl does not record", unledgered),
			Fix: "nothing to do if grub doctor --repair logged them; otherwise restore turns.jsonl from the last turn commit"})
	}
	return ok
}

// checkCommittedRecord checks that the last turn commit's ledger and log
// are prefixes of the work tree's.
func checkCommittedRecord(store *harness.Store, repo *gitx.Repo, id string, add func(finding)) bool {
	ok := true
	for _, name := range []string{harness.FileTurnLedger, harness.FileProgressLog} {
		rel := store.Rel(store.Path(id, name))
		committed, e, err := repo.TurnFile(id, rel)
		if errors.Is(err, gitx.ErrNoTurnFile) {
			continue
		}
		if err != nil {
			add(finding{Check: "record", Severity: findingWarning, Message: fmt.Sprintf("could not read %s from git: %v", rel, err)})
			continue
		}
		now, err := os.ReadFile(store.Path(id, name))
		if err != nil || !bytes.HasPrefix(now, committed) {
			ok = false
			add(finding{Check: "record", Severity: findingProblem,
				Message: fmt.Sprintf("%s does not begin with what turn %d's commit %s holds: it was rewritten or truncated", rel, e.Iteration, e.Commit),
				Fix:     fmt.Sprintf("git checkout %s -- %s (grub only appends to it)", e.Commit, rel)})
		}
	}
	return ok
}

// checkAudit says, for a complete task, what the completion audit of the
// turn that completed it checked, as its ledger line records: every
// passing feature's verify command but the one the turn's flip verified.
// A feature it does not name is a problem (the line was rewritten); a
// line without an audit at all a warning (an older grub recorded only
// the checks that failed).
func checkAudit(store *harness.Store, id string, st *harness.State, add func(finding)) {
	turns, err := store.LoadTurns(id)
	if err != nil || len(turns) == 0 || st.Status != harness.StatusComplete || st.FeatureListBaseline == nil {
		return
	}
	last := harness.LatestTurns(turns)
	line := last[len(last)-1]
	checked, passed, secs := map[string]bool{}, 0, 0.0
	for _, c := range line.Checks {
		if c.Name == harness.CheckAudit {
			checked[c.Feature] = true
			secs += c.DurationSeconds
			if c.Result == harness.CheckPassed {
				passed++
			}
		}
	}
	var missing []string
	for _, f := range st.FeatureListBaseline.Features {
		if f.Passes && f.Verify != "" && f.ID != line.Flipped && !checked[f.ID] {
			missing = append(missing, f.ID)
		}
	}
	switch {
	case len(checked) == 0 && len(missing) > 0:
		add(finding{Check: "audit", Severity: findingWarning, Message: fmt.Sprintf("the task is complete, but turn %d's line in turns.jsonl records no completion audit (a task completed by an older grub, which recorded only the checks that failed)", line.Iteration),
			Fix: "run the features' verify commands yourself to be sure they pass on the final tree"})
	case len(missing) > 0:
		add(finding{Check: "audit", Severity: findingProblem, Message: fmt.Sprintf("the completion audit of turn %d, as turns.jsonl records it, did not check %v", line.Iteration, missing),
			Fix: "turns.jsonl was rewritten: restore it from the last turn commit, or run those verify commands yourself"})
	default:
		add(finding{Check: "audit", Severity: findingOK, Message: fmt.Sprintf("the completion audit of turn %d ran %d verify commands on the final tree (%d passed, %.1f s of checks)", line.Iteration, len(checked), passed, secs)})
	}
}
