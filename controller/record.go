package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/failpoint"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// logEntry is a progress-log entry the controller writes outside a normal
// turn record (recovery, goal edits, reconciliation).
type logEntry struct {
	decision               loopstate.Status
	summary, failure, note string
}

// record saves the turn's record in state, then writes it. The entry,
// the commit's fields and the final status are decided first and saved
// (recordPending, awaitingTurn cleared), so that a crash from here on is
// finished by the next run, never logged again as an unknown turn; then
// writeRecord appends the entry and the turn's ledger line, renders the
// checklist and commits.
func (c *Controller) record(ctx context.Context, out *outcome) error {
	st := c.st
	entry := templates.Entry{
		Iteration:         st.CurrentIteration,
		Phase:             string(out.phase),
		Feature:           firstNonEmpty(out.flipped, out.decision.Feature, out.feature),
		Decision:          out.decision.Status,
		Summary:           out.decision.Summary,
		NextStep:          out.decision.NextStep,
		Verification:      out.verification,
		Failure:           strings.Join(out.failures, "\n"),
		At:                c.now().UTC(),
		InputTokens:       out.usage.InputTokens,
		CachedInputTokens: out.usage.CachedInputTokens,
		OutputTokens:      out.usage.OutputTokens,
		Requests:          out.usage.Requests,
		Elapsed:           out.elapsed,
		UsageEstimated:    out.usage.Estimated,
		CostUSD:           out.usage.CostUSD,
		CostReported:      out.usage.CostReported,
	}
	entry.Note = out.note
	for _, a := range out.audited {
		entry.Note = strings.TrimSpace(entry.Note + "\nCompletion audit: " + a)
	}
	if out.decision.Blocker != "" {
		entry.Note = strings.TrimSpace(entry.Note + "\nBlocker: " + out.decision.Blocker)
	}
	var refused []harness.RefusedHost
	if c.opts.Refused != nil {
		refused = c.opts.Refused()
		entry.Refused = harness.FormatRefused(refused)
	}
	ledger := c.ledgerLine(out, entry)
	ledger.Refused = refused
	if err := c.saveRecord(entry, out.decision.Summary, &ledger, out.usage.CostUSD, out.usage.CostReported); err != nil {
		return err
	}
	if err := c.writeRecord(ctx, false); err != nil {
		return err
	}
	c.emitRecorded(ledger, out)
	passing, total := 0, 0
	if b := st.FeatureListBaseline; b != nil {
		passing, total = b.Passing(), len(b.Features)
	}
	result := string(out.decision.Status)
	if out.note != "" {
		result += " (" + brief(out.note) + ")"
	}
	if len(out.failures) > 0 {
		result = "failed: " + brief(out.failures[0])
	}
	spent := ""
	if cost := st.Usage.CostUSD; cost != nil {
		spent = ", " + templates.FormatUSD(*cost)
	}
	if entry.Refused != "" {
		spent += "; network refused: " + brief(entry.Refused)
	}
	c.say("turn %d/%d ended after %s: %s; %d/%d features pass; %s tokens used%s",
		st.CurrentIteration, st.Limits.MaxIterations, out.elapsed.Round(time.Second), result, passing, total, harness.FormatCount(st.Usage.TokensUsed), spent)
	return nil
}

// saveRecord renders the turn's entry and persists state with it as the
// turn's pending record (see harness.PendingRecord).
func (c *Controller) saveRecord(entry templates.Entry, summary string, ledger *harness.TurnRecord, cost float64, costReported bool) error {
	text, err := templates.RenderEntry(entry)
	if err != nil {
		return err
	}
	c.st.RecordPending = &harness.PendingRecord{Iteration: entry.Iteration, Entry: text, Feature: entry.Feature, Summary: summary,
		Ledger: ledger, CostUSD: cost, CostReported: costReported}
	if err := c.persist(); err != nil {
		return err
	}
	failpoint.Hit(failpoint.RecordSaved)
	return nil
}

// writeRecord writes the record saved in state: the progress-log entry,
// the checklist and the turn's commit (with the state and log in it).
// When resumed, a crash may have cut it short, so each step that is done
// already is skipped: the entry is in the log, the turn's commit is on
// HEAD. The record stays in state, as committed, until the next write of
// state (the next turn's start, or the next run's): a run that finds it
// finds every step done and writes nothing.
func (c *Controller) writeRecord(ctx context.Context, resumed bool) error {
	st, p := c.st, c.st.RecordPending
	if resumed {
		if _, err := c.store.AppendProgressOnce(st.ID, p.Entry); err != nil {
			return err
		}
	} else if err := c.store.AppendProgress(st.ID, p.Entry); err != nil {
		return err
	}
	failpoint.Hit(failpoint.LogAppended)
	if err := c.appendLedger(p, resumed); err != nil {
		return err
	}
	if err := c.store.WriteChecklist(st.ID, st.Goal, st.FeatureListBaseline); err != nil {
		return err
	}
	failpoint.Hit(failpoint.ChecklistSaved)
	if err := c.writeAcceptedList(); err != nil {
		return err
	}
	c.commit(ctx, p, resumed)
	failpoint.Hit(failpoint.Committed)
	return nil
}

// writeAcceptedList writes feature-list.json as the accepted list, in
// grub's own bytes, after the last command of the turn has run and just
// before the commit, so that the commit holds the list grub accepted
// whatever ran after the referee read the file (init.sh and verify
// commands are the agent's too). The record of a turn a crash left
// unknown is no exception: what the agent left there is reconciled (and
// a legal flip verified) before that record is saved (recoverUnknownTurn).
func (c *Controller) writeAcceptedList() error {
	base := c.st.FeatureListBaseline
	if base == nil {
		return nil
	}
	return c.store.RestoreFeatureListIfChanged(c.st.ID, base)
}

