package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/internal/proc"
)

// codexMaxEventLine bounds one JSONL event line the codex backend decodes.
// Longer lines (a command's huge output inside an item event) are skipped
// without being held in memory; the events grub needs are short.
const codexMaxEventLine = 16 << 20

// codexCaptureBytes is how much of codex's standard output and standard
// error proc keeps: events are parsed as they stream, so the captured copy
// only serves error messages.
const codexCaptureBytes = 1 << 20

// CodexConfig configures the codex backend.
type CodexConfig struct {
	// Bin is the Codex CLI program: a name looked up in PATH, or a path.
	// Empty means "codex".
	Bin string
	// Model, if set, is passed as --model.
	Model string
	// ExtraArgs are added after grub's own flags, before the "-" that
	// makes codex read the prompt from its standard input.
	ExtraArgs []string
	// Wrap, when set, puts a sandbox launcher in front of the program
	// (see proc.Spec.Wrap).
	Wrap func(argv []string) []string
	// StallTimeout is how long the program may go on reporting errors
	// without progress before the turn fails (grub --stall-timeout); zero
	// means the backend's default.
	StallTimeout time.Duration
}

// Codex is the `codex` backend: it runs the Codex CLI non-interactively,
// once per turn:
//
//	codex exec --json -c features.goals=false --sandbox workspace-write \
//	    --skip-git-repo-check [--model M] [extra args…] -
//
// with the prompt on its standard input (the "-" prompt argument tells
// codex exec to read it from there), the workspace as its working directory
// and the GRUB_* variables of the command backend in its environment. It
// runs in its own process group, which is killed when the turn times out
// or is cancelled, and whatever it leaves running is killed when it exits.
//
// The flags, and why:
//   - exec runs one session without the interactive UI; codex exec never
//     asks for approvals.
//   - --json prints its events to standard output as JSON lines.
//   - -c features.goals=false turns off Codex's own goal tracking: grub's
//     harness carries the task's goals.
//   - --sandbox workspace-write lets it edit files in the workspace and run
//     commands, sandboxed to the workspace (the default, read-only, cannot
//     do the work; --full-auto is its deprecated alias; danger-full-access
//     is left to ExtraArgs).
//   - --skip-git-repo-check lets it run in a workspace that is not a git
//     repository, which grub allows.
//
// The events map to the Result as follows: FinalMessage is the text of the
// last completed "agent_message" item; Usage sums the usage of every
// "turn.completed" event: InputTokens is input_tokens, which already
// includes the cached part (Codex counts tokens used as input - cached +
// output), CachedInputTokens is cached_input_tokens, OutputTokens is
// output_tokens, and Requests is the number of completed turns (at least
// 1). Token budgets (Turn.TokenBudgetLeft) cannot stop Codex mid-turn; the
// usage is counted once the turn ends.
//
// "turn.completed" and "turn.failed" decide the outcome. A top-level
// "error" event alone does not: Codex also reports a dropped stream it is
// retrying ("Reconnecting... 1/5") that way, so an error event counts only
// when no turn completed. A failed turn, a non-zero exit, or output with
// no completed turn is an error quoting Codex's message and the end of its
// standard error; one whose message speaks of a usage limit, rate limit or
// quota wraps ErrUsageLimited.
type Codex struct {
	cfg CodexConfig
}

// NewCodex returns the codex backend.
func NewCodex(cfg CodexConfig) *Codex {
	return &Codex{cfg: cfg}
}

// args returns the arguments after the program name.
func (c *Codex) args() []string {
	args := []string{
		"exec",
		"--json",
		"-c", "features.goals=false",
		"--sandbox", "workspace-write",
		"--skip-git-repo-check",
	}
	if c.cfg.Model != "" {
		args = append(args, "--model", c.cfg.Model)
	}
	args = append(args, c.cfg.ExtraArgs...)
	return append(args, "-")
}

// RunTurn runs codex exec once for t; see Codex.
//
// It returns an error wrapping ErrTimeout when t.Timeout expired and one
// wrapping ctx.Err() when ctx was cancelled. The Result carries the last
// agent message and the usage seen, whatever the error.
func (c *Codex) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	bin, err := lookupAgentBin(c.cfg.Bin, "codex", "the Codex CLI")
	if err != nil {
		return agent.Result{}, err
	}
	events := &codexEvents{}
	res, err := runProgram(ctx, t, programSpec{
		Args:      append([]string{bin}, c.args()...),
		Stdout:    events,
		MaxOutput: codexCaptureBytes,
		Wrap:      c.cfg.Wrap,
	})
	if err != nil {
		return agent.Result{}, fmt.Errorf("codex: %w", err)
	}
	o := events.outcome()
	out := agent.Result{FinalMessage: o.Final, Usage: o.Usage}

	if err := interruptedError(ctx, "codex", res, t.Timeout); err != nil {
		return out, err
	}
	stderr := proc.TailString(res.Stderr, stderrTailBytes)
	exited := ""
	if res.ExitCode != 0 {
		exited = fmt.Sprintf("; it %s; %s", exitDescription(res), stderrTail(res))
	}
	switch {
	case o.Failure != "":
		if isUsageLimitMessage(o.Failure) {
			return out, fmt.Errorf("codex: %w: %s", agent.ErrUsageLimited, o.Failure)
		}
		return out, fmt.Errorf("codex turn failed: %s%s", o.Failure, exited)
	case res.ExitCode != 0:
		if isUsageLimitMessage(stderr) {
			return out, fmt.Errorf("codex: %w: it %s; %s", agent.ErrUsageLimited, exitDescription(res), stderrTail(res))
		}
		return out, fmt.Errorf("codex %s; %s", exitDescription(res), stderrTail(res))
	case !o.Completed:
		msg := "printed no turn.completed event"
		if o.Malformed != nil {
			msg += " (" + o.Malformed.Error() + ")"
		}
		return out, fmt.Errorf("codex %s: is the codex program the Codex CLI, run with --json? start of its standard output: %s; %s",
			msg, outputHead(res.Stdout), stderrTail(res))
	}
	return out, nil
}

