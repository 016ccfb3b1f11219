package backend

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The outputs in testdata/real were captured from the real programs
// (Claude Code 2.1.197, Codex 0.171.0) against the stub model server of
// internal/agentstub; testdata/real/README.md says how. These tests hold
// the parsers to what the programs really print.

func realFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRealClaudeOutputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file       string
		wantFailed bool
		wantResult string   // a substring of the result text
		wantWords  []string // substrings of the problem, for a failed result
		wantCost   bool
	}{
		{file: "claude/success.stream.jsonl", wantResult: `"status":"continue"`, wantCost: true},
		{file: "claude/error-500.stream.jsonl", wantFailed: true, wantWords: []string{"500"}},
		{file: "claude/error-overloaded.stream.jsonl", wantFailed: true, wantWords: []string{"529"}},
		{file: "claude/max-turns.stream.jsonl", wantFailed: true, wantWords: []string{"maximum number of turns"}, wantCost: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			o := parseClaudeStream(realFixture(t, tt.file))
			if o.Err != nil {
				t.Fatalf("no result: %v", o.Err)
			}
			if got := o.Result.failed(); got != tt.wantFailed {
				t.Fatalf("failed() = %v, want %v (%s)", got, tt.wantFailed, o.Result.problem())
			}
			if tt.wantResult != "" && !strings.Contains(o.Result.Result, tt.wantResult) {
				t.Errorf("result %q lacks %q", o.Result.Result, tt.wantResult)
			}
			for _, w := range tt.wantWords {
				if p := o.Result.problem(); !strings.Contains(p, w) {
					t.Errorf("problem %q lacks %q", p, w)
				}
			}
			if tt.wantCost && (!o.Usage.CostReported || o.Usage.CostUSD <= 0) {
				t.Errorf("usage %+v: want the reported cost", o.Usage)
			}
			if !tt.wantFailed && (o.Usage.InputTokens <= 0 || o.Usage.OutputTokens <= 0 || o.Usage.Requests <= 0) {
				t.Errorf("usage %+v: want tokens and requests", o.Usage)
			}
		})
	}
}

// TestRealClaudeSuccessFigures: the figures grub takes from a real
// stream-json result are the ones Claude Code printed.
func TestRealClaudeSuccessFigures(t *testing.T) {
	t.Parallel()
	o := parseClaudeStream(realFixture(t, "claude/success.stream.jsonl"))
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	// The result line of the capture: 203 input, 606 cache writes, 4030
	// cache reads, 103 output, $0.0056355.
	if o.Usage.InputTokens != 203+606+4030 || o.Usage.CachedInputTokens != 4030 || o.Usage.OutputTokens != 103 {
		t.Errorf("tokens %+v, want input 4839 (with cache writes and reads), cached 4030, output 103", o.Usage)
	}
	if math.Abs(o.Usage.CostUSD-0.0056355) > 1e-9 {
		t.Errorf("cost %v, want 0.0056355", o.Usage.CostUSD)
	}
}

func TestRealCodexOutputs(t *testing.T) {
	t.Parallel()
	ok := parseCodexEvents(realFixture(t, "codex/success.jsonl"))
	if !ok.Completed || ok.Failure != "" || !strings.Contains(ok.Final, "<loop-state>") || ok.Malformed != nil {
		t.Errorf("success: %+v", ok)
	}
	if ok.Usage.InputTokens <= 0 || ok.Usage.OutputTokens <= 0 || ok.Usage.CostReported || ok.Usage.Requests != 0 {
		t.Errorf("success usage %+v: want tokens, no cost, no request count", ok.Usage)
	}
	failed := parseCodexEvents(realFixture(t, "codex/error-500.jsonl"))
	if failed.Completed || failed.Failure == "" {
		t.Errorf("error-500: %+v, want a failure", failed)
	}
	offline := parseCodexEvents(realFixture(t, "codex/unreachable.jsonl"))
	if offline.Completed || !strings.Contains(offline.Failure, "Reconnecting") {
		t.Errorf("unreachable: %+v, want the reconnect error as the failure", offline)
	}
}
