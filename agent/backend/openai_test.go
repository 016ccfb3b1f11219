package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/agent/tools"
	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/llm/llmtest"
	"github.com/grub-dev/grub/loopstate"
)

// fakeTool is a tool whose behaviour a test chooses.
type fakeTool struct {
	name string
	run  func(ctx context.Context, args json.RawMessage) (tools.Result, error)
}

func (f *fakeTool) Name() string        { return f.name }
func (f *fakeTool) Description() string { return "A test tool named " + f.name + "." }
func (f *fakeTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)
}
func (f *fakeTool) Run(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	return f.run(ctx, args)
}

// echoTool answers with its arguments.
func echoTool(name string) *fakeTool {
	return &fakeTool{name: name, run: func(_ context.Context, args json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: name + " got " + string(args)}, nil
	}}
}

// newClient is a real llm.Client for srv that never sleeps between retries.
func newClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL:        srv.URL(),
		Model:          "fake-model",
		RequestTimeout: 2 * time.Second,
		Backoff:        func(int) time.Duration { return time.Millisecond },
		Sleep:          func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newTurn returns a turn in a fresh workspace with a harness folder.
func newTurn(t *testing.T, iteration int, prompt string) agent.Turn {
	t.Helper()
	ws := t.TempDir()
	hd := filepath.Join(ws, ".grub", "0123abcd")
	if err := os.MkdirAll(hd, 0o755); err != nil {
		t.Fatal(err)
	}
	return agent.Turn{
		TaskID: "0123abcd", Iteration: iteration, Phase: "execution", Prompt: prompt,
		Workspace: ws, HarnessDir: hd, Locale: "en", Timeout: time.Minute,
		TranscriptFile: transcriptFile(hd, iteration), SpillDir: filepath.Join(hd, "spill"),
	}
}

func u(prompt, cached, completion int) *llmtest.Usage {
	return &llmtest.Usage{Prompt: prompt, Cached: cached, Completion: completion}
}

const finalMessage = "Done.\n<loop-state>{\"status\":\"continue\",\"summary\":\"edited greet.txt and checked it\",\"nextStep\":\"implement the next feature\",\"feature\":\"greeting\"}</loop-state>"

// TestOpenAIMultiStepTurn drives the real tools: the model reads a file,
// edits it, runs a command and ends with a loop-state block.
func TestOpenAIMultiStepTurn(t *testing.T) {
	turn := newTurn(t, 7, "Make greet.txt say hello, world.")
	if err := os.WriteFile(filepath.Join(turn.Workspace, "greet.txt"), []byte("hello, moon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.Start(t,
		llmtest.Calls(u(1000, 0, 20), llmtest.Call("read_file", map[string]any{"path": "greet.txt"})),
		llmtest.Calls(u(1100, 900, 30), llmtest.Call("edit_file", map[string]any{"path": "greet.txt", "old_string": "moon", "new_string": "world"})),
		llmtest.Calls(u(1200, 1000, 25), llmtest.Call("shell", map[string]any{"command": "cat greet.txt && echo checked >&2"})),
		llmtest.Text(finalMessage, u(1300, 1100, 60)),
	)
	ag := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)})
	res, err := ag.RunTurn(context.Background(), turn)
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	d, err := loopstate.Parse(res.FinalMessage)
	if err != nil || d.Status != "continue" || d.Feature != "greeting" {
		t.Fatalf("final message does not carry the loop-state: %+v, %v", d, err)
	}
	got, err := os.ReadFile(filepath.Join(turn.Workspace, "greet.txt"))
	if err != nil || string(got) != "hello, world\n" {
		t.Fatalf("greet.txt = %q, %v; want the edit applied", got, err)
	}
	want := agent.Usage{InputTokens: 4600, CachedInputTokens: 3000, OutputTokens: 135, Requests: 4}
	if res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	// Each request carries the conversation so far: the read result holds
	// the file, the shell result the edited text.
	last := reqs[3].Decoded
	if len(last) != 9 {
		t.Fatalf("last request has %d messages, want system, context, user and 3 × (call, result)", len(last))
	}
	if last[0].Role != "system" || last[0].Content != SystemPrompt() || last[1].Role != "user" || !strings.HasPrefix(last[1].Content, "<turn-context>") ||
		last[2].Role != "user" || last[2].Content != turn.Prompt {
		t.Errorf("conversation does not start with the system prompt, the turn context and the turn prompt: %+v", last[:3])
	}
	for i, wantIn := range map[int]string{4: "hello, moon", 8: "hello, world"} {
		if last[i].Role != "tool" || !strings.Contains(last[i].Content, wantIn) {
			t.Errorf("message %d = %+v, want a tool result containing %q", i, last[i], wantIn)
		}
		if last[i].ToolCallID != last[i-1].ToolCalls[0].ID {
			t.Errorf("message %d answers %q, want %q", i, last[i].ToolCallID, last[i-1].ToolCalls[0].ID)
		}
	}

	if res.Transcript != transcriptFile(turn.HarnessDir, 7) || !strings.HasSuffix(res.Transcript, filepath.Join("turns", "0007.jsonl")) {
		t.Errorf("transcript = %q", res.Transcript)
	}
	entries, err := ReadTranscript(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, e.Type)
	}
	wantKinds := "context request tool_call tool_result request tool_call tool_result request tool_call tool_result request final"
	if strings.Join(kinds, " ") != wantKinds {
		t.Errorf("transcript kinds = %v, want %s", kinds, wantKinds)
	}
	if e := entries[0]; e.Text != last[1].Content {
		t.Errorf("context entry = %+v, want the turn context sent", e)
	}
	if e := entries[2]; e.Name != "read_file" || e.Arguments != `{"path":"greet.txt"}` || e.ID == "" {
		t.Errorf("tool_call entry = %+v", e)
	}
	if e := entries[4]; e.InputTokens != 1100 || e.CachedInputTokens != 900 || e.OutputTokens != 30 || e.N != 2 {
		t.Errorf("request entry = %+v", e)
	}
	if e := entries[len(entries)-1]; e.Text != finalMessage {
		t.Errorf("final entry = %+v", e)
	}
}

