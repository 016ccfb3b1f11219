//go:build linux

package backend

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"
)

// codexBaseArgs are the arguments every codex run gets, without extras.
var codexBaseArgs = []string{
	"exec", "--json", "-c", "features.goals=false", "--sandbox", "workspace-write", "--skip-git-repo-check", "-",
}

func TestCodexRunTurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		scenario    string // first line of the prompt: what the fake does
		cfg         CodexConfig
		wantArgs    []string // nil: codexBaseArgs
		wantMessage string
		wantUsage   agent.Usage
		wantErr     []string // substrings of the error; nil means no error
		wantLimited bool
	}{
		{
			name:        "success: the last agent message and the turn's usage",
			scenario:    "success",
			wantMessage: "Added the --verbose flag with a unit test; go test ./... passes.",
			wantUsage:   agent.Usage{InputTokens: 48210, CachedInputTokens: 40960, OutputTokens: 1733},
		},
		{
			name:     "model and extra arguments come before the stdin prompt",
			scenario: "success",
			cfg:      CodexConfig{Model: "gpt-5-codex", ExtraArgs: []string{"-c", "model_reasoning_effort=high"}},
			wantArgs: []string{
				"exec", "--json", "-c", "features.goals=false", "--sandbox", "workspace-write", "--skip-git-repo-check",
				"--model", "gpt-5-codex", "-c", "model_reasoning_effort=high", "-",
			},
			wantMessage: "Added the --verbose flag with a unit test; go test ./... passes.",
			wantUsage:   agent.Usage{InputTokens: 48210, CachedInputTokens: 40960, OutputTokens: 1733},
		},
		{
			name:        "turn.failed is an error with its message; the message so far is kept",
			scenario:    "failed",
			wantMessage: "Starting on the parser.",
			wantUsage:   agent.Usage{},
			wantErr:     []string{"codex turn failed: unexpected status 400 Bad Request", "string too long", "exited with code 1"},
		},
		{
			name:        "usage limit wraps ErrUsageLimited",
			scenario:    "usage_limit",
			wantUsage:   agent.Usage{},
			wantErr:     []string{"You've hit your usage limit"},
			wantLimited: true,
		},
		{
			name:        "an error event followed by a completed turn is a retry, not a failure",
			scenario:    "reconnect",
			wantMessage: "Recovered and finished: the README now documents --verbose.",
			wantUsage:   agent.Usage{InputTokens: 9000, OutputTokens: 350},
		},
		{
			name:      "error events with no completed turn: the last one is the failure",
			scenario:  "stream_error",
			wantUsage: agent.Usage{},
			wantErr:   []string{"codex turn failed: stream disconnected before completion: connection reset by peer", "exited with code 1"},
		},
		{
			name:      "non-zero exit without events quotes stderr",
			scenario:  "crash",
			wantUsage: agent.Usage{},
			wantErr:   []string{"codex exited with code 1", "Reading prompt from stdin...\nError: Not logged in."},
		},
		{
			name:      "malformed output names the line",
			scenario:  "malformed",
			wantUsage: agent.Usage{},
			wantErr:   []string{"printed no turn.completed event", "standard output line 2 is not a JSON event", "this line is not JSON"},
		},
		{
			name:        "events after an output longer than the capture still count",
			scenario:    "long_output",
			wantMessage: "done after a long command",
			wantUsage:   agent.Usage{InputTokens: 700, CachedInputTokens: 600, OutputTokens: 20},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, tc.scenario+"\nWork on F3.\n")
			cfg := tc.cfg
			cfg.Bin = fakeAgentBin(t, "fake-codex.sh", "codex")
			res, err := NewCodex(cfg).RunTurn(context.Background(), turn)
			checkTurnErr(t, err, tc.wantErr, tc.wantLimited)
			if res.FinalMessage != tc.wantMessage {
				t.Errorf("FinalMessage = %q, want %q", res.FinalMessage, tc.wantMessage)
			}
			if res.Usage != tc.wantUsage {
				t.Errorf("Usage = %+v, want %+v", res.Usage, tc.wantUsage)
			}
			wantArgs := tc.wantArgs
			if wantArgs == nil {
				wantArgs = codexBaseArgs
			}
			checkFakeRun(t, turn, wantArgs)
		})
	}
}

// Not parallel: it changes PATH.
func TestCodexMissingFromPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := NewCodex(CodexConfig{}).RunTurn(context.Background(), cmdTestTurn(t, "success\n"))
	if err == nil || err.Error() != "codex not found in PATH: install the Codex CLI or pass --agent-bin" {
		t.Errorf("error = %v", err)
	}
}

