package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/failpoint"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// outcome is the referee's verdict on one turn.
type outcome struct {
	decision     harness.Decision
	failures     []string // why the turn failed; empty for a good turn
	verification string   // what grub checked, for the log
	flipped      string   // the feature whose flip was verified and accepted
	changed      bool     // the workspace changed during the turn
	cancelled    bool
	quota        string        // the provider refused for quota: its error; the task ends usage_limited
	complete     bool          // every feature passes and init.sh passes
	phase        harness.Phase // the phase the turn ran in
	feature      string        // the feature the turn was proposed
	note         string        // what the referee changed in the agent's decision, for the log
	listReplaced bool          // feature-list.json was not a regular file and was put right
	usage        agent.Usage
	elapsed      time.Duration
	findings     []harness.Finding     // what the referee caught, for the ledger
	checks       []harness.LedgerCheck // what grub ran to verify the turn, for the ledger
	sliceEnded   string                // the run's slice (--for) was over when the turn ended: the stop reason
}

func (o *outcome) fail(format string, args ...any) { o.failAs(harness.FindingOther, format, args...) }

// failAs fails the turn and records the failure under kind for the ledger.
func (o *outcome) failAs(kind harness.FindingKind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.failures = append(o.failures, msg)
	o.findings = append(o.findings, harness.Finding{Kind: kind, Text: msg})
}

// checked records a check grub ran to verify the turn: init.sh starts the
// verification line of the log, a verify command adds to it.
func (o *outcome) checked(name string, chk harness.Check) {
	if name == "init.sh" || o.verification == "" {
		o.verification = name + " " + verdict(chk)
	} else {
		o.verification += ", " + name + " " + verdict(chk)
	}
	o.checks = append(o.checks, harness.NewLedgerCheck(name, chk))
}

// cutShort reports whether the turn never really ran to its end: it was
// cancelled, or the provider refused for quota. Such a turn counts neither
// as a failure nor as a success.
func (o *outcome) cutShort() bool { return o.cancelled || o.quota != "" }

// turnPlan is a turn ready to hand to the agent.
type turnPlan struct {
	prompt     string
	promptFile string // where the prompt is written for the agent
	feature    string // the feature the prompt proposes
	before     string // the workspace snapshot before the turn

	git        GitSnapshot // git's hooks and config before the turn; nil without a guard
	initScript []byte      // init.sh before the turn, restored if the agent replaces it by a link or folder
}

// agentRun is how the agent's part of a turn ended.
type agentRun struct {
	err       error         // the agent's error
	pausedNow bool          // pause --now cancelled the turn
	timeout   time.Duration // the turn's time limit
	clip      string        // what set the limit when not --turn-timeout: clipBudget or clipSlice
	elapsed   time.Duration
}

// runTurn runs one turn and referees it. Its error is a machinery failure
// (the harness could not be written); everything the agent does wrong is
// recorded in the outcome and state.
func (c *Controller) runTurn(ctx context.Context) (*outcome, error) {
	plan, err := c.prepareTurn()
	if err != nil {
		return nil, err
	}
	stopScan := c.watchProcesses() // until the referee's checks are done
	defer stopScan()
	res, run := c.runAgent(ctx, plan)
	failpoint.Hit(failpoint.AgentReturned)
	out := &outcome{usage: res.Usage, elapsed: run.elapsed, phase: c.st.Phase, feature: plan.feature}
	c.addUsage(res.Usage)
	classifyAgentError(out, run, ctx.Err() != nil)

	agentFailed := len(out.failures) > 0
	if !agentFailed && !out.cutShort() {
		// The agent had the turn: the notes were delivered. A turn that was
		// cut short or never really ran keeps them for the next one.
		c.st.Pending = harness.Pending{}
	}
	if c.tampered() {
		out.failAs(harness.FindingTampering, "state.json was modified during the turn; only grub writes it, and your change was discarded")
	}
	if err := c.checkRegularFiles(out, plan.initScript); err != nil {
		return nil, err
	}

	if err := c.refereeGuarded(ctx, out, res.FinalMessage, agentFailed, plan.git, res.OutputCut); err != nil {
		return nil, err
	}
	after, err := c.changes.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("snapshot the workspace: %w", err)
	}
	out.changed = after != plan.before
	c.lastAfter, c.reusable = after, true
	c.settle(out)
	failpoint.Hit(failpoint.Verified)
	return out, nil
}

