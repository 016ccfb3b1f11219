package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/termsafe"
)

// Committer records a finished turn in version control (one commit per
// turn), and reports the files it left out.
type Committer interface {
	Commit(ctx context.Context, c Commit) (CommitReport, error)
	// Committed reports whether the turn's commit is made: the newest
	// commit of the task on HEAD is that turn's (or a later one). The
	// controller asks before committing a turn whose record a crash
	// interrupted.
	Committed(ctx context.Context, taskID string, iteration int) (bool, error)
}

// CommitReport is what a Committer tells the controller about a commit:
// the files it left out because they are larger than MaxSize bytes. They
// stay in the work tree; the controller warns about each.
type CommitReport struct {
	// Hash is the new commit's hash ("" when there is none); the on-turn
	// hook gets it as GRUB_COMMIT.
	Hash    string
	LeftOut []LeftOutFile
	MaxSize int64
}

// LeftOutFile is a file a commit left out.
type LeftOutFile struct {
	Path string // relative to the workspace
	Size int64
}

// Commit describes one turn for a Committer.
type Commit struct {
	TaskID    string
	Iteration int
	Feature   string
	Summary   string
	Status    string      // the task status after the turn
	Verified  string      // the feature whose flip the referee verified and accepted; "" for none
	Usage     agent.Usage // what the turn consumed (its cost goes into a trailer when reported)
}

// ChangeDetector tells whether the workspace changed during a turn.
type ChangeDetector interface {
	// Snapshot returns a token for the workspace's content; equal tokens
	// mean nothing changed.
	Snapshot() (string, error)
}

// Options configure a controller run.
type Options struct {
	Store     *harness.Store
	TaskID    string
	Agent     agent.Agent
	Committer Committer      // nil: no commits
	Changes   ChangeDetector // nil: a fingerprint of the workspace files
	GitGuard  GitGuard       // nil: git's hooks and config are not guarded (no repository)
	// History, with a Committer, is the task's branch, which may only
	// grow (history.go); nil: not checked.
	History History
	// AcceptHistory takes HEAD as the task's new base when the history
	// changed since the last run (grub resume --accept-history).
	AcceptHistory bool
	Progress      io.Writer // progress lines, when Events is nil; nil discards them
	// Events receives the progress lines and the events of each turn
	// (see Progress); nil means Lines(Progress).
	Events Progress
	// Redraw, when positive, is how often Events gets a Tick while a turn
	// runs, on Clock.
	Redraw time.Duration
	// Clock is the run's time source; nil means the wall clock, read
	// through Now if that is set.
	Clock Clock
	Now   func() time.Time
	// Heartbeat is how often a long turn reports that it is still running
	// (default 30s).
	Heartbeat time.Duration
	// Limits are raised or lowered before the run starts (grub resume).
	Limits harness.LimitChanges
	// Wrap, when set, puts the sandbox launcher in front of every init.sh
	// and verify command (see proc.Spec.Wrap); the controller itself
	// knows nothing of the sandbox.
	Wrap proc.Wrapper
	// Env, when non-nil, is the environment init.sh and verify commands
	// start from: grub's own without its secrets. nil means grub's own.
	Env []string
	// Refused, when set, returns the hosts the network allowlist's proxy
	// refused since it was last called (and forgets them): the
	// controller calls it once a turn, when it records the turn, for the
	// ledger line and the progress log. nil: no allowlist.
	Refused func() []harness.RefusedHost
	// Reaper, when set, ends what a turn leaves behind; nil leaves
	// processes a turn detached alone (in-process tests).
	Reaper Reaper
	// ProcessScan is how often the processes of a running turn are put on
	// record in the lock (default 500ms; see watchProcesses).
	ProcessScan time.Duration
	// Slice, when positive, is how long this run may go on (grub resume
	// --for): once it is over the run stops at the next turn boundary,
	// leaving the task paused for another run to continue, and a turn's
	// timeout is clipped to what is left of it. It is not a limit of the
	// task: nothing of it is stored.
	Slice time.Duration
	// HookEnv, when non-nil, is the environment the task's hooks start
	// from; nil means grub's own (os.Environ): hooks are the user's own
	// commands and get the user's credentials (see hooks.go).
	HookEnv []string
}

