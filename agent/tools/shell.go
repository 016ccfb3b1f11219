package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/internal/proc"
)

//go:embed shell.md
var shellDescription string

// ShellParams are the arguments of the shell tool.
type ShellParams struct {
	Command        string `json:"command" description:"The shell command line to run with sh -c in the workspace root."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" description:"Seconds before the command and everything it started are killed; omit for the default named in the tool description."`
}

// shellEnv is added to the environment of every command so that nothing
// waits for a terminal that is not there.
var shellEnv = []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"}

// ShellTool runs shell commands in the workspace root.
type ShellTool struct {
	base
	timeout time.Duration
	started func(pgid int)
	env     []string
	wrap    func(argv []string) []string
}

// NewShellTool returns the shell tool: `sh -c` in cfg.Workspace, in its own
// process group, with stdin closed and cfg.ShellTimeout unless the call
// asks for another timeout (up to MaxShellTimeout).
func NewShellTool(cfg Config) Tool {
	cfg = cfg.withDefaults()
	return &ShellTool{base: newBase("shell", shellDescription, ShellParams{}, cfg), timeout: cfg.ShellTimeout,
		started: cfg.Started, env: cfg.Env, wrap: cfg.Wrap}
}

// Run implements Tool. A timeout is an IsError result; a cancellation of
// ctx kills the command's process group and returns ctx's error.
func (t *ShellTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

func (t *ShellTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p ShellParams
	if err := decodeArgs(args, &p); err != nil {
		return "", err
	}
	if strings.TrimSpace(p.Command) == "" {
		return "", mistakef("command is empty; give the command line to run")
	}
	timeout := t.timeout
	switch {
	case p.TimeoutSeconds < 0:
		return "", mistakef("timeout_seconds is %d; give a positive number of seconds, or omit it for the default of %s", p.TimeoutSeconds, FormatDuration(t.timeout))
	case p.TimeoutSeconds > int(MaxShellTimeout/time.Second):
		return "", mistakef("timeout_seconds is %d, over the maximum of %d; split the work into shorter commands", p.TimeoutSeconds, int(MaxShellTimeout/time.Second))
	case p.TimeoutSeconds > 0:
		timeout = time.Duration(p.TimeoutSeconds) * time.Second
	}
	if err := t.ws.check(); err != nil {
		return "", err
	}
	if t.started != nil {
		// Once the command and its leftovers are gone there is nothing to
		// end after a crash.
		defer t.started(0)
	}
	res, err := proc.Run(ctx, proc.Spec{
		Command:   p.Command,
		Dir:       t.ws.real,
		Env:       shellEnv,
		BaseEnv:   t.env,
		Wrap:      t.wrap,
		Timeout:   timeout,
		MaxOutput: ShellMaxOutput,
		Started:   t.started,
	})
	if err != nil {
		return "", fmt.Errorf("tools: shell: %w", err)
	}
	if res.Cancelled {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", context.Canceled
	}
	if !res.TimedOut && res.Pgid > 0 {
		// The command is done; what it left in the background goes too.
		if err := proc.KillGroup(res.Pgid); err != nil {
			return "", fmt.Errorf("tools: shell: end the processes the command left running: %w", err)
		}
	}
	out := formatShell(res)
	if res.TimedOut {
		return "", mistakef("command timed out after %s; it was killed with every process it started. "+
			"Give a larger timeout_seconds, or run less at once.\n%s", FormatDuration(timeout), out)
	}
	return fmt.Sprintf("exit code %d%s\n%s", res.ExitCode, signalNote(res), out), nil
}

// signalNote names the signal that ended the command, if any.
func signalNote(res proc.Result) string {
	if res.Signal == "" {
		return ""
	}
	return " (killed by signal: " + res.Signal + ")"
}

// formatShell renders a command's captured output for the model.
func formatShell(res proc.Result) string {
	var b strings.Builder
	section := func(name string, data []byte, truncated bool, total int64) {
		if len(data) == 0 && !truncated {
			return
		}
		fmt.Fprintf(&b, "--- %s ---\n", name)
		b.WriteString(strings.ToValidUTF8(string(data), "\uFFFD"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
		if truncated {
			if total > 0 {
				fmt.Fprintf(&b, "[%s truncated: %d bytes written, the first %d kept]\n", name, total, len(data))
			} else {
				fmt.Fprintf(&b, "[%s truncated: only the first %d bytes kept]\n", name, len(data))
			}
		}
	}
	section("stdout", res.Stdout, res.StdoutTruncated, res.StdoutBytes)
	section("stderr", res.Stderr, res.StderrTruncated, 0)
	if b.Len() == 0 {
		return "(no output)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
