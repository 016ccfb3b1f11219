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
	// ExtraArgs are added after grub's own flags, for example
	// "--dangerously-skip-permissions" in a disposable container.
	ExtraArgs []string
	// Wrap, when set, puts a sandbox launcher in front of the program
	// (see proc.Spec.Wrap).
	Wrap func(argv []string) []string
	// StallTimeout is how long the program may go on reporting errors
	// without progress before the turn fails (grub --stall-timeout); zero
	// means the backend's default.
	StallTimeout time.Duration
}

// Claude is the `claude` backend: it runs Claude Code headless, once per
// turn:
//
//	claude -p --output-format json --permission-mode acceptEdits \
//	    --allowedTools Bash --max-turns 200 [--model M] [extra args…]
//
// with the prompt on its standard input (-p reads it from there when no
// prompt argument is given), the workspace as its working directory and
// the GRUB_* variables of the command backend in its environment. It runs
// in its own process group, which is killed when the turn times out or is
// cancelled, and whatever it leaves running is killed when it exits.
//
// The flags, and why:
//   - -p (--print) runs one non-interactive session and exits;
//     --output-format json makes it print a single JSON result object.
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
// The result object's fields map to the Result as follows: FinalMessage is
// "result"; Usage.InputTokens is usage.input_tokens +
// usage.cache_creation_input_tokens + usage.cache_read_input_tokens (all the
// input the model read), CachedInputTokens is cache_read_input_tokens,
// OutputTokens is output_tokens, and Requests is num_turns (at least 1).
// Token budgets (Turn.TokenBudgetLeft) cannot stop Claude Code mid-turn;
// the usage is counted once the turn ends.
//
// A result with is_error set or a subtype other than "success"
// (error_max_turns, error_during_execution, …), a non-zero exit or output
// that is not a result object is an error quoting what Claude Code said and
// the end of its standard error; one whose message speaks of a usage limit,
// rate limit or quota wraps ErrUsageLimited.
type Claude struct {
	cfg ClaudeConfig
}

// NewClaude returns the claude backend.
func NewClaude(cfg ClaudeConfig) *Claude {
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultClaudeMaxTurns
	}
	return &Claude{cfg: cfg}
}

// args returns the arguments after the program name.
func (c *Claude) args() []string {
	args := []string{
		"-p",
		"--output-format", "json",
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
// of any result object Claude Code printed, whatever the error, and its
// text when it was not an error.
func (c *Claude) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	bin, err := lookupAgentBin(c.cfg.Bin, "claude", "Claude Code")
	if err != nil {
		return agent.Result{}, err
	}
	res, err := runProgram(ctx, t, programSpec{Args: append([]string{bin}, c.args()...), Wrap: c.cfg.Wrap})
	if err != nil {
		return agent.Result{}, fmt.Errorf("claude: %w", err)
	}

	out := agent.Result{Usage: agent.Usage{Requests: 1}}
	r, parseErr := parseClaudeResult(res.Stdout)
	if parseErr == nil && res.StdoutTruncated {
		parseErr = fmt.Errorf("its output was longer than the %d bytes grub keeps", len(res.Stdout))
	}
	if parseErr == nil {
		out.Usage = r.usage()
		if !r.failed() {
			out.FinalMessage = r.Result
		}
	}

	if err := interruptedError(ctx, "claude", res, t.Timeout); err != nil {
		return out, err
	}
	switch {
	case parseErr == nil && r.failed():
		what := r.problem()
		if isUsageLimitMessage(what) || (res.ExitCode != 0 && isUsageLimitMessage(proc.TailString(res.Stderr, stderrTailBytes))) {
			return out, fmt.Errorf("claude: %w: %s", agent.ErrUsageLimited, what)
		}
		msg := fmt.Sprintf("claude reported an error (subtype %q): %s", r.Subtype, what)
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
		return out, fmt.Errorf("claude printed no usable result (is the claude program Claude Code, run with --output-format json?): %v; start of its standard output: %s; %s",
			parseErr, outputHead(res.Stdout), stderrTail(res))
	}
	return out, nil
}

// claudeResult is the result object `claude -p --output-format json`
// prints. Fields grub does not use (duration_ms, total_cost_usd,
// session_id, permission_denials, …) are left out.
type claudeResult struct {
	Type     string          `json:"type"`
	Subtype  string          `json:"subtype"`
	IsError  bool            `json:"is_error"`
	Result   string          `json:"result"`
	NumTurns int64           `json:"num_turns"`
	Usage    claudeUsage     `json:"usage"`
	Errors   json.RawMessage `json:"errors"` // a list of messages in error results
}

// claudeUsage is the usage object of a claude result.
type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// failed reports whether the result says the session failed.
func (r claudeResult) failed() bool {
	return r.IsError || r.Subtype != "success"
}

// usage maps the result's usage to grub's; see Claude.
func (r claudeResult) usage() agent.Usage {
	u := r.Usage
	return agent.Usage{
		InputTokens:       addTokens(addTokens(u.InputTokens, u.CacheCreationInputTokens), u.CacheReadInputTokens),
		CachedInputTokens: u.CacheReadInputTokens,
		OutputTokens:      u.OutputTokens,
		Requests:          max(r.NumTurns, 1),
	}
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
	u := r.Usage
	if u.InputTokens < 0 || u.CacheCreationInputTokens < 0 || u.CacheReadInputTokens < 0 || u.OutputTokens < 0 || r.NumTurns < 0 {
		return claudeResult{}, errors.New("its result has a negative token or turn count")
	}
	return r, nil
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