// Reaper finds and ends the processes a turn leaves behind. grub's cli
// makes the process a child subreaper and passes one built on
// internal/proc; the controller calls it twice a turn, when nothing of
// grub's own runs: once the agent is done, before the referee reads the
// work tree, and once init.sh and verify are done, before the commit
// (endTurnProcesses).
type Reaper interface {
	// Descendants lists grub's live descendant processes (the parent
	// chain reaches grub; a setsid daemon included) with their start
	// times, sorted by pid. During a turn they are recorded in the lock
	// (watchProcesses), so that the next runner can end them if this one
	// dies.
	Descendants() []harness.ProcessRef
	// EndOrphans ends every child process of grub and their descendants,
	// returning the pids it signalled.
	EndOrphans() ([]int, error)
}

const interruptedReason = "interrupted by a signal"

// ErrInterrupted is returned when a signal cancelled the run; the task is
// left paused and can be resumed.
var ErrInterrupted = errors.New("interrupted: task paused, run grub resume to continue")

// ErrSetup is returned when the agent cannot work at all (an
// agent.SetupError, before the first turn or in a turn): the task is left
// paused with the cause and the fix in its stop reason, which the
// controller has said.
var ErrSetup = errors.New("the agent cannot work: task paused, fix the setup and run grub resume")

// Clock tells the time and ticks: the wall clock, or a fake that tests
// move by hand so that budgets and heartbeats run without waiting.
type Clock interface {
	Now() time.Time
	// NewTicker sends the time on the channel every d until stop is
	// called.
	NewTicker(d time.Duration) (ticks <-chan time.Time, stop func())
}

// wallClock is the real Clock.
type wallClock struct{ now func() time.Time }

func (w wallClock) Now() time.Time { return w.now() }

