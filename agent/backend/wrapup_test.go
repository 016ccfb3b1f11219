package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/agent/tools"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

func TestOpenAITokenBudgetWrapUp(t *testing.T) {
	tests := []struct {
		name         string
		wrapUp       llmtest.Step
		wantFinal    string
		wantToolRuns int32
	}{
		{"text reply", llmtest.Text(finalMessage, u(2000, 1500, 50)), finalMessage, 1},
		{"tool calls in the wrap-up reply are ignored", llmtest.Step{
			Content: "summary", ToolCalls: []llmtest.ToolCall{llmtest.Call("count", `{"x":"again"}`)}, Usage: u(2000, 1500, 50),
		}, "summary", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			count := &fakeTool{name: "count", run: func(context.Context, json.RawMessage) (tools.Result, error) {
				runs.Add(1)
				return tools.Result{Text: "counted"}, nil
			}}
			srv := llmtest.Start(t,
				// 800 - 100 + 400 = 1100 tokens: over the 1000 left.
				llmtest.Calls(u(800, 100, 400), llmtest.Call("count", `{"x":"1"}`)),
				tt.wrapUp,
			)
			turn := newTurn(t, 3, "go")
			turn.TokenBudgetLeft = 1000
			res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{count}}).RunTurn(context.Background(), turn)
			if !errors.Is(err, agent.ErrBudgetSpent) {
				t.Fatalf("err = %v, want ErrBudgetSpent", err)
			}
			if res.FinalMessage != tt.wantFinal {
				t.Errorf("final = %q, want %q", res.FinalMessage, tt.wantFinal)
			}
			if runs.Load() != tt.wantToolRuns {
				t.Errorf("tool ran %d times, want %d", runs.Load(), tt.wantToolRuns)
			}
			want := agent.Usage{InputTokens: 2800, CachedInputTokens: 1600, OutputTokens: 450, Requests: 2}
			if res.Usage != want {
				t.Errorf("usage = %+v, want %+v", res.Usage, want)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want exactly one wrap-up after the first", len(reqs))
			}
			msgs := reqs[1].Decoded
			if m := msgs[len(msgs)-1]; m.Role != "user" || !strings.Contains(m.Content, "stop working now") || !strings.Contains(m.Content, "token budget") {
				t.Errorf("wrap-up message = %+v", m)
			}
			if !bytes.Equal(reqs[0].Tools, reqs[1].Tools) {
				t.Error("the wrap-up request changed the tool definitions")
			}
			entries, err := ReadTranscript(res.Transcript)
			if err != nil {
				t.Fatal(err)
			}
			if e := entries[len(entries)-3]; e.Type != EntryRequest || !e.WrapUp {
				t.Errorf("transcript entry %+v, want the wrap-up request", e)
			}
		})
	}
}

func TestOpenAINoBudgetNoWrapUp(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Calls(u(800, 100, 400), llmtest.Call("echo", `{"x":"1"}`)),
		llmtest.Text("end", u(900, 100, 400)),
	)
	turn := newTurn(t, 1, "go")
	turn.TokenBudgetLeft = 1101 // 1100 used after the first request: one more request is allowed
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{echoTool("echo")}}).RunTurn(context.Background(), turn)
	if err != nil || res.FinalMessage != "end" {
		t.Fatalf("RunTurn = %q, %v", res.FinalMessage, err)
	}
}

func TestOpenAIWrapUpLocale(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Calls(u(100, 0, 100), llmtest.Call("echo", `{}`)),
		llmtest.Text("好", nil),
	)
	turn := newTurn(t, 1, "go")
	turn.Locale, turn.TokenBudgetLeft = "zh", 50
	_, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{echoTool("echo")}}).RunTurn(context.Background(), turn)
	if !errors.Is(err, agent.ErrBudgetSpent) {
		t.Fatal(err)
	}
	msgs := srv.Requests()[1].Decoded
	if c := msgs[len(msgs)-1].Content; !strings.Contains(c, "现在停止工作") || !strings.Contains(c, "token 预算已用完") {
		t.Errorf("wrap-up = %q, want the Chinese text", c)
	}
}
