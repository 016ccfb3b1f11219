package cli

import (
	"fmt"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/spf13/cobra"
)

// PauseOptions are the inputs of grub pause.
type PauseOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time

	ID string
	// Immediate is --now: cancel the current turn instead of waiting for
	// it to end.
	Immediate bool
}

// NewCmdPause builds grub pause. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdPause(f *Factory, runF func(*PauseOptions) error) *cobra.Command {
	opts := &PauseOptions{IO: f.IO, Store: f.Store, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "pause [<id>]",
		Short: "Pause a task at the next turn boundary (or at once with --now)",
		Long: `Pause a task. Without <id>, the most recently updated task.

When a controller is running the task, pause writes a request to the task's
control.json (in grub's private folder) and the controller applies it at the next turn boundary: it
finishes the current turn, records it, leaves the task paused and exits
with code 5. With --now it cancels the current
turn instead: the agent's processes are killed and the turn is recorded as
cancelled.

When no controller runs the task, pause changes state.json directly: a task
whose runner died ("running" with no runner) becomes paused. A task that is
not running is left as it is and pause says so; that is not an error.

grub resume continues a paused task.`,
		Example: `  grub pause
  grub pause --now 0a1b2c3d
  grub resume                  # later: continue where it stopped`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              idRunE(opts, &opts.ID, runF, pauseRun),
	}
	cmd.Flags().BoolVar(&opts.Immediate, "now", false, "cancel the current turn instead of letting it finish")
	return cmd
}

func pauseRun(opts *PauseOptions) error {
	store, id, err := openTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	kind := harness.ControlPause
	if opts.Immediate {
		kind = harness.ControlPauseNow
	}
	var before harness.Status
	now := opts.Now()
	holder, err := applyChange(store, id, now, taskChange{
		Idle: func(st *harness.State) (bool, error) {
			before = st.Status
			if st.Status != harness.StatusRunning {
				return false, nil
			}
			st.Status = harness.StatusPaused
			st.StopReason = harness.ReasonPausedByUser
			return true, nil
		},
		Requests: []harness.ControlRequest{{Kind: kind, At: now}},
	})
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	switch {
	case holder != nil && opts.Immediate:
		fmt.Fprintf(w, "requested immediate pause of task %s (pid %d); its current turn is cancelled and the task left paused\n", id, holder.PID)
	case holder != nil:
		fmt.Fprintf(w, "requested pause of task %s (pid %d); it takes effect at the next turn boundary\n", id, holder.PID)
	case before == harness.StatusRunning:
		fmt.Fprintf(w, "paused task %s (its runner had stopped); continue it with: grub resume %s\n", id, id)
	case before == harness.StatusPaused:
		fmt.Fprintf(w, "task %s is already paused; continue it with: grub resume %s\n", id, id)
	default:
		fmt.Fprintf(w, "task %s is not running (status %s); nothing to pause\n", id, before)
	}
	return nil
}
