package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

func TestExitCode(t *testing.T) {
	schemaErr := &schemas.Error{File: ".grub/0a1b2c3d/state.json", Violations: []schemas.Violation{{Pointer: "/status", Rule: "bad"}}}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain error", errors.New("disk on fire"), 1},
		{"explicit exit", &ExitError{Code: 42}, 42},
		{"explicit exit wins over its cause", &ExitError{Code: 3, Err: &UsageError{Err: errors.New("x")}}, 3},
		{"usage", &UsageError{Err: errors.New("bad flag")}, 2},
		{"wrapped usage", fmt.Errorf("edit: %w", &UsageError{Err: errors.New("bad flag")}), 2},
		{"invalid harness file", schemaErr, 2},
		{"wrapped invalid harness file", fmt.Errorf("load: %w", schemaErr), 2},
		{"unknown id", &harness.NotFoundError{ID: "nope"}, 2},
		{"no tasks", fmt.Errorf("resolve: %w", harness.ErrNoTasks), 2},
		{"lock held", &harness.LockedError{ID: "0a1b2c3d", Info: harness.LockInfo{PID: 7}}, 75},
		{"wrapped lock held", fmt.Errorf("resume: %w", &harness.LockedError{ID: "0a1b2c3d"}), 75},
		{"interrupted", controller.ErrInterrupted, 130},
		{"wrapped interrupted", fmt.Errorf("turn 3: %w", controller.ErrInterrupted), 130},
		{"context canceled by a signal", fmt.Errorf("turn 3: %w", context.Canceled), 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestExitCodeForStatus(t *testing.T) {
	tests := []struct {
		status harness.Status
		want   int
	}{
		{harness.StatusComplete, 0},
		{harness.StatusFailed, 1},
		{harness.StatusBlocked, 3},
		{harness.StatusBudgetLimited, 4},
		{harness.StatusUsageLimited, 4},
		{harness.StatusPaused, 5},
		{harness.StatusStopped, 5},
		{harness.StatusRunning, 75},
		{harness.Status("bogus"), 1},
	}
	for _, tt := range tests {
		if got := ExitCodeForStatus(tt.status); got != tt.want {
			t.Errorf("ExitCodeForStatus(%q) = %d, want %d", tt.status, got, tt.want)
		}
	}
}

func TestStatusExitCode(t *testing.T) {
	tests := []struct {
		name   string
		status harness.Status
		held   bool
		want   int
	}{
		{"running with a live runner", harness.StatusRunning, true, 75},
		{"running but the runner died", harness.StatusRunning, false, 1},
		{"blocked", harness.StatusBlocked, false, 3},
		{"complete", harness.StatusComplete, false, 0},
	}
	for _, tt := range tests {
		v := &taskView{State: &harness.State{Status: tt.status}, Held: tt.held}
		if got := statusExitCode(v); got != tt.want {
			t.Errorf("%s: statusExitCode = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPrintError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("disk on fire"), "grub: disk on fire\n"},
		{"usage with command", &UsageError{Err: errors.New("unknown flag: --x"), Command: "grub status"},
			"grub: unknown flag: --x\nrun 'grub status --help' for usage\n"},
		{"usage without command", &UsageError{Err: errors.New("unknown command")},
			"grub: unknown command\nrun 'grub --help' for usage\n"},
		{"silent exit", &ExitError{Code: 3}, ""},
		{"exit with message", &ExitError{Code: 2, Err: errors.New("aborted")}, "grub: aborted\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printError(&b, tt.err)
		if b.String() != tt.want {
			t.Errorf("%s: printed %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}

// TestRunUsageErrors checks that the mistakes cobra finds itself become
// usage errors (exit 2) printed once, with the help hint.
func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown command", []string{"frobnicate"}, []string{`grub: unknown command "frobnicate" for "grub"`, "run 'grub --help' for usage"}},
		{"unknown flag", []string{"status", "--bogus"}, []string{"grub: unknown flag: --bogus", "run 'grub status --help' for usage"}},
		{"bad flag value", []string{"edit", "--max-iter", "many"}, []string{`--max-iter "many": want a whole number, such as 25`, "run 'grub edit --help' for usage"}},
		{"bad float flag value", []string{"edit", "--cost-budget", "e"}, []string{`--cost-budget "e": want a number, such as 2.50`}},
		{"bad bool flag value", []string{"edit", "--no-network=maybe"}, []string{`--no-network "maybe": want true or false`}},
		{"too large a number", []string{"edit", "--max-iter", "99999999999999999999"}, []string{`--max-iter "99999999999999999999": the number is too large`}},
		{"extra argument", []string{"list", "x"}, []string{`unknown command "x" for "grub list"`, "run 'grub list --help' for usage"}},
		{"two ids", []string{"pause", "a", "b"}, []string{"grub pause takes at most one task id", "run 'grub pause --help' for usage"}},
		{"missing workdir", []string{"-C", "/nonexistent/grub-test", "status"}, []string{"-C /nonexistent/grub-test: no such directory"}},
		{"range check", []string{"edit", "--max-fail", "0"}, []string{"--max-fail 0: the consecutive-failure limit must be at least 1", "run 'grub edit --help' for usage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, errOut := TestIOStreams()
			if code := Run(tt.args, ios); code != ExitUsage {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, errOut)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if strings.Contains(errOut.String(), "strconv.") || strings.Contains(errOut.String(), "time: ") {
				t.Errorf("stderr names Go's parser: %q", errOut)
			}
			if n := strings.Count(errOut.String(), "grub: "); n != 1 {
				t.Errorf("stderr has %d error lines, want 1:\n%s", n, errOut)
			}
		})
	}
}

func TestRunVersionAndHelp(t *testing.T) {
	ios, _, out, errOut := TestIOStreams()
	if code := Run([]string{"version"}, ios); code != 0 {
		t.Fatalf("version exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out.String(), "grub dev (go") {
		t.Errorf("version printed %q", out)
	}

	ios, _, out, _ = TestIOStreams()
	if code := Run([]string{"--help"}, ios); code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, cmd := range []string{"start", "resume", "status", "list", "pause", "stop", "rm", "edit", "log", "history", "config", "demo", "steer", "answer", "version", "completion"} {
		if !strings.Contains(out.String(), "\n  "+cmd+" ") {
			t.Errorf("--help does not list %s:\n%s", cmd, out)
		}
	}
	for _, absent := range []string{"demo-agent"} {
		if strings.Contains(out.String(), "\n  "+absent+" ") {
			t.Errorf("--help lists %s, which another issue adds", absent)
		}
	}
}
