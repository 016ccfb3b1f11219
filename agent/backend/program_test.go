//go:build linux

package backend

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/proc/proctest"
)

// fakeAgentBin returns an executable in a fresh folder, named name, that
// runs testdata/<script> with sh (so the scripts need no executable bit
// and $0 still names the script).
func fakeAgentBin(t *testing.T, script, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	wrapper := "#!/bin/sh\nexec /bin/sh '" + strings.ReplaceAll(path, "'", `'\''`) + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// fakeRecorded reads what a fake agent recorded in the turn's harness dir.
func fakeRecorded(t *testing.T, turn agent.Turn, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(turn.HarnessDir, name))
	if err != nil {
		t.Fatalf("the fake agent did not record %s: %v", name, err)
	}
	return string(b)
}

// checkFakeRun checks that the fake agent ran in the workspace, got the
// prompt on stdin and the arguments wantArgs.
func checkFakeRun(t *testing.T, turn agent.Turn, wantArgs []string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(turn.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(fakeRecorded(t, turn, "cwd")); got != ws {
		t.Errorf("working directory = %q, want the workspace %q", got, ws)
	}
	if got, want := fakeRecorded(t, turn, "stdin"), strings.TrimRight(turn.Prompt, "\n"); got != want {
		t.Errorf("prompt on stdin = %q, want %q", got, want)
	}
	got := strings.Split(strings.TrimSuffix(fakeRecorded(t, turn, "argv"), "\n"), "\n")
	if !slices.Equal(got, wantArgs) {
		t.Errorf("arguments = %q, want %q", got, wantArgs)
	}
}

// checkTurnErr checks err against the wanted substrings (nil: no error)
// and whether it wraps ErrUsageLimited.
func checkTurnErr(t *testing.T, err error, want []string, wantLimited bool) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("RunTurn: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("RunTurn succeeded, want an error")
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	if got := errors.Is(err, agent.ErrUsageLimited); got != wantLimited {
		t.Errorf("errors.Is(err, agent.ErrUsageLimited) = %v, want %v (error %q)", got, wantLimited, err)
	}
	if errors.Is(err, agent.ErrTimeout) {
		t.Errorf("error %q wraps ErrTimeout", err)
	}
}

func TestIsUsageLimitMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  string
		want bool
	}{
		{"Claude AI usage limit reached|1760000400", true},
		{"5-hour limit reached ∙ resets 2am", true},
		{"You've hit your limit · resets 3pm (Europe/Paris)", true},
		{"You're out of extra usage · resets 1pm", true},
		{`API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}`, true},
		{"You've hit your usage limit. Upgrade to Pro or try again in 3 days.", true},
		{`{"error":{"code":"insufficient_quota"}}`, true},
		{"exceeded retry limit, last status: 429 Too Many Requests", true},
		{"Credit balance is too low", true},
		{"Context limit reached · /compact or /clear to continue", false},
		{"API Error: 500 Internal server error", false},
		{"Invalid API key · Please run /login", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := isUsageLimitMessage(tc.msg); got != tc.want {
			t.Errorf("isUsageLimitMessage(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

func TestAddTokens(t *testing.T) {
	t.Parallel()
	tests := []struct{ a, b, want int64 }{
		{1, 2, 3},
		{0, 0, 0},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 5, 10, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
	}
	for _, tc := range tests {
		if got := addTokens(tc.a, tc.b); got != tc.want {
			t.Errorf("addTokens(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestOutputHead(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) // 300 bytes: the cut falls inside a rune
	got := outputHead([]byte(long))
	if !strings.HasSuffix(got, `…"`) || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("outputHead cut a rune or did not mark the cut: %s", got)
	}
	if got := outputHead([]byte("  short\n")); got != `"short"` {
		t.Errorf("outputHead(short) = %s", got)
	}
}

// Not parallel: it changes PATH.
func TestLookupAgentBin(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	if _, err := lookupAgentBin("", "claude", "Claude Code"); err == nil ||
		err.Error() != "claude not found in PATH: install Claude Code or pass --agent-bin" {
		t.Errorf("default name missing from PATH: error = %v", err)
	}
	if _, err := lookupAgentBin("", "codex", "the Codex CLI"); err == nil ||
		err.Error() != "codex not found in PATH: install the Codex CLI or pass --agent-bin" {
		t.Errorf("default codex missing from PATH: error = %v", err)
	}
	gone := filepath.Join(empty, "no-such-claude")
	if _, err := lookupAgentBin(gone, "claude", "Claude Code"); err == nil ||
		!strings.Contains(err.Error(), gone) || !strings.Contains(err.Error(), "--agent-bin") {
		t.Errorf("missing path: error = %v, want one naming %s and --agent-bin", err, gone)
	}
	notExec := filepath.Join(empty, "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lookupAgentBin(notExec, "codex", "the Codex CLI"); err == nil || !strings.Contains(err.Error(), "--agent-bin") {
		t.Errorf("non-executable file: error = %v", err)
	}

	bin := fakeAgentBin(t, "fake-claude.sh", "claude")
	t.Setenv("PATH", filepath.Dir(bin))
	got, err := lookupAgentBin("", "claude", "Claude Code")
	if err != nil || got != bin {
		t.Errorf("lookupAgentBin found %q, %v; want %q", got, err, bin)
	}
	t.Chdir(filepath.Dir(filepath.Dir(bin)))
	rel := filepath.Join(filepath.Base(filepath.Dir(bin)), "claude")
	got, err = lookupAgentBin(rel, "claude", "Claude Code")
	if err != nil || got != bin {
		t.Errorf("relative path %q resolved to %q, %v; want the absolute %q", rel, got, err, bin)
	}
}

// The claude and codex backends end a turn that runs out of time, or is
// cancelled, by killing the program's whole process group.
func TestProgramBackendsKillTheirGroup(t *testing.T) {
	t.Parallel()
	backends := map[string]func(t *testing.T) agent.Agent{
		"claude": func(t *testing.T) agent.Agent {
			return NewClaude(ClaudeConfig{Bin: fakeAgentBin(t, "fake-claude.sh", "claude")})
		},
		"codex": func(t *testing.T) agent.Agent {
			return NewCodex(CodexConfig{Bin: fakeAgentBin(t, "fake-codex.sh", "codex")})
		},
	}
	for name, backend := range backends {
		t.Run(name+"/timeout", func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "hang\n")
			turn.Timeout = 3 * time.Second
			var pgid int
			turn.Started = func(p int) { pgid = p }
			_, err := backend(t).RunTurn(context.Background(), turn)
			if !errors.Is(err, agent.ErrTimeout) || !strings.Contains(err.Error(), name+" timed out after 3s") {
				t.Fatalf("error = %v, want one wrapping agent.ErrTimeout that says how long the turn ran", err)
			}
			if pgid <= 0 {
				t.Fatalf("Started got pgid %d", pgid)
			}
			proctest.WaitGone(t, proctest.WaitPID(t, filepath.Join(turn.HarnessDir, "child.pid")))
			if proc.GroupAlive(pgid) {
				t.Errorf("process group %d alive after the timeout", pgid)
			}
		})
		t.Run(name+"/cancel", func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "hang\n")
			pidfile := filepath.Join(turn.HarnessDir, "child.pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go cancelWhenExists(pidfile, cancel)
			var pgid int
			turn.Started = func(p int) { pgid = p }
			_, err := backend(t).RunTurn(ctx, turn)
			if !errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrTimeout) {
				t.Fatalf("error = %v, want one wrapping context.Canceled and not ErrTimeout", err)
			}
			proctest.WaitGone(t, proctest.WaitPID(t, pidfile))
			if proc.GroupAlive(pgid) {
				t.Errorf("process group %d alive after cancel", pgid)
			}
		})
	}
}
