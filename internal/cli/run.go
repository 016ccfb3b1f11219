package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

// agentFlags are the flags that choose and configure the agent backend,
// shared by start and resume.
type agentFlags struct {
	Kind     string
	Command  string
	Model    string
	BaseURL  string
	Locale   string
	JSON     bool
	Progress time.Duration
}

func (a *agentFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.Kind, "agent", "command", "agent backend: command (any program: see --agent-cmd)")
	cmd.Flags().StringVar(&a.Command, "agent-cmd", "", "with --agent command: the program to run each turn through sh -c; the prompt arrives on stdin and its stdout is the final message")
	cmd.Flags().BoolVar(&a.JSON, "json", false, "when the task stops, print its status as one JSON object (schemas/status-output.schema.json)")
	cmd.Flags().DurationVar(&a.Progress, "heartbeat", 30*time.Second, "how often a long turn reports that it is still running")
}

// apply checks the agent flags that were given and writes them into s.
func (a *agentFlags) apply(cmd *cobra.Command, s *harness.Agent) error {
	if cmd.Flags().Changed("agent") || s.Kind == "" {
		s.Kind = a.Kind
	}
	if cmd.Flags().Changed("agent-cmd") {
		s.Command = a.Command
	}
	switch s.Kind {
	case "command":
		if s.Command == "" {
			return usageErrorf("--agent command needs --agent-cmd 'program args': the program grub runs each turn")
		}
	default:
		return usageErrorf("--agent %q: unknown backend; this build has: command", s.Kind)
	}
	return nil
}

// newAgent builds the backend recorded in the task's state.
func newAgent(s harness.Agent) (agent.Agent, error) {
	switch s.Kind {
	case "command":
		return agent.NewCommand(s.Command), nil
	}
	return nil, fmt.Errorf("agent backend %q is not available in this build", s.Kind)
}

// runOptions are what start and resume hand to runTask.
type runOptions struct {
	IO        *IOStreams
	Store     *harness.Store
	ID        string
	Limits    harness.LimitChanges
	Now       func() time.Time
	JSON      bool
	Heartbeat time.Duration
}

// runTask runs the controller in the foreground until the task stops, with
// SIGINT and SIGTERM cancelling the turn and leaving the task paused. It
// prints the final status (text, or JSON with --json) on stdout and returns
// an error whose exit code is that of the final status.
func runTask(ctx context.Context, o runOptions) error {
	st, err := o.Store.LoadState(o.ID)
	if err != nil {
		return err
	}
	backend, err := newAgent(st.Agent)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	final, runErr := controller.Run(ctx, controller.Options{
		Store:     o.Store,
		TaskID:    o.ID,
		Agent:     backend,
		Progress:  o.IO.ErrOut,
		Now:       o.Now,
		Heartbeat: o.Heartbeat,
		Limits:    o.Limits,
	})
	if final == nil {
		return runErr
	}
	if err := printFinal(o, final); err != nil {
		return err
	}
	switch {
	case errors.Is(runErr, controller.ErrInterrupted):
		return &ExitError{Code: ExitInterrupted, Err: runErr}
	case runErr != nil:
		return runErr
	case final.Status == harness.StatusComplete:
		return nil
	}
	return &TaskStatusError{ID: final.ID, Status: final.Status, Reason: final.StopReason}
}

func printFinal(o runOptions, st *harness.State) error {
	v, err := loadTaskView(o.Store, st)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, schemas.StatusOutput, newStatusOutput(v))
	}
	return printStatus(o.IO.Out, v, o.Now())
}

// limitChangeFlags are the flags that raise or lower the limits of an
// existing task (edit, resume).
type limitChangeFlags struct {
	maxIter, maxFail int
	tokenBudget      int64
	timeBudget       time.Duration
}

func (l *limitChangeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&l.maxIter, "max-iter", 0, "set the iteration limit (turns in all, the initializer's included)")
	fl.IntVar(&l.maxFail, "max-fail", 0, "set the limit of consecutive failed turns")
	fl.Int64Var(&l.tokenBudget, "token-budget", 0, "set the token budget (0 = none)")
	fl.DurationVar(&l.timeBudget, "time-budget", 0, "set the time budget, e.g. 45m or 2h (0 = none)")
}

// changes returns the limits given on the command line, checked.
func (l *limitChangeFlags) changes(cmd *cobra.Command) (harness.LimitChanges, error) {
	var c harness.LimitChanges
	flags := cmd.Flags()
	if flags.Changed("max-iter") {
		if l.maxIter < 1 {
			return c, usageErrorf("--max-iter %d: the iteration limit must be at least 1", l.maxIter)
		}
		c.MaxIterations = &l.maxIter
	}
	if flags.Changed("max-fail") {
		if l.maxFail < 1 {
			return c, usageErrorf("--max-fail %d: the consecutive-failure limit must be at least 1", l.maxFail)
		}
		c.MaxConsecutiveFailures = &l.maxFail
	}
	if flags.Changed("token-budget") {
		if l.tokenBudget < 0 {
			return c, usageErrorf("--token-budget %d: the budget cannot be negative; 0 removes it", l.tokenBudget)
		}
		c.TokenBudget = &l.tokenBudget
	}
	if flags.Changed("time-budget") {
		secs, err := wholeSeconds(l.timeBudget)
		if err != nil {
			return c, usageErrorf("--time-budget %s: %v", l.timeBudget, err)
		}
		c.TimeBudgetSeconds = &secs
	}
	return c, nil
}
