package cli

import (
	"fmt"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/spf13/cobra"
)

// stopReasonUser is the stop reason of a task stopped with grub stop.
const stopReasonUser = harness.ReasonStoppedByUser

// StopOptions are the inputs of grub stop.
type StopOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time

	ID string
}

// NewCmdStop builds grub stop. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdStop(f *Factory, runF func(*StopOptions) error) *cobra.Command {
	opts := &StopOptions{IO: f.IO, Store: f.Store, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "stop [<id>]",
		Short: "Stop a task: it ends as stopped at the next turn boundary",
		Long: `Stop a task. Without <id>, the most recently updated task.

When a controller is running the task, stop writes a request to the task's
control.json (in grub's private folder); the controller finishes the current turn, records it, sets
the status to stopped and exits with code 5.

When no controller runs the task, stop sets its status to stopped in
state.json directly, with the stop reason "stopped by user". A complete task
is left complete.

Nothing is deleted: the harness stays in .grub/<id>/ and grub resume can
still continue a stopped task.`,
		Example: `  grub stop
  grub stop 0a1b2c3d`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              idRunE(opts, &opts.ID, runF, stopRun),
	}
	return cmd
}

func stopRun(opts *StopOptions) error {
	store, id, err := openTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	var before harness.Status
	now := opts.Now()
	holder, err := applyChange(store, id, now, taskChange{
		Idle: func(st *harness.State) (bool, error) {
			before = st.Status
			if st.Status == harness.StatusComplete || st.Status == harness.StatusStopped {
				return false, nil
			}
			st.Status = harness.StatusStopped
			st.StopReason = stopReasonUser
			return true, nil
		},
		Requests: []harness.ControlRequest{{Kind: harness.ControlStop, At: now}},
	})
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	switch {
	case holder != nil:
		fmt.Fprintf(w, "requested stop of task %s (pid %d); it takes effect at the next turn boundary\n", id, holder.PID)
	case before == harness.StatusComplete:
		fmt.Fprintf(w, "task %s is complete; nothing to stop\n", id)
	case before == harness.StatusStopped:
		fmt.Fprintf(w, "task %s is already stopped\n", id)
	default:
		fmt.Fprintf(w, "stopped task %s (it was %s)\n", id, before)
	}
	return nil
}
