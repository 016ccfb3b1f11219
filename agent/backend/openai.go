// The `openai` backend: grub's own tool loop over an OpenAI-compatible
// model. This file holds its configuration, the constructor, RunTurn and
// the loop that sends requests and runs tools; elide.go keeps the requests
// inside the context window, repeat.go spots a model going in circles and
// wrapup.go ends a turn whose token budget is spent.

package backend

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/agent/tools"
	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/proc"
)

// Defaults of the built-in agent.
const (
	// DefaultMaxRequests is the per-turn cap on model requests.
	DefaultMaxRequests = 64
	// DefaultContextWindow is the model's context window, in tokens.
	DefaultContextWindow = 128000
)

//go:embed system.md
var systemPrompt string

// SystemPrompt is the built-in agent's system prompt: the same bytes in
// every request of every turn, so that provider prompt caches hit.
func SystemPrompt() string { return systemPrompt }

// Completer sends one chat-completions request; *llm.Client is one.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

// OpenAIConfig configures the built-in agent.
type OpenAIConfig struct {
	// Client talks to the model.
	Client Completer
	// Tools are offered to the model in this order. Nil means the standard
	// tools (tools.All) built for each turn's workspace and harness folder
	// with tools.DefaultConfig.
	Tools []tools.Tool
	// MaxRequests caps model requests per turn; zero means
	// DefaultMaxRequests.
	MaxRequests int
	// ContextWindow is the model's context window in tokens; zero means
	// DefaultContextWindow.
	ContextWindow int
	// Now stamps transcript entries; nil means time.Now.
	Now func() time.Time
	// ShellEnv and ShellWrap configure the standard tools' shell: the
	// environment its commands start from (nil: grub's own) and the sandbox
	// launcher put in front of them (nil: none). See tools.Config.
	ShellEnv  []string
	ShellWrap proc.Wrapper
}

// OpenAI is the `openai` backend, grub's built-in agent: its own tool loop
// over an OpenAI-compatible chat-completions model.
//
// Each turn starts a fresh conversation: the embedded system prompt, the
// turn context (turncontext.go: the working directory, the project's
// AGENTS.md quoted as untrusted text, the turn number, the time and the
// token budget left) and the turn's prompt, as two user messages. The
// model is called, the tools it asks for are run in order and their
// results appended, until it answers without tool calls; that answer is
// the turn's final message. The system prompt and the tool definitions
// are the same bytes in every request of every turn; everything that
// changes goes in the user messages, and no message is rewritten once
// sent (but for the stubs below).
//
// A turn also ends:
//   - with an error after MaxRequests requests without a final answer;
//   - with an error when the same tool call gets the same result
//     RepeatLimit times;
//   - when Turn.TokenBudgetLeft is spent, checked before each request:
//     one wrap-up request (prompts.RenderWrapUp) is made, tools still
//     offered but any tool call in its reply ignored, and its text returned
//     with an error wrapping ErrBudgetSpent;
//   - with an error wrapping ErrUsageLimited when the provider's quota is
//     exhausted, ErrTimeout when Turn.Timeout expires, or the context's
//     error when ctx is cancelled (running tools get the same context);
//   - with an *agent.SetupError when no retry can help: the server refuses
//     the key (401, 403), knows neither the model nor the URL (404), or
//     still refuses connections after the retries (see llm.SetupError);
//   - with an error when a tool fails as machinery (not a model mistake)
//     or the transcript cannot be written.
//
// When a request's estimated size (one token per four bytes) exceeds 80 %
// of ContextWindow, the oldest large tool results are replaced in the
// request by a stub pointing at the transcript, newest kept; a result
// once stubbed stays stubbed for the rest of the turn, so the request
// prefix stays stable.
//
// Everything is recorded in the turn's transcript (Turn.TranscriptFile). The
// Result carries the usage and any text so far, whatever the error.
type OpenAI struct {
	cfg OpenAIConfig
}

// NewOpenAI returns the built-in agent.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = DefaultMaxRequests
	}
	if cfg.ContextWindow <= 0 {
		cfg.ContextWindow = DefaultContextWindow
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &OpenAI{cfg: cfg}
}

// Check asks the model server for its models, when the client can (see
// llm.Client.Check); see agent.Checker.
func (o *OpenAI) Check(ctx context.Context) (string, error) {
	c, ok := o.cfg.Client.(interface {
		Check(context.Context) (string, error)
	})
	if !ok {
		return "", nil
	}
	found, err := c.Check(ctx)
	if errors.As(err, new(*llm.SetupError)) {
		err = setupError(err, "")
	}
	return found, err
}

// setupError is an *llm.SetupError in err as the agent contract's, its
// cause after prefix.
func setupError(err error, prefix string) error {
	var se *llm.SetupError
	if !errors.As(err, &se) {
		return err
	}
	return &agent.SetupError{Cause: prefix + se.Cause, Fix: se.Fix}
}

// errTurnTimeout is the cause of a turn context that hit Turn.Timeout.
var errTurnTimeout = errors.New("turn timeout")

