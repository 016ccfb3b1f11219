package cli

import (
	"testing"

	"github.com/grub-dev/grub/harness"
)

// start takes every limit, with its default, and checks them with messages
// of its own; edit and resume (TestEditFlags) take only the limits given.
func TestStartLimitFlags(t *testing.T) {
	custom := harness.DefaultLimits()
	custom.MaxIterations, custom.MinFeatures, custom.MaxFeatures = 40, 2, 3
	custom.TokenBudget, custom.TimeBudgetSeconds, custom.TurnTimeoutSeconds = 2000000, 3*3600, 90
	tests := []struct {
		args    []string
		want    harness.Limits
		wantErr string
	}{
		{args: nil, want: harness.DefaultLimits()},
		{args: []string{"--max-iter", "40", "--min-features", "2", "--max-features", "3", "--token-budget", "2000000",
			"--time-budget", "3h", "--turn-timeout", "90s"}, want: custom},
		{args: []string{"--max-iter", "0"}, wantErr: "--max-iter 0: must be at least 1"},
		{args: []string{"--token-budget", "-1", "--max-features", "0"}, wantErr: "--max-features 0: must be at least 1"},
		{args: []string{"--min-features", "9", "--max-features", "3"}, wantErr: "--min-features 9 is above --max-features 3"},
		{args: []string{"--token-budget", "-1"}, wantErr: "--token-budget -1: the budget cannot be negative; 0 means none"},
		{args: []string{"--time-budget", "1500ms"}, wantErr: "--time-budget 1.5s: use whole seconds, e.g. 90s, 45m or 2h"},
		{args: []string{"--init-timeout", "0"}, wantErr: "--init-timeout 0s: use whole seconds of at least 1s, e.g. 90s or 30m"},
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
		case got.Limits != tt.want:
			t.Errorf("%q: limits %+v, want %+v", tt.args, got.Limits, tt.want)
		}
	}
}