// codexOutcome is what a codex exec --json event stream says about a turn.
type codexOutcome struct {
	// Final is the text of the last completed agent_message item.
	Final string
	// Usage sums the turn.completed events' usage.
	Usage agent.Usage
	// Completed reports that at least one turn.completed event came.
	Completed bool
	// Failure is why the turn failed: a turn.failed event's message, or,
	// when no turn completed, the last error event's message. Empty when
	// nothing failed.
	Failure string
	// Malformed names the first line that was not a JSON event, if any.
	Malformed error
}

// codexEvent is one line of codex exec --json output, with only the fields
// grub reads. Unknown event and item types are ignored.
type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"` // "error"
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"` // "turn.failed"
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"` // "turn.completed"
	Item *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"` // "item.completed"
}

// codexEvents parses codex exec --json output as it is written to it, one
// line at a time, keeping only what codexOutcome needs, so that a long
// turn's output need not fit in memory. It is written by one goroutine and
// read once the writing is over.
type codexEvents struct {
	partial  []byte // the current line so far
	skipping bool   // the current line is over codexMaxEventLine
	line     int    // lines seen

	final      string
	usage      agent.Usage
	completed  int
	failed     bool
	failMsg    string
	lastErrMsg string
	malformed  error
}

// Write implements io.Writer; it never fails.
func (p *codexEvents) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !p.skipping {
			if len(p.partial)+len(chunk) > codexMaxEventLine {
				p.skipping = true
				p.partial = p.partial[:0]
			} else {
				p.partial = append(p.partial, chunk...)
			}
		}
		if i < 0 {
			break
		}
		p.endLine()
		b = b[i+1:]
	}
	return n, nil
}

// endLine handles the line collected so far.
func (p *codexEvents) endLine() {
	p.line++
	if !p.skipping {
		p.handle(p.partial)
	}
	p.partial = p.partial[:0]
	p.skipping = false
}

// handle applies one event line.
func (p *codexEvents) handle(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var e codexEvent
	err := json.Unmarshal(line, &e)
	if err == nil && e.Type == "" {
		err = errors.New(`no "type" field`)
	}
	if err == nil && e.Usage != nil && (e.Usage.InputTokens < 0 || e.Usage.CachedInputTokens < 0 || e.Usage.OutputTokens < 0) {
		err = errors.New("negative token count")
	}
	if err != nil {
		if p.malformed == nil {
			p.malformed = fmt.Errorf("standard output line %d is not a JSON event: %v: %s", p.line, err, outputHead(line))
		}
		return
	}
	switch e.Type {
	case "item.completed":
		if e.Item != nil && e.Item.Type == "agent_message" {
			p.final = e.Item.Text
		}
	case "turn.completed":
		p.completed++
		if e.Usage != nil {
			p.usage.InputTokens = addTokens(p.usage.InputTokens, e.Usage.InputTokens)
			p.usage.CachedInputTokens = addTokens(p.usage.CachedInputTokens, e.Usage.CachedInputTokens)
			p.usage.OutputTokens = addTokens(p.usage.OutputTokens, e.Usage.OutputTokens)
		}
	case "turn.failed":
		p.failed = true
		if e.Error != nil && strings.TrimSpace(e.Error.Message) != "" {
			p.failMsg = strings.TrimSpace(e.Error.Message)
		}
	case "error":
		if s := strings.TrimSpace(e.Message); s != "" {
			p.lastErrMsg = s
		}
	}
}

// outcome finishes a last line without a newline and says what the stream
// amounted to.
func (p *codexEvents) outcome() codexOutcome {
	if len(p.partial) > 0 || p.skipping {
		p.endLine()
	}
	o := codexOutcome{
		Final:     p.final,
		Usage:     p.usage,
		Completed: p.completed > 0,
		Malformed: p.malformed,
	}
	o.Usage.Requests = int64(max(p.completed, 1))
	switch {
	case p.failed:
		o.Failure = p.failMsg
		if o.Failure == "" {
			o.Failure = p.lastErrMsg
		}
		if o.Failure == "" {
			o.Failure = "turn.failed event without a message"
		}
	case p.completed == 0 && p.lastErrMsg != "":
		o.Failure = p.lastErrMsg
	}
	return o
}

// parseCodexEvents parses a whole codex exec --json output.
func parseCodexEvents(stdout []byte) codexOutcome {
	p := &codexEvents{}
	_, _ = p.Write(stdout)
	return p.outcome()
}
