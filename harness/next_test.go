package harness

import (
	"strings"
	"testing"
)

// TestNextSteps checks the commands suggested for each way a task stops.
func TestNextSteps(t *testing.T) {
	usd := func(f float64) *float64 { return &f }
	base := &GitBase{Branch: "refs/heads/main", Commit: "0123456789abcdef"}
	cases := []struct {
		name string
		st   State
		want []string // the commands, in order
	}{
		{"running", State{Status: StatusRunning}, nil},
		{"complete", State{Status: StatusComplete, Base: base}, []string{"grub report t1 --html report.html", "git log --oneline 0123456..main"}},
		{"complete without commits", State{Status: StatusComplete, Base: base, NoCommit: true}, []string{"grub report t1 --html report.html"}},
		{"paused", State{Status: StatusPaused, StopReason: ReasonPausedByUser}, []string{"grub resume t1"}},
		{"setup error", State{Status: StatusPaused, StopReason: "the agent cannot work (in turn 1): 401. To fix: a key"}, []string{"grub resume t1"}},
		{"stopped", State{Status: StatusStopped}, []string{"grub report t1", "grub resume t1"}},
		{"iteration budget", State{Status: StatusFailed, CurrentIteration: 5, Limits: Limits{MaxIterations: 5}}, []string{"grub resume t1 --max-iter 10", "grub report t1"}},
		{"failures", State{Status: StatusFailed, CurrentIteration: 3, Limits: Limits{MaxIterations: 25}}, []string{"grub log t1", "grub resume t1"}},
		{"tokens", State{Status: StatusBudgetLimited, Limits: Limits{TokenBudget: 1000}, Usage: Usage{TokensUsed: 1200}}, []string{"grub resume t1 --token-budget 2000"}},
		{"cost", State{Status: StatusBudgetLimited, Limits: Limits{CostBudgetUSD: 2.5}, Usage: Usage{CostUSD: usd(2.6)}}, []string{"grub resume t1 --cost-budget 5"}},
		{"time", State{Status: StatusBudgetLimited, Limits: Limits{TimeBudgetSeconds: 1800}, Usage: Usage{TimeUsedSeconds: 1800}}, []string{"grub resume t1 --time-budget 1h"}},
		{"question", State{Status: StatusBlocked, LastDecision: &Decision{}}, []string{`grub steer t1 "<guidance>"`, "grub resume t1"}},
		{"quota", State{Status: StatusUsageLimited}, []string{"grub resume t1"}},
	}
	q := NewDecision("blocked", "")
	q.Question = "which one?"
	cases = append(cases, struct {
		name string
		st   State
		want []string
	}{"asked", State{Status: StatusBlocked, LastDecision: &q}, []string{`grub answer t1 "<your answer>"`}})
	for _, c := range cases {
		c.st.ID = "t1"
		var got []string
		for _, s := range NextSteps(&c.st) {
			if s.Why == "" {
				t.Errorf("%s: %q has no reason", c.name, s.Command)
			}
			got = append(got, s.Command)
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: NextSteps = %q, want %q", c.name, got, c.want)
		}
	}
}
