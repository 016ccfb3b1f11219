//go:build linux

package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
)

// recorder collects Turn.Activity calls.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) tell(what string) {
	r.mu.Lock()
	r.seen = append(r.seen, what)
	r.mu.Unlock()
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func readSample(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseClaudeStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         string
		wantFailed bool
		wantResult string
		wantUsage  agent.Usage
		wantErr    string // substring of Err; empty means none
	}{
		{name: "success with tool calls", in: string(readSample(t, "claude", "stream_success.jsonl")),
			wantResult: "Added the --verbose flag; go test ./... passes.", wantUsage: claudeStreamSuccessUsage},
		{name: "api error with subtype success", in: string(readSample(t, "claude", "stream_api_error.jsonl")), wantFailed: true,
			wantResult: `API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CVx"}`,
			wantUsage:  agent.Usage{InputTokens: 3904, OutputTokens: 40, Requests: 1, CostUSD: 0.01497, CostReported: true}},
		{name: "max turns", in: string(readSample(t, "claude", "stream_max_turns.jsonl")), wantFailed: true,
			wantUsage: agent.Usage{InputTokens: 8297, CachedInputTokens: 4100, OutputTokens: 47, Requests: 2, CostUSD: 0.0181, CostReported: true}},
		{name: "no result: the messages' usage so far, the last figure of each id, no cost",
			in: `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":3,"cache_read_input_tokens":10,"output_tokens":1}}}` + "\n" +
				`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"usage":{"input_tokens":3,"cache_read_input_tokens":10,"output_tokens":9}}}` + "\n" +
				`{"type":"assistant","message":{"id":"m2","content":[],"usage":{"input_tokens":1,"output_tokens":2}}}`,
			wantUsage: agent.Usage{InputTokens: 14, CachedInputTokens: 10, OutputTokens: 11, Requests: 2}, wantErr: "without a result message"},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "not JSON", in: "hello\n", wantErr: "line 1 is not a JSON event"},
		{name: "a bad result line", in: `{"type":"result","subtype":"success","usage":{"output_tokens":-4}}`, wantErr: "negative"},
		{name: "CRLF and no final newline", in: "{\"type\":\"system\",\"subtype\":\"init\"}\r\n" + `{"type":"result","subtype":"success","result":"ok","num_turns":1}`,
			wantResult: "ok", wantUsage: agent.Usage{Requests: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parseClaudeStream([]byte(tc.in))
			if o.Usage != tc.wantUsage {
				t.Errorf("Usage = %+v, want %+v", o.Usage, tc.wantUsage)
			}
			if tc.wantErr != "" {
				if o.Err == nil || !strings.Contains(o.Err.Error(), tc.wantErr) {
					t.Fatalf("Err = %v, want one containing %q", o.Err, tc.wantErr)
				}
				return
			}
			if o.Err != nil {
				t.Fatalf("Err = %v", o.Err)
			}
			if o.Result.failed() != tc.wantFailed || o.Result.Result != tc.wantResult {
				t.Errorf("result failed=%v %q, want failed=%v %q", o.Result.failed(), o.Result.Result, tc.wantFailed, tc.wantResult)
			}
		})
	}
}

// The events arrive in pieces of any size; what the streams make of them
// must not depend on where the pieces are cut.
func TestStreamsChunked(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"stream_success.jsonl", "stream_api_error.jsonl", "stream_max_turns.jsonl"} {
		in := readSample(t, "claude", name)
		want := parseClaudeStream(in)
		for _, size := range []int{1, 3, 64, 4096} {
			s := newClaudeStream(&transcript{}, "", nil, newStallWatch(0, nil))
			for rest := in; len(rest) > 0; rest = rest[min(size, len(rest)):] {
				if n, err := s.Write(rest[:min(size, len(rest))]); err != nil || n != min(size, len(rest)) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := s.finish()
			if got.Usage != want.Usage || got.Result.Result != want.Result.Result || got.Result.Subtype != want.Result.Subtype {
				t.Errorf("%s in chunks of %d: %+v, want %+v", name, size, got, want)
			}
		}
	}
	for _, name := range []string{"tools.jsonl", "offline.jsonl"} {
		in := readSample(t, "codex", name)
		want := parseCodexEvents(in)
		for _, size := range []int{1, 5, 4096} {
			p := newCodexEvents(&transcript{}, "", nil, newStallWatch(0, nil))
			for rest := in; len(rest) > 0; rest = rest[min(size, len(rest)):] {
				_, _ = p.Write(rest[:min(size, len(rest))])
			}
			if got := p.outcome(); got != want {
				t.Errorf("%s in chunks of %d: %+v, want %+v", name, size, got, want)
			}
		}
	}
}

// entryKinds lists the transcript's entries as "type" or "type:name".
func entryKinds(es []TranscriptEntry) []string {
	var out []string
	for _, e := range es {
		k := e.Type
		if e.Name != "" {
			k += ":" + e.Name
		}
		out = append(out, k)
	}
	return out
}