// TestOpenAIRetriesCounted checks that every fault the client retries ends
// in one successful request whose retries are in the transcript.
func TestOpenAIRetriesCounted(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Step{Fault: llmtest.RateLimit, RetryAfter: "1"},
		llmtest.Step{Fault: llmtest.ServerError},
		llmtest.Step{Fault: llmtest.Slow},
		llmtest.Step{Fault: llmtest.Drop},
		llmtest.Step{Fault: llmtest.EmptyChoices},
		llmtest.Text(finalMessage, u(10, 0, 5)),
	)
	turn := newTurn(t, 1, "go")
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{}}).RunTurn(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != (agent.Usage{InputTokens: 10, OutputTokens: 5, Requests: 1}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	entries, err := ReadTranscript(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || entries[0].Type != EntryContext || entries[1].Type != EntryRequest || entries[1].Retries != 5 {
		t.Errorf("transcript = %+v, want one request with 5 retries and the final", entries)
	}
}

func TestOpenAIQuotaEndsUsageLimited(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Calls(u(100, 0, 10), llmtest.Call("echo", `{"x":"1"}`)),
		llmtest.Step{Fault: llmtest.Quota},
	)
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{echoTool("echo")}}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if !errors.Is(err, agent.ErrUsageLimited) {
		t.Fatalf("err = %v, want ErrUsageLimited", err)
	}
	if res.Usage != (agent.Usage{InputTokens: 100, OutputTokens: 10, Requests: 1}) {
		t.Errorf("usage = %+v, want the first request's", res.Usage)
	}
}

func TestOpenAIPermanentErrorEndsTurn(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Step{Fault: llmtest.Status, Status: 401, Message: "bad key"})
	_, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{}}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if err == nil || errors.Is(err, agent.ErrUsageLimited) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v, want a failure telling to check OPENAI_API_KEY", err)
	}
	// No retry changes it: the run stops at once (agent.SetupError).
	var se *agent.SetupError
	if !errors.As(err, &se) || se.Cause != "model request 1: model request rejected: HTTP 401: bad key" || !strings.HasPrefix(se.Fix, "check OPENAI_API_KEY") {
		t.Errorf("err = %v (%T), want an *agent.SetupError with the cause and the fix apart", err, err)
	}
}