// RunTurn runs one turn; see OpenAI.
func (o *OpenAI) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	if o.cfg.Client == nil {
		return agent.Result{}, errors.New("openai agent: no model client configured")
	}
	tcfg := o.toolsConfig(t)
	toolList, byName, defs, err := o.turnTools(t, tcfg)
	if err != nil {
		return agent.Result{}, fmt.Errorf("openai agent: %w", err)
	}
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.Timeout, errTurnTimeout)
		defer cancel()
	}
	tr, err := openTranscript(t.TranscriptFile, o.cfg.Now)
	if err != nil {
		return agent.Result{}, fmt.Errorf("openai agent: %w", err)
	}
	tc, ctxMsg := newTurnContext(t, tcfg, o.cfg.Now)
	r := &turnRun{
		cfg:     o.cfg,
		turn:    t,
		context: tc,
		tools:   byName,
		names:   toolNames(toolList),
		defs:    defs,
		tr:      tr,
		stubRef: stubRef(t, tr.path),
		msgs: []llm.Message{
			{Role: llm.RoleSystem, Content: systemPrompt},
			ctxMsg,
			{Role: llm.RoleUser, Content: t.Prompt},
		},
		elided:  map[int]bool{},
		spills:  map[int]string{},
		repeats: repeats{},
		act:     activity{tell: t.Activity},
	}
	res, err := r.run(ctx, ctxMsg)
	if err != nil {
		if werr := tr.write(TranscriptEntry{Type: EntryError, Error: err.Error()}, false); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if cerr := tr.close(); cerr != nil && err == nil {
		err = fmt.Errorf("openai agent: %w", cerr)
	}
	res.Transcript = tr.path
	return res, err
}

// toolsConfig is the standard tools' configuration for turn t; the turn
// context reads AGENTS.md through the same confinement.
func (o *OpenAI) toolsConfig(t agent.Turn) tools.Config {
	cfg := tools.DefaultConfig(t.Workspace, t.SpillDir)
	cfg.TasksDir, cfg.Protected, cfg.ReadOnly, cfg.Skipped = t.TasksDir, t.Protected, t.ReadOnly, t.Skipped
	cfg.Started = t.Started
	cfg.Env, cfg.Wrap = o.cfg.ShellEnv, o.cfg.ShellWrap
	return cfg
}

// turnTools returns the tools offered in turn t (built from cfg unless
// OpenAIConfig.Tools names them), the same tools by name, and their
// definitions for the model, in the order offered.
func (o *OpenAI) turnTools(t agent.Turn, cfg tools.Config) ([]tools.Tool, map[string]tools.Tool, []llm.ToolDef, error) {
	toolList := o.cfg.Tools
	if toolList == nil {
		var err error
		toolList, err = tools.All(cfg)
		if err != nil {
			return nil, nil, nil, err
		}
	}
	byName := make(map[string]tools.Tool, len(toolList))
	defs := make([]llm.ToolDef, 0, len(toolList))
	for _, tl := range toolList {
		if _, dup := byName[tl.Name()]; dup {
			return nil, nil, nil, fmt.Errorf("two tools are named %q", tl.Name())
		}
		byName[tl.Name()] = tl
		defs = append(defs, llm.ToolDef{Name: tl.Name(), Description: tl.Description(), Parameters: tl.Parameters()})
	}
	return toolList, byName, defs, nil
}

// turnRun is the state of one turn.
type turnRun struct {
	cfg     OpenAIConfig
	turn    agent.Turn
	context *turnContext
	tools   map[string]tools.Tool
	names   string
	defs    []llm.ToolDef
	tr      *transcript
	stubRef string // how a stub names the transcript

	msgs     []llm.Message
	elided   map[int]bool   // indexes of tool messages stubbed in requests
	spills   map[int]string // spill paths of tool messages
	repeats  repeats        // tool call + result -> count
	usage    agent.Usage
	requests int      // model requests made, successful or not
	act      activity // what the turn tells agent.Turn.Activity
}

// run is the turn's loop; ctxMsg is the turn context, already in the
// conversation, recorded first in the transcript.
func (r *turnRun) run(ctx context.Context, ctxMsg llm.Message) (agent.Result, error) {
	if err := r.tr.write(TranscriptEntry{Type: EntryContext, Text: ctxMsg.Content}, false); err != nil {
		return r.result(""), err
	}
	for {
		if ctx.Err() != nil {
			return r.result(""), r.ctxErr(ctx)
		}
		if left := r.turn.TokenBudgetLeft; left > 0 && r.tokensUsed() >= left {
			return r.wrapUp(ctx)
		}
		if r.requests >= r.cfg.MaxRequests {
			return r.result(""), fmt.Errorf("request cap reached: %d model requests in this turn without a final answer (raise --max-requests, or ask for smaller steps)", r.cfg.MaxRequests)
		}
		if upd, ok := r.context.update(r.tokensUsed()); ok {
			r.msgs = append(r.msgs, upd)
			if err := r.tr.write(TranscriptEntry{Type: EntryContext, Text: upd.Content}, false); err != nil {
				return r.result(""), err
			}
		}
		resp, err := r.request(ctx, false)
		if err != nil {
			return r.result(""), err
		}
		msg := resp.Message
		if len(msg.ToolCalls) == 0 {
			if err := r.tr.write(TranscriptEntry{Type: EntryFinal, Text: msg.Content}, true); err != nil {
				return r.result(msg.Content), err
			}
			return r.result(msg.Content), nil
		}
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", r.requests, i)
			}
		}
		r.msgs = append(r.msgs, msg)
		for _, call := range msg.ToolCalls {
			if ctx.Err() != nil {
				return r.result(""), r.ctxErr(ctx)
			}
			if err := r.runTool(ctx, call); err != nil {
				return r.result(""), err
			}
		}
	}
}

