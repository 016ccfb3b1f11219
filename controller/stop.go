package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/templates"
)

// NoProgressLimit is how many consecutive execution turns may pass without a
// verified feature and without any change in the workspace before the task
// ends blocked.
const NoProgressLimit = 5

// Stop is a decision to end the task.
type Stop struct {
	Status harness.Status
	Reason string
}

// A stopRule looks at the state and says whether the task must end. Rules are
// small and pure so that each has its own table test.
type stopRule func(st *harness.State) (Stop, bool)

// failureLimit ends the task failed when the consecutive failures of the
// current phase reach that phase's limit.
func failureLimit(st *harness.State) (Stop, bool) {
	limit, what := st.Limits.MaxConsecutiveFailures, "execution"
	if st.Phase == harness.PhaseInitializer {
		limit, what = st.Limits.MaxInitializerFailures, "initializer"
	}
	if st.ConsecutiveFailures >= limit {
		return Stop{harness.StatusFailed, fmt.Sprintf("%d consecutive failed %s turns (limit %d); last: %s",
			st.ConsecutiveFailures, what, limit, brief(st.LastError))}, true
	}
	return Stop{}, false
}

// iterationBudget ends the task failed when every allowed turn has run.
func iterationBudget(st *harness.State) (Stop, bool) {
	if st.CurrentIteration >= st.Limits.MaxIterations {
		return Stop{harness.StatusFailed, fmt.Sprintf("iteration budget spent (%d of %d turns); raise it with grub resume --max-iter N",
			st.CurrentIteration, st.Limits.MaxIterations)}, true
	}
	return Stop{}, false
}

// tokenBudget ends the task budget_limited once tokensUsed reaches the budget.
func tokenBudget(st *harness.State) (Stop, bool) {
	if b := st.Limits.TokenBudget; b > 0 && st.Usage.TokensUsed >= b {
		return Stop{harness.StatusBudgetLimited, fmt.Sprintf("token budget spent (%s of %s tokens); raise it with grub resume --token-budget N",
			harness.FormatCount(st.Usage.TokensUsed), harness.FormatCount(b))}, true
	}
	return Stop{}, false
}

// costBudget ends the task budget_limited once the cost the backend
// reported reaches the budget.
func costBudget(st *harness.State) (Stop, bool) {
	if b, spent := st.Limits.CostBudgetUSD, st.Usage.CostUSD; b > 0 && spent != nil && *spent >= b {
		return Stop{harness.StatusBudgetLimited, fmt.Sprintf("cost budget spent (%s of %s); raise it with grub resume --cost-budget USD",
			templates.FormatUSD(*spent), templates.FormatUSD(b))}, true
	}
	return Stop{}, false
}

// timeBudget ends the task budget_limited once timeUsedSeconds reaches the budget.
func timeBudget(st *harness.State) (Stop, bool) {
	if b := st.Limits.TimeBudgetSeconds; b > 0 && st.Usage.TimeUsedSeconds >= b {
		return Stop{harness.StatusBudgetLimited, fmt.Sprintf("time budget spent (%s of %s); raise it with grub resume --time-budget DURATION",
			time.Duration(st.Usage.TimeUsedSeconds)*time.Second, time.Duration(b)*time.Second)}, true
	}
	return Stop{}, false
}

// blockedLimit accepts a blocked report once the agent has reported blocked
// maxBlocked turns in a row.
func blockedLimit(st *harness.State) (Stop, bool) {
	if st.ConsecutiveBlocked >= st.Limits.MaxBlocked {
		reason := "the agent reported blocked"
		if d := st.LastDecision; d != nil && d.Blocker != "" {
			reason += ": " + d.Blocker
		}
		return Stop{harness.StatusBlocked, fmt.Sprintf("%s (%d turns in a row)", reason, st.ConsecutiveBlocked)}, true
	}
	return Stop{}, false
}

// noProgress ends the task blocked after NoProgressLimit execution turns
// without a verified feature or a change in the workspace.
func noProgress(st *harness.State) (Stop, bool) {
	if st.NoProgressTurns >= NoProgressLimit {
		return Stop{harness.StatusBlocked, fmt.Sprintf("no progress in %d consecutive turns: no feature verified and nothing changed in the workspace", st.NoProgressTurns)}, true
	}
	return Stop{}, false
}

// afterTurnRules are checked after every turn, in order; the first that
// fires ends the task.
var afterTurnRules = []stopRule{failureLimit, blockedLimit, noProgress, tokenBudget, costBudget, timeBudget, iterationBudget}

// beforeTurnRules are checked before a turn starts (a resumed task may
// already be over a limit).
var beforeTurnRules = []stopRule{failureLimit, tokenBudget, costBudget, timeBudget, iterationBudget}

func firstStop(st *harness.State, rules []stopRule) (Stop, bool) {
	for _, r := range rules {
		if s, ok := r(st); ok {
			return s, true
		}
	}
	return Stop{}, false
}

// brief is the first line of a message, for a status line or a stop
// reason; the whole message stays in lastError and the progress log. It
// is never cut by length: the cause of an error comes last ("…: dial tcp
// 127.0.0.1:9: connect: connection refused"), and a line cut to fit would
// lose it. A first line that only announces what follows ("…; end of its
// standard error:") takes the next non-blank line along.
func brief(msg string) string {
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		first, rest := msg[:i], msg[i+1:]
		if strings.HasSuffix(first, ":") {
			for _, l := range strings.Split(rest, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					first += " " + l
					break
				}
			}
		}
		msg = first
	}
	return msg
}
