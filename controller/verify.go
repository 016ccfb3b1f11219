package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/proc"
)

// checkTailBytes is how much of a check's output is kept for the failure
// message and the next prompt.
const checkTailBytes = 2000

// runCheck runs a shell command from the workspace root in its own process
// group with a timeout, as grub does for init.sh and a feature's verify
// command: through the sandbox launcher and with the scrubbed environment
// when the options give them.
func (c *Controller) runCheck(ctx context.Context, command string, timeout time.Duration) (harness.Check, error) {
	res, err := proc.Run(ctx, proc.Spec{
		Command:   command,
		Dir:       c.store.Root,
		Env:       c.turnEnv(),
		BaseEnv:   c.opts.Env,
		Wrap:      c.opts.Wrap,
		Timeout:   timeout,
		TailBytes: checkTailBytes,
		TailOnly:  true, // a check's output is its tail
	})
	if err != nil {
		return harness.Check{}, fmt.Errorf("run %q: %w", command, err)
	}
	if res.Pgid > 0 {
		// A check must not leave servers or watchers running.
		_ = proc.KillGroup(res.Pgid)
	}
	if res.Cancelled {
		return harness.Check{}, ctx.Err()
	}
	return harness.Check{
		Command:    command,
		ExitCode:   res.ExitCode,
		Passed:     res.ExitCode == 0 && !res.TimedOut,
		TimedOut:   res.TimedOut,
		OutputTail: res.Tail,
		Iteration:  c.st.CurrentIteration,
		Duration:   res.Duration,
	}, nil
}

// runInit runs the task's init.sh and records the result in state.
func (c *Controller) runInit(ctx context.Context) (harness.Check, error) {
	script := c.store.Rel(c.store.Path(c.st.ID, harness.FileInitScript))
	chk, err := c.runCheck(ctx, "bash "+proc.ShellQuote(script), c.initTimeout())
	if err != nil {
		return chk, err
	}
	c.st.LastInit = &chk
	return chk, nil
}

// describeCheck turns a failed check into words for the log and the next prompt.
func describeCheck(what string, chk harness.Check) string {
	verdict := fmt.Sprintf("exited %d", chk.ExitCode)
	if chk.TimedOut {
		verdict = "timed out"
	}
	msg := fmt.Sprintf("%s (`%s`) %s", what, chk.Command, verdict)
	if chk.OutputTail != "" {
		msg += "; output tail:\n" + chk.OutputTail
	}
	return msg
}
