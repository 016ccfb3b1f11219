//go:build linux

package backend

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
)

// claudeBaseArgs are the arguments every claude run gets, with the default
// turn limit.
var claudeBaseArgs = []string{
	"-p",
	"--output-format", "stream-json",
	"--verbose",
	"--permission-mode", "acceptEdits",
	"--allowedTools", "Bash",
	"--max-turns", "200",
}

// claudeRunTurnCase is one case of TestClaudeRunTurn.
type claudeRunTurnCase struct {
	name        string
	scenario    string // first line of the prompt: what the fake does
	cfg         ClaudeConfig
	wantArgs    []string // nil: claudeBaseArgs
	wantMessage string
	wantUsage   agent.Usage
	wantErr     []string // substrings of the error; nil means no error
	wantLimited bool
}

// claudeRunTurnCases acts out each scenario of fake-claude.sh.
var claudeRunTurnCases = []claudeRunTurnCase{
	{
		name:        "stream: the result, usage summed over models, cost, and requests by message id",
		scenario:    "success",
		wantMessage: "Added the --verbose flag; go test ./... passes.",
		wantUsage:   claudeStreamSuccessUsage,
	},
	{
		name:     "model, turn limit and extra arguments are passed after grub's flags",
		scenario: "success",
		cfg:      ClaudeConfig{Model: "opus", MaxTurns: 5, ExtraArgs: []string{"--permission-mode", "bypassPermissions", "--append-system-prompt", "Be brief."}},
		wantArgs: []string{
			"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--allowedTools", "Bash",
			"--max-turns", "5", "--model", "opus", "--permission-mode", "bypassPermissions", "--append-system-prompt", "Be brief.",
		},
		wantMessage: "Added the --verbose flag; go test ./... passes.",
		wantUsage:   claudeStreamSuccessUsage,
	},
	{
		name:      "an API error result with subtype success says the status, the reason and the text",
		scenario:  "api_error",
		wantUsage: agent.Usage{InputTokens: 3904, OutputTokens: 40, Requests: 1, CostUSD: 0.01497, CostReported: true},
		wantErr: []string{`claude reported an error (API error status 500, terminal reason "api_error"): API Error: 500`,
			"Internal server error", "exited with code 1"},
	},
	{
		name:      "stream: max turns names the limit",
		scenario:  "max_turns_stream",
		wantUsage: agent.Usage{InputTokens: 8297, CachedInputTokens: 4100, OutputTokens: 47, Requests: 2, CostUSD: 0.0181, CostReported: true},
		wantErr:   []string{"turn limit (--max-turns 200) after 3 turns"},
	},
	{
		name:        "a single result object (--output-format json) still counts, num_turns standing in for requests",
		scenario:    "json_success",
		wantMessage: "Added the --verbose flag to the CLI with a unit test; go test ./... passes.",
		wantUsage:   agent.Usage{InputTokens: 222417, CachedInputTokens: 210334, OutputTokens: 4127, Requests: 14, CostUSD: 0.41235, CostReported: true},
	},
	{
		name:        "a JSON array of messages still counts",
		scenario:    "verbose_array",
		wantMessage: "Done.",
		wantUsage:   agent.Usage{InputTokens: 1005, CachedInputTokens: 900, OutputTokens: 40, Requests: 2, CostUSD: 0.011, CostReported: true},
	},
	{
		name:      "error result quotes its errors and the exit",
		scenario:  "error",
		wantUsage: agent.Usage{InputTokens: 12 + 3001 + 4500, CachedInputTokens: 4500, OutputTokens: 220, Requests: 3, CostUSD: 0.0213, CostReported: true},
		wantErr:   []string{`subtype "error_during_execution"`, "API Error: 500", "exited with code 1"},
	},
	{
		name:      "max turns names the limit even when is_error is false",
		scenario:  "max_turns",
		wantUsage: agent.Usage{InputTokens: 402 + 80112 + 5012334, CachedInputTokens: 5012334, OutputTokens: 61200, Requests: 201, CostUSD: 3.9021, CostReported: true},
		wantErr:   []string{"turn limit (--max-turns 200) after 201 turns"},
	},
	{
		name:        "usage limit result wraps ErrUsageLimited",
		scenario:    "usage_limit",
		wantUsage:   agent.Usage{Requests: 1, CostReported: true},
		wantErr:     []string{"Claude AI usage limit reached|1760000400"},
		wantLimited: true,
	},
	{
		name:        "rate limit on stderr with no result wraps ErrUsageLimited",
		scenario:    "rate_limit_stderr",
		wantErr:     []string{"rate_limit_error", "exited with code 1"},
		wantLimited: true,
	},
	{
		name:     "non-zero exit without output quotes stderr",
		scenario: "crash",
		wantErr:  []string{"claude exited with code 2", "starting session\nError: Invalid API key"},
	},
	{
		name:     "output that is not a result object",
		scenario: "malformed",
		wantErr:  []string{"printed no usable result", "line 1 is not a JSON event", "Here is my answer"},
	},
}