// prepareTurn starts the next turn in state (awaiting, so that a crash
// from here on is recovered as an unknown turn), writes its prompt, takes
// the workspace snapshot and persists state.
func (c *Controller) prepareTurn() (turnPlan, error) {
	st := c.st
	st.CurrentIteration++
	now := c.now().UTC()
	st.AwaitingTurn = true
	st.TurnStartedAt = &now
	st.RecordPending = nil // the last turn's record is written
	// The notes stay in state until the agent has had the turn, so a crash
	// mid-turn delivers them again instead of losing them.
	prompt, feature, err := c.buildPrompt(st.Pending)
	if err != nil {
		return turnPlan{}, err
	}
	promptFile, err := c.store.WritePrompt(st.ID, st.CurrentIteration, prompt)
	if err != nil {
		return turnPlan{}, err
	}
	before, err := c.turnStartToken()
	if err != nil {
		return turnPlan{}, err
	}
	git, err := c.recordGit()
	if err != nil {
		return turnPlan{}, err
	}
	initScript, _ := c.store.ReadInitScript(st.ID) // nil when unreadable: the starter is restored then
	// Keep the log's inode, so that a log the agent replaces by a link is
	// put back with its content (checkRegularFiles).
	if err := c.store.KeepProgressLog(st.ID); err != nil {
		return turnPlan{}, err
	}
	if err := c.persist(); err != nil {
		return turnPlan{}, err
	}
	failpoint.Hit(failpoint.TurnStarted)
	return turnPlan{prompt: prompt, promptFile: promptFile, feature: feature, before: before, git: git, initScript: initScript}, nil
}

// turnStartToken is the workspace's token at the start of a turn: the
// last turn's end token when only grub ran since (it records the turn,
// commits, ends the processes the turn left; none of that changes the
// workspace outside .grub), else a new snapshot. Walking the work tree
// is a large share of a turn's own cost, and this saves one walk a turn.
// What else changes the workspace between two turns of a run (a person
// editing files meanwhile, a process the turn left before grub ends it)
// counts as the next turn's change: the no-progress rule then waits one
// more turn, never stops a task sooner.
func (c *Controller) turnStartToken() (string, error) {
	if c.reusable {
		c.reusable = false
		return c.lastAfter, nil
	}
	before, err := c.changes.Snapshot()
	if err != nil {
		return "", fmt.Errorf("snapshot the workspace: %w", err)
	}
	return before, nil
}

// runAgent hands the turn to the agent, cancellable by pause --now, with a
// heartbeat while it runs and its process group on record in the lock file.
func (c *Controller) runAgent(ctx context.Context, plan turnPlan) (agent.Result, agentRun) {
	st := c.st
	timeout, clip := c.turnTimeout()
	c.say("turn %d/%d started: %s%s", st.CurrentIteration, st.Limits.MaxIterations, st.Phase, featureSuffix(plan.feature))
	turnCtx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cancelTurn, c.pauseNowReq = cancel, false
	c.mu.Unlock()
	c.checkPauseNow() // a pause --now that came before the watch could see a turn
	start := c.now()
	c.progress.TurnStarted(c.turnStatus(plan.feature, start))
	stopBeat := c.heartbeat(plan.feature)
	res, err := c.opts.Agent.RunTurn(turnCtx, agent.Turn{
		TaskID:          st.ID,
		Iteration:       st.CurrentIteration,
		Phase:           string(st.Phase),
		Prompt:          plan.prompt,
		Workspace:       c.store.Root,
		HarnessDir:      c.store.Dir(st.ID),
		PromptFile:      plan.promptFile,
		TranscriptFile:  c.store.TranscriptPath(st.ID, st.CurrentIteration),
		SpillDir:        c.store.SpillDir(st.ID),
		TasksDir:        harness.GrubDirName,
		Protected:       harness.ProtectedFiles(),
		Skipped:         harness.SkippedDirs(),
		Timeout:         timeout,
		Locale:          st.Locale,
		TokenBudgetLeft: tokensLeft(st),
		Started:         func(pgid int) { start, _ := proc.StartTime(pgid); _ = c.lock.SetAgent(pgid, start) },
		Activity:        c.progress.Activity,
		Usage:           c.progress.Usage,
	})
	stopBeat()
	c.progress.TurnEnded()
	c.mu.Lock()
	pausedNow := c.pauseNowReq
	c.cancelTurn = nil
	c.mu.Unlock()
	cancel()
	_ = c.lock.SetAgentPGID(0)
	return res, agentRun{err: err, pausedNow: pausedNow, timeout: timeout, clip: clip, elapsed: c.now().Sub(start)}
}

