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

// CodexConfig configures the codex backend.
type CodexConfig struct {
	// Bin is the Codex CLI program: a name looked up in PATH, or a path.
	// Empty means "codex".
	Bin string
	// Model, if set, is passed as --model.
	Model string
	// ExtraArgs (--agent-args) are appended after grub's own flags, before
	// the "-" that makes codex read the prompt from its standard input:
	// for example "-c model_provider=local" or "--sandbox
	// danger-full-access" (codex takes the last of a repeated flag).
	ExtraArgs []string
	// StallTimeout is how long Codex may go on printing error events
	// ("Reconnecting... waiting for network") with no other event before
	// the turn fails quoting the last of them; zero means
	// DefaultStallTimeout.
	StallTimeout time.Duration
	// Wrap, when set, puts a sandbox launcher in front of the program
	// (see proc.Spec.Wrap).
	Wrap proc.Wrapper
	// ExtraEnv is added to the program's environment (the network
	// proxy's variables, when the sandbox has an allowlist).
	ExtraEnv []string
	// Now stamps transcript entries and times stalls; nil means time.Now.
	Now func() time.Time
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
// The flags grub passes by default, and why:
//   - exec runs one session without the interactive UI; codex exec never
//     asks for approvals.
//   - --json prints its events to standard output as JSON lines, which
//     grub reads as they arrive.
//   - -c features.goals=false turns off Codex's own goal tracking: grub's
//     harness carries the task's goals.
//   - --sandbox workspace-write lets it edit files in the workspace and run
//     commands, sandboxed to the workspace (the default, read-only, cannot
//     do the work; --full-auto is its deprecated alias; danger-full-access
//     is left to ExtraArgs).
//   - --skip-git-repo-check lets it run in a workspace that is not a git
//     repository, which grub allows.
//
// The events map to the turn as follows (see codexEvents). Items are
// written to the transcript (Turn.TranscriptFile) as they start and end:
// a command_execution, file_change, mcp_tool_call or web_search item as a
// "tool_call" entry (when it starts) and a "tool_result" entry (when it
// completes), an agent_message as a "message" entry, a turn.completed's
// usage as a "usage" entry and an error event as a "notice" entry;
// Turn.Activity hears of commands ("shell: go test ./..."), file changes
// ("editing main.go"), tool calls, reasoning ("thinking") and plans.
//
// FinalMessage is the text of the last completed agent_message item;
// Usage sums the usage of every turn.completed event: InputTokens is
// input_tokens, which already includes the cached part (Codex counts
// tokens used as input - cached + output), CachedInputTokens is
// cached_input_tokens, OutputTokens is output_tokens. Requests stays 0:
// the events do not reveal model requests (a Codex turn makes many).
// Codex reports no cost. The usage reported before a timeout or a cancel
// is kept. Token budgets (Turn.TokenBudgetLeft) cannot stop Codex
// mid-turn.
//
// No turn context is added (see turncontext.go): Codex reads the
// workspace's AGENTS.md itself and keeps its own working directory.
//
// "turn.completed" and "turn.failed" decide the outcome. A top-level
// "error" event alone does not: Codex also reports a dropped stream it is
// retrying ("Reconnecting... 1/5") that way, so an error event counts only
// when no turn completed. But error events that go on with no other event
// for StallTimeout (a provider it cannot reach: "Reconnecting... waiting
// for network", forever) end the turn with an error quoting the last, long
// before the turn timeout; a turn that times out quotes the last error
// too. A failed turn, a non-zero exit, or output with no completed turn
// is an error quoting Codex's message and the end of its standard error;
// one whose message speaks of a usage limit, rate limit or quota wraps
// ErrUsageLimited.
type Codex struct {
	cfg CodexConfig
}

// NewCodex returns the codex backend.
func NewCodex(cfg CodexConfig) *Codex {
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
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
	tr, err := openTranscript(t.TranscriptFile, c.cfg.Now)
	if err != nil {
		return agent.Result{}, fmt.Errorf("codex: %w", err)
	}
	stall := newStallWatch(c.cfg.StallTimeout, c.cfg.Now)
	events := newCodexEvents(tr, t.Workspace, t.Activity, stall)
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go stall.watch(runCtx, cancel)
	res, err := runProgram(runCtx, t, programSpec{
		Args:      append([]string{bin}, c.args()...),
		Stdout:    events,
		MaxOutput: programCaptureBytes,
		Wrap:      c.cfg.Wrap,
		ExtraEnv:  c.cfg.ExtraEnv,
	})
	if err != nil {
		_ = tr.close()
		return agent.Result{}, fmt.Errorf("codex: %w", err)
	}
	o := events.outcome()
	out, err := codexOutcomeError(ctx, runCtx, t.Timeout, o, res, stall)
	return finishTranscript(tr, events.transcriptErr(), "codex", out, err)
}

// codexOutcomeError turns what the events said and how the program ended
// into the turn's result and error.
func codexOutcomeError(ctx, runCtx context.Context, timeout time.Duration, o codexOutcome, res proc.Result, stall *stallWatch) (agent.Result, error) {
	out := agent.Result{FinalMessage: o.Final, Usage: o.Usage}
	if err := stalledError(ctx, runCtx, "codex", res, stall); err != nil {
		return out, err
	}
	if err := interruptedError(ctx, "codex", res, timeout, stall.lastError()); err != nil {
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
// grub reads: thread.started, turn.started, item.started, item.updated,
// item.completed, turn.completed, turn.failed and error. Unknown event and
// item types are ignored.
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
	Item *codexItem `json:"item"` // "item.*"
}

// codexItem is the item of an item.* event. Fields that vary in shape
// between versions are kept raw.
type codexItem struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// agent_message, reasoning
	Text string `json:"text"`
	// command_execution
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         json.RawMessage `json:"exit_code"`
	Status           string          `json:"status"`
	// file_change
	Changes []struct {
		Path string          `json:"path"`
		Kind json.RawMessage `json:"kind"`
	} `json:"changes"`
	// mcp_tool_call
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"`
	// web_search
	Query string `json:"query"`
	// todo_list
	Items []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

// codexEvents reads codex exec --json output as it is written to it, one
// line at a time: it keeps what codexOutcome needs (so that a long turn's
// output need not fit in memory), writes the transcript, reports the
// activity and feeds the stall watch. proc writes it from one goroutine.
type codexEvents struct {
	eventStream
	called map[string]bool // items whose tool_call entry is written

	final      string
	usage      agent.Usage
	completed  int
	failed     bool
	failMsg    string
	lastErrMsg string
	malformed  error
}

func newCodexEvents(tr *transcript, workspace string, tell func(string), stall *stallWatch) *codexEvents {
	p := &codexEvents{called: map[string]bool{}}
	p.eventStream = newEventStream(tr, workspace, tell, stall, p.handle)
	return p
}

// handle applies one event line.
func (p *codexEvents) handle(line []byte, n int) {
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
			p.malformed = fmt.Errorf("standard output line %d is not a JSON event: %v: %s", n, err, outputHead(line))
		}
		return
	}
	if e.Type == "error" {
		msg := strings.TrimSpace(e.Message)
		if msg != "" {
			p.lastErrMsg = msg
		}
		p.stall.errorEvent(msg)
		p.write(TranscriptEntry{Type: EntryNotice, Error: msg}, false)
		return
	}
	p.stall.progress()
	switch e.Type {
	case "turn.started":
		p.act.set("thinking")
	case "item.started", "item.updated":
		if e.Item != nil {
			p.itemStarted(*e.Item)
		}
	case "item.completed":
		if e.Item != nil {
			p.itemCompleted(*e.Item)
		}
	case "turn.completed":
		p.completed++
		if e.Usage != nil {
			p.usage.InputTokens = addTokens(p.usage.InputTokens, e.Usage.InputTokens)
			p.usage.CachedInputTokens = addTokens(p.usage.CachedInputTokens, e.Usage.CachedInputTokens)
			p.usage.OutputTokens = addTokens(p.usage.OutputTokens, e.Usage.OutputTokens)
			p.write(TranscriptEntry{Type: EntryUsage, InputTokens: e.Usage.InputTokens,
				CachedInputTokens: e.Usage.CachedInputTokens, OutputTokens: e.Usage.OutputTokens}, false)
		}
	case "turn.failed":
		p.failed = true
		if e.Error != nil && strings.TrimSpace(e.Error.Message) != "" {
			p.failMsg = strings.TrimSpace(e.Error.Message)
		}
	}
}

