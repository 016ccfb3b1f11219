package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/internal/proc"
)

func TestShell(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string
	}{
		{name: "exit code and both streams", args: map[string]any{"command": "echo out; echo err >&2; exit 3"},
			want: []string{"exit code 3\n--- stdout ---\nout\n--- stderr ---\nerr"}},
		{name: "runs in the workspace root", args: map[string]any{"command": "cat marker.txt"},
			want: []string{"exit code 0\n--- stdout ---\nin the workspace"}},
		{name: "stdin is closed", args: map[string]any{"command": "cat; echo done"},
			want: []string{"exit code 0\n--- stdout ---\ndone"}},
		{name: "no output", args: map[string]any{"command": "true"}, want: []string{"exit code 0\n(no output)"}},
		{name: "killed by a signal", args: map[string]any{"command": "kill -SEGV $$"}, want: []string{"exit code 139 (killed by signal: segmentation fault)"}},
		{name: "empty command", args: map[string]any{"command": "  "}, isError: true, want: []string{"command is empty"}},
		{name: "timeout over the maximum", args: map[string]any{"command": "true", "timeout_seconds": 7200},
			isError: true, want: []string{"over the maximum of 1800"}},
		{name: "negative timeout", args: map[string]any{"command": "true", "timeout_seconds": -1},
			isError: true, want: []string{"give a positive number"}},
		{name: "timeout", args: map[string]any{"command": "echo started; sleep 30", "timeout_seconds": 1},
			isError: true, want: []string{"command timed out after 1s", "--- stdout ---\nstarted"}},
	}
	e := newEnv(t, nil)
	e.write("marker.txt", "in the workspace\n")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.run("shell", tc.args)
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v, want %v: %q", res.IsError, tc.isError, res.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text %q lacks %q", res.Text, w)
				}
			}
		})
	}
}

// The configured default timeout applies when the call names none.
func TestShellDefaultTimeout(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ShellTimeout = 300 * time.Millisecond })
	res := e.run("shell", map[string]any{"command": "sleep 30"})
	if !res.IsError || !strings.HasPrefix(res.Text, "command timed out after 300ms") {
		t.Errorf("got %+v, want a timeout after 300ms", res)
	}
	if !strings.Contains(e.tools["shell"].Description(), "The default timeout is 300ms") {
		t.Errorf("the description does not quote the configured timeout:\n%s", e.tools["shell"].Description())
	}
}

// TestShellEnvAndWrap: the shell starts from Config.Env when it is set (a
// scrubbed environment: grub's key is not there) and runs through
// Config.Wrap.
func TestShellEnvAndWrap(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	ws := t.TempDir()
	cfg := DefaultConfig(ws, filepath.Join(ws, ".grub", "t", "spill"))
	cfg.Env = []string{"PATH=" + os.Getenv("PATH"), "KEPT=1"}
	cfg.Wrap = func(argv []string) proc.Launch {
		return proc.Launch{Argv: append([]string{"env", "WRAPPED=yes"}, argv...)}
	}
	res, err := NewShellTool(cfg).Run(context.Background(), json.RawMessage(`{"command":"echo key=${OPENAI_API_KEY:-none} kept=$KEPT wrapped=$WRAPPED"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "key=none kept=1 wrapped=yes") {
		t.Errorf("shell output %q", res.Text)
	}
}
