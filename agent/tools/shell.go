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
	wrap    proc.Wrapper
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
// ctx kills the command's process group and returns ctx's error. An output
// over the inline limit is streamed to a spill file as it arrives (see
// shellSpill), so memory stays bounded whatever the command prints.
func (t *ShellTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	call := newShellSpill(t.sp)
	prefix, res, err := t.run(ctx, args, call)
	if err != nil {
		call.cleanup(false)
		return finish(t.sp, "", err)
	}
	if call.spilled() {
		return call.assemble(prefix, res, res.TimedOut)
	}
	text := prefix + formatShell(res, call)
	if res.TimedOut {
		return finish(t.sp, "", mistakef("%s", text))
	}
	return finish(t.sp, text, nil)
}

// run runs the command, teeing its output to call, and returns the line
// that opens the result (the exit code, or the timeout note) with what
// proc observed.
func (t *ShellTool) run(ctx context.Context, args json.RawMessage, call *shellSpill) (string, proc.Result, error) {
	var p ShellParams
	if err := decodeArgs(args, &p); err != nil {
		return "", proc.Result{}, err
	}
	if strings.TrimSpace(p.Command) == "" {
		return "", proc.Result{}, mistakef("command is empty; give the command line to run")
	}
	timeout := t.timeout
	switch {
	case p.TimeoutSeconds < 0:
		return "", proc.Result{}, mistakef("timeout_seconds is %d; give a positive number of seconds, or omit it for the default of %s", p.TimeoutSeconds, FormatDuration(t.timeout))
	case p.TimeoutSeconds > int(MaxShellTimeout/time.Second):
		return "", proc.Result{}, mistakef("timeout_seconds is %d, over the maximum of %d; split the work into shorter commands", p.TimeoutSeconds, int(MaxShellTimeout/time.Second))
	case p.TimeoutSeconds > 0:
		timeout = time.Duration(p.TimeoutSeconds) * time.Second
	}
	if err := t.ws.check(); err != nil {
		return "", proc.Result{}, err
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
		MaxOutput: call.keep(),
		Started:   t.started,
		Stdout:    call.stdout,
		Stderr:    call.stderr,
	})
	if err != nil {
		return "", res, fmt.Errorf("tools: shell: %w", err)
	}
	if res.Cancelled {
		if ctx.Err() != nil {
			return "", res, ctx.Err()
		}
		return "", res, context.Canceled
	}
	if !res.TimedOut && res.Pgid > 0 {
		// The command is done; what it left in the background goes too.
		if err := proc.KillGroup(res.Pgid); err != nil {
			return "", res, fmt.Errorf("tools: shell: end the processes the command left running: %w", err)
		}
	}
	if call.err != nil {
		return "", res, fmt.Errorf("tools: shell: %w", call.err)
	}
	if res.TimedOut {
		return fmt.Sprintf("command timed out after %s; it was killed with every process it started. "+
			"Give a larger timeout_seconds, or run less at once.\n", FormatDuration(timeout)), res, nil
	}
	return fmt.Sprintf("exit code %d%s\n", res.ExitCode, signalNote(res)), res, nil
}

// signalNote names the signal that ended the command, if any.
func signalNote(res proc.Result) string {
	if res.Signal == "" {
		return ""
	}
	return " (killed by signal: " + res.Signal + ")"
}

// formatShell renders a command's output kept in memory for the model.
// A stream cut in the middle (only when the spill cap kept it from the
// spill file) says where and why.
func formatShell(res proc.Result, call *shellSpill) string {
	var b strings.Builder
	section := func(st *spillStream, data []byte, truncated bool, cutAt int) {
		if len(data) == 0 && !truncated {
			return
		}
		fmt.Fprintf(&b, "--- %s ---\n", st.name)
		if truncated {
			dropped := st.total - int64(len(data))
			b.WriteString(strings.ToValidUTF8(string(data[:cutAt]), "\uFFFD"))
			if cutAt > 0 && data[cutAt-1] != '\n' {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "[... %d bytes of %s dropped: %s ...]\n", dropped, st.name, call.sp.budget.capNote())
			data = data[cutAt:]
		}
		b.WriteString(strings.ToValidUTF8(string(data), "\uFFFD"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	section(call.stdout, res.Stdout, res.StdoutTruncated, res.StdoutCutAt)
	section(call.stderr, res.Stderr, res.StderrTruncated, res.StderrCutAt)
	if b.Len() == 0 {
		return "(no output)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