// The built-in agent's check before the first turn is the model list; a
// refused key is a setup error, an unlisted model a doubt.
func TestOpenAICheck(t *testing.T) {
	srv := llmtest.Start(t)
	srv.SetModels("fake-model")
	found, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)}).Check(context.Background())
	if err != nil || !strings.Contains(found, `serves the model "fake-model"`) {
		t.Errorf("Check = %q, %v", found, err)
	}
	srv.SetKey("sk-other")
	_, err = NewOpenAI(OpenAIConfig{Client: newClient(t, srv)}).Check(context.Background())
	var se *agent.SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Cause, "HTTP 401") || !strings.Contains(se.Fix, "OPENAI_API_KEY") {
		t.Errorf("Check with a wrong key: %v (%T), want an *agent.SetupError", err, err)
	}
	srv.SetKey("")
	srv.SetModels("another")
	_, err = NewOpenAI(OpenAIConfig{Client: newClient(t, srv)}).Check(context.Background())
	if err == nil || errors.As(err, &se) {
		t.Errorf("Check of an unlisted model: %v, want a doubt, not a setup error", err)
	}
}

func TestOpenAIUsage(t *testing.T) {
	tests := []struct {
		name  string
		steps []llmtest.Step
		want  agent.Usage
	}{
		{"reported with cached tokens", []llmtest.Step{
			llmtest.Calls(u(12345, 12000, 77), llmtest.Call("echo", `{"x":"a"}`)),
			llmtest.Calls(u(13000, 12288, 101), llmtest.Call("echo", `{"x":"b"}`)),
			llmtest.Text("end", u(13500, 12800, 9)),
		}, agent.Usage{InputTokens: 38845, CachedInputTokens: 37088, OutputTokens: 187, Requests: 3}},
		{"one request without usage", []llmtest.Step{
			llmtest.Calls(u(500, 100, 10), llmtest.Call("echo", `{"x":"a"}`)),
			llmtest.Text("end", nil),
		}, agent.Usage{}}, // checked below: estimated
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, tt.steps...)
			res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{echoTool("echo")}}).
				RunTurn(context.Background(), newTurn(t, 1, "go"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != (agent.Usage{}) {
				if res.Usage != tt.want {
					t.Errorf("usage = %+v, want %+v", res.Usage, tt.want)
				}
				return
			}
			if !res.Usage.Estimated || res.Usage.InputTokens <= 500 || res.Usage.CachedInputTokens != 100 || res.Usage.OutputTokens != 11 || res.Usage.Requests != 2 {
				t.Errorf("usage = %+v, want 500 reported input plus an estimate, 100 cached, 10+1 output, estimated", res.Usage)
			}
		})
	}
}

func TestOpenAIRequestCap(t *testing.T) {
	var steps []llmtest.Step
	for i := range 3 {
		steps = append(steps, llmtest.Calls(nil, llmtest.Call("echo", fmt.Sprintf(`{"x":"%d"}`, i))))
	}
	srv := llmtest.Start(t, steps...)
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{echoTool("echo")}, MaxRequests: 3}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if err == nil || !strings.Contains(err.Error(), "request cap reached") {
		t.Fatalf("err = %v, want request cap reached", err)
	}
	if res.Usage.Requests != 3 || len(srv.Requests()) != 3 {
		t.Errorf("requests = %d (server saw %d), want 3", res.Usage.Requests, len(srv.Requests()))
	}
}

func TestOpenAIModelMistakesGoBackToTheModel(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Calls(nil, llmtest.Call("no_such_tool", `{}`)),
		llmtest.Calls(nil, llmtest.ToolCall{Name: "echo", Arguments: `{"x":`}),
		llmtest.Calls(nil, llmtest.Call("fails", `{}`)),
		llmtest.Text("end", nil),
	)
	fails := &fakeTool{name: "fails", run: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: "error: no unique match", IsError: true}, nil
	}}
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{echoTool("echo"), fails}}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if err != nil || res.FinalMessage != "end" {
		t.Fatalf("RunTurn = %q, %v", res.FinalMessage, err)
	}
	msgs := srv.Requests()[3].Decoded
	for i, want := range map[int]string{4: `no tool named "no_such_tool"; the tools are echo, fails`, 6: "not valid JSON", 8: "no unique match"} {
		if !strings.Contains(msgs[i].Content, want) {
			t.Errorf("tool result %d = %q, want it to say %q", i, msgs[i].Content, want)
		}
	}
	entries, err := ReadTranscript(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	errorsSeen := 0
	for _, e := range entries {
		if e.Type == EntryToolResult && e.IsError {
			errorsSeen++
		}
	}
	if errorsSeen != 3 {
		t.Errorf("%d tool results marked isError in the transcript, want 3", errorsSeen)
	}
}