func TestClaudeStreamTranscriptAndActivity(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "turns", "0001.jsonl")
	tr, err := openTranscript(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	s := newClaudeStream(tr, "/work/ws", rec.tell, newStallWatch(0, nil))
	_, _ = s.Write(readSample(t, "claude", "stream_success.jsonl"))
	s.finish()
	if err := errors.Join(s.transcriptErr(), tr.close()); err != nil {
		t.Fatal(err)
	}
	es, err := ReadTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"request", "request", "tool_call:Bash", "tool_result:Bash", "request", "tool_call:Edit", "tool_result:Edit", "request", "usage", "final"}
	if got := entryKinds(es); !slices.Equal(got, want) {
		t.Fatalf("entries = %q, want %q", got, want)
	}
	// The request entries add up to the messages' usage; the tool call
	// carries its input; the failed tool result is marked.
	var in, out int64
	for _, e := range es {
		if e.Type == EntryRequest {
			in, out = in+e.InputTokens, out+e.OutputTokens
		}
	}
	if in != 10+4350+38200 || out != 265 {
		t.Errorf("request entries add up to %d in, %d out", in, out)
	}
	if es[2].Arguments != `{"command":"go test ./...","description":"Run the tests"}` || es[2].ID != "toolu_01" || !es[3].IsError {
		t.Errorf("tool call/result = %+v / %+v", es[2], es[3])
	}
	if es[6].Text != "The file /work/ws/cli/flags.go has been updated." || es[8].CostUSD != 0.04205 || es[9].Text != "Added the --verbose flag; go test ./... passes." {
		t.Errorf("entries = %+v", es)
	}
	wantAct := []string{"writing", "Bash: go test ./...", "thinking", "editing cli/flags.go", "thinking", "writing"}
	if got := rec.all(); !slices.Equal(got, wantAct) {
		t.Errorf("activity = %q, want %q", got, wantAct)
	}
}

func TestCodexEventsTranscriptAndActivity(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "0001.jsonl")
	tr, err := openTranscript(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	p := newCodexEvents(tr, "/work/ws", rec.tell, newStallWatch(0, nil))
	_, _ = p.Write(readSample(t, "codex", "tools.jsonl"))
	o := p.outcome()
	if err := errors.Join(p.transcriptErr(), tr.close()); err != nil {
		t.Fatal(err)
	}
	if want := (codexOutcome{Final: "Added --verbose with a test; go test ./... passes.", Completed: true,
		Usage: agent.Usage{InputTokens: 25310, CachedInputTokens: 19200, OutputTokens: 911}}); o != want {
		t.Errorf("outcome = %+v, want %+v", o, want)
	}
	es, err := ReadTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tool_call:shell", "tool_result:shell", "tool_call:file_change", "tool_result:file_change",
		"tool_call:docs.search", "tool_result:docs.search", "tool_call:shell", "tool_result:shell", "message", "usage"}
	if got := entryKinds(es); !slices.Equal(got, want) {
		t.Fatalf("entries = %q, want %q", got, want)
	}
	if es[0].Arguments != `{"command":"bash -lc 'go test ./...'"}` || !es[1].IsError || es[7].IsError || es[5].Text != "flag docs" {
		t.Errorf("entries = %+v", es)
	}
	if es[9].InputTokens != 25310 || es[9].OutputTokens != 911 {
		t.Errorf("usage entry = %+v", es[9])
	}
	wantAct := []string{"thinking", "planning", "shell: go test ./...", "thinking", "editing cli/flags.go, cli/flags_test.go",
		"thinking", "tool: docs.search", "thinking", "planning", "writing"}
	if got := rec.all(); !slices.Equal(got, wantAct) {
		t.Errorf("activity = %q, want %q", got, wantAct)
	}
}

func TestActivityText(t *testing.T) {
	t.Parallel()
	tests := []struct{ got, want string }{
		{claudeToolActivity("Bash", []byte(`{"command":"go test ./...\necho done"}`), ""), "Bash: go test ./...…"},
		{claudeToolActivity("Write", []byte(`{"file_path":"/ws/a/b.go"}`), "/ws"), "editing a/b.go"},
		{claudeToolActivity("Read", []byte(`{"file_path":"/elsewhere/x"}`), "/ws"), "reading /elsewhere/x"},
		{claudeToolActivity("Task", []byte(`{"description":"Explore the parser"}`), ""), "subagent: Explore the parser"},
		{claudeToolActivity("mcp__x__y", []byte(`not json`), ""), "mcp__x__y"},
		{oneLine(strings.Repeat("é", 60)), strings.Repeat("é", 40) + "…"},
		{unwrapShell("bash -lc 'go test ./...'"), "go test ./..."},
		{unwrapShell(`bash -lc "echo 'a'"`), `"echo 'a'"`},
		{unwrapShell("ls"), "ls"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%d: %q, want %q", i, tc.got, tc.want)
		}
	}
}

