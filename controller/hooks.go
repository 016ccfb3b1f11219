package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/proc"
)

// The task's hooks (state.json's hooks: grub start, resume and edit
// --on-turn, --on-stop) are the user's own commands, like the commands of
// a CI job: `git push` to publish each turn, a notification when the task
// stops. Unlike init.sh and verify, which the agent writes, they run
// outside the sandbox and with grub's own environment (Options.HookEnv),
// credentials included: a push needs the user's keys and the network, and
// nothing in a hook comes from the agent. They run from the workspace root
// through sh -c, in their own process group, with the task's hook timeout
// (the whole group is ended when it expires, and anything a hook left
// running when it exits).

// hookOutputLines is how many lines of a failed hook's output the progress
// lines show; the progress log has the whole tail.
const hookOutputLines = 10

// hookTailBytes is how much of a hook's output is kept for the report of
// its failure.
const hookTailBytes = 4000

// runTurnHook runs the on-turn hook after the turn's commit, with the
// turn in its environment. A hook that fails (a non-zero exit, a timeout,
// a command that cannot start) is reported on the progress lines and in
// the progress log with its output, and pauses the task: the returned
// stop says which hook failed. This is how a runner whose `git push` is
// rejected learns that another runner moved the task on; its own commit
// stays in its repository.
func (c *Controller) runTurnHook(ctx context.Context, out *outcome) *Stop {
	command := c.st.Hooks.OnTurn
	if command == "" {
		return nil
	}
	env := c.hookEnv("on-turn", firstNonEmpty(out.flipped, out.decision.Feature, out.feature))
	c.reusable = false // the hook may change the workspace: the next turn takes its own snapshot
	failure := c.runHook(ctx, "on-turn", command, env)
	if failure == "" {
		return nil
	}
	return &Stop{harness.StatusPaused, failure}
}

// runStopHook runs the on-stop hook once the run has stopped, with the
// final status and stop reason in its environment. Its failure is reported
// and logged; the task's status stays what it is.
func (c *Controller) runStopHook(ctx context.Context) {
	command := c.st.Hooks.OnStop
	if command == "" {
		return
	}
	feature := ""
	if d := c.st.LastDecision; d != nil {
		feature = d.Feature
	}
	env := append(c.hookEnv("on-stop", feature), "GRUB_STOP_REASON="+c.st.StopReason)
	c.runHook(ctx, "on-stop", command, env)
}

// hookEnv is what a hook finds in its environment on top of grub's own.
func (c *Controller) hookEnv(which, feature string) []string {
	return []string{
		"GRUB_HOOK=" + which,
		"GRUB_TASK_ID=" + c.st.ID,
		fmt.Sprintf("GRUB_ITERATION=%d", c.st.CurrentIteration),
		"GRUB_STATUS=" + string(c.st.Status),
		"GRUB_PHASE=" + string(c.st.Phase),
		"GRUB_FEATURE=" + feature,
		"GRUB_COMMIT=" + c.turnCommit,
	}
}

// runHook runs one hook and returns "" when it succeeded, else the
// failure in one line (the stop reason of a failed on-turn hook); the
// output of a failed hook is shown and logged.
func (c *Controller) runHook(ctx context.Context, which, command string, env []string) string {
	timeout := c.st.Hooks.Timeout()
	res, err := proc.Run(ctx, proc.Spec{
		Command:   command,
		Dir:       c.store.Root,
		Env:       env,
		BaseEnv:   c.opts.HookEnv,
		Timeout:   timeout,
		TailBytes: hookTailBytes,
	})
	if res.Pgid > 0 {
		_ = proc.KillGroup(res.Pgid) // a hook must not leave anything running
	}
	var verdict string
	switch {
	case err != nil:
		verdict = err.Error()
	case res.TimedOut:
		verdict = fmt.Sprintf("timed out after %s (--hook-timeout)", timeout)
	case res.Cancelled:
		verdict = "was cancelled"
	case res.ExitCode != 0:
		verdict = fmt.Sprintf("exited %d", res.ExitCode)
	default:
		return ""
	}
	tail := strings.TrimRight(res.Tail, "\n")
	failure := fmt.Sprintf("the %s hook (%s) failed after turn %d: %s", which, command, c.st.CurrentIteration, verdict)
	reason := failure
	if last := lastLine(tail); last != "" {
		reason += ": " + last
	}
	if which == "on-turn" {
		reason += "; the turn's commit is kept in this repository"
	}
	c.say("%s", reason)
	lines := strings.Split(tail, "\n")
	if len(lines) > hookOutputLines {
		lines = lines[len(lines)-hookOutputLines:]
	}
	for _, l := range lines {
		if l != "" {
			c.say("  %s hook: %s", which, l)
		}
	}
	c.logHookFailure(failure, tail)
	return reason
}

// logHookFailure writes a failed hook and its output to the progress log;
// the next turn's commit carries it.
func (c *Controller) logHookFailure(failure, tail string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Hook failed\n\n- %s\n", failure)
	if tail != "" {
		b.WriteString("- Output (the end):\n\n")
		for _, l := range strings.Split(tail, "\n") {
			b.WriteString("      " + l + "\n") // an indented block: nothing in it reads as markdown
		}
	}
	if err := c.store.AppendProgress(c.st.ID, b.String()); err != nil {
		c.say("could not write the progress log: %v", err)
	}
}

// lastLine is the last line of s that says something: not empty, and not
// one of git's "hint:" lines, which follow its error.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "hint:") {
			return l
		}
	}
	return ""
}
