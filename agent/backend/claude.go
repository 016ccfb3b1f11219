package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/internal/proc"
)

// DefaultClaudeMaxTurns is the --max-turns a claude turn gets when
// ClaudeConfig.MaxTurns is zero: generous for one feature's work, but a
// bound on a session that loops without end.
const DefaultClaudeMaxTurns = 200

// ClaudeConfig configures the claude backend.
type ClaudeConfig struct {
	// Bin is the Claude Code program: a name looked up in PATH, or a path.
	// Empty means "claude".
	Bin string
	// Model, if set, is passed as --model (an alias such as "sonnet" or a
	// full model name).
	Model string
	// MaxTurns is passed as --max-turns; zero means DefaultClaudeMaxTurns.
	MaxTurns int
	// ExtraArgs (--agent-args) are appended after grub's own flags, so
	// that a later flag of the same name wins where Claude Code lets it:
	// for example "--permission-mode bypassPermissions" or
	// "--dangerously-skip-permissions" in a disposable container.
	ExtraArgs []string
	// StallTimeout is how long Claude Code may go on reporting API
	// retries (system api_retry events) with no other event before the
	// turn fails quoting its last error; zero means DefaultStallTimeout.
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

// Claude is the `claude` backend: it runs Claude Code headless, once per
// turn:
//
//	claude -p --output-format stream-json --verbose \
//	    --permission-mode acceptEdits --allowedTools Bash \
//	    --max-turns 200 [--model M] [extra args…]
//
// with the prompt on its standard input (-p reads it from there when no
// prompt argument is given), the workspace as its working directory and
// the GRUB_* variables of the command backend in its environment. It runs
// in its own process group, which is killed when the turn times out or is
// cancelled, and whatever it leaves running is killed when it exits.
//
// The flags grub passes by default, and why:
//   - -p (--print) runs one non-interactive session and exits.
//   - --output-format stream-json --verbose prints every message of the
//     session as one JSON line when it happens (Claude Code requires
//     --verbose for stream-json with -p): grub reads them as they arrive
//     for the transcript, the live activity and the usage so far, so that
//     a turn that times out still counts what it spent.
//   - --permission-mode acceptEdits lets it edit files in the workspace
//     (its working directory) without asking; nobody is there to answer a
//     permission prompt, so anything that would prompt is refused instead.
//   - --allowedTools Bash lets it run shell commands, which the work needs
//     (build, test, init.sh). Other tools that ask for permission (web
//     fetches, MCP tools, edits outside the workspace) stay refused.
//     --dangerously-skip-permissions is not used: it lifts every check and
//     Claude Code refuses it when run as root; pass it in ExtraArgs inside
//     a disposable container if you want it.
//   - --max-turns bounds the session (DefaultClaudeMaxTurns); reaching it
//     ends the turn with an error.
//
// The stream maps to the turn as follows (see claudeStream). Each
// assistant message is written to the transcript (Turn.TranscriptFile) as
// a "request" entry and its tool uses as "tool_call" entries, the tool
// results Claude Code reports as "tool_result" entries, and the result's
// totals as a "usage" entry; Turn.Activity hears of each tool use
// ("Bash: go test ./...", "editing main.go") and of thinking.
//
// The final "result" object gives FinalMessage ("result") and the usage.
// Usage.InputTokens is input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens (all the input the model read),
// CachedInputTokens is cache_read_input_tokens, OutputTokens is
// output_tokens; each is the larger of the figure in "usage" (the main
// model's) and the sum over "modelUsage" (every model, subagents and the
// small fast model included), so that neither undercounts. CostUSD is
// total_cost_usd (or, without it, the sum of modelUsage's costUSD), with
// CostReported set. Requests is the number of distinct assistant message
// ids in the stream: each is one response of the Messages API, which
// num_turns (agentic turns of the main loop) is not; num_turns stands in
// only when the output held no assistant message. A turn that ends
// without a result (timeout, cancel, crash) keeps the usage of the
// assistant messages seen so far (the last figure of each message id),
// without cost, which only the result reports. Token budgets
// (Turn.TokenBudgetLeft) cannot stop Claude Code mid-turn.
//
// No turn context is added (see turncontext.go): Claude Code reads the
// workspace's CLAUDE.md itself and keeps its own working directory.
//
// A result with is_error set or a subtype other than "success"
// (error_max_turns, error_during_execution, …), a non-zero exit or output
// with no result object is an error quoting what Claude Code said: its API
// error status and terminal reason when it gives them, its result text and
// errors list, and the end of its standard error; one whose message speaks
// of a usage limit, rate limit or quota wraps ErrUsageLimited, and one with
// API error status 401, 403 or 404 is an *agent.SetupError (the account or
// the model: no later turn would do better). API retries
// with no progress for StallTimeout end the turn with the last of them.
type Claude struct {
	cfg ClaudeConfig
}

// NewClaude returns the claude backend.
func NewClaude(cfg ClaudeConfig) *Claude {
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultClaudeMaxTurns
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Claude{cfg: cfg}
}

// args returns the arguments after the program name.
func (c *Claude) args() []string {
	args := []string{
		"-p",
		"--output-format", "stream-json",
		"--verbose",
		"--permission-mode", "acceptEdits",
		"--allowedTools", "Bash",
		"--max-turns", strconv.Itoa(c.cfg.MaxTurns),
	}
	if c.cfg.Model != "" {
		args = append(args, "--model", c.cfg.Model)
	}
	return append(args, c.cfg.ExtraArgs...)
}

// RunTurn runs Claude Code once for t; see Claude.
//
// It returns an error wrapping ErrTimeout when t.Timeout expired and one
// wrapping ctx.Err() when ctx was cancelled. The Result carries the usage
// seen, whatever the error, and the result text when it was not an error.
func (c *Claude) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	bin, err := lookupAgentBin(c.cfg.Bin, "claude", "Claude Code")
	if err != nil {
		return agent.Result{}, err
	}
	tr, err := openTranscript(t.TranscriptFile, c.cfg.Now)
	if err != nil {
		return agent.Result{}, fmt.Errorf("claude: %w", err)
	}
	stall := newStallWatch(c.cfg.StallTimeout, c.cfg.Now)
	stream := newClaudeStream(tr, t.Workspace, t.Activity, stall)
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go stall.watch(runCtx, cancel)
	res, err := runProgram(runCtx, t, programSpec{
		Args:      append([]string{bin}, c.args()...),
		Stdout:    stream,
		MaxOutput: programCaptureBytes,
		Wrap:      c.cfg.Wrap,
		ExtraEnv:  c.cfg.ExtraEnv,
	})
	if err != nil {
		_ = tr.close()
		return agent.Result{}, fmt.Errorf("claude: %w", err)
	}
	out, err := c.outcome(ctx, runCtx, t.Timeout, stream.finish(), res, stall)
	return finishTranscript(tr, stream.transcriptErr(), "claude", out, err)
}

