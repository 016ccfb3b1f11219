package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// NextStep is a command that makes sense to run next, and why.
type NextStep struct {
	Command string `json:"command"`
	Why     string `json:"why"`
}

// NextSteps are the one or two commands that make sense once a task has
// stopped, decided from its status and what stopped it: the one place that
// decides, for the line a run prints when it stops (through status), grub
// status and the report. A running task has none.
func NextSteps(st *State) []NextStep {
	id := st.ID
	resume := "grub resume " + id
	switch st.Status {
	case StatusComplete:
		steps := []NextStep{{"grub report " + id + " --html report.html", "see what each turn did and what grub checked"}}
		if r := reviewCommand(st); r != "" {
			steps = append(steps, NextStep{r, "review the task's commits before you merge them"})
		}
		return steps
	case StatusPaused:
		if strings.HasPrefix(st.StopReason, "the agent cannot work") {
			return []NextStep{{resume, "once the agent's setup is fixed (the stop reason says what to fix)"}}
		}
		return []NextStep{{resume, "carry on where it paused"}}
	case StatusStopped:
		return []NextStep{{"grub report " + id, "see what the turns did"}, {resume, "carry on after all"}}
	case StatusUsageLimited:
		return []NextStep{{resume, "once the model provider's quota allows again"}}
	case StatusBudgetLimited:
		return []NextStep{budgetStep(st)}
	case StatusBlocked:
		if d := st.LastDecision; d != nil && d.Question != "" {
			return []NextStep{{"grub answer " + id + ` "<your answer>"`, "answer the agent's question; the task carries on"}}
		}
		return []NextStep{{"grub steer " + id + ` "<guidance>"`, "tell the agent how to get past what blocks it"}, {resume, "then carry on"}}
	case StatusFailed:
		if l := st.Limits.MaxIterations; l > 0 && st.CurrentIteration >= l {
			return []NextStep{{resume + " --max-iter " + strconv.Itoa(2*l), "allow more turns (it used all " + strconv.Itoa(l) + ")"}, {"grub report " + id, "see what the turns did"}}
		}
		return []NextStep{{"grub log " + id, "read why the last turns failed"}, {resume, "try again (a resume clears the failure count)"}}
	}
	return nil
}

// budgetStep is the resume that raises the budget a budget_limited task
// spent: twice the old one.
func budgetStep(st *State) NextStep {
	l, u := st.Limits, st.Usage
	switch {
	case l.TokenBudget > 0 && u.TokensUsed >= l.TokenBudget:
		return NextStep{fmt.Sprintf("grub resume %s --token-budget %d", st.ID, 2*l.TokenBudget), "raise the token budget"}
	case l.CostBudgetUSD > 0 && u.CostUSD != nil && *u.CostUSD >= l.CostBudgetUSD:
		return NextStep{fmt.Sprintf("grub resume %s --cost-budget %s", st.ID, strconv.FormatFloat(2*l.CostBudgetUSD, 'f', -1, 64)), "raise the cost budget"}
	case l.TimeBudgetSeconds > 0:
		return NextStep{fmt.Sprintf("grub resume %s --time-budget %s", st.ID, FormatSeconds(2*l.TimeBudgetSeconds)), "raise the time budget"}
	}
	return NextStep{"grub resume " + st.ID, "carry on"}
}

// reviewCommand is the git log of the task's commits since its base, or
// "" when it records none (no repository, --no-commit).
func reviewCommand(st *State) string {
	b := st.Base
	if b == nil || st.NoCommit || b.Commit == "" {
		return ""
	}
	tip := "HEAD"
	if st.History != nil && st.History.Branch != "" {
		tip = strings.TrimPrefix(st.History.Branch, "refs/heads/")
	} else if b.Branch != "" {
		tip = strings.TrimPrefix(b.Branch, "refs/heads/")
	}
	base := b.Commit
	if len(base) > 7 {
		base = base[:7]
	}
	return "git log --oneline " + base + ".." + tip
}