// codexToolCall is how an item that acts is written as a tool call, and
// what the activity says of it; ok is false for items that do not act.
func codexToolCall(it codexItem, workspace string) (name, args, doing string, ok bool) {
	switch it.Type {
	case "command_execution":
		b, _ := json.Marshal(map[string]string{"command": it.Command})
		return "shell", string(b), "shell: " + oneLine(unwrapShell(it.Command)), true
	case "file_change":
		b, _ := json.Marshal(it.Changes)
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, relPath(workspace, c.Path))
		}
		return "file_change", string(b), "editing " + oneLine(strings.Join(paths, ", ")), true
	case "mcp_tool_call":
		name := it.Server + "." + it.Tool
		return name, string(it.Arguments), "tool: " + oneLine(name), true
	case "web_search":
		b, _ := json.Marshal(map[string]string{"query": it.Query})
		return "web_search", string(b), "searching the web: " + oneLine(it.Query), true
	}
	return "", "", "", false
}

// itemStarted records an item that began (or changed).
func (p *codexEvents) itemStarted(it codexItem) {
	switch it.Type {
	case "reasoning":
		p.act.set("thinking")
	case "todo_list":
		p.act.set("planning")
	}
	name, args, doing, ok := codexToolCall(it, p.workspace)
	if !ok {
		return
	}
	p.act.set(doing)
	if !p.called[it.ID] {
		p.called[it.ID] = true
		p.write(TranscriptEntry{Type: EntryToolCall, ID: it.ID, Name: name, Arguments: args}, true)
	}
}

