package controller

import (
	"fmt"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// reasonComplete is the stop reason of a finished task.
const reasonComplete = "every feature passes: init.sh and every verify command passed on the final tree"

// turnEnd decides, from the state after a refereed turn and the turn's
// outcome, whether the task ends and how; nil means the loop goes on. It
// is the one place that decides: the loop only applies its answer. In
// order of precedence:
//
//   - a signal (interrupted) pauses the task;
//   - a quota refusal from the provider ends it usage_limited;
//   - a setup error (agent.SetupError) pauses it, for grub resume once
//     the setup is fixed;
//   - a question from the agent ends it blocked, to be answered;
//   - a turn that left every feature passing, verified, completes it;
//   - otherwise the first stop rule that fires (afterTurnRules) ends it;
//   - otherwise, when the run's slice (--for) is over, the task pauses
//     for the next run.
func turnEnd(st *harness.State, out *outcome, interrupted bool) *Stop {
	switch {
	case interrupted:
		return &Stop{harness.StatusPaused, interruptedReason}
	case out.quota != "":
		return &Stop{harness.StatusUsageLimited, "the model provider refused for quota: " + out.quota}
	case out.setup != nil:
		return &Stop{harness.StatusPaused, setupReason(st, out.setup, fmt.Sprintf("in turn %d", st.CurrentIteration))}
	case asks(out) != "":
		return &Stop{harness.StatusBlocked, "the agent asks: " + asks(out)}
	case out.complete:
		return &Stop{harness.StatusComplete, reasonComplete}
	}
	if s, ok := firstStop(st, afterTurnRules); ok {
		return &s
	}
	if out.sliceEnded != "" {
		return &Stop{harness.StatusPaused, out.sliceEnded}
	}
	return nil
}

// setupReason is the stop reason of a run that a setup error stopped
// (where: "before the first turn", "in turn 3"): the cause and the fix in
// full, and how to go on. The task is paused, not failed: nothing is
// wrong with it, and grub resume carries on once the setup is fixed.
func setupReason(st *harness.State, se *agent.SetupError, where string) string {
	fix := se.Fix
	if fix == "" {
		fix = "fix what it says"
	}
	return fmt.Sprintf("the agent cannot work (%s): %s. To fix: %s; then grub resume %s carries on", where, se.Cause, fix, st.ID)
}

// asks is the question of an accepted blocked report, or "".
func asks(out *outcome) string {
	if out.cutShort() || len(out.failures) > 0 || out.decision.Status != loopstate.Blocked {
		return ""
	}
	return out.decision.Question
}