func TestOpenAIToolMachineryFailureEndsTurn(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Calls(nil, llmtest.Call("broken", `{}`)))
	broken := &fakeTool{name: "broken", run: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{}, errors.New("disk on fire")
	}}
	_, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{broken}}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("err = %v, want the tool's failure", err)
	}
}

// TestOpenAIToolCallWrittenBeforeRun checks the transcript holds a tool
// call's intent while the tool runs.
func TestOpenAIToolCallWrittenBeforeRun(t *testing.T) {
	turn := newTurn(t, 12, "go")
	var seen []TranscriptEntry
	var readErr error
	spy := &fakeTool{name: "spy", run: func(context.Context, json.RawMessage) (tools.Result, error) {
		seen, readErr = ReadTranscript(transcriptFile(turn.HarnessDir, 12))
		return tools.Result{Text: "ok"}, nil
	}}
	srv := llmtest.Start(t, llmtest.Calls(nil, llmtest.ToolCall{ID: "c1", Name: "spy", Arguments: `{"x":"y"}`}), llmtest.Text("end", nil))
	if _, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{spy}}).RunTurn(context.Background(), turn); err != nil {
		t.Fatal(err)
	}
	if readErr != nil {
		t.Fatal(readErr)
	}
	if len(seen) != 3 || seen[2].Type != EntryToolCall || seen[2].ID != "c1" || seen[2].Arguments != `{"x":"y"}` {
		t.Fatalf("transcript while the tool ran = %+v, want the context, the request and the tool call", seen)
	}
}

// TestOpenAIPromptCacheStable runs a three-turn task with the real tools
// and checks that every request carries the same system message and tool
// definitions, byte for byte.
func TestOpenAIPromptCacheStable(t *testing.T) {
	turn := newTurn(t, 1, "")
	srv := llmtest.Start(t)
	for i := range 3 {
		srv.Push(
			llmtest.Calls(u(100, 50, 5), llmtest.Call("write_file", map[string]any{"path": fmt.Sprintf("f%d.txt", i), "content": "x"})),
			llmtest.Calls(u(100, 50, 5), llmtest.Call("list_files", map[string]any{})),
			llmtest.Text(finalMessage, u(100, 50, 5)),
		)
	}
	ag := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)})
	for i := range 3 {
		turn.Iteration = i + 1
		turn.TranscriptFile = transcriptFile(turn.HarnessDir, i+1)
		turn.Prompt = fmt.Sprintf("turn %d: different context every turn", i+1)
		if _, err := ag.RunTurn(context.Background(), turn); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 9 {
		t.Fatalf("%d requests, want 9", len(reqs))
	}
	for _, r := range reqs[1:] {
		if !bytes.Equal(r.Messages[0], reqs[0].Messages[0]) {
			t.Errorf("request %d: system message differs:\n%s\nvs\n%s", r.N, r.Messages[0], reqs[0].Messages[0])
		}
		if !bytes.Equal(r.Tools, reqs[0].Tools) {
			t.Errorf("request %d: tool definitions differ", r.N)
		}
	}
	var tls []struct {
		Function struct{ Name string } `json:"function"`
	}
	if err := json.Unmarshal(reqs[0].Tools, &tls); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tls {
		names = append(names, tl.Function.Name)
	}
	if got := strings.Join(names, ","); got != "shell,read_file,write_file,edit_file,list_files,glob,grep" {
		t.Errorf("tools offered = %s", got)
	}
	if reqs[3].Decoded[2].Content != "turn 2: different context every turn" {
		t.Errorf("turn 2's user message = %q", reqs[3].Decoded[2].Content)
	}
	for i := 1; i <= 3; i++ {
		if _, err := os.Stat(transcriptFile(turn.HarnessDir, i)); err != nil {
			t.Errorf("turn %d transcript: %v", i, err)
		}
	}
}