// commit makes the turn's commit, unless resumed and it is made already.
// A commit that fails is reported and the run goes on: the next turn's
// commit holds the files.
func (c *Controller) commit(ctx context.Context, p *harness.PendingRecord, resumed bool) {
	c.turnCommit = ""
	if c.opts.Committer == nil {
		return
	}
	st := c.st
	if resumed {
		done, err := c.opts.Committer.Committed(ctx, st.ID, p.Iteration)
		if err != nil {
			c.say("could not tell whether turn %d was committed (%v); not committing it again", p.Iteration, err)
			return
		}
		if done {
			return
		}
	}
	verified := ""
	if p.Ledger != nil {
		verified = p.Ledger.Flipped
	}
	rep, err := c.opts.Committer.Commit(ctx, Commit{TaskID: st.ID, Iteration: p.Iteration,
		Feature: p.Feature, Summary: p.Summary, Status: string(st.Status), Verified: verified,
		Usage: agent.Usage{CostUSD: p.CostUSD, CostReported: p.CostReported}})
	if err != nil {
		c.say("commit of turn %d failed: %v", p.Iteration, err)
	}
	c.warnLeftOut(rep)
	c.turnCommit = rep.Hash
	c.committedHistory(rep.Hash)
	c.noteTurnCommit(p.Iteration, rep.Hash)
}

// appendLedger appends the turn's line of the ledger saved with its
// record; when resumed, not again if the ledger's last line is this turn's
// already (readers keep the last line of a turn anyway).
func (c *Controller) appendLedger(p *harness.PendingRecord, resumed bool) error {
	if p.Ledger == nil {
		return nil // a record saved by an older grub, or an unknown turn's
	}
	if resumed {
		if turns, err := c.store.LoadTurns(c.st.ID); err == nil && len(turns) > 0 && turns[len(turns)-1].Iteration == p.Iteration {
			return nil
		}
	}
	return c.store.AppendTurn(c.st.ID, *p.Ledger)
}

// finishRecord finishes the record of a turn that a runner which died left
// pending, before anything else of this run changes state.
func (c *Controller) finishRecord(ctx context.Context) error {
	if c.recordComplete(ctx) {
		return nil // the usual case: the record stays in state as committed
	}
	c.say("finishing the record of turn %d, which a crash interrupted", c.st.RecordPending.Iteration)
	return c.writeRecord(context.WithoutCancel(ctx), true)
}

// recordComplete reports whether the pending record's entry is in the log
// and its turn committed (or commits are off), so nothing is left to do.
func (c *Controller) recordComplete(ctx context.Context) bool {
	p := c.st.RecordPending
	if ok, err := c.store.ProgressHasEntry(c.st.ID, p.Entry); err != nil || !ok {
		return false
	}
	if c.opts.Committer == nil {
		return true
	}
	done, err := c.opts.Committer.Committed(ctx, c.st.ID, p.Iteration)
	return err == nil && done
}

// warnLeftOut names each file the turn's commit left out for its size, on
// the progress lines and in the progress log under the turn's entry (the
// next commit carries that line), once per run unless its size changes.
func (c *Controller) warnLeftOut(rep CommitReport) {
	var lines strings.Builder
	for _, f := range rep.LeftOut {
		if c.leftOut[f.Path] == f.Size {
			continue // warned about already in this run
		}
		if c.leftOut == nil {
			c.leftOut = map[string]int64{}
		}
		c.leftOut[f.Path] = f.Size
		msg := fmt.Sprintf("%s (%s) is larger than %s and was left out of the turn's commit; it stays in the work tree: add it to .gitignore, or commit it yourself",
			f.Path, mib(f.Size), mib(rep.MaxSize))
		c.say("warning: %s", msg)
		fmt.Fprintf(&lines, "- Warning: %s\n", msg)
	}
	if lines.Len() == 0 {
		return
	}
	if err := c.store.AppendProgress(c.st.ID, lines.String()); err != nil {
		c.say("could not write the progress log: %v", err)
	}
}

// mib writes a size in MiB.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// appendLog writes a controller note to the progress log. A failure to
// write it is reported but does not stop the run.
func (c *Controller) appendLog(e logEntry) {
	err := c.store.AppendEntry(c.st.ID, templates.Entry{
		Iteration: c.st.CurrentIteration,
		Phase:     string(c.st.Phase),
		Decision:  e.decision,
		Summary:   e.summary,
		Failure:   e.failure,
		Note:      e.note,
		At:        c.now().UTC(),
	})
	if err != nil {
		c.say("could not write the progress log: %v", err)
	}
}

// checkInitScript says what is wrong with the init.sh an initializer left:
// still the starter's deliberately failing smoke check, or gone (then the
// starter is written again so the next attempt has it).
func (c *Controller) checkInitScript() (problem string, err error) {
	path := c.store.Path(c.st.ID, harness.FileInitScript)
	rel := c.store.Rel(path)
	data, err := c.store.ReadInitScript(c.st.ID)
	if err != nil {
		if err := c.store.ResetInitScript(c.st.ID); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s was missing or unreadable; grub wrote the starter again: fill in its project smoke check", rel), nil
	}
	if strings.Contains(string(data), starterMarker()) {
		return fmt.Sprintf("%s still has the starter's failing smoke check; replace it with a real check of the project", rel), nil
	}
	return "", nil
}

// starterMarker is the failing line of the starter init.sh.
func starterMarker() string {
	for _, line := range strings.Split(templates.InitScript, "\n") {
		if strings.Contains(line, "not written yet") {
			return strings.TrimSpace(line)
		}
	}
	return "\x00never"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
