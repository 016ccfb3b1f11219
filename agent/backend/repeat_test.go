package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/grub-dev/grub/agent/tools"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

func TestOpenAIRepeatedCalls(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		result    func(n int32) string
		wantError bool
	}{
		{"same call, same result", []string{`{"x":"a"}`, `{"x":"a"}`, `{ "x": "a" }`}, func(int32) string { return "same" }, true},
		{"same call, new result each time", []string{`{"x":"a"}`, `{"x":"a"}`, `{"x":"a"}`}, func(n int32) string { return fmt.Sprint("run ", n) }, false},
		{"different calls", []string{`{"x":"a"}`, `{"x":"b"}`, `{"x":"a"}`}, func(int32) string { return "same" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			tool := &fakeTool{name: "probe", run: func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Result{Text: tt.result(runs.Add(1))}, nil
			}}
			var steps []llmtest.Step
			for _, a := range tt.args {
				steps = append(steps, llmtest.Calls(nil, llmtest.Call("probe", a)))
			}
			if !tt.wantError {
				steps = append(steps, llmtest.Text("end", nil))
			}
			srv := llmtest.Start(t, steps...)
			res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{tool}}).
				RunTurn(context.Background(), newTurn(t, 1, "go"))
			if !tt.wantError {
				if err != nil || res.FinalMessage != "end" {
					t.Fatalf("RunTurn = %q, %v; want the turn to go on", res.FinalMessage, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "repeated call") || !strings.Contains(err.Error(), "probe") {
				t.Fatalf("err = %v, want a repeated-call failure naming the tool", err)
			}
			if runs.Load() != 3 {
				t.Errorf("tool ran %d times, want 3", runs.Load())
			}
		})
	}
}

// An edit between identical checks is progress: a model that edits and then
// gets the same clean build each time is not looping.
func TestOpenAIRepeatedCheckAfterEditsIsNotALoop(t *testing.T) {
	check := &fakeTool{name: "probe", run: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: "build ok"}, nil
	}}
	edit := &fakeTool{name: "edit_file", run: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: "edited"}, nil
	}}
	var steps []llmtest.Step
	for i := 0; i < 3; i++ {
		steps = append(steps,
			llmtest.Calls(nil, llmtest.Call("edit_file", fmt.Sprintf(`{"n":%d}`, i))),
			llmtest.Calls(nil, llmtest.Call("probe", `{"x":"a"}`)))
	}
	steps = append(steps, llmtest.Text("end", nil))
	srv := llmtest.Start(t, steps...)
	res, err := NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{check, edit}}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if err != nil || res.FinalMessage != "end" {
		t.Fatalf("RunTurn = %q, %v; want the turn to go on", res.FinalMessage, err)
	}

	// The same edit three times in a row is still a loop.
	same := []llmtest.Step{}
	for i := 0; i < 3; i++ {
		same = append(same, llmtest.Calls(nil, llmtest.Call("edit_file", `{"n":1}`)))
	}
	srv = llmtest.Start(t, same...)
	_, err = NewOpenAI(OpenAIConfig{Client: newClient(t, srv), Tools: []tools.Tool{check, edit}}).
		RunTurn(context.Background(), newTurn(t, 1, "go"))
	if err == nil || !strings.Contains(err.Error(), "repeated call") {
		t.Fatalf("err = %v, want a repeated-call failure", err)
	}
}

// TestRepeatsCheck drives the repeat rule directly: each row is a turn's
// tool calls in order, and the index of the call that must end the turn
// (-1 for none).
func TestRepeatsCheck(t *testing.T) {
	type call struct {
		name, args, text string
		isError          bool
	}
	probe := func(args, text string) call { return call{name: "probe", args: args, text: text} }
	edit := func(args string) call { return call{name: "edit_file", args: args, text: "edited"} }
	tests := []struct {
		name    string
		calls   []call
		wantEnd int
	}{
		{"same call and result three times", []call{probe(`{"x":1}`, "a"), probe(`{"x":1}`, "a"), probe(`{"x":1}`, "a")}, 2},
		{"spacing in the arguments does not matter", []call{probe(`{"x":1}`, "a"), probe(`{ "x": 1 }`, "a"), probe("{\"x\":\n1}", "a")}, 2},
		{"a new result each time", []call{probe(`{"x":1}`, "a"), probe(`{"x":1}`, "b"), probe(`{"x":1}`, "c")}, -1},
		{"an error and a success differ", []call{probe(`{"x":1}`, "a"), {name: "probe", args: `{"x":1}`, text: "a", isError: true}, probe(`{"x":1}`, "a")}, -1},
		{"an edit in between resets the count", []call{probe(`{}`, "a"), probe(`{}`, "a"), edit(`{"n":1}`), probe(`{}`, "a"), probe(`{}`, "a")}, -1},
		{"a failed edit does not reset", []call{probe(`{}`, "a"), probe(`{}`, "a"), {name: "edit_file", args: `{}`, text: "no match", isError: true}, probe(`{}`, "a")}, 3},
		{"the same edit three times", []call{edit(`{"n":1}`), probe(`{}`, "a"), edit(`{"n":1}`), edit(`{"n":1}`)}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := repeats{}
			end := -1
			for i, cl := range tt.calls {
				if err := c.check(cl.name, cl.args, tools.Result{Text: cl.text, IsError: cl.isError}); err != nil {
					if !strings.Contains(err.Error(), "repeated call") || !strings.Contains(err.Error(), cl.name) {
						t.Errorf("error = %v, want a repeated-call failure naming %s", err, cl.name)
					}
					end = i
					break
				}
			}
			if end != tt.wantEnd {
				t.Errorf("turn ended at call %d, want %d", end, tt.wantEnd)
			}
		})
	}
}