// classifyAgentError records in out what the agent's end means for the
// turn: cancelled (a signal, pause --now, the time budget), refused for
// quota, or failed. cancelled tells whether the run itself was cancelled.
func classifyAgentError(out *outcome, run agentRun, cancelled bool) {
	switch err := run.err; {
	case cancelled || run.pausedNow:
		out.cancelled = true
	case errors.Is(err, agent.ErrUsageLimited):
		out.quota = err.Error()
	case errors.Is(err, agent.ErrTimeout) && run.clip == clipBudget:
		// The time budget rule ends the task; the turn itself did not fail.
		out.decision = harness.NewDecision(loopstate.Cancelled, "stopped when the time budget ran out")
		out.cancelled = true
	case errors.Is(err, agent.ErrTimeout) && run.clip == clipSlice:
		// The run's slice is over: the task pauses for the next run; the
		// turn itself did not fail.
		out.decision = harness.NewDecision(loopstate.Cancelled, "stopped when the slice (--for) ended")
		out.cancelled = true
	case errors.Is(err, agent.ErrTimeout):
		out.failAs(harness.FindingTimeout, "the turn timed out after %s and the agent was stopped; work in smaller steps", run.timeout)
	case err != nil && !errors.Is(err, agent.ErrBudgetSpent):
		out.failAs(harness.FindingAgentError, "the agent failed: %v", err)
	}
}

// referee checks the turn's decision and feature list for the current phase.
// A turn whose agent failed (timeout, crash, request cap) has no decision to
// parse: its failure is reason enough, and its edits are undone.
// A decision that cannot be found in an output the backend cut (cut bytes
// dropped from its middle) says so.
func (c *Controller) referee(ctx context.Context, out *outcome, message string, agentFailed bool, cut int64) error {
	if agentFailed || out.cutShort() {
		switch {
		case agentFailed:
			out.decision = harness.NewDecision(loopstate.Failed, "the agent did not finish the turn")
		case out.decision.Status == "":
			out.decision = harness.NewDecision(loopstate.Cancelled, "the turn was cancelled before it finished")
		}
		return c.restoreIfChanged() // nothing to restore before a list was accepted
	}
	d, perr := loopstate.Parse(message)
	switch {
	case perr != nil && cut > 0:
		out.failAs(harness.FindingNoDecision, "%v\nThe output was about %d bytes and grub kept the start and the end; the middle (%d bytes) was cut. End the turn with the %s block, and keep what you print short.", perr, int64(len(message))+cut, cut, loopstate.OpenTag)
	case perr != nil:
		out.failAs(harness.FindingNoDecision, "%v", perr)
	default:
		out.decision = harness.Decision{Decision: d}
	}
	if perr != nil {
		out.decision = harness.NewDecision(loopstate.Failed, "no valid loop-state decision")
	}
	if c.st.Phase == harness.PhaseInitializer {
		return c.refereeInitializer(ctx, out, perr == nil)
	}
	return c.refereeExecution(ctx, out, perr == nil)
}

