package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// sleeps records the waits the client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ds...)
}

const backoff = 7 * time.Millisecond

func newClient(t *testing.T, srv *llmtest.Server, sl *sleeps) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL:        srv.URL(),
		Model:          "test-model",
		RequestTimeout: 2 * time.Second,
		Backoff:        func(int) time.Duration { return backoff },
		Sleep:          sl.sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var request = llm.Request{
	Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a test."},
		{Role: llm.RoleUser, Content: "Say hi."},
	},
	Tools: []llm.ToolDef{{
		Name:        "shell",
		Description: "Run a command.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
	}},
}

func TestCompleteRetries(t *testing.T) {
	ok := llmtest.Text("hi", &llmtest.Usage{Prompt: 100, Cached: 40, Completion: 5})
	tests := []struct {
		name      string
		steps     []llmtest.Step
		wantWaits []time.Duration
	}{
		{"429 with Retry-After seconds", []llmtest.Step{{Fault: llmtest.RateLimit, RetryAfter: "2"}, ok}, []time.Duration{2 * time.Second}},
		{"429 with Retry-After too long", []llmtest.Step{{Fault: llmtest.RateLimit, RetryAfter: "3600"}, ok}, []time.Duration{backoff}},
		{"429 without Retry-After", []llmtest.Step{{Fault: llmtest.RateLimit}, ok}, []time.Duration{backoff}},
		{"500", []llmtest.Step{{Fault: llmtest.ServerError}, ok}, []time.Duration{backoff}},
		{"503", []llmtest.Step{{Fault: llmtest.Status, Status: 503}, ok}, []time.Duration{backoff}},
		{"slow reply past the timeout", []llmtest.Step{{Fault: llmtest.Slow}, ok}, []time.Duration{backoff}},
		{"dropped connection", []llmtest.Step{{Fault: llmtest.Drop}, ok}, []time.Duration{backoff}},
		{"empty choice list", []llmtest.Step{{Fault: llmtest.EmptyChoices}, ok}, []time.Duration{backoff}},
		{"empty message", []llmtest.Step{llmtest.Text("", nil), ok}, []time.Duration{backoff}},
		{"several faults in a row", []llmtest.Step{
			{Fault: llmtest.ServerError}, {Fault: llmtest.Drop}, {Fault: llmtest.EmptyChoices},
			{Fault: llmtest.RateLimit, RetryAfter: "1"}, {Fault: llmtest.Slow}, ok,
		}, []time.Duration{backoff, backoff, backoff, time.Second, backoff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, tt.steps...)
			sl := &sleeps{}
			resp, err := newClient(t, srv, sl).Complete(context.Background(), request)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Message.Content != "hi" || resp.Message.Role != llm.RoleAssistant {
				t.Errorf("message = %+v, want the assistant's hi", resp.Message)
			}
			if want := len(tt.steps) - 1; resp.Retries != want {
				t.Errorf("Retries = %d, want %d", resp.Retries, want)
			}
			if got := len(srv.Requests()); got != len(tt.steps) {
				t.Errorf("server saw %d requests, want %d", got, len(tt.steps))
			}
			if got := sl.got(); !equalDurations(got, tt.wantWaits) {
				t.Errorf("waits = %v, want %v", got, tt.wantWaits)
			}
			want := llm.Usage{Prompt: 100, CachedPrompt: 40, Completion: 5}
			if resp.Usage != want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want)
			}
		})
	}
}

func TestCompleteGivesUpAfterMaxRetries(t *testing.T) {
	steps := make([]llmtest.Step, llm.DefaultMaxRetries+1)
	for i := range steps {
		steps[i] = llmtest.Step{Fault: llmtest.ServerError}
	}
	srv := llmtest.Start(t, steps...)
	sl := &sleeps{}
	resp, err := newClient(t, srv, sl).Complete(context.Background(), request)
	if err == nil {
		t.Fatal("Complete succeeded against a server that always fails")
	}
	if !strings.Contains(err.Error(), "after 5 retries") || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("error %q does not say it gave up after 5 retries of an HTTP 500", err)
	}
	if resp.Retries != llm.DefaultMaxRetries {
		t.Errorf("Retries = %d, want %d", resp.Retries, llm.DefaultMaxRetries)
	}
	if len(sl.got()) != llm.DefaultMaxRetries {
		t.Errorf("waited %d times, want %d", len(sl.got()), llm.DefaultMaxRetries)
	}
}

func TestCompleteNotRetried(t *testing.T) {
	tests := []struct {
		name      string
		step      llmtest.Step
		quota     bool
		wantInErr []string
	}{
		{"insufficient_quota 429", llmtest.Step{Fault: llmtest.Quota}, true, []string{"quota"}},
		{"402 payment required", llmtest.Step{Fault: llmtest.Status, Status: 402}, true, []string{"402"}},
		{"insufficient_quota code on 403", llmtest.Step{Fault: llmtest.Status, Status: 403, Code: "insufficient_quota"}, true, []string{"403"}},
		{"401", llmtest.Step{Fault: llmtest.Status, Status: 401, Message: "Incorrect API key"}, false, []string{"HTTP 401", "Incorrect API key", "check OPENAI_API_KEY"}},
		{"404", llmtest.Step{Fault: llmtest.Status, Status: 404, Message: "model not found"}, false, []string{"HTTP 404", "--model"}},
		{"400", llmtest.Step{Fault: llmtest.Status, Status: 400, Message: "context_length_exceeded"}, false, []string{"HTTP 400", "context_length_exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, tt.step)
			sl := &sleeps{}
			resp, err := newClient(t, srv, sl).Complete(context.Background(), request)
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			if got := errors.Is(err, llm.ErrQuota); got != tt.quota {
				t.Errorf("errors.Is(%q, ErrQuota) = %v, want %v", err, got, tt.quota)
			}
			for _, w := range tt.wantInErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if resp.Retries != 0 || len(sl.got()) != 0 || len(srv.Requests()) != 1 {
				t.Errorf("retried: Retries=%d waits=%v requests=%d", resp.Retries, sl.got(), len(srv.Requests()))
			}
		})
	}
}

