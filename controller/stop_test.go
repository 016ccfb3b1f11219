package controller

import (
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

func baseState() *harness.State {
	return &harness.State{Phase: harness.PhaseExecution, Limits: harness.DefaultLimits()}
}

func TestStopRules(t *testing.T) {
	cases := []struct {
		name   string
		rule   stopRule
		setup  func(st *harness.State)
		want   harness.Status // "" = no stop
		reason string
	}{
		{"failures below limit", failureLimit, func(st *harness.State) { st.ConsecutiveFailures = 2 }, "", ""},
		{"failures at limit", failureLimit, func(st *harness.State) { st.ConsecutiveFailures = 3; st.LastError = "bad loop-state" }, harness.StatusFailed, "bad loop-state"},
		{"initializer uses its own limit", failureLimit, func(st *harness.State) { st.Phase = harness.PhaseInitializer; st.ConsecutiveFailures = 3 }, "", ""},
		{"initializer at its limit", failureLimit, func(st *harness.State) { st.Phase = harness.PhaseInitializer; st.ConsecutiveFailures = 5 }, harness.StatusFailed, "initializer"},
		{"iterations left", iterationBudget, func(st *harness.State) { st.CurrentIteration = 24 }, "", ""},
		{"iterations spent", iterationBudget, func(st *harness.State) { st.CurrentIteration = 25 }, harness.StatusFailed, "iteration budget spent"},
		{"no token budget", tokenBudget, func(st *harness.State) { st.Usage.TokensUsed = 1 << 40 }, "", ""},
		{"tokens below budget", tokenBudget, func(st *harness.State) { st.Limits.TokenBudget = 100; st.Usage.TokensUsed = 99 }, "", ""},
		{"tokens at budget", tokenBudget, func(st *harness.State) { st.Limits.TokenBudget = 100; st.Usage.TokensUsed = 100 }, harness.StatusBudgetLimited, "token budget"},
		{"no cost budget", costBudget, func(st *harness.State) { st.Usage.AddCost(1e6) }, "", ""},
		{"no cost reported", costBudget, func(st *harness.State) { st.Limits.CostBudgetUSD = 1 }, "", ""},
		{"cost below budget", costBudget, func(st *harness.State) { st.Limits.CostBudgetUSD = 1; st.Usage.AddCost(0.99) }, "", ""},
		{"cost at budget", costBudget, func(st *harness.State) { st.Limits.CostBudgetUSD = 1; st.Usage.AddCost(0.4); st.Usage.AddCost(0.6) },
			harness.StatusBudgetLimited, "cost budget spent ($1.00 of $1.00)"},
		{"cost over budget", costBudget, func(st *harness.State) { st.Limits.CostBudgetUSD = 0.5; st.Usage.AddCost(1.234) },
			harness.StatusBudgetLimited, "cost budget spent ($1.23 of $0.50); raise it with grub resume --cost-budget USD"},
		{"no time budget", timeBudget, func(st *harness.State) { st.Usage.TimeUsedSeconds = 1 << 30 }, "", ""},
		{"time below budget", timeBudget, func(st *harness.State) { st.Limits.TimeBudgetSeconds = 60; st.Usage.TimeUsedSeconds = 59 }, "", ""},
		{"time at budget", timeBudget, func(st *harness.State) { st.Limits.TimeBudgetSeconds = 60; st.Usage.TimeUsedSeconds = 60 }, harness.StatusBudgetLimited, "time budget"},
		{"blocked below limit", blockedLimit, func(st *harness.State) { st.ConsecutiveBlocked = 2 }, "", ""},
		{"blocked at limit", blockedLimit, func(st *harness.State) {
			st.ConsecutiveBlocked = 3
			st.LastDecision = &harness.Decision{Decision: loopstate.Decision{Status: loopstate.Blocked, Blocker: "no database"}}
		}, harness.StatusBlocked, "no database"},
		{"progress recently", noProgress, func(st *harness.State) { st.NoProgressTurns = 4 }, "", ""},
		{"no progress", noProgress, func(st *harness.State) { st.NoProgressTurns = 5 }, harness.StatusBlocked, "no progress"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := baseState()
			c.setup(st)
			got, ok := c.rule(st)
			if c.want == "" {
				if ok {
					t.Fatalf("rule fired: %+v", got)
				}
				return
			}
			if !ok || got.Status != c.want {
				t.Fatalf("got %+v (fired %v), want status %s", got, ok, c.want)
			}
			if !strings.Contains(got.Reason, c.reason) {
				t.Errorf("reason %q does not mention %q", got.Reason, c.reason)
			}
		})
	}
}

func TestFirstStopOrder(t *testing.T) {
	st := baseState()
	st.ConsecutiveFailures = 3
	st.CurrentIteration = 25
	st.Limits.TokenBudget, st.Usage.TokensUsed = 10, 10
	got, ok := firstStop(st, afterTurnRules)
	if !ok || got.Status != harness.StatusFailed || !strings.Contains(got.Reason, "consecutive") {
		t.Fatalf("failure limit should win, got %+v", got)
	}
	st.ConsecutiveFailures = 0
	got, _ = firstStop(st, afterTurnRules)
	if got.Status != harness.StatusBudgetLimited {
		t.Fatalf("token budget should win over iterations, got %+v", got)
	}
	if _, ok := firstStop(baseState(), afterTurnRules); ok {
		t.Fatal("a fresh task must not stop")
	}
}

func TestBrief(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{"first line\nsecond", "first line"},
		{"exited with code 1; end of its standard error:\n\nboom\nmore", "exited with code 1; end of its standard error: boom"},
		{long, long}, // never cut: the cause comes last
	} {
		if got := brief(c.in); got != c.want {
			t.Errorf("brief(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
