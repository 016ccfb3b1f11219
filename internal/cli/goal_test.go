package cli

import (
	"strings"
	"testing"
)

// TestStartGoalArgumentChecked: a goal argument gets the checks of a goal
// file: valid UTF-8, not blank, within maxGoalBytes; it is trimmed.
func TestStartGoalArgumentChecked(t *testing.T) {
	for _, c := range []struct{ goal, want string }{
		{"  add a /healthz endpoint \n", ""},
		{"caf\xe9 login", "the goal: not valid UTF-8 (at byte 3)"},
		{" \t\n", "the goal: empty"},
		{strings.Repeat("a", maxGoalBytes+1), "the goal: longer than 64 KiB"},
	} {
		var got *StartOptions
		f := testFactory()
		cmd := NewCmdStart(f, func(o *StartOptions) error { got = o; return nil })
		cmd.SetArgs([]string{c.goal, "--agent-cmd", "x"})
		cmd.SetOut(&strings.Builder{})
		cmd.SetErr(&strings.Builder{})
		err := cmd.Execute()
		switch {
		case c.want == "" && (err != nil || got == nil || got.Goal != "add a /healthz endpoint"):
			t.Errorf("goal %q: %v, options %+v", c.goal, err, got)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("goal %.20q: err = %v, want %q", c.goal, err, c.want)
		}
	}
}
