package backend

import (
	"bytes"
	"context"
	"testing"

	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// TestRequestPrefixIsIdentical: every request of a task, across turns
// with different prompts, workspaces, iterations and AGENTS.md files,
// starts with the same bytes: the tool definitions and the system prompt.
// That shared prefix is what providers cache, so a task pays full price for
// it once. The figure (the share of requests whose prefix equals the
// first's) must be 100%. The AGENTS.md of each turn is in the turn context
// after it.
func TestRequestPrefixIsIdentical(t *testing.T) {
	srv := llmtest.Start(t,
		llmtest.Calls(u(1000, 0, 20), llmtest.Call("list_files", map[string]any{"path": "."})),
		llmtest.Text(finalMessage, u(1100, 900, 30)),
		llmtest.Calls(u(1000, 0, 20), llmtest.Call("shell", map[string]any{"command": "echo hi"})),
		llmtest.Calls(u(1100, 900, 20), llmtest.Call("read_file", map[string]any{"path": "missing.txt"})),
		llmtest.Text(finalMessage, u(1200, 1000, 30)),
	)
	ag := NewOpenAI(OpenAIConfig{Client: newClient(t, srv)})
	instructions := []string{"Build with make.\n", "Build with make; test with make test, and keep functions short.\n"}
	for i, prompt := range []string{"Turn one: look around.", "Turn two, a longer prompt: run a command and read a file."} {
		turn := newTurn(t, i+1, prompt)
		writeWS(t, turn.Workspace, "AGENTS.md", instructions[i])
		if _, err := ag.RunTurn(context.Background(), turn); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	prefix := func(r llmtest.Request) []byte {
		if len(r.Messages) == 0 || r.Tools == nil {
			t.Fatalf("a request without messages or tools: %s", r.Body)
		}
		return append(append([]byte(nil), r.Tools...), r.Messages[0]...)
	}
	first := prefix(reqs[0])
	same := 0
	for i, r := range reqs {
		want := instructions[min(i/2, 1)] // two requests in turn one, three in turn two
		if got, ok := quoted(t, r.Decoded[1].Content, "AGENTS.md"); !ok || got != want {
			t.Errorf("request %d quotes AGENTS.md as %q, want %q", r.N, got, want)
		}
		if bytes.Equal(prefix(r), first) {
			same++
		}
	}
	t.Logf("identical request prefix (tools + system prompt, %d bytes): %d of %d requests", len(first), same, len(reqs))
	if same != len(reqs) {
		t.Errorf("only %d of %d requests share the first request's prefix", same, len(reqs))
	}
}
