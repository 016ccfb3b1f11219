package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/agent/tools"
	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// TestOpenAIContextPressure checks that old large tool results are
// replaced by a stub in the request once it nears the context window, the
// newest kept, and the transcript keeps everything.
func TestOpenAIContextPressure(t *testing.T) {
	big := func(tag string) string { return tag + strings.Repeat(".", 3000) }
	var n atomic.Int32
	tool := &fakeTool{name: "dump", run: func(context.Context, json.RawMessage) (tools.Result, error) {
		i := n.Add(1)
		r := tools.Result{Text: big(fmt.Sprintf("result-%d", i))}
		if i == 1 {
			r.SpillPath = ".grub/0123abcd/spill/dump-1.txt"
		}
		return r, nil
	}}
	var steps []llmtest.Step
	for i := range 4 {
		steps = append(steps, llmtest.Calls(nil, llmtest.Call("dump", fmt.Sprintf(`{"x":"%d"}`, i))))
	}
	steps = append(steps, llmtest.Text("end", nil))
	srv := llmtest.Start(t, steps...)
	turn := newTurn(t, 9, "go")
	// Stubbing starts above 80 % of the window, at about 4 bytes a token:
	// room for the system prompt, the rest of the conversation and two
	// results of 3 KB, not three.
	_, ctxMsg := newTurnContext(turn, tools.DefaultConfig(turn.Workspace, turn.SpillDir), time.Now)
	window := (len(SystemPrompt()) + len(ctxMsg.Content) + 7500) * 10 / 32
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{tool}, ContextWindow: window}).
		RunTurn(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	stubbed := func(m llmtest.Message) bool { return strings.HasPrefix(m.Content, "[output elided to save context") }
	// Request 3 holds two results (about 6000 bytes): under the limit.
	for _, m := range reqs[2].Decoded {
		if stubbed(m) {
			t.Errorf("request 3 stubbed a result below the pressure limit")
		}
	}
	// Request 4 holds three: the oldest is stubbed, the newer kept.
	m4 := reqs[3].Decoded
	if !stubbed(m4[4]) || stubbed(m4[6]) || stubbed(m4[8]) {
		t.Errorf("request 4: stubbed = %v %v %v, want only the oldest", stubbed(m4[4]), stubbed(m4[6]), stubbed(m4[8]))
	}
	for _, want := range []string{".grub/0123abcd/turns/0009.jsonl", m4[3].ToolCalls[0].ID, ".grub/0123abcd/spill/dump-1.txt"} {
		if !strings.Contains(m4[4].Content, want) {
			t.Errorf("stub %q does not name %q", m4[4].Content, want)
		}
	}
	// Request 5: the first stays stubbed, the second is stubbed too, the
	// two newest are kept whole.
	m5 := reqs[4].Decoded
	if !stubbed(m5[4]) || !stubbed(m5[6]) || stubbed(m5[8]) || stubbed(m5[10]) {
		t.Errorf("request 5: stubbed = %v %v %v %v, want the two oldest", stubbed(m5[4]), stubbed(m5[6]), stubbed(m5[8]), stubbed(m5[10]))
	}
	if !bytes.Equal(reqs[3].Messages[4], reqs[4].Messages[4]) {
		t.Error("a stub changed between requests")
	}
	if m5[10].Content != big("result-4") {
		t.Error("the newest result was changed")
	}
	entries, err := ReadTranscript(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if e := entries[3]; e.Type != EntryToolResult || e.Text != big("result-1") || e.Bytes != len(big("result-1")) {
		t.Errorf("transcript lost the full first result: %+v", e.Type)
	}
}

func TestStubRef(t *testing.T) {
	ws := filepath.Join(string(filepath.Separator), "work", "repo")
	turn := agent.Turn{Iteration: 4, Workspace: ws}
	tests := []struct {
		name string
		turn agent.Turn
		path string
		want string
	}{
		{"no transcript", turn, "", ""},
		{"inside the workspace", turn, filepath.Join(ws, ".grub", "id", "turns", "0004.jsonl"), ".grub/id/turns/0004.jsonl"},
		{"outside the workspace", turn, filepath.Join(ws+"-harness", "0004.jsonl"), filepath.Join(ws+"-harness", "0004.jsonl")},
		{"no workspace", agent.Turn{Iteration: 4}, filepath.Join(ws, "t.jsonl"), filepath.Join(ws, "t.jsonl")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stubRef(tt.turn, tt.path); got != tt.want {
				t.Errorf("stubRef = %q, want %q", got, tt.want)
			}
		})
	}
}

// A turn that keeps no transcript gets stubs that point at none.
func TestStubWithoutTranscript(t *testing.T) {
	r := &turnRun{msgs: []llm.Message{{Role: llm.RoleTool, ToolCallID: "call-1", Content: "big"}}, spills: map[int]string{}}
	if got, want := r.stub(0), "[output elided to save context; tool call call-1]"; got != want {
		t.Errorf("stub = %q, want %q", got, want)
	}
	r.stubRef = ".grub/x/turns/0001.jsonl"
	if got, want := r.stub(0), "[output elided to save context; see transcript .grub/x/turns/0001.jsonl, tool call call-1]"; got != want {
		t.Errorf("stub = %q, want %q", got, want)
	}
}