func TestClaudeRunTurn(t *testing.T) {
	t.Parallel()
	tests := claudeRunTurnCases
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, tc.scenario+"\nWork on F3.\n")
			cfg := tc.cfg
			cfg.Bin = fakeAgentBin(t, "fake-claude.sh", "claude")
			res, err := NewClaude(cfg).RunTurn(context.Background(), turn)
			checkTurnErr(t, err, tc.wantErr, tc.wantLimited)
			if res.FinalMessage != tc.wantMessage {
				t.Errorf("FinalMessage = %q, want %q", res.FinalMessage, tc.wantMessage)
			}
			if res.Usage != tc.wantUsage {
				t.Errorf("Usage = %+v, want %+v", res.Usage, tc.wantUsage)
			}
			wantArgs := tc.wantArgs
			if wantArgs == nil {
				wantArgs = claudeBaseArgs
			}
			checkFakeRun(t, turn, wantArgs)
		})
	}
}

func TestClaudeMissingBinary(t *testing.T) {
	t.Parallel()
	turn := cmdTestTurn(t, "success\n")
	gone := filepath.Join(t.TempDir(), "claude")
	_, err := NewClaude(ClaudeConfig{Bin: gone}).RunTurn(context.Background(), turn)
	if err == nil || !strings.Contains(err.Error(), gone) || !strings.Contains(err.Error(), "--agent-bin") {
		t.Errorf("error = %v, want one naming %s and --agent-bin", err, gone)
	}
}

// Not parallel: it changes PATH.
func TestClaudeDefaultBinFromPath(t *testing.T) {
	bin := fakeAgentBin(t, "fake-claude.sh", "claude")
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	turn := cmdTestTurn(t, "success\n")
	res, err := NewClaude(ClaudeConfig{}).RunTurn(context.Background(), turn)
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	if res.Usage.Requests != 3 {
		t.Errorf("Usage = %+v: the claude found in PATH did not run", res.Usage)
	}
}

// claudeStreamSuccessUsage is the usage of testdata/claude/stream_success.jsonl:
// each count the larger of "usage" and the sum over "modelUsage" (haiku's
// 620 input and 45 output tokens on top of sonnet's), requests the three
// distinct assistant message ids, cost total_cost_usd.
var claudeStreamSuccessUsage = agent.Usage{
	InputTokens: 630 + 4350 + 38200, CachedInputTokens: 38200, OutputTokens: 310,
	Requests: 3, CostUSD: 0.04205, CostReported: true,
}

// cancelWhenExists calls cancel once path exists (or after a minute).
func cancelWhenExists(path string, cancel context.CancelFunc) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
}

