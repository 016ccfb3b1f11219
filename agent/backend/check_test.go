package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/internal/proc"
)

// fakeProgram writes an executable shell script and returns its path.
func fakeProgram(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// claude and codex are checked by their --version: a program that is not
// there, fails or hangs is a setup error, said with its own words.
func TestCheckVersion(t *testing.T) {
	ok := fakeProgram(t, `[ "$1" = --version ] && echo '2.1.0 (Claude Code)' && echo more; exit 0`)
	found, err := NewClaude(ClaudeConfig{Bin: ok}).Check(context.Background())
	if err != nil || found != ok+" runs: 2.1.0 (Claude Code)" {
		t.Errorf("Check = %q, %v", found, err)
	}
	for _, tt := range []struct {
		name  string
		bin   string
		ctx   time.Duration
		cause string
	}{
		{"fails", fakeProgram(t, "echo 'env: node: No such file' >&2\necho 'second line' >&2\nexit 127"), 0,
			"--version exited with code 127; end of its standard error: env: node: No such file / second line"},
		{"missing", filepath.Join(t.TempDir(), "nope"), 0, "nope"},
		{"hangs", fakeProgram(t, "exec sleep 60"), 100 * time.Millisecond, "--version did not finish in time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			_, err := NewCodex(CodexConfig{Bin: tt.bin}).Check(ctx)
			var se *agent.SetupError
			if !errors.As(err, &se) || !strings.Contains(se.Cause, tt.cause) || !strings.Contains(se.Fix, "--agent-bin") {
				t.Errorf("Check = %v (%T), want a setup error saying %q", err, err, tt.cause)
			}
		})
	}
}

// A Claude Code result refused by the API for the account (401, 403) or
// the model (404) is a setup error; a 500 is an ordinary failure.
func TestClaudeRefusalIsASetupError(t *testing.T) {
	c := NewClaude(ClaudeConfig{})
	for _, tt := range []struct {
		status string
		setup  bool
	}{{"401", true}, {"403", true}, {"404", true}, {"500", false}, {"null", false}} {
		r := claudeResult{Type: "result", Subtype: "success", IsError: true, Result: "API Error: " + tt.status + " refused",
			APIErrorStatus: []byte(tt.status), TerminalReason: "api_error"}
		_, err := c.outcome(context.Background(), context.Background(), time.Minute, claudeOutcome{Result: r}, proc.Result{}, newStallWatch(0, nil))
		var se *agent.SetupError
		if err == nil || errors.As(err, &se) != tt.setup {
			t.Errorf("status %s: %v (%T), want a setup error: %v", tt.status, err, err, tt.setup)
		}
		if tt.setup && (!strings.Contains(se.Cause, "API error status "+tt.status) || se.Fix == "") {
			t.Errorf("status %s: cause %q, fix %q", tt.status, se.Cause, se.Fix)
		}
	}
}