// itemCompleted records an item that ended.
func (p *codexEvents) itemCompleted(it codexItem) {
	switch it.Type {
	case "agent_message":
		p.final = it.Text
		p.write(TranscriptEntry{Type: EntryMessage, Text: it.Text}, false)
		p.act.set("writing")
		return
	case "reasoning":
		p.act.set("thinking")
		return
	case "todo_list":
		p.act.set("planning")
		return
	}
	name, args, _, ok := codexToolCall(it, p.workspace)
	if !ok {
		return
	}
	if !p.called[it.ID] { // a tool call is written before its result, even if its start was not seen
		p.write(TranscriptEntry{Type: EntryToolCall, ID: it.ID, Name: name, Arguments: args}, true)
	}
	delete(p.called, it.ID)
	text, isErr := it.AggregatedOutput, it.Status == "failed" || it.Status == "declined"
	switch it.Type {
	case "command_execution":
		if code := strings.TrimSpace(string(it.ExitCode)); code != "" && code != "null" && code != "0" {
			isErr = true
		}
	case "file_change", "web_search":
		text = it.Status
	case "mcp_tool_call":
		text = rawText(it.Result)
		if msg := rawText(it.Error); msg != "" {
			text, isErr = msg, true
		}
	}
	p.write(TranscriptEntry{Type: EntryToolResult, ID: it.ID, Name: name, IsError: isErr, Bytes: len(text), Text: text}, false)
	p.act.set("thinking")
}

// unwrapShell shows the command inside Codex's `bash -lc '…'` wrapper.
func unwrapShell(cmd string) string {
	for _, prefix := range []string{"bash -lc ", "/bin/bash -lc ", "sh -c ", "/bin/sh -c ", "zsh -lc "} {
		rest, ok := strings.CutPrefix(cmd, prefix)
		if !ok {
			continue
		}
		if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' && !strings.Contains(rest[1:len(rest)-1], "'") {
			return rest[1 : len(rest)-1]
		}
		return rest
	}
	return cmd
}

// outcome finishes a last line without a newline and says what the stream
// amounted to.
func (p *codexEvents) outcome() codexOutcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines.flush()
	o := codexOutcome{
		Final:     p.final,
		Usage:     p.usage,
		Completed: p.completed > 0,
		Malformed: p.malformed,
	}
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
	p := newCodexEvents(&transcript{}, "", nil, newStallWatch(0, nil))
	_, _ = p.Write(stdout)
	return p.outcome()
}
