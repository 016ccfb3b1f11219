package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/internal/proc"
)

// UsageLinePrefix starts a line a command agent may write to its standard
// error to report the tokens it used:
//
//	GRUB_USAGE {"input":1200,"cached":800,"output":300,"requests":4}
//
// "input" counts all input tokens, "cached" the part of them served from a
// provider cache, "output" the output tokens, and the optional "requests"
// the model requests made; a missing field is zero. Every such line of the
// turn is added up. This lets a wrapper script around a
// real agent report what it spent, so that token budgets apply to it; a
// program that writes no such line is counted as zero tokens.
const UsageLinePrefix = "GRUB_USAGE "

// stderrTailBytes is how much of a failed command's standard error its
// error message quotes.
const stderrTailBytes = 2000

// Command is the `command` backend: it runs any program through `sh -c` in
// the workspace, with the prompt on its standard input, and takes its
// standard output as the turn's final message.
//
// The program's environment adds GRUB_TASK_ID, GRUB_ITERATION, GRUB_PHASE,
// GRUB_HARNESS_DIR (absolute) and GRUB_PROMPT_FILE (a file holding the same
// prompt, written by the caller) to grub's own. It runs in its own process
// group, which is killed when the turn times out or is cancelled.
//
// While it runs, each line it writes to standard error (usage lines
// aside) is what Turn.Activity hears.
//
// Tokens and requests are zero (requests: not revealed) unless the program
// reports them with UsageLinePrefix lines on its standard error;
// Usage.Estimated is always false, and it reports no cost.
type Command struct {
	// Cmd is the shell command line, as given to --agent-cmd.
	Cmd string
	// ExtraEnv is added to the environment before the GRUB_* variables,
	// which win over it.
	ExtraEnv []string
	// Wrap, when set, puts a sandbox launcher in front of `sh -c Cmd`
	// (see proc.Spec.Wrap). The program keeps grub's environment: an
	// agent needs its keys.
	Wrap proc.Wrapper
}

// NewCommand returns a command backend running cmd.
func NewCommand(cmd string) *Command {
	return &Command{Cmd: cmd}
}

// RunTurn runs the program once for t.
//
// It returns an error wrapping ErrTimeout when t.Timeout expired, one
// wrapping ctx.Err() when ctx was cancelled (in both cases the process group
// has been killed), an error naming the exit code and quoting the end of
// standard error when the program exited non-zero, and an error for a
// malformed usage line. The Result carries the output and usage seen so far
// even when the error is non-nil.
func (c *Command) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	if strings.TrimSpace(c.Cmd) == "" {
		return agent.Result{}, errors.New("agent command: no command given: set --agent-cmd to the program to run")
	}
	spec := programSpec{Command: c.Cmd, ExtraEnv: c.ExtraEnv, Wrap: c.Wrap}
	if t.Activity != nil {
		spec.Stderr = &lineActivity{act: activity{tell: t.Activity}}
	}
	res, err := runProgram(ctx, t, spec)
	if err != nil {
		return agent.Result{}, fmt.Errorf("agent command: %w", err)
	}

	usage, usageErr := parseUsageLines(res.Stderr)
	out := agent.Result{FinalMessage: stdoutMessage(res), Usage: usage}
	if res.StdoutTruncated {
		out.OutputCut = res.StdoutBytes - int64(len(res.Stdout))
	}

	if err := interruptedError(ctx, "agent command", res, t.Timeout, ""); err != nil {
		return out, err
	}
	switch {
	case res.ExitCode != 0:
		return out, fmt.Errorf("agent command %s %s; %s", quoteShort(c.Cmd), exitDescription(res), stderrTail(res))
	case usageErr != nil:
		return out, fmt.Errorf("agent command %s: %w", quoteShort(c.Cmd), usageErr)
	}
	return out, nil
}

// stdoutMessage is the program's standard output; when it was longer than
// grub keeps, its start and its end (where the decision is) with a line
// saying how much was cut between them.
func stdoutMessage(res proc.Result) string {
	if !res.StdoutTruncated {
		return string(res.Stdout)
	}
	cut := res.StdoutBytes - int64(len(res.Stdout))
	return string(res.Stdout[:res.StdoutCutAt]) +
		fmt.Sprintf("\n[grub: %d bytes of output cut here]\n", cut) +
		string(res.Stdout[res.StdoutCutAt:])
}

// usageReport is the JSON of a UsageLinePrefix line.
type usageReport struct {
	Input  int64 `json:"input"`
	Cached int64 `json:"cached"`
	Output int64 `json:"output"`
	// Requests is optional: 0 says nothing.
	Requests int64 `json:"requests"`
}

// parseUsageLines adds up the UsageLinePrefix lines in stderr. A malformed
// line is reported (naming its line number) and the others still count.
func parseUsageLines(stderr []byte) (agent.Usage, error) {
	var u agent.Usage
	var errs []error
	n := 0
	for raw := range bytes.Lines(stderr) {
		n++
		if !bytes.HasPrefix(raw, []byte(UsageLinePrefix)) {
			continue
		}
		line := strings.TrimRight(string(raw), "\r\n")
		payload, ok := strings.CutPrefix(line, UsageLinePrefix)
		if !ok {
			continue
		}
		var r usageReport
		dec := json.NewDecoder(strings.NewReader(payload))
		dec.DisallowUnknownFields()
		err := dec.Decode(&r)
		if err == nil && dec.More() {
			err = errors.New("text after the JSON object")
		}
		if err == nil && (r.Input < 0 || r.Cached < 0 || r.Output < 0 || r.Requests < 0) {
			err = errors.New("negative token or request count")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("stderr line %d: bad usage report %q: %v; write %s{\"input\":N,\"cached\":N,\"output\":N} (and optionally \"requests\":N) with non-negative integers",
				n, line, err, UsageLinePrefix))
			continue
		}
		u.InputTokens = addTokens(u.InputTokens, r.Input)
		u.CachedInputTokens = addTokens(u.CachedInputTokens, r.Cached)
		u.OutputTokens = addTokens(u.OutputTokens, r.Output)
		u.Requests = addTokens(u.Requests, r.Requests)
	}
	return u, errors.Join(errs...)
}

// stderrTail quotes the end of a finished command's standard error, or of
// its combined output when standard error was too long to keep whole.
func stderrTail(res proc.Result) string {
	tail := proc.TailString(res.Stderr, stderrTailBytes)
	if res.StderrTruncated {
		tail = res.Tail
	}
	tail = strings.TrimRight(tail, "\n")
	if tail == "" {
		return "its standard error was empty"
	}
	return "end of its standard error:\n" + tail
}

// quoteShort quotes cmd for an error message, shortened if long.
func quoteShort(cmd string) string {
	const limit = 80
	if len(cmd) > limit {
		cmd = cmd[:limit] + "…"
	}
	return strconv.Quote(cmd)
}