// outcome turns what the stream said and how the program ended into the
// turn's result and error.
func (c *Claude) outcome(ctx, runCtx context.Context, timeout time.Duration, s claudeOutcome, res proc.Result, stall *stallWatch) (agent.Result, error) {
	out := agent.Result{Usage: s.Usage}
	r, parseErr := s.Result, s.Err
	if parseErr != nil && !res.StdoutTruncated {
		// Not a stream: the output of --output-format json (ExtraArgs may
		// ask for it) is one object or an array.
		if pr, err := parseClaudeResult(res.Stdout); err == nil {
			r, parseErr = pr, nil
			out.Usage = pr.usage()
		}
	}
	if parseErr == nil && !r.failed() {
		out.FinalMessage = r.Result
	}

	if err := stalledError(ctx, runCtx, "claude", res, stall); err != nil {
		return out, err
	}
	if err := interruptedError(ctx, "claude", res, timeout, stall.lastError()); err != nil {
		return out, err
	}
	switch {
	case parseErr == nil && r.failed():
		what := r.problem()
		if isUsageLimitMessage(what) || (res.ExitCode != 0 && isUsageLimitMessage(proc.TailString(res.Stderr, stderrTailBytes))) {
			return out, fmt.Errorf("claude: %w: %s", agent.ErrUsageLimited, what)
		}
		msg := "claude reported an error" + r.details() + ": " + what
		if fix := claudeSetupFix(r.apiStatus()); fix != "" {
			return out, &agent.SetupError{Cause: msg, Fix: fix}
		}
		if r.Subtype == "error_max_turns" {
			msg = fmt.Sprintf("claude stopped at its turn limit (--max-turns %d) after %d turns; split the feature into smaller steps", c.cfg.MaxTurns, r.NumTurns)
		}
		if res.ExitCode != 0 {
			msg += fmt.Sprintf("; it %s; %s", exitDescription(res), stderrTail(res))
		}
		return out, errors.New(msg)
	case res.ExitCode != 0:
		said := proc.TailString(res.Stderr, stderrTailBytes) + "\n" + string(bytes.TrimSpace(res.Stdout))
		if isUsageLimitMessage(said) {
			return out, fmt.Errorf("claude: %w: it %s; %s", agent.ErrUsageLimited, exitDescription(res), stderrTail(res))
		}
		msg := fmt.Sprintf("claude %s; %s", exitDescription(res), stderrTail(res))
		if len(bytes.TrimSpace(res.Stdout)) > 0 && parseErr != nil {
			msg += "; start of its standard output: " + outputHead(res.Stdout)
		}
		return out, errors.New(msg)
	case parseErr != nil:
		return out, fmt.Errorf("claude printed no usable result (is the claude program Claude Code, run with --output-format stream-json?): %v; start of its standard output: %s; %s",
			parseErr, outputHead(res.Stdout), stderrTail(res))
	}
	return out, nil
}

