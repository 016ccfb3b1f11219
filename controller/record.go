package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// logEntry is a progress-log entry the controller writes outside a normal
// turn record (recovery, goal edits, reconciliation).
type logEntry struct {
	decision               loopstate.Status
	summary, failure, note string
}

// record writes the turn's progress-log entry and checklist, commits the
// turn, persists state and reports the end of the turn.
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
	if out.decision.Blocker != "" {
		entry.Note = strings.TrimSpace(entry.Note + "\nBlocker: " + out.decision.Blocker)
	}
	if err := c.store.AppendEntry(st.ID, entry); err != nil {
		return err
	}
	if err := c.store.WriteChecklist(st.ID, st.Goal, st.FeatureListBaseline); err != nil {
		return err
	}
	// Persist before committing, so the commit holds the turn's state.
	if err := c.persist(); err != nil {
		return err
	}
	c.turnCommit = ""
	if c.opts.Committer != nil {
		rep, err := c.opts.Committer.Commit(ctx, Commit{TaskID: st.ID, Iteration: st.CurrentIteration,
			Feature: entry.Feature, Summary: out.decision.Summary, Status: string(st.Status), Usage: out.usage})
		if err != nil {
			c.say("commit of turn %d failed: %v", st.CurrentIteration, err)
		}
		c.warnLeftOut(rep)
		c.turnCommit = rep.Hash
	}
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
	c.say("turn %d/%d ended after %s: %s; %d/%d features pass; %d tokens used%s",
		st.CurrentIteration, st.Limits.MaxIterations, out.elapsed.Round(time.Second), result, passing, total, st.Usage.TokensUsed, spent)
	return nil
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
