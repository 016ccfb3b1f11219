package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
)

// checkHistory says whether git's history still holds grub's last turn
// commit, with HEAD on the task's branch (State.History, or the turn
// commit noted since: harness.Store.StartMark), as the next run will
// check.
func checkHistory(store *harness.Store, repo *gitx.Repo, id string, st *harness.State, add func(finding)) {
	if repo == nil || st.History == nil {
		return
	}
	mark := store.StartMark(st) // the next run's
	problem, _, err := repo.CheckAppend(mark.Branch, mark.Commit)
	if err != nil {
		add(finding{Check: "history", Severity: findingProblem, Message: err.Error(), Fix: "check the repository with git log"})
		return
	}
	if problem != "" {
		branch := strings.TrimPrefix(mark.Branch, "refs/heads/")
		back := "git checkout --detach " + mark.Commit
		if branch != "" {
			back = fmt.Sprintf("git branch -f %s %s && git checkout %s", branch, mark.Commit, branch)
		}
		add(finding{Check: "history", Severity: findingProblem,
			Message: "git's history no longer holds grub's last turn commit: " + problem,
			Fix:     fmt.Sprintf("put it back (%s), or take the history as it is as the task's base: grub resume %s --accept-history", back, id)})
		return
	}
	if hidden, err := repo.HiddenHistory(mark.Commit); err == nil && hidden.Problem() != "" {
		add(finding{Check: "history", Severity: findingProblem,
			Message: "git shows another history than the task's commits hold: " + hidden.Problem(),
			Fix:     fmt.Sprintf("remove it as said (the next run of grub resume %s removes it too, keeping the replacement under refs/grub/%s/discarded/)", id, id)})
		return
	}
	add(finding{Check: "history", Severity: findingOK, Message: "HEAD is on the task's branch and descends from grub's last turn commit " + short(mark.Commit)})
}

// checkRecordCommits checks the ledger (turns.jsonl), the progress log and the
// turn commits against each other, and says what disagrees: a turn one of
// them has and another lacks, a turn with two commits, a commit of a turn
// state.json has not reached (grub's trailers, which anyone can write), a
// commit whose trailers say another feature, flip or status than the
// ledger line of its turn.
func checkRecordCommits(store *harness.Store, repo *gitx.Repo, id string, st *harness.State, done int, add func(finding)) {
	logged, err := store.LoggedTurns(id)
	if err != nil {
		return // said by the log check
	}
	turns, err := store.LoadTurns(id)
	if err != nil {
		add(finding{Check: "record", Severity: findingProblem, Message: err.Error(), Fix: "look at " + store.Rel(store.Path(id, harness.FileTurnLedger)) + " with git log -p"})
		return
	}
	ledger := map[int]harness.TurnRecord{}
	for _, t := range turns {
		ledger[t.Iteration] = t
	}
	var hist []gitx.HistoryEntry
	if repo != nil {
		if hist, err = repo.History(id); err != nil {
			return // said by the git check
		}
	}
	msgs, gaps := recordDisagreements(logged, ledger, hist, done, st.CurrentIteration, len(turns) > 0)
	fix := "the record was rewritten or a step of it is missing: compare with git log -p -- " + store.Rel(store.Dir(id)) + " and git reflog; grub's own commits hold the record as it wrote it"
	for _, m := range msgs {
		add(finding{Check: "record", Severity: findingProblem, Message: m, Fix: fix})
	}
	for _, m := range gaps {
		// A ledger line is written after the turn's entry, and tasks of
		// an older grub have none for their early turns: a warning.
		add(finding{Check: "record", Severity: findingWarning, Message: m, Fix: fix})
	}
	if len(msgs)+len(gaps) == 0 {
		add(finding{Check: "record", Severity: findingOK, Message: fmt.Sprintf("the ledger, the progress log and the commits agree on the %d turns done", max(done, 0))})
	}
}

// recordDisagreements lists what the three records say differently.
// withLedger is false for a task from before the ledger: it is not
// compared then.
func recordDisagreements(logged map[int]int, ledger map[int]harness.TurnRecord, hist []gitx.HistoryEntry, done, current int, withLedger bool) (msgs, gaps []string) {
	commits := map[int][]gitx.HistoryEntry{}
	for _, h := range hist {
		commits[h.Iteration] = append(commits[h.Iteration], h)
	}
	var noLedger, noLog, twice, beyond []int
	for n := 1; n <= done; n++ {
		_, inLedger := ledger[n]
		if withLedger && !inLedger && logged[n] > 0 {
			noLedger = append(noLedger, n)
		}
		if inLedger && logged[n] == 0 {
			noLog = append(noLog, n)
		}
		if len(commits[n]) > 1 {
			twice = append(twice, n)
		}
	}
	for n := range commits {
		if n > current {
			beyond = append(beyond, n)
		}
	}
	sort.Ints(beyond)
	for n := range ledger {
		if n > current {
			msgs = append(msgs, fmt.Sprintf("turns.jsonl records turn %d, beyond the %d state.json counts", n, current))
		}
	}
	sort.Strings(msgs)
	if len(noLedger) > 0 {
		gaps = append(gaps, fmt.Sprintf("turn(s) %v are in the progress log but have no line in turns.jsonl", noLedger))
	}
	if len(noLog) > 0 {
		gaps = append(gaps, fmt.Sprintf("turn(s) %v have a line in turns.jsonl but no entry in the progress log", noLog))
	}
	if len(twice) > 0 {
		msgs = append(msgs, fmt.Sprintf("turn(s) %v have more than one commit with grub's trailers: one is not grub's", twice))
	}
	if len(beyond) > 0 {
		msgs = append(msgs, fmt.Sprintf("commit(s) with grub's trailers for turn(s) %v, beyond the %d state.json counts: not grub's", beyond, current))
	}
	return append(msgs, trailerDisagreements(ledger, commits, done)...), gaps
}

// trailerDisagreements compares each turn's commit with its ledger line.
func trailerDisagreements(ledger map[int]harness.TurnRecord, commits map[int][]gitx.HistoryEntry, done int) []string {
	var msgs []string
	for n := 1; n <= done; n++ {
		l, ok := ledger[n]
		cs := commits[n]
		if !ok || len(cs) != 1 {
			continue
		}
		c := cs[0]
		var diff []string
		if c.Feature != l.Feature {
			diff = append(diff, fmt.Sprintf("feature %q against %q", c.Feature, l.Feature))
		}
		if c.Verified != l.Flipped {
			diff = append(diff, fmt.Sprintf("verified flip %q against %q", c.Verified, l.Flipped))
		}
		if c.Status != "" && l.Status != "" && c.Status != string(l.Status) {
			diff = append(diff, fmt.Sprintf("status %s against %s", c.Status, l.Status))
		}
		if len(diff) > 0 {
			msgs = append(msgs, fmt.Sprintf("turn %d's commit %s and its line in turns.jsonl disagree: %s", n, c.Commit, strings.Join(diff, ", ")))
		}
	}
	return msgs
}