func (wallClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Controller runs one task until it stops.
type Controller struct {
	opts     Options
	store    *harness.Store
	st       *harness.State
	lock     *harness.Lock
	clock    Clock
	now      func() time.Time
	progress Progress
	changes  ChangeDetector

	// since is when this run started, or the loaded state's updatedAt if
	// later: a control request made before it was meant for an earlier
	// run (or was overtaken by a direct change) and is dropped.
	since      time.Time
	mark       time.Time        // the last moment accounted into TimeUsedSeconds
	carry      time.Duration    // time not yet added as a whole second
	stateBytes []byte           // state.json as grub last wrote it
	leftOut    map[string]int64 // files commits left out, with the size warned about
	sliceEnd   time.Time        // when this run's slice is over (Options.Slice); zero: no slice
	turnCommit string           // the hash of the last turn's commit, for the hooks
	// lastAfter is the workspace token taken at the end of the last turn,
	// which the next turn starts from when nothing but grub ran since
	// (reusable); the first turn of a run, and a turn after the on-turn
	// hook ran, take their own (turnStartToken).
	lastAfter string
	reusable  bool

	mu          sync.Mutex
	cancelTurn  context.CancelFunc
	pauseNowReq bool
}

// Run takes the task's lock and runs it until it stops, returning the final
// state. A lock held elsewhere is a *harness.LockedError. A signal
// (cancelled ctx) leaves the task paused and returns ErrInterrupted.
func Run(ctx context.Context, o Options) (*harness.State, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Clock == nil {
		o.Clock = wallClock{o.Now}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Events == nil {
		o.Events = Lines(o.Progress)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 30 * time.Second
	}
	// Taken before the lock: a request made once the lock is held is for
	// this run.
	since := o.Clock.Now()
	lock, err := o.Store.LockRunner(o.TaskID)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	// What waits for a sync point (the last turn commit's note) is on
	// disk before the lock is given up.
	defer func() { _ = o.Store.SyncKept() }()

	c := &Controller{opts: o, store: o.Store, lock: lock, clock: o.Clock, now: o.Clock.Now, progress: o.Events, changes: o.Changes, since: since}
	if c.changes == nil {
		c.changes = &treeFingerprint{root: o.Store.Root}
	}
	if err := c.endLeftAgent(lock.Previous()); err != nil {
		return nil, err
	}
	st, err := c.store.LoadState(o.TaskID)
	if err != nil {
		return nil, err
	}
	c.st = st
	if st.UpdatedAt.After(c.since) {
		c.since = st.UpdatedAt
	}
	c.mark = c.now()
	c.notedMark()
	c.emitRunStarted()
	if err := c.startHistory(); err != nil {
		return st, err
	}
	if st.RecordPending != nil {
		if err := c.finishRecord(ctx); err != nil {
			return st, err
		}
	}
	if o.Slice > 0 {
		c.sliceEnd = since.Add(o.Slice)
	}
	if st.Status == harness.StatusComplete {
		// What finishRecord wrote is committed with state as it is.
		return st, nil
	}
	if err := c.prepare(ctx); err != nil {
		return c.st, err
	}
	stopWatch, err := c.store.WatchControl(c.st.ID, c.checkPauseNow)
	if err != nil {
		return c.st, err
	}
	defer stopWatch()
	return c.loop(ctx)
}

// agentGroupLeft reports whether the agent group prev names still runs:
// the group has a live member and, when the leader's start time is on
// record, its leader is that process or gone (a group id cannot be
// given to another process while a member of the group lives; a leader
// with another start time is another process, after a reboot or once
// the id came round again).
func agentGroupLeft(prev harness.LockInfo) bool {
	if !proc.GroupAlive(prev.AgentPGID) {
		return false
	}
	if prev.AgentStart == 0 {
		return true // a record from before start times were kept
	}
	start, ok := proc.StartTime(prev.AgentPGID)
	return !ok || start == prev.AgentStart
}

// endLeftAgent ends the agent process group a dead runner left on record
// in the lock file, so that two agents never work at once, and the
// processes it recorded during its last turn (still the same processes:
// same pid and start time), and clears them. Those recorded on another
// host are not ours to signal.
func (c *Controller) endLeftAgent(prev harness.LockInfo) error {
	host := c.store.HostName()
	if len(prev.Processes) > 0 {
		if prev.Host == host {
			var ended []int
			for _, p := range prev.Processes {
				if proc.KillIfSame(p.PID, p.Start) {
					ended = append(ended, p.PID)
				}
			}
			if len(ended) > 0 {
				c.say("ended %d process(es) left behind by a runner that died: %v", len(ended), ended)
			}
		}
		if err := c.lock.SetProcesses(nil); err != nil {
			return err
		}
	}
	if prev.AgentPGID <= 0 {
		return nil
	}
	if prev.Host == host && agentGroupLeft(prev) {
		c.say("ending agent process group %d left behind by a runner that died", prev.AgentPGID)
		if err := proc.KillGroup(prev.AgentPGID); err != nil {
			return fmt.Errorf("end the agent left by the previous runner (process group %d): %w", prev.AgentPGID, err)
		}
	}
	return c.lock.SetAgentPGID(0)
}

// prepare makes a loaded task runnable: it applies limit changes, clears the
// counters of a task that had ended failed or blocked, recovers a turn a
// dead runner left awaiting, and reconciles the feature list.
func (c *Controller) prepare(ctx context.Context) error {
	st := c.st
	c.opts.Limits.Apply(&st.Limits)
	if st.Status == harness.StatusFailed || st.Status == harness.StatusBlocked {
		st.ConsecutiveFailures, st.ConsecutiveBlocked, st.NoProgressTurns = 0, 0, 0
	}
	st.Status = harness.StatusRunning
	st.StopReason = ""
	st.RecordPending = nil // finished by Run
	if err := c.store.EnsureGitignore(); err != nil {
		return err
	}
	awaiting := st.AwaitingTurn
	if awaiting {
		// The lost turn's record reconciles first (recoverUnknownTurn),
		// and puts back a history the agent rewrote before the crash.
		if err := c.recoverUnknownTurn(ctx); err != nil {
			return err
		}
	}
	if err := c.advanceHistory(); err != nil {
		return err
	}
	if !awaiting {
		if err := c.reconcile(ctx); err != nil {
			return err
		}
	}
	return c.persist()
}

// reconcile puts init.sh and, in the execution phase, the feature list
// right when a run starts (a runner died mid-turn, or they were edited
// between runs): a legal, verified flip is kept, anything else restored.
func (c *Controller) reconcile(ctx context.Context) error {
	if err := c.reconcileInitScript(); err != nil {
		return err
	}
	if c.st.Phase != harness.PhaseExecution {
		return nil
	}
	// init.sh runs here, before any turn notes the task folders.
	if err := c.store.NoteTaskFolders(c.st.ID); err != nil {
		return err
	}
	if err := c.reconcileGuarded(ctx); err != nil {
		return err
	}
	return c.setAsidePlantedAtStart()
}

func (c *Controller) loop(ctx context.Context) (*harness.State, error) {
	checked := false
	for {
		if stop, ok, _ := c.applyControl(); ok {
			return c.finish(stop)
		}
		if stop, ok := firstStop(c.st, beforeTurnRules); ok {
			return c.finish(stop)
		}
		if c.sliceOver() {
			return c.finish(c.sliceStop())
		}
		if !checked {
			checked = true
			if st, stopped, err := c.preflight(ctx); stopped {
				return st, err
			}
		}
		out, err := c.runTurn(ctx)
		if err != nil {
			return c.st, c.stopOnError(err)
		}
		// runTurn ended the turn's processes (endTurnProcesses) and its
		// scanner: nothing of the turn is on record any more.
		if c.opts.Reaper != nil {
			_ = c.lock.SetProcesses(nil)
		}
		if out.givenBack {
			where := fmt.Sprintf("in turn %d, not counted: it changed nothing", c.st.CurrentIteration+1)
			return setupStopped(c.finish(Stop{harness.StatusPaused, setupReason(c.st, out.setup, where)}))
		}
		// The turn's outcome decides the task's status before the turn is
		// recorded, so that its log entry and commit carry the final status.
		c.account()
		interrupted := ctx.Err() != nil
		if c.sliceOver() {
			out.sliceEnded = c.sliceStop().Reason
		}
		stop := turnEnd(c.st, out, interrupted)
		if stop != nil {
			c.st.Status, c.st.StopReason = stop.Status, stop.Reason
		}
		if err := c.record(context.WithoutCancel(ctx), out); err != nil {
			return c.st, c.stopOnError(err)
		}
		if hookStop := c.runTurnHook(context.WithoutCancel(ctx), out); hookStop != nil && !interrupted {
			stop = hookStop // what the turn decided is in its commit; the hook's failure pauses the task
		}
		if interrupted {
			c.say("interrupted: task %s paused; run grub resume %s to continue", c.st.ID, c.st.ID)
			c.runStopHook(context.WithoutCancel(ctx))
			return c.st, ErrInterrupted
		}
		if stop != nil && out.setup != nil {
			return setupStopped(c.finish(*stop))
		}
		if stop != nil {
			// A signal that arrives while the turn is recorded does not
			// change an outcome already decided.
			return c.finish(*stop)
		}
	}
}

// stopOnError ends a run that a machinery error stops in a turn: the task
// is left failed with the error as its reason, never running with no
// runner, and the error returned says what to do. A turn that removed or
// broke the git directory beyond what the guard's copy restores (an
// error with a GitDirBroken method, internal/gitx's) says so. The turn
// stays awaiting, so that the resume after a fix records it as unknown.
func (c *Controller) stopOnError(err error) error {
	st := c.st
	hint := fmt.Sprintf("fix it, then run grub resume %s", st.ID)
	reason := fmt.Sprintf("grub stopped on an error in turn %d: %v", st.CurrentIteration, err)
	var broken interface{ GitDirBroken() }
	if errors.As(err, &broken) {
		reason = fmt.Sprintf("turn %d: %v", st.CurrentIteration, err)
		hint = fmt.Sprintf("nothing was committed; restore .git (from a backup, or a fresh clone's .git), check it with git status and git fsck, then run grub resume %s", st.ID)
	}
	st.Status, st.StopReason = harness.StatusFailed, reason+"; "+hint
	if perr := c.persist(); perr != nil {
		return fmt.Errorf("%w (and the task's state could not be saved: %v)", err, perr)
	}
	c.say("task %s failed: %s", st.ID, st.StopReason)
	c.runStopHook(context.Background())
	return fmt.Errorf("%w; task %s is left failed: %s", err, st.ID, hint)
}

// finish ends the task with the given status and persists it. Requests
// that arrived meanwhile are taken so that they do not act on a later run;
// goal and limit edits among them still apply.
func (c *Controller) finish(s Stop) (*harness.State, error) {
	_, _, taken := c.applyControl()
	changed := taken > 0 || c.st.Status != s.Status || c.st.StopReason != s.Reason
	c.st.Status = s.Status
	c.st.StopReason = s.Reason
	// A stop decided after a turn was recorded (and committed) with it;
	// only a change since needs another write.
	if changed {
		if err := c.persist(); err != nil {
			return c.st, err
		}
	}
	c.say("task %s %s: %s", c.st.ID, s.Status, s.Reason)
	c.runStopHook(context.Background())
	return c.st, nil
}

// account adds the wall-clock time spent since the last call to the task's
// usage, in whole seconds, carrying the remainder.
func (c *Controller) account() time.Time {
	now := c.now()
	c.carry += now.Sub(c.mark)
	c.mark = now
	if secs := int64(c.carry / time.Second); secs > 0 {
		c.st.Usage.TimeUsedSeconds += secs
		c.carry -= time.Duration(secs) * time.Second
	}
	return now
}

// persist accounts the time spent since the last call and writes state.json.
func (c *Controller) persist() error {
	now := c.account()
	c.st.UpdatedAt = now.UTC()
	b, err := c.store.WriteState(c.st)
	if err != nil {
		return err
	}
	c.stateBytes = b
	return nil
}

// tampered reports whether state.json differs from what grub last wrote.
func (c *Controller) tampered() bool {
	b, err := c.store.StateBytes(c.st.ID)
	return err != nil || string(b) != string(c.stateBytes)
}

// say prints a progress line. Much of what it shows comes from the agent
// or the user (summaries, failures, file names): the line is printed with
// control characters, newlines included, escaped (termsafe.Line).
func (c *Controller) say(format string, args ...any) {
	c.progress.Say(termsafe.Line(fmt.Sprintf(format, args...)))
}

func (c *Controller) turnEnv() []string {
	return []string{
		"GRUB_TASK_ID=" + c.st.ID,
		fmt.Sprintf("GRUB_ITERATION=%d", c.st.CurrentIteration),
		"GRUB_PHASE=" + string(c.st.Phase),
		"GRUB_HARNESS_DIR=" + c.store.Dir(c.st.ID),
	}
}

// What clipped a turn's timeout (agentRun.clip).
const (
	clipBudget = "budget" // the time budget
	clipSlice  = "slice"  // the run's slice (--for)
)

// turnTimeout bounds one agent turn: it never runs past the time budget
// nor past the end of the run's slice. clip says which of them set it
// ("" when neither did).
func (c *Controller) turnTimeout() (d time.Duration, clip string) {
	d = time.Duration(c.st.Limits.TurnTimeoutSeconds) * time.Second
	if left, ok := c.timeBudgetLeft(); ok && left < d {
		d, clip = left, clipBudget
	}
	if !c.sliceEnd.IsZero() {
		if left := c.sliceEnd.Sub(c.now()); left < d {
			d, clip = left, clipSlice
		}
	}
	if clip != "" {
		d = max(d, time.Second)
	}
	return d, clip
}

// timeBudgetLeft is how much of the task's time budget is left; ok is
// false when the task has none.
func (c *Controller) timeBudgetLeft() (left time.Duration, ok bool) {
	b := c.st.Limits.TimeBudgetSeconds
	if b <= 0 {
		return 0, false
	}
	return time.Duration(b-c.st.Usage.TimeUsedSeconds)*time.Second - c.carry, true
}

// sliceOver reports whether this run's slice (Options.Slice) has ended.
func (c *Controller) sliceOver() bool {
	return !c.sliceEnd.IsZero() && !c.now().Before(c.sliceEnd)
}

// sliceStop pauses the task at the end of the run's slice.
func (c *Controller) sliceStop() Stop {
	return Stop{harness.StatusPaused, fmt.Sprintf("%s (--for %s); grub resume continues the task",
		harness.ReasonSliceEnded, harness.FormatSeconds(int64(c.opts.Slice.Round(time.Second)/time.Second)))}
}

// initTimeout bounds init.sh and verify commands (--init-timeout).
func (c *Controller) initTimeout() time.Duration {
	return time.Duration(c.st.Limits.InitTimeoutSeconds) * time.Second
}
