package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
)

// ResumeOptions are the inputs of grub resume.
type ResumeOptions struct {
	IO     *IOStreams
	Store  func() (*harness.Store, error)
	Now    func() time.Time
	Getenv func(string) string
	Ctx    context.Context

	ID     string
	Limits harness.LimitChanges
	Agent  func(*harness.Agent) error // applies agent flags to the task's settings
	// Sandbox applies the sandbox flags to the task's settings.
	Sandbox func(*harness.Sandbox) error
	// Hooks applies the hook flags to the task's hooks.
	Hooks func(*harness.Hooks) error
	Slice time.Duration // --for: how long this run may go on
	// AcceptHistory is --accept-history: git's history changed since
	// the task's last run, and the user takes it as the task's new base.
	AcceptHistory bool
	JSON          bool
	// Events is --json's stream of the run's events (nil without --json).
	Events     *eventStream
	Heartbeat  time.Duration
	NoProgress bool // --no-progress
	Landlock   func() (int, bool)
	Reap       bool
	Detached   *os.File // Factory.Detached (detach.go)
}

// NewCmdResume builds grub resume. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{IO: f.IO, Store: f.Store, Now: f.Now, Getenv: f.Getenv, Landlock: f.Landlock, Reap: f.Reap, Detached: f.Detached}
	var (
		sf     sandboxFlags
		af     agentFlags
		rf     runFlags
		hf     hookFlags
		sl     sliceFlag
		limits limitFlags
	)
	cmd := &cobra.Command{
		Use:   "resume [<id>] [flags]",
		Short: "Continue a task that stopped, optionally with raised limits",
		Long: `Continue a task that is not complete, in the foreground, exactly where it
stopped: every counter (iterations, failures, tokens, time) is kept. Without
<id>, the most recently updated task.

Give new limits to continue a task that ran out of them:
  grub resume --max-iter 50 --token-budget 5000000

A task that ended failed or blocked has its failure, blocked and
no-progress counters cleared: resuming it is your decision to try again.

If the previous runner died during a turn (a crash, kill -9, a closed
laptop), that turn is recorded as "unknown" in the progress log, an agent
process it left behind is ended first, and the next prompt asks the agent to
look at the workspace instead of assuming the turn failed.

--agent, --agent-cmd, --agent-bin, --model, --base-url, --max-requests,
--context-window and --request-timeout change the task's agent from here
on; switching to another --agent starts its settings afresh. --sandbox,
--sandbox-allow, --no-network, --allow-domain, --pass-env and
--sandbox-allow-git change the task's sandbox (see grub start --help); the task keeps the one it has
otherwise.

--for runs for that long only, then stops at a turn boundary and leaves the
task paused (exit 5) with its state committed, so that the next run, here or
on another machine (a CI job with the task's branch), continues it with
grub resume. --on-turn, --on-stop and --hook-timeout change the task's
hooks (see grub start --help); the task keeps the ones it has otherwise.

grub's history only grows: a resume refuses to start when HEAD is no longer
on the task's branch or no longer descends from grub's last turn commit
(a reset, an amend, a rebase, another branch checked out since the last
run). Put the branch back, or pass --accept-history to take the history as
it is now as the task's new base.`,
		Example: `  grub resume
  grub resume 0a1b2c3d --max-iter 40
  grub resume --time-budget 2h --agent-cmd 'my-agent --headless'
  grub resume 0a1b2c3d --for 5h30m --on-turn 'git push origin HEAD:grub/0a1b2c3d'`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			opts.Events = newEventStream(opts.IO, rf.JSON, opts.Now)
			defer func() { err = opts.Events.stop(err) }()
			if len(args) > 0 {
				opts.ID = args[0]
			}
			opts.Ctx = cmd.Context()
			opts.JSON, opts.Heartbeat, opts.NoProgress = rf.JSON, rf.Heartbeat, rf.NoProgress
			changes, err := limits.changes(cmd)
			if err != nil {
				return err
			}
			opts.Limits = changes
			opts.Agent = func(a *harness.Agent) error { return af.apply(cmd, a, opts.Getenv) }
			opts.Sandbox = func(s *harness.Sandbox) error { return sf.apply(cmd, s) }
			opts.Hooks = func(h *harness.Hooks) error { return hf.apply(cmd, h) }
			if opts.Slice, err = sl.value(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if rf.detaching(f) {
				return runDetached(f, "")
			}
			return resumeRun(opts)
		},
	}
	limits.register(cmd)
	af.register(cmd)
	sf.register(cmd)
	rf.register(cmd)
	hf.register(cmd)
	sl.register(cmd)
	cmd.Flags().BoolVar(&opts.AcceptHistory, "accept-history", false, "take git's history as it is now as the task's base, when it changed since the last run")
	return cmd
}