func TestCompleteUsage(t *testing.T) {
	tests := []struct {
		name string
		step llmtest.Step
		want llm.Usage
	}{
		{"reported with cached tokens", llmtest.Text("hello", &llmtest.Usage{Prompt: 1234, Cached: 1000, Completion: 56}),
			llm.Usage{Prompt: 1234, CachedPrompt: 1000, Completion: 56}},
		{"not reported", llmtest.Text("hello", nil), llm.Usage{
			Prompt:     llm.EstimateTokens(llm.RequestChars(request)),
			Completion: 2, // "hello" is 5 bytes
			Estimated:  true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, tt.step)
			resp, err := newClient(t, srv, &sleeps{}).Complete(context.Background(), request)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != tt.want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.want)
			}
		})
	}
}

func TestCompleteRequestAndToolCalls(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Calls(nil,
		llmtest.ToolCall{ID: "call_a", Name: "shell", Arguments: `{"command":"ls"}`},
		llmtest.ToolCall{ID: "call_b", Name: "read_file", Arguments: `{"path":"x"}`},
	))
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	req := request
	req.Messages = append(append([]llm.Message(nil), request.Messages...),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c0", Name: "shell", Arguments: `{"command":"pwd"}`}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c0", Content: "/w"},
	)
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "call_a", Name: "shell", Arguments: `{"command":"ls"}`}, {ID: "call_b", Name: "read_file", Arguments: `{"path":"x"}`}}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0] != want[0] || resp.Message.ToolCalls[1] != want[1] {
		t.Errorf("tool calls = %+v, want %+v", resp.Message.ToolCalls, want)
	}
	if resp.FinishReason != "tool_calls" {
		t.Errorf("finish reason = %q", resp.FinishReason)
	}
	got := srv.Requests()[0]
	if got.Model != "m1" {
		t.Errorf("model = %q", got.Model)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	if len(got.Decoded) != 4 || got.Decoded[2].ToolCalls[0].Function.Arguments != `{"command":"pwd"}` || got.Decoded[3].ToolCallID != "c0" {
		t.Errorf("messages = %+v", got.Decoded)
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(got.Tools, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Type != "function" || tools[0].Function.Name != "shell" ||
		string(tools[0].Function.Parameters) != string(request.Tools[0].Parameters) {
		t.Errorf("tools = %s", got.Tools)
	}
}

func TestCompleteCancelled(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Step{Fault: llmtest.Slow})
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = c.Complete(ctx, request)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCompleteCancelledWhileWaiting(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Step{Fault: llmtest.ServerError})
	ctx, cancel := context.WithCancel(context.Background())
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m", Sleep: func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(ctx, request)
	if !errors.Is(err, context.Canceled) || resp.Retries != 1 {
		t.Fatalf("err = %v, retries = %d; want context.Canceled after 1 retry", err, resp.Retries)
	}
}

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     llm.Config
		wantErr string
	}{
		{"no model", llm.Config{APIKey: "k"}, "--model"},
		{"OpenAI without a key", llm.Config{Model: "m"}, "OPENAI_API_KEY"},
		{"bad base URL", llm.Config{Model: "m", BaseURL: "localhost:11434"}, "--base-url"},
		{"local server without a key", llm.Config{Model: "m", BaseURL: "http://localhost:11434/v1/"}, ""},
		{"OpenAI with a key", llm.Config{Model: "m", APIKey: "k"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || c.Model() != tt.cfg.Model {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaultBackoff(t *testing.T) {
	for attempt := 1; attempt <= 10; attempt++ {
		upper := min(llm.MinBackoff<<min(attempt-1, 10), llm.MaxBackoff)
		for range 50 {
			d := llm.DefaultBackoff(attempt)
			if d < llm.MinBackoff || d > upper || d < upper/2 {
				t.Fatalf("DefaultBackoff(%d) = %v, want within [%v, %v] and >= %v", attempt, d, upper/2, upper, llm.MinBackoff)
			}
		}
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	when := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	srv := llmtest.Start(t, llmtest.Step{Fault: llmtest.RateLimit, RetryAfter: when}, llmtest.Text("ok", nil))
	sl := &sleeps{}
	if _, err := newClient(t, srv, sl).Complete(context.Background(), request); err != nil {
		t.Fatal(err)
	}
	got := sl.got()
	if len(got) != 1 || got[0] <= 10*time.Second || got[0] > 21*time.Second {
		t.Fatalf("waits = %v, want one wait of about 20s", got)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
