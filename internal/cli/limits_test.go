package cli

import (
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// start takes every limit, with its default, and checks them with messages
// of its own; edit and resume (TestEditFlags) take only the limits given.
func TestStartLimitFlags(t *testing.T) {
	custom := harness.DefaultLimits()
	custom.MaxIterations, custom.MinFeatures, custom.MaxFeatures = 40, 2, 3
	custom.TokenBudget, custom.TimeBudgetSeconds, custom.TurnTimeoutSeconds = 2000000, 3*3600, 90
	custom.RegressionChecks = 7
	protected := harness.DefaultLimits()
	protected.Protect = []string{"**/*_test.go", "testdata/**"}
	tests := []struct {
		args    []string
		want    harness.Limits
		wantErr string
	}{
		{args: nil, want: harness.DefaultLimits()},
		{args: []string{"--max-iter", "40", "--min-features", "2", "--max-features", "3", "--token-budget", "2000000",
			"--time-budget", "3h", "--turn-timeout", "90s", "--regression-checks", "7"}, want: custom},
		{args: []string{"--regression-checks", "0"}, want: func() harness.Limits { l := harness.DefaultLimits(); l.RegressionChecks = 0; return l }()},
		{args: []string{"--regression-checks", "-2"}, wantErr: "--regression-checks -2: give a count of 0 or more (0 turns the sweep off)"},
		{args: []string{"--max-iter", "0"}, wantErr: "--max-iter 0: must be at least 1"},
		{args: []string{"--token-budget", "-1", "--max-features", "0"}, wantErr: "--max-features 0: must be at least 1"},
		{args: []string{"--min-features", "9", "--max-features", "3"}, wantErr: "--min-features 9 is above --max-features 3"},
		{args: []string{"--token-budget", "-1"}, wantErr: "--token-budget -1: the budget cannot be negative; 0 means none"},
		{args: []string{"--time-budget", "1500ms"}, wantErr: "--time-budget 1.5s: use whole seconds, e.g. 90s, 45m or 2h"},
		{args: []string{"--init-timeout", "0"}, wantErr: "--init-timeout 0s: use whole seconds of at least 1s, e.g. 90s or 30m"},
		{args: []string{"--cost-budget", "-1"}, wantErr: "--cost-budget -1: give US dollars, e.g. 5 or 12.50; 0 means none"},
		{args: []string{"--cost-budget", "NaN"}, wantErr: "--cost-budget NaN: give US dollars, e.g. 5 or 12.50; 0 means none"},
		{args: []string{"--cost-budget", "0"}, want: harness.DefaultLimits()}, // no budget: fine for any backend
		{args: []string{"--protect", "**/*_test.go", "--protect", "", "--protect", "testdata/**"}, want: protected},
		{args: []string{"--protect", "/etc/passwd"}, wantErr: "--protect \"/etc/passwd\": give a path relative to the workspace, e.g. 'tests/**'"},
		{args: []string{"--cost-budget", "5"}, wantErr: "--cost-budget needs a backend that reports cost: claude; openai/codex/command report none (the task's agent is command): use --token-budget instead"},
	}
	for _, tt := range tests {
		var got *StartOptions
		args := append([]string{"goal", "--agent-cmd", "true"}, tt.args...)
		err := runCmd(t, NewCmdStart(testFactory(), func(o *StartOptions) error { got = o; return nil }), args)
		switch {
		case tt.wantErr != "":
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%q: error %v, want %q", tt.args, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case !harness.SameLimits(got.Limits, tt.want):
			t.Errorf("%q: limits %+v, want %+v", tt.args, got.Limits, tt.want)
		}
	}
}

// Only a backend that reports cost can have a cost budget.
func TestCostBudgetNeedsABackendThatReportsCost(t *testing.T) {
	for _, k := range agentKinds {
		if got, want := reportsCost(k), k == harness.AgentClaude; got != want {
			t.Errorf("reportsCost(%s) = %v, want %v", k, got, want)
		}
		err := checkCostBudget(1.5, k)
		if (err == nil) != reportsCost(k) {
			t.Errorf("checkCostBudget(1.5, %s) = %v", k, err)
		}
		if err != nil && ExitCode(err) != ExitUsage {
			t.Errorf("checkCostBudget(1.5, %s): exit %d, want %d", k, ExitCode(err), ExitUsage)
		}
		if err := checkCostBudget(0, k); err != nil {
			t.Errorf("no budget for %s: %v", k, err)
		}
	}
	var got *StartOptions
	err := runCmd(t, NewCmdStart(testFactory(), func(o *StartOptions) error { got = o; return nil }), []string{"goal", "--agent", "claude", "--cost-budget", "2.5"})
	if err != nil || got.Limits.CostBudgetUSD != 2.5 {
		t.Fatalf("start --agent claude --cost-budget 2.5: %v", err)
	}
	err = runCmd(t, NewCmdStart(testFactory(), func(o *StartOptions) error { return nil }), []string{"goal", "--agent", "codex", "--cost-budget", "2.5"})
	if err == nil || !strings.Contains(err.Error(), "(the task's agent is codex)") {
		t.Fatalf("start --agent codex --cost-budget 2.5: %v", err)
	}
}