func TestParseClaudeResult(t *testing.T) {
	t.Parallel()
	sample := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "claude", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name       string
		in         string
		wantFailed bool
		wantResult string
		wantUsage  agent.Usage
		wantErr    string // substring; empty means no error
	}{
		{name: "success sample", in: sample("success.json"), wantResult: "Added the --verbose flag to the CLI with a unit test; go test ./... passes.",
			wantUsage: agent.Usage{InputTokens: 222417, CachedInputTokens: 210334, OutputTokens: 4127, Requests: 14, CostUSD: 0.41235, CostReported: true}},
		{name: "error sample", in: sample("error_during_execution.json"), wantFailed: true,
			wantUsage: agent.Usage{InputTokens: 7513, CachedInputTokens: 4500, OutputTokens: 220, Requests: 3, CostUSD: 0.0213, CostReported: true}},
		{name: "max turns sample", in: sample("error_max_turns.json"), wantFailed: true,
			wantUsage: agent.Usage{InputTokens: 5092848, CachedInputTokens: 5012334, OutputTokens: 61200, Requests: 201, CostUSD: 3.9021, CostReported: true}},
		{name: "usage limit sample", in: sample("usage_limit.json"), wantFailed: true, wantResult: "Claude AI usage limit reached|1760000400",
			wantUsage: agent.Usage{Requests: 1, CostReported: true}},
		{name: "verbose array: the last result element", in: sample("verbose_array.json"), wantResult: "Done.",
			wantUsage: agent.Usage{InputTokens: 1005, CachedInputTokens: 900, OutputTokens: 40, Requests: 2, CostUSD: 0.011, CostReported: true}},
		{name: "stray line before the result", in: "Update available: run claude update\n" + sample("success.json"), wantResult: "Added the --verbose flag to the CLI with a unit test; go test ./... passes.",
			wantUsage: agent.Usage{InputTokens: 222417, CachedInputTokens: 210334, OutputTokens: 4127, Requests: 14, CostUSD: 0.41235, CostReported: true}},
		{name: "no usage, turns or cost: nothing revealed", in: `{"type":"result","subtype":"success","is_error":false,"result":"ok"}`, wantResult: "ok",
			wantUsage: agent.Usage{}},
		{name: "modelUsage adds subagent models; each count the larger figure", in: `{"type":"result","subtype":"success","result":"ok","num_turns":2,` +
			`"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":20},` +
			`"modelUsage":{"big":{"inputTokens":0,"outputTokens":30,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.5},` +
			`"small":{"inputTokens":7,"outputTokens":4,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.25}}}`,
			wantResult: "ok", wantUsage: agent.Usage{InputTokens: 10 + 5 + 100, CachedInputTokens: 100, OutputTokens: 34, Requests: 2, CostUSD: 0.75, CostReported: true}},
		{name: "negative cost", in: `{"type":"result","subtype":"success","total_cost_usd":-1}`, wantErr: "negative"},
		{name: "negative model usage", in: `{"type":"result","subtype":"success","modelUsage":{"m":{"outputTokens":-1}}}`, wantErr: "negative"},
		{name: "absurd counts saturate", in: `{"type":"result","subtype":"success","result":"x","num_turns":1,"usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807}}`,
			wantResult: "x", wantUsage: agent.Usage{InputTokens: math.MaxInt64, CachedInputTokens: math.MaxInt64, Requests: 1}},
		{name: "empty", in: " \n", wantErr: "empty"},
		{name: "not JSON", in: "hello", wantErr: "not a JSON result object"},
		{name: "not a result message", in: `{"type":"assistant","message":{}}`, wantErr: `"assistant" message`},
		{name: "array without result", in: `[{"type":"system"}]`, wantErr: `no "result" message`},
		{name: "negative tokens", in: `{"type":"result","subtype":"success","usage":{"output_tokens":-1}}`, wantErr: "negative"},
		{name: "result of the wrong type", in: `{"type":"result","subtype":"success","result":42}`, wantErr: "not a JSON result object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := parseClaudeResult([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseClaudeResult: %v", err)
			}
			if r.failed() != tc.wantFailed {
				t.Errorf("failed() = %v, want %v", r.failed(), tc.wantFailed)
			}
			if r.Result != tc.wantResult {
				t.Errorf("Result = %q, want %q", r.Result, tc.wantResult)
			}
			if u := r.usage(); u != tc.wantUsage {
				t.Errorf("usage() = %+v, want %+v", u, tc.wantUsage)
			}
		})
	}
}

func TestClaudeResultProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["boom"," second "]}`, "boom; second"},
		{`{"type":"result","subtype":"success","is_error":true,"result":"limit hit"}`, "limit hit"},
		{`{"type":"result","subtype":"error_max_turns","is_error":true}`, `no message (subtype "error_max_turns")`},
		{`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":[{"odd":1}]}`, `no message (subtype "error_during_execution")`},
	}
	for _, tc := range tests {
		r, err := parseClaudeResult([]byte(tc.in))
		if err != nil {
			t.Fatalf("parseClaudeResult(%s): %v", tc.in, err)
		}
		if got := r.problem(); got != tc.want {
			t.Errorf("problem() of %s = %q, want %q", tc.in, got, tc.want)
		}
	}
}