// claudeResult is the result object Claude Code prints last (the last
// line of stream-json, or the whole output of --output-format json), with
// only the fields grub reads (duration_ms, session_id, permission_denials,
// … are left out).
type claudeResult struct {
	Type     string          `json:"type"`
	Subtype  string          `json:"subtype"`
	IsError  bool            `json:"is_error"`
	Result   string          `json:"result"`
	NumTurns int64           `json:"num_turns"`
	Usage    claudeUsage     `json:"usage"`
	Errors   json.RawMessage `json:"errors"` // a list of messages in error results
	// TotalCostUSD is what the session cost; nil when not reported.
	TotalCostUSD *float64 `json:"total_cost_usd"`
	// ModelUsage is the usage per model, subagents' models included.
	ModelUsage map[string]claudeModelUsage `json:"modelUsage"`
	// APIErrorStatus is the HTTP status of the API error that ended the
	// session (a number; null or absent otherwise).
	APIErrorStatus json.RawMessage `json:"api_error_status"`
	// TerminalReason says why the session ended ("api_error", …).
	TerminalReason string `json:"terminal_reason"`
}

// claudeUsage is the usage object of a claude result or assistant message.
type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// negative reports a negative count.
func (u claudeUsage) negative() bool {
	return u.InputTokens < 0 || u.CacheCreationInputTokens < 0 || u.CacheReadInputTokens < 0 || u.OutputTokens < 0
}

// grub maps u to grub's usage; see Claude.
func (u claudeUsage) grub() agent.Usage {
	return agent.Usage{
		InputTokens:       addTokens(addTokens(u.InputTokens, u.CacheCreationInputTokens), u.CacheReadInputTokens),
		CachedInputTokens: u.CacheReadInputTokens,
		OutputTokens:      u.OutputTokens,
	}
}

// claudeModelUsage is one model's entry in a result's modelUsage.
type claudeModelUsage struct {
	InputTokens              int64    `json:"inputTokens"`
	OutputTokens             int64    `json:"outputTokens"`
	CacheReadInputTokens     int64    `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64    `json:"cacheCreationInputTokens"`
	CostUSD                  *float64 `json:"costUSD"`
}

// failed reports whether the result says the session failed.
func (r claudeResult) failed() bool {
	return r.IsError || r.Subtype != "success"
}

// modelUsageSum adds up modelUsage, in the shape of usage, and its cost;
// costs reports whether any model had one.
func (r claudeResult) modelUsageSum() (u claudeUsage, cost float64, costs bool) {
	for _, m := range r.ModelUsage {
		u.InputTokens = addTokens(u.InputTokens, m.InputTokens)
		u.CacheCreationInputTokens = addTokens(u.CacheCreationInputTokens, m.CacheCreationInputTokens)
		u.CacheReadInputTokens = addTokens(u.CacheReadInputTokens, m.CacheReadInputTokens)
		u.OutputTokens = addTokens(u.OutputTokens, m.OutputTokens)
		if m.CostUSD != nil {
			cost += *m.CostUSD
			costs = true
		}
	}
	return u, cost, costs
}

// usage maps the result's usage to grub's; see Claude. Requests is
// num_turns here: the stream's message ids replace it where there are any.
func (r claudeResult) usage() agent.Usage {
	m, mcost, mcosts := r.modelUsageSum()
	u := maxClaudeUsage(r.Usage, m).grub()
	u.Requests = r.NumTurns
	switch {
	case r.TotalCostUSD != nil:
		u.CostUSD, u.CostReported = *r.TotalCostUSD, true
	case mcosts:
		u.CostUSD, u.CostReported = mcost, true
	}
	return u
}

// maxClaudeUsage takes each count's larger figure.
func maxClaudeUsage(a, b claudeUsage) claudeUsage {
	return claudeUsage{
		InputTokens:              max(a.InputTokens, b.InputTokens),
		CacheCreationInputTokens: max(a.CacheCreationInputTokens, b.CacheCreationInputTokens),
		CacheReadInputTokens:     max(a.CacheReadInputTokens, b.CacheReadInputTokens),
		OutputTokens:             max(a.OutputTokens, b.OutputTokens),
	}
}

// apiStatus is the result's API error status, or "" when it has none.
func (r claudeResult) apiStatus() string {
	if s := strings.Trim(string(bytes.TrimSpace(r.APIErrorStatus)), `"`); s != "null" {
		return s
	}
	return ""
}

