package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
)

// SteerOptions are the inputs of grub steer.
type SteerOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time

	ID      string
	Message string
}

// NewCmdSteer builds grub steer. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdSteer(f *Factory, runF func(*SteerOptions) error) *cobra.Command {
	opts := &SteerOptions{IO: f.IO, Store: f.Store, Now: f.Now}
	cmd := &cobra.Command{
		Use:   `steer [<id>] "message"`,
		Short: "Give the agent guidance for its next turn",
		Long: `Queue guidance for the agent. Without <id>, the most recently updated task.

The message is delivered in the next turn's prompt exactly once, quoted as
your own words under "Guidance from the user", and recorded in
progress-log.md. Guidance is advice, not a new goal: to change what the task
is for, use grub edit. Several messages sent before a turn all arrive in
that turn, in the order you sent them.

When a controller is running the task, steer writes a request to the
task's control.json (in grub's private folder); the controller picks it up at the next turn boundary,
so the turn that is running now does not see it. When no controller runs
the task, steer records the guidance in state.json directly, and the next
grub resume delivers it.

A complete task takes no more guidance. To answer a question the agent
asked (a blocked task whose status shows a question), use grub answer,
which also resumes the task.`,
		Example: `  grub steer "use the existing http client in internal/api, do not add a new one"
  grub steer 0a1b2c3d "the flaky test TestLogin is known; skip it with t.Skip"
  grub steer "run go vet before you report a feature as passing" && grub resume`,
		Args:              messageArgs("steer", "guidance"),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Message = splitMessageArgs(args)
			if runF != nil {
				return runF(opts)
			}
			return steerRun(opts)
		},
	}
	return cmd
}

// messageArgs checks the arguments of a command that takes [<id>]
// "message" (steer, answer): one or two, and a message that is not blank.
func messageArgs(name, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		usage := func(format string, a ...any) error {
			return &UsageError{Err: fmt.Errorf(format, a...), Command: cmd.CommandPath()}
		}
		switch {
		case len(args) == 0:
			return usage("grub %s needs the %s as an argument: grub %s \"text\"", name, what, name)
		case len(args) > 2:
			return usage("grub %s takes at most a task id and the %s, got %d arguments; quote the %s: grub %s \"text\"", name, what, len(args), what, name)
		case strings.TrimSpace(args[len(args)-1]) == "":
			return usage("the %s is empty; give the text, e.g. grub %s \"text\"", what, name)
		}
		return nil
	}
}

// splitMessageArgs splits [<id>] "message" into the id ("" when left out)
// and the message, trimmed of surrounding space.
func splitMessageArgs(args []string) (id, message string) {
	if len(args) == 2 {
		id = args[0]
	}
	return id, strings.TrimSpace(args[len(args)-1])
}

func steerRun(opts *SteerOptions) error {
	store, st, err := loadTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	id := st.ID
	if st.Status == harness.StatusComplete {
		return steerComplete(id)
	}
	now := opts.Now()
	var after *harness.State
	holder, err := applyChange(store, id, now, taskChange{
		Idle: func(st *harness.State) (bool, error) {
			if st.Status == harness.StatusComplete {
				return false, steerComplete(id)
			}
			st.Pending.Steer = append(st.Pending.Steer, opts.Message)
			return true, nil
		},
		AfterSave: func(st *harness.State) error {
			after = st
			return store.AppendEntry(id, harness.SteerEntry(st, opts.Message, now))
		},
		Requests: []harness.ControlRequest{{Kind: harness.ControlSteer, At: now, Message: opts.Message}},
	})
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	if holder != nil {
		fmt.Fprintf(w, "queued guidance for task %s (pid %d); the next turn's prompt carries it\n", id, holder.PID)
		return nil
	}
	fmt.Fprintf(w, "queued guidance for task %s; the next turn's prompt carries it\n", id)
	if n := len(after.Pending.Steer); n > 1 {
		fmt.Fprintf(w, "task %s has %d messages of guidance waiting; the next turn gets them all\n", id, n)
	}
	d := after.LastDecision
	switch {
	case after.Status == harness.StatusBlocked && d != nil && d.Question != "":
		fmt.Fprintf(w, "the agent's question is still open (%s); answer it and continue with: grub answer %s \"<text>\"\n", oneLine(d.Question, 80), id)
	case after.Status == harness.StatusRunning:
		fmt.Fprintf(w, "task %s lost its runner; continue it with: grub resume %s\n", id, id)
	default:
		fmt.Fprintf(w, "task %s is not running (status %s); continue it with: grub resume %s\n", id, after.Status, id)
	}
	return nil
}

// steerComplete is the error of steering a complete task.
func steerComplete(id string) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("task %s is complete, so no turn will read guidance; start a new task with: grub start \"<goal>\"", id)}
}
