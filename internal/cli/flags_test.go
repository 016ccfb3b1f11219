package cli

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/grub-dev/grub/harness"
	"github.com/spf13/cobra"
)

// runCmd runs a command built with an injected run function on args and
// returns the error, as cobra reports it.
func runCmd(t *testing.T, cmd *cobra.Command, args []string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	_, err := cmd.ExecuteC()
	return err
}

func testFactory() *Factory {
	ios, _, _, _ := TestIOStreams()
	return NewFactory(ios)
}

func TestStatusFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    StatusOptions
		wantErr bool
	}{
		{args: nil, want: StatusOptions{}},
		{args: []string{"0a1b2c3d"}, want: StatusOptions{ID: "0a1b2c3d"}},
		{args: []string{"--json"}, want: StatusOptions{JSON: true}},
		{args: []string{"--exit-status", "0a1b", "--json"}, want: StatusOptions{ID: "0a1b", JSON: true, ExitStatus: true}},
		{args: []string{"a", "b"}, wantErr: true},
		{args: []string{"--interval", "5s"}, wantErr: true},
	}
	for _, tt := range tests {
		var got *StatusOptions
		err := runCmd(t, NewCmdStatus(testFactory(), func(o *StatusOptions) error { got = o; return nil }), tt.args)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%q: no error", tt.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if got.ID != tt.want.ID || got.JSON != tt.want.JSON || got.ExitStatus != tt.want.ExitStatus {
			t.Errorf("%q: got id=%q json=%v exit=%v, want %+v", tt.args, got.ID, got.JSON, got.ExitStatus, tt.want)
		}
		if got.Store == nil || got.Now == nil || got.IO == nil {
			t.Errorf("%q: options not wired to the factory", tt.args)
		}
	}
}

func TestListFlags(t *testing.T) {
	var got *ListOptions
	if err := runCmd(t, NewCmdList(testFactory(), func(o *ListOptions) error { got = o; return nil }), []string{"--json"}); err != nil {
		t.Fatal(err)
	}
	if !got.JSON {
		t.Error("--json not set")
	}
	if err := runCmd(t, NewCmdList(testFactory(), func(*ListOptions) error { return nil }), []string{"0a1b2c3d"}); err == nil {
		t.Error("list accepted an id")
	}
}

func TestPauseStopLogFlags(t *testing.T) {
	var pause *PauseOptions
	if err := runCmd(t, NewCmdPause(testFactory(), func(o *PauseOptions) error { pause = o; return nil }), []string{"--now", "0a1b2c3d"}); err != nil {
		t.Fatal(err)
	}
	if pause.ID != "0a1b2c3d" || !pause.Immediate {
		t.Errorf("pause --now 0a1b2c3d: got %+v", pause)
	}
	if err := runCmd(t, NewCmdPause(testFactory(), func(o *PauseOptions) error { pause = o; return nil }), nil); err != nil {
		t.Fatal(err)
	}
	if pause.ID != "" || pause.Immediate {
		t.Errorf("pause: got id=%q now=%v", pause.ID, pause.Immediate)
	}

	var stop *StopOptions
	if err := runCmd(t, NewCmdStop(testFactory(), func(o *StopOptions) error { stop = o; return nil }), []string{"0a1b"}); err != nil {
		t.Fatal(err)
	}
	if stop.ID != "0a1b" {
		t.Errorf("stop 0a1b: id %q", stop.ID)
	}
	if err := runCmd(t, NewCmdStop(testFactory(), func(*StopOptions) error { return nil }), []string{"--now"}); err == nil {
		t.Error("stop accepted --now")
	}

	var lg *LogOptions
	if err := runCmd(t, NewCmdLog(testFactory(), func(o *LogOptions) error { lg = o; return nil }), []string{"0a1b2c3d"}); err != nil {
		t.Fatal(err)
	}
	if lg.ID != "0a1b2c3d" {
		t.Errorf("log 0a1b2c3d: id %q", lg.ID)
	}
}

func ptr[T any](v T) *T { return &v }

func TestEditFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantArgs   []string
		wantLimits harness.LimitChanges
		wantUsage  bool
	}{
		{name: "goal only", args: []string{"--goal", "new goal"}, wantArgs: []string{"new goal"}},
		{name: "id and goal", args: []string{"0a1b2c3d", "--goal", "new goal"}, wantArgs: []string{"0a1b2c3d", "new goal"}},
		{name: "id only", args: []string{"0a1b"}, wantArgs: []string{"0a1b"}},
		{name: "a goal as the argument is not an id", args: []string{"new goal"}, wantUsage: true},
		{name: "a word as the argument is not an id", args: []string{"nosuchid", "--max-iter", "3"}, wantUsage: true},
		{name: "two arguments", args: []string{"0a1b2c3d", "new goal"}, wantUsage: true},
		{name: "nothing: the editor", args: nil, wantArgs: []string{}},
		{name: "max-iter only", args: []string{"--max-iter", "50"}, wantArgs: []string{},
			wantLimits: harness.LimitChanges{MaxIterations: ptr(50)}},
		{name: "every limit", args: []string{"--max-iter", "50", "--max-fail", "4", "--token-budget", "5000000", "--time-budget", "2h30m"},
			wantArgs: []string{},
			wantLimits: harness.LimitChanges{MaxIterations: ptr(50), MaxConsecutiveFailures: ptr(4),
				TokenBudget: ptr(int64(5000000)), TimeBudgetSeconds: ptr(int64(9000))}},
		{name: "zero budgets remove them", args: []string{"--token-budget", "0", "--time-budget", "0"}, wantArgs: []string{},
			wantLimits: harness.LimitChanges{TokenBudget: ptr(int64(0)), TimeBudgetSeconds: ptr(int64(0))}},
		{name: "goal and limits", args: []string{"--goal", "goal", "--max-iter", "9"}, wantArgs: []string{"goal"},
			wantLimits: harness.LimitChanges{MaxIterations: ptr(9)}},
		{name: "max-iter 0", args: []string{"--max-iter", "0"}, wantUsage: true},
		{name: "negative max-fail", args: []string{"--max-fail", "-2"}, wantUsage: true},
		{name: "negative token budget", args: []string{"--token-budget", "-1"}, wantUsage: true},
		{name: "negative time budget", args: []string{"--time-budget", "-5m"}, wantUsage: true},
		{name: "sub-second time budget", args: []string{"--time-budget", "90.5s"}, wantUsage: true},
		{name: "three arguments", args: []string{"a", "b", "c"}, wantUsage: true},
		{name: "sweep off", args: []string{"--regression-checks", "0"}, wantArgs: []string{},
			wantLimits: harness.LimitChanges{RegressionChecks: ptr(0)}},
		{name: "negative sweep", args: []string{"--regression-checks", "-1"}, wantUsage: true},
		{name: "protect replaces the list", args: []string{"--protect", "**/*_test.go", "--protect", "spec/**", "--protect", "**/*_test.go"}, wantArgs: []string{},
			wantLimits: harness.LimitChanges{Protect: &[]string{"**/*_test.go", "spec/**"}}},
		{name: "protect '' clears it", args: []string{"--protect", ""}, wantArgs: []string{},
			wantLimits: harness.LimitChanges{Protect: &[]string{}}},
		{name: "protect a bad glob", args: []string{"--protect", "a/[b"}, wantUsage: true},
		{name: "protect outside the workspace", args: []string{"--protect", "../x"}, wantUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *EditOptions
			err := runCmd(t, NewCmdEdit(testFactory(), func(o *EditOptions) error { got = o; return nil }), tt.args)
			if tt.wantUsage {
				var usage *UsageError
				if !errors.As(err, &usage) {
					t.Fatalf("error %v, want a usage error", err)
				}
				if got != nil {
					t.Error("the run function ran despite the usage error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotArgs := []string{}
			if got.ID != "" {
				gotArgs = append(gotArgs, got.ID)
			}
			if got.GoalGiven {
				gotArgs = append(gotArgs, got.Goal)
			}
			if !reflect.DeepEqual(gotArgs, tt.wantArgs) {
				t.Errorf("id and goal %q, want %q", gotArgs, tt.wantArgs)
			}
			if !reflect.DeepEqual(got.Limits, tt.wantLimits) {
				t.Errorf("limits %s, want %s", describeChanges(got.Limits), describeChanges(tt.wantLimits))
			}
			if got.Editor == nil || got.Getenv == nil {
				t.Error("editor not wired")
			}
		})
	}
}

func describeChanges(c harness.LimitChanges) string {
	s := ""
	if c.MaxIterations != nil {
		s += " maxIter=" + itoa(int64(*c.MaxIterations))
	}
	if c.MaxConsecutiveFailures != nil {
		s += " maxFail=" + itoa(int64(*c.MaxConsecutiveFailures))
	}
	if c.TokenBudget != nil {
		s += " tokens=" + itoa(*c.TokenBudget)
	}
	if c.TimeBudgetSeconds != nil {
		s += " time=" + itoa(*c.TimeBudgetSeconds)
	}
	return "{" + s + " }"
}

func itoa(n int64) string { return harness.FormatCount(n) }

func TestEditorCommand(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"EDITOR": "nano", "VISUAL": "code --wait"}, "nano"},
		{map[string]string{"VISUAL": "code --wait"}, "code --wait"},
		{map[string]string{"EDITOR": "  ", "VISUAL": "emacs"}, "emacs"},
		{map[string]string{}, "vi"},
	}
	for _, tt := range tests {
		if got := editorCommand(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("env %v: editor %q, want %q", tt.env, got, tt.want)
		}
	}
}