// tokensUsed is the turn's spend by the budget rule.
func (r *turnRun) tokensUsed() int64 { return r.usage.Tokens() }

func (r *turnRun) result(final string) agent.Result {
	return agent.Result{FinalMessage: final, Usage: r.usage}
}

// ctxErr explains why ctx ended.
func (r *turnRun) ctxErr(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errTurnTimeout) {
		return fmt.Errorf("%w: the turn ran longer than %s", agent.ErrTimeout, r.turn.Timeout)
	}
	return fmt.Errorf("turn cancelled: %w", context.Cause(ctx))
}

// request sends the conversation to the model and records the reply's
// usage.
func (r *turnRun) request(ctx context.Context, wrapUp bool) (llm.Response, error) {
	msgs, elided := r.view()
	r.act.set("thinking")
	r.requests++
	n := r.requests
	resp, err := r.cfg.Client.Complete(ctx, llm.Request{Messages: msgs, Tools: r.defs})
	if err != nil {
		werr := r.tr.write(TranscriptEntry{Type: EntryRequest, N: n, Retries: resp.Retries, WrapUp: wrapUp, Elided: elided, Error: err.Error()}, false)
		switch {
		case ctx.Err() != nil:
			err = r.ctxErr(ctx)
		case errors.Is(err, llm.ErrQuota):
			err = fmt.Errorf("%w: %v", agent.ErrUsageLimited, err)
		case errors.As(err, new(*llm.SetupError)):
			err = setupError(err, fmt.Sprintf("model request %d: ", n))
		default:
			err = fmt.Errorf("model request %d: %w", n, err)
		}
		return resp, errors.Join(err, werr)
	}
	u := resp.Usage
	r.usage = r.usage.Add(agent.Usage{
		InputTokens:       u.Prompt,
		CachedInputTokens: u.CachedPrompt,
		OutputTokens:      u.Completion,
		Requests:          1,
		Estimated:         u.Estimated,
	})
	if r.turn.Usage != nil {
		r.turn.Usage(r.usage)
	}
	err = r.tr.write(TranscriptEntry{
		Type: EntryRequest, N: n,
		InputTokens: u.Prompt, CachedInputTokens: u.CachedPrompt, OutputTokens: u.Completion, Estimated: u.Estimated,
		Retries: resp.Retries, FinishReason: resp.FinishReason, ToolCalls: len(resp.Message.ToolCalls),
		WrapUp: wrapUp, Elided: elided, Text: resp.Message.Content,
	}, false)
	return resp, err
}

// runTool runs one call and appends its result to the conversation. It
// returns an error when the turn must end.
func (r *turnRun) runTool(ctx context.Context, call llm.ToolCall) error {
	if err := r.tr.write(TranscriptEntry{Type: EntryToolCall, ID: call.ID, Name: call.Name, Arguments: call.Arguments}, true); err != nil {
		return err
	}
	args := strings.TrimSpace(call.Arguments)
	if args == "" {
		args = "{}"
	}
	r.act.set(openAIToolActivity(call.Name, args))
	var res tools.Result
	tool, ok := r.tools[call.Name]
	switch {
	case !ok:
		res = tools.Result{IsError: true, Text: fmt.Sprintf("error: there is no tool named %q; the tools are %s", call.Name, r.names)}
	case !json.Valid([]byte(args)):
		res = tools.Result{IsError: true, Text: fmt.Sprintf("error: the arguments of %s are not valid JSON; send one JSON object that matches the tool's parameters", call.Name)}
	default:
		var err error
		res, err = tool.Run(ctx, json.RawMessage(args))
		if err != nil {
			if ctx.Err() != nil {
				return r.ctxErr(ctx)
			}
			return fmt.Errorf("tool %s failed (call %s): %w", call.Name, call.ID, err)
		}
	}
	text := res.Text
	if text == "" {
		text = "(no output)"
	}
	r.msgs = append(r.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: text})
	if res.SpillPath != "" {
		r.spills[len(r.msgs)-1] = res.SpillPath
	}
	if err := r.tr.write(TranscriptEntry{
		Type: EntryToolResult, ID: call.ID, Name: call.Name, IsError: res.IsError,
		Bytes: len(res.Text), Text: res.Text, SpillPath: res.SpillPath,
	}, false); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return r.ctxErr(ctx)
	}
	return r.repeats.check(call.Name, args, res)
}

func toolNames(ts []tools.Tool) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name()
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