// refereeInitializer accepts the planned feature list and init.sh, or fails
// the turn naming every problem.
func (c *Controller) refereeInitializer(ctx context.Context, out *outcome, decided bool) error {
	st := c.st
	if decided && out.decision.Status == loopstate.Blocked {
		return nil
	}
	path := c.store.Path(st.ID, harness.FileFeatureList)
	rel := c.store.Rel(path)
	data, err := c.store.ReadFeatureList(st.ID)
	var list *featurelist.List
	switch {
	case out.listReplaced:
		// checkRegularFiles has failed the turn and removed what was there.
	case errors.Is(err, os.ErrNotExist):
		out.failAs(harness.FindingPlanRejected, "%s was not written; the initializer must write the feature list", rel)
	case err != nil:
		out.failAs(harness.FindingPlanRejected, "%s cannot be read (%v); write it as a regular JSON file", rel, err)
	default:
		list, err = featurelist.Parse(rel, data)
		if err != nil {
			out.failAs(harness.FindingPlanRejected, "%v", err)
		} else if vs := featurelist.CheckInitial(list, st.Goal, st.Limits.MinFeatures, st.Limits.MaxFeatures); len(vs) > 0 {
			out.failAs(harness.FindingPlanRejected, "%s breaks the rules: %s", rel, featurelist.Describe(vs))
			list = nil
		}
	}
	if problem, err := c.checkInitScript(); err != nil {
		return err
	} else if problem != "" {
		out.failAs(harness.FindingPlanRejected, "%s", problem)
	}
	if list == nil || len(out.failures) > 0 {
		return nil
	}
	chk, err := c.runInit(ctx)
	if err != nil {
		return c.cancelledBy(ctx, out, err)
	}
	out.checked("init.sh", chk)
	st.FeatureListBaseline = list
	st.Phase = harness.PhaseExecution
	if out.decision.Status == loopstate.Complete {
		out.decision.Status = loopstate.Continue
		out.decision.NextStep = "implement feature " + list.Features[0].ID
	}
	return nil
}

// refereeExecution checks the turn's feature-list edit against the accepted
// list, verifies a claimed feature, and applies the completion gate.
func (c *Controller) refereeExecution(ctx context.Context, out *outcome, decided bool) error {
	st := c.st
	if !decided || len(out.failures) > 0 {
		return c.restoreIfChanged()
	}
	change, list, err := c.checkListEdit(ctx, out)
	if err != nil || list == nil {
		return err
	}
	st.FeatureListBaseline = list
	if len(change.Flipped) == 1 {
		out.flipped = change.Flipped[0]
	}
	if list.Passing() == len(list.Features) {
		if out.verification == "" {
			chk, err := c.runInit(ctx)
			if err != nil {
				return c.cancelledBy(ctx, out, err)
			}
			out.checked("init.sh", chk)
		}
		if st.LastInit != nil && st.LastInit.Passed {
			out.complete = true
			return nil
		}
		out.failAs(harness.FindingVerification, "every feature passes but %s", describeCheck("init.sh", *st.LastInit))
		return nil
	}
	if out.decision.Status == loopstate.Complete {
		next := list.FirstPending()
		st.Pending.CompletionRejected = fmt.Sprintf("you reported complete, but %d of %d features do not pass yet; the first pending one is %s",
			len(list.Features)-list.Passing(), len(list.Features), next.ID)
		out.note = "Completion claim rejected: " + st.Pending.CompletionRejected
		out.findings = append(out.findings, harness.Finding{Kind: harness.FindingCompletionRejected, Text: st.Pending.CompletionRejected})
		out.decision.Status = loopstate.Continue
		out.decision.NextStep = "implement feature " + next.ID
	}
	return nil
}