// claudeSetupFix is what to change after an API refusal that no later turn
// can change (401 and 403: the account; 404: the model); "" for any other
// status.
func claudeSetupFix(status string) string {
	switch status {
	case "401", "403":
		return "check Claude Code's login or ANTHROPIC_API_KEY (run claude yourself to see)"
	case "404":
		return "check --model: the API does not know it"
	}
	return ""
}

// details says, for an error message, what a failed result tells of the
// failure beyond its text: its subtype when not "success", the API error
// status and the terminal reason; "" when none.
func (r claudeResult) details() string {
	var parts []string
	if r.Subtype != "success" {
		parts = append(parts, "subtype "+strconv.Quote(r.Subtype))
	}
	if s := r.apiStatus(); s != "" {
		parts = append(parts, "API error status "+s)
	}
	if r.TerminalReason != "" {
		parts = append(parts, "terminal reason "+strconv.Quote(r.TerminalReason))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// problem is what a failed result says went wrong: its result text and its
// errors list, or its subtype when it says nothing.
func (r claudeResult) problem() string {
	var parts []string
	if s := strings.TrimSpace(r.Result); s != "" {
		parts = append(parts, s)
	}
	var list []string
	if json.Unmarshal(r.Errors, &list) == nil {
		for _, e := range list {
			if s := strings.TrimSpace(e); s != "" {
				parts = append(parts, s)
			}
		}
	}
	if len(parts) == 0 {
		return "no message (subtype " + strconv.Quote(r.Subtype) + ")"
	}
	return strings.Join(parts, "; ")
}

// parseClaudeResult finds the result object in Claude Code's standard
// output. That is normally the whole output; a JSON array of messages (as
// --verbose prints) gives its last "result" element, and otherwise the last
// line holding a result object counts, so that stray lines before it do
// not lose the turn. Negative token counts are an error.
func parseClaudeResult(stdout []byte) (claudeResult, error) {
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) == 0 {
		return claudeResult{}, errors.New("its standard output was empty")
	}
	r, err := decodeClaudeOutput(trimmed)
	if err != nil {
		// Look for a result line, last first.
		lines := bytes.Split(trimmed, []byte("\n"))
		for i := len(lines) - 1; i >= 0; i-- {
			line := bytes.TrimSpace(lines[i])
			if len(line) == 0 || line[0] != '{' {
				continue
			}
			if lr, lerr := decodeClaudeObject(line); lerr == nil && lr.Type == "result" {
				r, err = lr, nil
				break
			}
		}
	}
	if err != nil {
		return claudeResult{}, err
	}
	if r.Type != "result" {
		return claudeResult{}, fmt.Errorf("it printed a %q message, not the \"result\" object", r.Type)
	}
	if err := r.check(); err != nil {
		return claudeResult{}, err
	}
	return r, nil
}

// check refuses negative counts and costs.
func (r claudeResult) check() error {
	neg := r.Usage.negative() || r.NumTurns < 0 || (r.TotalCostUSD != nil && !(*r.TotalCostUSD >= 0))
	for _, m := range r.ModelUsage {
		mu := claudeUsage{m.InputTokens, m.CacheCreationInputTokens, m.CacheReadInputTokens, m.OutputTokens}
		neg = neg || mu.negative() || (m.CostUSD != nil && !(*m.CostUSD >= 0))
	}
	if neg {
		return errors.New("its result has a negative token count, turn count or cost")
	}
	return nil
}

// decodeClaudeOutput decodes the whole output as one result object, or as
// an array of messages whose last "result" element it returns.
func decodeClaudeOutput(b []byte) (claudeResult, error) {
	if b[0] != '[' {
		return decodeClaudeObject(b)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(b, &msgs); err != nil {
		return claudeResult{}, fmt.Errorf("its output is not valid JSON: %w", err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(msgs[i], &head) == nil && head.Type == "result" {
			return decodeClaudeObject(msgs[i])
		}
	}
	return claudeResult{}, errors.New("its JSON array holds no \"result\" message")
}

// decodeClaudeObject decodes one JSON object into a claudeResult.
func decodeClaudeObject(b []byte) (claudeResult, error) {
	var r claudeResult
	if err := json.Unmarshal(b, &r); err != nil {
		return claudeResult{}, fmt.Errorf("its output is not a JSON result object: %w", err)
	}
	return r, nil
}