func TestParseCodexEvents(t *testing.T) {
	t.Parallel()
	sample := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "codex", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name          string
		in            string
		want          codexOutcome // Malformed is checked through wantMalformed
		wantMalformed string       // substring; empty means none
	}{
		{name: "success sample", in: sample("success.jsonl"), want: codexOutcome{
			Final: "Added the --verbose flag with a unit test; go test ./... passes.", Completed: true,
			Usage: agent.Usage{InputTokens: 48210, CachedInputTokens: 40960, OutputTokens: 1733}}},
		{name: "turn failed sample", in: sample("turn_failed.jsonl"), want: codexOutcome{
			Final: "Starting on the parser.", Usage: agent.Usage{},
			Failure: `unexpected status 400 Bad Request: {"error":{"message":"Invalid 'input[12].content': string too long."}}`}},
		{name: "usage limit sample", in: sample("usage_limit.jsonl"), want: codexOutcome{
			Usage:   agent.Usage{},
			Failure: "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 3 days 4 hours 12 minutes."}},
		{name: "reconnect sample", in: sample("reconnect.jsonl"), want: codexOutcome{
			Final: "Recovered and finished: the README now documents --verbose.", Completed: true,
			Usage: agent.Usage{InputTokens: 9000, OutputTokens: 350}}},
		{name: "stream error sample", in: sample("stream_error.jsonl"), want: codexOutcome{
			Usage: agent.Usage{}, Failure: "stream disconnected before completion: connection reset by peer"}},
		{name: "malformed sample", in: sample("malformed.jsonl"), want: codexOutcome{Usage: agent.Usage{}},
			wantMalformed: "standard output line 2 is not a JSON event"},
		{name: "usage is summed over turns; CRLF and no final newline", in: "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":4,\"output_tokens\":1}}\r\n" +
			`{"type":"item.completed","item":{"type":"agent_message","text":"last"}}` + "\n" +
			`{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":2}}`,
			want: codexOutcome{Final: "last", Completed: true, Usage: agent.Usage{InputTokens: 15, CachedInputTokens: 4, OutputTokens: 3}}},
		{name: "unknown events and items are ignored", in: `{"type":"item.plan.delta","item_id":"x","delta":"y"}` + "\n" +
			`{"type":"item.completed","item":{"type":"error","message":"model rerouted"}}` + "\n" +
			`{"type":"item.completed","item":{"type":"reasoning","text":"thinking"}}` + "\n" +
			`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}`,
			want: codexOutcome{Completed: true, Usage: agent.Usage{InputTokens: 1, OutputTokens: 1}}},
		{name: "turn.failed without a message takes the last error event's", in: `{"type":"error","message":"quota exceeded"}` + "\n" + `{"type":"turn.failed","error":{}}`,
			want: codexOutcome{Usage: agent.Usage{}, Failure: "quota exceeded"}},
		{name: "turn.failed with nothing said", in: `{"type":"turn.failed"}`,
			want: codexOutcome{Usage: agent.Usage{}, Failure: "turn.failed event without a message"}},
		{name: "negative usage is malformed and not counted", in: `{"type":"turn.completed","usage":{"input_tokens":-5}}`,
			want: codexOutcome{Usage: agent.Usage{}}, wantMalformed: "negative token count"},
		{name: "a line without a type is malformed", in: `{"thread_id":"x"}`,
			want: codexOutcome{Usage: agent.Usage{}}, wantMalformed: `no "type" field`},
		{name: "absurd counts saturate", in: strings.Repeat(`{"type":"turn.completed","usage":{"input_tokens":9223372036854775807}}`+"\n", 2),
			want: codexOutcome{Completed: true, Usage: agent.Usage{InputTokens: math.MaxInt64}}},
		{name: "empty", in: "", want: codexOutcome{Usage: agent.Usage{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := parseCodexEvents([]byte(tc.in))
			malformed := got.Malformed
			got.Malformed = nil
			if got != tc.want {
				t.Errorf("outcome = %+v, want %+v", got, tc.want)
			}
			switch {
			case tc.wantMalformed == "" && malformed != nil:
				t.Errorf("Malformed = %v, want none", malformed)
			case tc.wantMalformed != "" && (malformed == nil || !strings.Contains(malformed.Error(), tc.wantMalformed)):
				t.Errorf("Malformed = %v, want one containing %q", malformed, tc.wantMalformed)
			}
		})
	}
}

// The events arrive in pieces of any size; the outcome must not depend on
// where the pieces are cut.
func TestCodexEventsChunked(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile(filepath.Join("testdata", "codex", "success.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := parseCodexEvents(in)
	for _, size := range []int{1, 2, 7, 64, 4096} {
		p := newCodexEvents(&transcript{}, "", nil, newStallWatch(0, nil))
		for rest := in; len(rest) > 0; {
			n := min(size, len(rest))
			if w, err := p.Write(rest[:n]); w != n || err != nil {
				t.Fatalf("Write = %d, %v", w, err)
			}
			rest = rest[n:]
		}
		if got := p.outcome(); got != want {
			t.Errorf("chunks of %d: outcome = %+v, want %+v", size, got, want)
		}
	}
}

// A line longer than maxEventLine is skipped without being kept, and
// the lines after it still count.
func TestCodexEventsSkipsOverlongLine(t *testing.T) {
	t.Parallel()
	p := newCodexEvents(&transcript{}, "", nil, newStallWatch(0, nil))
	write := func(b []byte) {
		if _, err := p.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte(`{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"`))
	chunk := bytes.Repeat([]byte("y"), 1<<20)
	for written := 0; written <= maxEventLine; written += len(chunk) {
		write(chunk)
	}
	if len(p.lines.partial) != 0 || !p.lines.skipping {
		t.Fatalf("an overlong line is held in memory: %d bytes, skipping=%v", len(p.lines.partial), p.lines.skipping)
	}
	write([]byte("\"}}\n" + `{"type":"item.completed","item":{"type":"agent_message","text":"after"}}` + "\n" +
		`{"type":"turn.completed","usage":{"input_tokens":3,"cached_input_tokens":1,"output_tokens":2}}` + "\n"))
	got := p.outcome()
	want := codexOutcome{Final: "after", Completed: true, Usage: agent.Usage{InputTokens: 3, CachedInputTokens: 1, OutputTokens: 2}}
	if got != want {
		t.Errorf("outcome = %+v, want %+v", got, want)
	}
}
