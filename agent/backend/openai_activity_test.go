package backend

import (
	"context"
	"slices"
	"testing"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// TestOpenAIReportsActivityAndUsage: the built-in agent tells the turn's
// Activity what it does (waiting on the model, each tool call) and its
// Usage the usage so far after each request.
func TestOpenAIReportsActivityAndUsage(t *testing.T) {
	turn := newTurn(t, 2, "Write a file and test it.")
	srv := llmtest.Start(t,
		llmtest.Calls(u(100, 0, 10), llmtest.Call("write_file", map[string]any{"path": "a.txt", "content": "a\n"})),
		llmtest.Calls(u(200, 100, 10), llmtest.Call("shell", map[string]any{"command": "cat a.txt\nls -l"}), llmtest.Call("grep", map[string]any{"pattern": "a+"})),
		llmtest.Text(finalMessage, u(300, 200, 20)),
	)
	var acts []string
	var usages []int64
	turn.Activity = func(s string) { acts = append(acts, s) }
	turn.Usage = func(u agent.Usage) { usages = append(usages, u.Tokens()) }
	if _, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)}).RunTurn(context.Background(), turn); err != nil {
		t.Fatal(err)
	}
	want := []string{"thinking", "editing a.txt", "thinking", "shell: cat a.txt…", "searching a+", "thinking"}
	if !slices.Equal(acts, want) {
		t.Errorf("activities = %q, want %q", acts, want)
	}
	if want := []int64{110, 220, 340}; !slices.Equal(usages, want) {
		t.Errorf("usage so far = %v, want %v", usages, want)
	}
}