func resumeRun(opts *ResumeOptions) error {
	if err := findLostTask(opts.Store, opts.ID, opts.IO.ErrOut, opts.Now); err != nil {
		return err
	}
	store, st, err := loadTask(opts.Store, opts.ID)
	noteBareID(opts.IO.ErrOut, opts.Store, opts.ID)
	if err != nil {
		return err
	}
	id := st.ID
	opts.Events.forTask(store, id)
	// A complete task whose last record a crash cut short is run: the
	// controller finishes the record and stops.
	if st.Status == harness.StatusComplete && recordWritten(store, st) {
		fmt.Fprintf(opts.IO.ErrOut, "grub: task %s is already complete; nothing to resume\n", id)
		return nil
	}
	sayOtherHost(opts.IO.ErrOut, store, st) // before any lock here rewrites the record
	changed := st.Agent
	if err := opts.Agent(&changed); err != nil {
		return err
	}
	if err := checkCostBudget(mergedLimits(st.Limits, opts.Limits).CostBudgetUSD, changed.Kind); err != nil {
		return err
	}
	sb := st.Sandbox
	sb.Allow, sb.PassEnv = slices.Clone(sb.Allow), slices.Clone(sb.PassEnv)
	if opts.Sandbox != nil {
		if err := opts.Sandbox(&sb); err != nil {
			return err
		}
	}
	if _, err := resolveSandbox(sb, changed.Kind, store.Root, opts.Getenv, opts.Landlock); err != nil {
		return err
	}
	hooks := st.Hooks
	if opts.Hooks != nil {
		if err := opts.Hooks(&hooks); err != nil {
			return err
		}
	}
	if err := checkResumeTrust(store, st, changed, sb, hooks); err != nil {
		return err
	}
	if !harness.SameAgent(changed, st.Agent) || !sameSandbox(sb, st.Sandbox) || hooks != st.Hooks {
		// Changing the agent is a state change: make it under the lock, on
		// the state as it is then.
		lock, err := store.Lock(id)
		if err != nil {
			return err
		}
		err = func() error {
			defer lock.Release()
			st, err := store.LoadState(id)
			if err != nil {
				return err
			}
			for _, line := range harness.HookChangeLines(st.Hooks, hooks) {
				fmt.Fprintf(opts.IO.ErrOut, "grub: task %s: %s\n", id, termsafe.Line(line))
			}
			st.Agent, st.Sandbox, st.Hooks = changed, sb, hooks
			st.UpdatedAt = opts.Now().UTC()
			if err := store.SaveState(st); err != nil {
				return err
			}
			// What is left of the old settings was trusted (checkResumeTrust),
			// and the rest comes from this command line.
			return store.TrustTask(st)
		}()
		if err != nil {
			return err
		}
	}
	// A task a controller runs is refused (exit 75) before we announce
	// anything; the controller's own lock attempt settles any race.
	if info, held, err := store.Holder(id); err != nil {
		return err
	} else if held && info.Runner() {
		return &harness.LockedError{ID: id, Info: info}
	}
	slice := ""
	if opts.Slice > 0 {
		slice = " for " + harness.FormatSeconds(int64(opts.Slice/time.Second))
	}
	fmt.Fprintf(opts.IO.ErrOut, "grub: resuming task %s at iteration %d (%s)%s\n", id, st.CurrentIteration, st.Status, slice)
	return runTask(ctxOr(opts.Ctx), runOptions{IO: opts.IO, Store: store, ID: id, Limits: opts.Limits, Now: opts.Now, Getenv: opts.Getenv, Events: opts.Events, Heartbeat: opts.Heartbeat, NoProgress: opts.NoProgress,
		Landlock: opts.Landlock, Reap: opts.Reap, Slice: opts.Slice, AcceptHistory: opts.AcceptHistory, Detached: opts.Detached})
}

// recordWritten reports whether the last turn's record that state holds
// (recordPending) is all written: its entry in the progress log and, in a
// task that commits, its commit on HEAD.
func recordWritten(store *harness.Store, st *harness.State) bool {
	p := st.RecordPending
	if p == nil {
		return true
	}
	if ok, err := store.ProgressHasEntry(st.ID, p.Entry); err != nil || !ok {
		return false
	}
	repo, err := openRepo(store.Root)
	if err != nil || repo == nil || st.NoCommit {
		return err == nil
	}
	done, err := gitCommitter{repo, store}.Committed(context.Background(), st.ID, p.Iteration)
	return err == nil && done
}

// checkResumeTrust refuses a resume of an untrusted task (checkTaskTrust)
// unless the command line replaces every setting that needs trust: those
// of the task as resumed (agent, sandbox, hooks) that it has unchanged
// from the stored state are named.
func checkResumeTrust(store *harness.Store, st *harness.State, agent harness.Agent, sb harness.Sandbox, hooks harness.Hooks) error {
	tr, err := store.TaskTrusted(st)
	if err != nil && !errors.Is(err, harness.ErrNoPrivate) {
		return err
	}
	switch tr {
	case harness.Trusted:
		return nil
	case harness.Changed:
		return changedTaskError(st.ID, store.TaskTrustSettings(st))
	}
	next := *st
	next.Agent, next.Sandbox, next.Hooks = agent, sb, hooks
	old := store.TaskTrustSettings(st)
	var left []harness.TrustSetting
	for _, s := range store.TaskTrustSettings(&next) {
		if slices.Contains(old, s) {
			left = append(left, s)
		}
	}
	if len(left) == 0 {
		return nil
	}
	return untrustedTaskError(st.ID, left)
}