// A turn that times out or is cancelled keeps the usage reported so far,
// and its transcript.
func TestProgramBackendsKeepPartialUsage(t *testing.T) {
	t.Parallel()
	backends := map[string]struct {
		new  func(t *testing.T) agent.Agent
		want agent.Usage
	}{
		"claude": {func(t *testing.T) agent.Agent {
			return NewClaude(ClaudeConfig{Bin: fakeAgentBin(t, "fake-claude.sh", "claude")})
		},
			agent.Usage{InputTokens: 8 + 4200 + 24000, CachedInputTokens: 24000, OutputTokens: 205, Requests: 2}},
		"codex": {func(t *testing.T) agent.Agent {
			return NewCodex(CodexConfig{Bin: fakeAgentBin(t, "fake-codex.sh", "codex")})
		},
			agent.Usage{InputTokens: 800, CachedInputTokens: 500, OutputTokens: 30}},
	}
	for name, b := range backends {
		t.Run(name+"/timeout", func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "partial\n")
			turn.Timeout = 2 * time.Second
			turn.TranscriptFile = filepath.Join(turn.HarnessDir, "turns", "0001.jsonl")
			var rec recorder
			turn.Activity = rec.tell
			res, err := b.new(t).RunTurn(context.Background(), turn)
			if !errors.Is(err, agent.ErrTimeout) {
				t.Fatalf("error = %v, want ErrTimeout", err)
			}
			if res.Usage != b.want {
				t.Errorf("Usage = %+v, want %+v", res.Usage, b.want)
			}
			if res.Transcript != turn.TranscriptFile {
				t.Errorf("Transcript = %q", res.Transcript)
			}
			es, err := ReadTranscript(turn.TranscriptFile)
			if err != nil || len(es) == 0 || es[len(es)-1].Type != EntryError || !strings.Contains(es[len(es)-1].Error, "timed out") {
				t.Errorf("transcript = %+v, %v; want it to end with the timeout", es, err)
			}
			if len(rec.all()) == 0 {
				t.Error("no activity reported")
			}
		})
		t.Run(name+"/cancel", func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "partial\n")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go cancelWhenExists(filepath.Join(turn.HarnessDir, "child.pid"), cancel)
			res, err := b.new(t).RunTurn(ctx, turn)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want context.Canceled", err)
			}
			if res.Usage != b.want {
				t.Errorf("Usage = %+v, want %+v", res.Usage, b.want)
			}
		})
	}
}

// A program that only reports errors (a provider it cannot reach) fails
// the turn quoting the last of them once StallTimeout passes, well before
// the turn timeout; a timeout quotes the last error too.
func TestProgramBackendsStall(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		new  func(t *testing.T, stall time.Duration) agent.Agent
		said string
	}{
		"claude": {func(t *testing.T, stall time.Duration) agent.Agent {
			return NewClaude(ClaudeConfig{Bin: fakeAgentBin(t, "fake-claude.sh", "claude"), StallTimeout: stall})
		}, `"API request failed; retrying (status 529): overloaded_error"`},
		"codex": {func(t *testing.T, stall time.Duration) agent.Agent {
			return NewCodex(CodexConfig{Bin: fakeAgentBin(t, "fake-codex.sh", "codex"), StallTimeout: stall})
		}, `"Reconnecting... waiting for network"`},
	}
	for name, tc := range tests {
		t.Run(name+"/stalled", func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "offline\n")
			turn.Timeout = 2 * time.Minute
			_, err := tc.new(t, 300*time.Millisecond).RunTurn(context.Background(), turn)
			if err == nil || errors.Is(err, agent.ErrTimeout) || errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want a stall before the turn timeout", err)
			}
			for _, s := range []string{name + " made no progress for", "the last: " + tc.said} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
		t.Run(name+"/timeout quotes the last error", func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "offline\n")
			turn.Timeout = 1500 * time.Millisecond
			_, err := tc.new(t, time.Hour).RunTurn(context.Background(), turn)
			if !errors.Is(err, agent.ErrTimeout) || !strings.Contains(err.Error(), "(its last error: "+tc.said+")") {
				t.Fatalf("error = %v, want a timeout quoting the last error", err)
			}
		})
	}
}

func TestStallWatch(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	w := newStallWatch(time.Minute, func() time.Time { return now })
	now = now.Add(time.Hour)
	if w.stalled() {
		t.Error("stalled without any error event")
	}
	w.errorEvent("a")
	if w.stalled() {
		t.Error("stalled after one error event")
	}
	w.errorEvent("")
	if !w.stalled() || w.lastError() != "a" {
		t.Errorf("stalled = %v, last %q after two error events and an hour", w.stalled(), w.lastError())
	}
	w.progress()
	w.errorEvent("b")
	w.errorEvent("c")
	if w.stalled() {
		t.Error("stalled right after progress")
	}
	now = now.Add(time.Minute)
	if !w.stalled() || w.lastError() != "c" {
		t.Error("not stalled a minute after progress with two errors since")
	}
}
