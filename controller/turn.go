package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/failpoint"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/loopstate"
)

// outcome is the referee's verdict on one turn.
type outcome struct {
	decision     harness.Decision
	failures     []string // why the turn failed; empty for a good turn
	verification string   // what grub checked, for the log
	flipped      string   // the feature whose flip was verified and accepted
	changed      bool     // the workspace changed during the turn
	cancelled    bool
	quota        string // the provider refused for quota: its error; the task ends usage_limited
	// setup is what the agent said no retry can change (a refused key, an
	// unknown model, no server): the run stops, the task paused.
	setup *agent.SetupError
	// givenBack: the turn a setup error stopped changed nothing and is not
	// counted: no entry, no ledger line, no commit (giveBack).
	givenBack    bool
	complete     bool          // every feature passes, and init.sh and every verify passed on the final tree
	phase        harness.Phase // the phase the turn ran in
	feature      string        // the feature the turn was proposed
	note         string        // what the referee changed in the agent's decision, for the log
	listReplaced bool          // feature-list.json was not a regular file and was put right
	usage        agent.Usage
	elapsed      time.Duration
	findings     []harness.Finding     // what the referee caught, for the ledger
	audited      []string              // what the completion audit set back: findings, not failures of the turn
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
// cancelled, the provider refused for quota, or the agent could not work
// at all (setup). Such a turn counts neither as a failure nor as a
// success.
func (o *outcome) cutShort() bool { return o.cancelled || o.quota != "" || o.setup != nil }

// turnPlan is a turn ready to hand to the agent.
type turnPlan struct {
	prompt     string
	promptFile string // where the prompt is written for the agent
	feature    string // the feature the prompt proposes
	before     string // the workspace snapshot before the turn

	git        GitSnapshot // git's hooks and config before the turn; nil without a guard
	initScript []byte      // init.sh before the turn, restored if the agent replaces it by a link or folder
	// config is the workspace's .grub/config.toml before the turn: the
	// user's file, which no turn may create, change or delete.
	config harness.ConfigSnapshot
	// protected are the files --protect matches as the turn starts.
	protected protectedSet
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
	// Nothing the turn started may act once the referee looks.
	c.endTurnProcesses(out, leftByTurn)

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
	if err := c.checkWorkspaceConfig(out, plan.config); err != nil {
		return nil, err
	}
	if _, err := c.checkRecord(out, "during the turn", c.st.FeatureListBaseline, plan.initScript); err != nil {
		return nil, err
	}
	if _, err := c.checkProtected(out, plan.protected, "during the turn"); err != nil {
		return nil, err
	}

	base, phase := c.st.FeatureListBaseline, c.st.Phase
	if err := c.refereeGuarded(ctx, out, res.FinalMessage, agentFailed, plan.git, res.OutputCut); err != nil {
		return nil, err
	}
	if err := c.historyAfterVerify(ctx, out, base, phase); err != nil {
		return nil, err
	}
	if err := c.checkConfigAfterVerify(out, plan.config, base, phase); err != nil {
		return nil, err
	}
	if err := c.checkRecordAfterVerify(out, base, phase, plan.initScript); err != nil {
		return nil, err
	}
	if err := c.checkProtectedAfterVerify(out, plan.protected, base, phase); err != nil {
		return nil, err
	}
	if err := c.setAsidePlanted(out, "the turn"); err != nil {
		return nil, err
	}
	after, err := c.changes.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("snapshot the workspace: %w", err)
	}
	out.changed = after != plan.before
	c.lastAfter, c.reusable = after, true
	if out.setup != nil && !out.changed && len(out.failures) == 0 {
		c.giveBack(out)
		return out, nil
	}
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
	// The copies kept in the private folder from here are synced at one
	// point, before state says the turn is under way (harness.BeginKeep).
	c.store.BeginKeep()
	defer func() { _ = c.store.SyncKept() }() // an early return: synced all the same, unread
	if err := c.keepGitCopy(git); err != nil {
		return turnPlan{}, err
	}
	initScript, _ := c.store.ReadInitScript(st.ID) // nil when unreadable: the starter is restored then
	config, err := c.store.SnapshotConfig()
	if err != nil {
		return turnPlan{}, err
	}
	// Kept outside the workspace too, for a resume after a crash
	// mid-turn (recoverConfig).
	if c.store.Private != "" {
		if err := c.store.SaveConfigCopy(st.ID, st.CurrentIteration, config); err != nil {
			return turnPlan{}, err
		}
	}
	// Keep the log's inode, so that a log the agent replaces by a link is
	// put back with its content (checkRegularFiles).
	if err := c.store.KeepProgressLog(st.ID); err != nil {
		return turnPlan{}, err
	}
	// Keep the record grub wrote, so that a turn that rewrites it is
	// caught and put back (checkRecord).
	if err := c.keepRecord(); err != nil {
		return turnPlan{}, err
	}
	// Note the task folders there are, so that one the turn makes is set
	// aside after it (setAsidePlanted), or by the run that recovers it.
	if err := c.store.NoteTaskFolders(st.ID); err != nil {
		return turnPlan{}, err
	}
	// Keep the protected files (--protect), in the private folder too, so
	// that a run recovering this turn checks them (recoverProtected).
	protected, err := c.keepProtected()
	if err != nil {
		return turnPlan{}, err
	}
	if err := c.store.SyncKept(); err != nil {
		return turnPlan{}, fmt.Errorf("keep the copies for turn %d: %w", st.CurrentIteration, err)
	}
	if err := c.persist(); err != nil {
		return turnPlan{}, err
	}
	failpoint.Hit(failpoint.TurnStarted)
	return turnPlan{prompt: prompt, promptFile: promptFile, feature: feature, before: before, git: git, initScript: initScript, config: config, protected: protected}, nil
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
	c.emitTurnStarted(plan.feature, start)
	now := c.newDoing()
	stopBeat := c.heartbeat(plan.feature)
	timeBudgetLeft, _ := c.timeBudgetLeft()
	timeBudgetLeft = max(timeBudgetLeft, 0)
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
		ReadOnly:        harness.ReadOnlyFiles(),
		Skipped:         harness.SkippedDirs(),
		Timeout:         timeout,
		MaxIterations:   st.Limits.MaxIterations,
		TimeBudgetLeft:  timeBudgetLeft,
		Locale:          st.Locale,
		TokenBudgetLeft: tokensLeft(st),
		Started:         func(pgid int) { start, _ := proc.StartTime(pgid); _ = c.lock.SetAgent(pgid, start) },
		Activity:        now.activity,
		Usage:           now.usage,
	})
	stopBeat()
	done := c.event(events.AgentDone)
	done.Agent = &events.Agent{DurationSeconds: max(c.now().Sub(start).Seconds(), 0)}
	c.progress.Event(done)
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
// quota, unable to work (a setup error), or failed. cancelled tells
// whether the run itself was cancelled.
func classifyAgentError(out *outcome, run agentRun, cancelled bool) {
	var setup *agent.SetupError
	switch err := run.err; {
	case cancelled || run.pausedNow:
		out.cancelled = true
	case errors.Is(err, agent.ErrUsageLimited):
		out.quota = err.Error()
	case errors.As(err, &setup):
		// Not the agent's failure, nor a catch of the referee's: the
		// setup is wrong, and every further turn would fail the same way.
		// The ledger's finding marks a recorded turn failed (not cancelled)
		// for the views, never as a catch (FindingKind.Caught).
		out.setup = setup
		out.decision = harness.NewDecision(loopstate.Cancelled, "stopped: the agent cannot work: "+setup.Cause)
		out.findings = append(out.findings, harness.Finding{Kind: harness.FindingSetup, Text: "the agent cannot work: " + setup.Cause})
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

// giveBack takes back a turn that a setup error stopped before it changed
// anything: it is not counted (the iteration goes back), and it gets no
// progress-log entry, ledger line or commit. Its prompt and transcript
// stay in turns/, which the next turn of that number writes again.
func (c *Controller) giveBack(out *outcome) {
	st := c.st
	st.CurrentIteration--
	st.AwaitingTurn = false
	st.TurnStartedAt = nil
	out.givenBack = true
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
	if len(out.audited) > 0 {
		st.Pending.AuditRegression = strings.Join(out.audited, "\n")
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
