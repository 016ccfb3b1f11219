package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
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
	Sandbox   func(*harness.Sandbox) error
	JSON      bool
	Heartbeat time.Duration
	Landlock  func() (int, bool)
	Reap      bool
}

// NewCmdResume builds grub resume. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{IO: f.IO, Store: f.Store, Now: f.Now, Getenv: f.Getenv, Landlock: f.Landlock, Reap: f.Reap}
	var (
		sf     sandboxFlags
		af     agentFlags
		rf     runFlags
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
--sandbox-allow, --no-network and --pass-env change the task's sandbox
(see grub start --help); the task keeps the one it has otherwise.`,
		Example: `  grub resume
  grub resume 0a1b2c3d --max-iter 40
  grub resume --time-budget 2h --agent-cmd 'my-agent --headless'`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.ID = args[0]
			}
			opts.Ctx = cmd.Context()
			opts.JSON, opts.Heartbeat = rf.JSON, rf.Heartbeat
			changes, err := limits.changes(cmd)
			if err != nil {
				return err
			}
			opts.Limits = changes
			opts.Agent = func(a *harness.Agent) error { return af.apply(cmd, a, opts.Getenv) }
			opts.Sandbox = func(s *harness.Sandbox) error { return sf.apply(cmd, s) }
			if runF != nil {
				return runF(opts)
			}
			return resumeRun(opts)
		},
	}
	limits.register(cmd)
	af.register(cmd)
	sf.register(cmd)
	rf.register(cmd)
	return cmd
}

func resumeRun(opts *ResumeOptions) error {
	store, st, err := loadTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	id := st.ID
	if st.Status == harness.StatusComplete {
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
	if !harness.SameAgent(changed, st.Agent) || !sameSandbox(sb, st.Sandbox) {
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
			st.Agent, st.Sandbox = changed, sb
			st.UpdatedAt = opts.Now().UTC()
			return store.SaveState(st)
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
	fmt.Fprintf(opts.IO.ErrOut, "grub: resuming task %s at iteration %d (%s)\n", id, st.CurrentIteration, st.Status)
	return runTask(ctxOr(opts.Ctx), runOptions{IO: opts.IO, Store: store, ID: id, Limits: opts.Limits, Now: opts.Now, Getenv: opts.Getenv, JSON: opts.JSON, Heartbeat: opts.Heartbeat,
		Landlock: opts.Landlock, Reap: opts.Reap})
}