func TestOpenAICancellation(t *testing.T) {
	blocking := func(started chan<- struct{}) *fakeTool {
		return &fakeTool{name: "wait", run: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			close(started)
			<-ctx.Done()
			return tools.Result{}, ctx.Err()
		}}
	}
	t.Run("cancelled while a tool runs", func(t *testing.T) {
		started := make(chan struct{})
		srv := llmtest.Start(t, llmtest.Calls(u(10, 0, 1), llmtest.Call("wait", `{}`)))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{blocking(started)}}).
			RunTurn(ctx, newTurn(t, 1, "go"))
		if !errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrTimeout) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if want := (agent.Usage{InputTokens: 10, OutputTokens: 1, Requests: 1}); res.Usage != want {
			t.Errorf("usage = %+v, want the first request's %+v kept", res.Usage, want)
		}
	})
	t.Run("turn timeout while a tool runs", func(t *testing.T) {
		started := make(chan struct{})
		srv := llmtest.Start(t, llmtest.Calls(u(20, 5, 3), llmtest.Call("wait", `{}`)))
		turn := newTurn(t, 1, "go")
		turn.Timeout = 50 * time.Millisecond
		res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{blocking(started)}}).
			RunTurn(context.Background(), turn)
		if !errors.Is(err, agent.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if want := (agent.Usage{InputTokens: 20, CachedInputTokens: 5, OutputTokens: 3, Requests: 1}); res.Usage != want {
			t.Errorf("usage = %+v, want the request made before the timeout %+v kept", res.Usage, want)
		}
	})
	t.Run("cancelled while the model thinks", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Step{Fault: llmtest.Slow})
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		go func() {
			for len(srv.Requests()) == 0 {
				time.Sleep(time.Millisecond)
			}
			once.Do(cancel)
		}()
		c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m"}) // no request timeout to hide behind
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewOpenAI(OpenAIConfig{Client: c, Tools: []tools.Tool{}}).RunTurn(ctx, newTurn(t, 1, "go"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancelled before the turn", func(t *testing.T) {
		srv := llmtest.Start(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{}}).RunTurn(ctx, newTurn(t, 1, "go"))
		if !errors.Is(err, context.Canceled) || len(srv.Requests()) != 0 {
			t.Fatalf("err = %v after %d requests, want context.Canceled before any request", err, len(srv.Requests()))
		}
	})
}

func TestSystemPromptHasNoLoopStateExample(t *testing.T) {
	if strings.TrimSpace(SystemPrompt()) == "" {
		t.Fatal("empty system prompt")
	}
	if _, err := loopstate.Parse(SystemPrompt()); err == nil {
		t.Error("the system prompt holds a loop-state block that validates")
	}
}

// The shell tool's process groups reach Turn.Started, so the controller can
// record them in the lock and end them after a crash.
func TestOpenAIReportsShellProcessGroups(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Calls(nil, llmtest.Call("shell", map[string]string{"command": "true"})),
		llmtest.Text("done", nil))
	turn := newTurn(t, 1, "go")
	var mu sync.Mutex
	var groups []int
	turn.Started = func(pgid int) { mu.Lock(); groups = append(groups, pgid); mu.Unlock() }
	if _, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)}).RunTurn(context.Background(), turn); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(groups) == 0 || groups[0] <= 1 {
		t.Fatalf("Started got %v, want the shell command's process group", groups)
	}
}

// The tasks folder, protected files and skipped folders of the turn reach
// the built-in tools.
func TestOpenAITurnConfinesTools(t *testing.T) {
	turn := newTurn(t, 1, "peek")
	turn.TasksDir = ".grub"
	turn.Protected = map[string]string{"state.json": "state.json is off limits"}
	turn.Skipped = []string{"turns"}
	for name, text := range map[string]string{"state.json": "{}\n", "turns/0001.jsonl": "needle\n"} {
		p := filepath.Join(turn.HarnessDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.Start(t,
		llmtest.Calls(nil, llmtest.Call("read_file", map[string]any{"path": ".grub/0123abcd/state.json"})),
		llmtest.Calls(nil, llmtest.Call("grep", map[string]any{"pattern": "needle"})),
		llmtest.Text(finalMessage, nil),
	)
	if _, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)}).RunTurn(context.Background(), turn); err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	last := srv.Requests()[2].Decoded
	if got := last[4].Content; !strings.Contains(got, "state.json is off limits") {
		t.Errorf("read_file of a protected file = %q, want the refusal", got)
	}
	if got := last[6].Content; strings.Contains(got, "0001.jsonl") {
		t.Errorf("grep entered a skipped folder: %q", got)
	}
}