// checkListEdit validates the feature list the agent left against the
// accepted baseline and verifies a flip. It returns the list to accept, or
// nil after restoring the baseline and recording why.
func (c *Controller) checkListEdit(ctx context.Context, out *outcome) (featurelist.Change, *featurelist.List, error) {
	st := c.st
	base := st.FeatureListBaseline
	path := c.store.Path(st.ID, harness.FileFeatureList)
	rel := c.store.Rel(path)
	// A file that is not a regular file (a link, even to a valid list; a
	// folder) is an illegal edit in itself. One that is missing or cannot
	// be read is checked as an empty one: a violation, and restored.
	data, err := c.store.ReadFeatureList(st.ID)
	if nr := (*harness.NotRegularError)(nil); errors.As(err, &nr) {
		out.failAs(harness.FindingIllegalEdit, "illegal edit of %s, restored to the accepted list: %v", rel, nr)
		return featurelist.Change{}, nil, c.store.RestoreFeatureList(st.ID, base)
	}
	change, vs, err := featurelist.CheckTurnBytes(rel, base, data)
	if err != nil {
		return change, nil, err
	}
	if len(vs) > 0 {
		out.failAs(harness.FindingIllegalEdit, "illegal edit of %s, restored to the accepted list: %s", rel, featurelist.Describe(vs))
		return change, nil, c.store.RestoreFeatureList(st.ID, base)
	}
	list := change.After // parsed and schema-checked by CheckTurnBytes
	if len(change.Flipped) == 0 {
		return change, list, nil
	}
	id := change.Flipped[0]
	chk, err := c.runInit(ctx)
	if err != nil {
		return change, nil, c.cancelledBy(ctx, out, err)
	}
	out.checked("init.sh", chk)
	if !chk.Passed {
		out.failAs(harness.FindingVerification, "feature `%s` was claimed passing but %s; the claim was reverted", id, describeCheck("init.sh", chk))
		return change, nil, c.store.RestoreFeatureList(st.ID, base)
	}
	if cmd := list.Find(id).Verify; cmd != "" {
		vchk, err := c.runCheck(ctx, cmd, c.initTimeout())
		if err != nil {
			return change, nil, c.cancelledBy(ctx, out, err)
		}
		out.checked("verify", vchk)
		if !vchk.Passed {
			out.failAs(harness.FindingVerification, "feature `%s` was claimed passing but its %s; the claim was reverted", id, describeCheck("verify command", vchk))
			return change, nil, c.store.RestoreFeatureList(st.ID, base)
		}
	}
	return change, list, nil
}

// checkRegularFiles enforces that the referee's files are regular files
// inside the harness, and grub's folders real folders (checkOwnFiles): an
// init.sh or feature-list.json that the agent
// replaced by a symbolic link (even to a valid file), a folder or anything
// else is an illegal edit, whatever the turn did otherwise. init.sh gets
// its content from before the turn back (initBefore; the starter when
// there was none), feature-list.json the accepted list; before a list was
// accepted, what is there is removed. It runs before anything executes
// init.sh.
func (c *Controller) checkRegularFiles(out *outcome, initBefore []byte) error {
	st := c.st
	if err := c.checkOwnFiles(out); err != nil {
		return err
	}
	var nr *harness.NotRegularError
	if _, err := c.store.ReadInitScript(st.ID); errors.As(err, &nr) {
		if initBefore == nil {
			initBefore = []byte(templates.InitScript)
		}
		if err := c.store.RestoreInitScript(st.ID, initBefore); err != nil {
			return err
		}
		out.failAs(harness.FindingIllegalEdit, "illegal edit: %v; grub restored it as a regular file with its content from before the turn", nr)
	}
	if _, err := c.store.ReadFeatureList(st.ID); errors.As(err, &nr) {
		out.listReplaced = true
		if base := st.FeatureListBaseline; base != nil {
			if err := c.store.RestoreFeatureList(st.ID, base); err != nil {
				return err
			}
			out.failAs(harness.FindingIllegalEdit, "illegal edit: %v; grub restored the accepted list as a regular file", nr)
		} else {
			if err := c.store.RemoveNotRegular(st.ID, harness.FileFeatureList); err != nil {
				return err
			}
			out.failAs(harness.FindingIllegalEdit, "illegal edit: %v; grub removed it: write the feature list as a regular JSON file", nr)
		}
	}
	return nil
}

// reconcileInitScript runs before the first turn of a run: an init.sh
// left as something other than a regular file (a runner died mid-turn, or
// it was replaced between runs) is replaced by the starter, since the
// content it had is not known here, and the log says so.
func (c *Controller) reconcileInitScript() error {
	var nr *harness.NotRegularError
	if _, err := c.store.ReadInitScript(c.st.ID); !errors.As(err, &nr) {
		return nil
	}
	if err := c.store.ResetInitScript(c.st.ID); err != nil {
		return err
	}
	msg := fmt.Sprintf("%v; grub wrote the starter in its place (the last committed version is in git)", nr)
	c.say("%s", msg)
	c.appendLog(logEntry{decision: loopstate.Reconciled, summary: "init.sh was not a regular file when the run started", failure: msg})
	c.st.Pending.Failure = strings.TrimSpace(c.st.Pending.Failure + "\n" + msg)
	return nil
}

