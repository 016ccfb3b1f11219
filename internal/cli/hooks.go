package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
)

// hooksHelp is the help text on hooks and slices, shared by start, resume
// and edit.
const hooksHelp = `Hooks are your own commands, run through sh -c from the workspace root:
--on-turn after each turn's commit, --on-stop once when the run stops.
They get GRUB_TASK_ID, GRUB_ITERATION, GRUB_STATUS, GRUB_PHASE,
GRUB_FEATURE and GRUB_COMMIT (the turn's commit), and --on-stop also
GRUB_STOP_REASON. They run outside the sandbox and with grub's own
environment, credentials included: 'git push' needs your keys and the
network, and nothing in a hook comes from the agent. Each is bounded by
--hook-timeout (default 5m) and runs in its own process group. A failing
--on-turn hook pauses the task (exit 5), naming the hook and its output on
stderr and in progress-log.md; a rejected push is how a runner learns that
another moved the task on, and its own commit stays in its repository.
Hooks are stored with the task: resume keeps them, edit changes them
(--on-turn '' removes one).`

// hookFlags are --on-turn, --on-stop and --hook-timeout. Only the flags
// given change a task's hooks.
type hookFlags struct {
	onTurn, onStop string
	timeout        time.Duration
}

func (h *hookFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&h.onTurn, "on-turn", "", "a command to run after each turn's commit (sh -c, in the workspace, outside the sandbox; see Hooks below); its failure pauses the task; '' removes it")
	fl.StringVar(&h.onStop, "on-stop", "", "a command to run once when the task stops, with GRUB_STATUS and GRUB_STOP_REASON; '' removes it")
	fl.DurationVar(&h.timeout, "hook-timeout", harness.DefaultHookTimeout, "the longest one run of a hook may take before its process group is killed")
}

// given reports whether any hook flag was given.
func (h *hookFlags) given(cmd *cobra.Command) bool {
	fl := cmd.Flags()
	return fl.Changed("on-turn") || fl.Changed("on-stop") || fl.Changed("hook-timeout")
}

// apply writes the hook flags that were given into hk.
func (h *hookFlags) apply(cmd *cobra.Command, hk *harness.Hooks) error {
	fl := cmd.Flags()
	if fl.Changed("on-turn") {
		hk.OnTurn = h.onTurn
	}
	if fl.Changed("on-stop") {
		hk.OnStop = h.onStop
	}
	if fl.Changed("hook-timeout") {
		if h.timeout < time.Second || h.timeout%time.Second != 0 {
			return usageErrorf("--hook-timeout %s: use whole seconds of at least 1s, e.g. 90s or 5m", h.timeout)
		}
		hk.TimeoutSeconds = int64(h.timeout / time.Second)
	}
	return nil
}

// sliceFlag is --for: how long this run may go on (start, resume).
type sliceFlag struct{ d time.Duration }

func (s *sliceFlag) register(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&s.d, "for", 0, "run for this long, e.g. 5h30m, then stop at a turn boundary (a turn's timeout is clipped to what is left) and leave the task paused (exit 5) for grub resume to continue, here or on another machine; unlike --time-budget it does not end the task")
}

// value is the slice, checked; 0 when --for was not given.
func (s *sliceFlag) value(cmd *cobra.Command) (time.Duration, error) {
	if !cmd.Flags().Changed("for") {
		return 0, nil
	}
	if s.d < time.Second || s.d%time.Second != 0 {
		return 0, usageErrorf("--for %s: use whole seconds of at least 1s, e.g. 45m or 5h30m", s.d)
	}
	return s.d, nil
}