// cancelledBy turns an error from a check into a cancelled turn when the
// run itself was cancelled, and returns other errors.
func (c *Controller) cancelledBy(ctx context.Context, out *outcome, err error) error {
	if ctx.Err() == nil {
		return err
	}
	out.cancelled = true
	out.decision = harness.NewDecision(loopstate.Cancelled, "cancelled while grub verified the turn")
	return c.restoreIfChanged()
}

// restoreIfChanged puts the accepted feature list back if the file differs.
func (c *Controller) restoreIfChanged() error {
	base := c.st.FeatureListBaseline
	if base == nil {
		return nil
	}
	return c.store.RestoreFeatureListIfChanged(c.st.ID, base)
}

// reconcileFeatureList runs before the first turn of a run: a feature list
// that differs from the accepted one (a runner died mid-turn, or the file
// was edited between runs) is checked like a turn's edit, so a legal,
// verified flip is kept and anything else is restored.
func (c *Controller) reconcileFeatureList(ctx context.Context) error {
	if c.st.FeatureListBaseline == nil {
		return nil
	}
	out := &outcome{}
	_, list, err := c.checkListEdit(ctx, out)
	if err != nil {
		return err
	}
	if len(out.failures) > 0 {
		c.say("feature-list.json differed from the accepted list: %s", strings.Join(out.failures, "; "))
		c.appendLog(logEntry{decision: loopstate.Reconciled, summary: "feature-list.json differed from the accepted list when the run started", failure: strings.Join(out.failures, "; ")})
		return nil
	}
	if list != nil && !featurelist.Equal(list, c.st.FeatureListBaseline) {
		c.say("feature-list.json differed from the accepted list; the change is legal and verified, so it is kept")
		c.st.FeatureListBaseline = list
	}
	return nil
}

// settle updates the counters from a refereed turn.
func (c *Controller) settle(out *outcome) {
	st := c.st
	out.decision.Iteration = st.CurrentIteration
	st.AwaitingTurn = false
	st.TurnStartedAt = nil
	st.LastDecision = &out.decision
	if out.cutShort() {
		return
	}
	if len(out.failures) > 0 {
		msg := strings.Join(out.failures, "\n")
		st.ConsecutiveFailures++
		st.LastError = msg
		st.Pending.Failure = msg
	} else {
		// The failures are over: status shows no error that no longer
		// holds (the log and the ledger keep every turn's).
		st.ConsecutiveFailures, st.LastError = 0, ""
	}
	if out.decision.Status == loopstate.Blocked && len(out.failures) == 0 {
		st.ConsecutiveBlocked++
		// A question ends the task at once (see turnEnd); another blocked
		// report is re-examined by the next turn until the limit.
		if out.decision.Question == "" && st.ConsecutiveBlocked < st.Limits.MaxBlocked {
			st.Pending.BlockedReexamine = out.decision.Blocker
		}
	} else {
		st.ConsecutiveBlocked = 0
	}
	if out.phase == harness.PhaseExecution {
		if out.flipped != "" || out.changed {
			st.NoProgressTurns = 0
		} else {
			st.NoProgressTurns++
		}
	}
}

// addUsage adds a turn's usage to the task's totals.
func (c *Controller) addUsage(u agent.Usage) {
	s := &c.st.Usage
	s.InputTokens += u.InputTokens
	s.CachedInputTokens += u.CachedInputTokens
	s.OutputTokens += u.OutputTokens
	s.Requests += u.Requests
	s.TokensUsed += u.Tokens()
	s.Estimated = s.Estimated || u.Estimated
	if u.CostReported {
		s.AddCost(u.CostUSD)
	}
}

// tokensLeft is the token budget still unspent; 0 means no budget.
func tokensLeft(st *harness.State) int64 {
	if st.Limits.TokenBudget == 0 {
		return 0
	}
	return max(st.Limits.TokenBudget-st.Usage.TokensUsed, 1)
}

func verdict(chk harness.Check) string {
	switch {
	case chk.TimedOut:
		return "timed out"
	case chk.Passed:
		return "passed"
	default:
		return fmt.Sprintf("failed (exit %d)", chk.ExitCode)
	}
}

func featureSuffix(id string) string {
	if id == "" {
		return ""
	}
	return ", feature " + id
}
