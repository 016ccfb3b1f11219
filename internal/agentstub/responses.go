package agentstub

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parseResponsesRequest reads an OpenAI Responses request: the text of the
// user's messages and the outputs of the function calls, in order.
func parseResponsesRequest(body []byte) (Conversation, string, error) {
	var req struct {
		Model string `json:"model"`
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Conversation{}, "", err
	}
	var c Conversation
	var prompt strings.Builder
	for _, it := range req.Input {
		switch {
		case it.Type == "message" && it.Role == "user":
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(it.Content, &parts) != nil {
				var s string
				_ = json.Unmarshal(it.Content, &s)
				prompt.WriteString(s + "\n")
				continue
			}
			for _, p := range parts {
				prompt.WriteString(p.Text + "\n")
			}
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			c.Results = append(c.Results, ToolResult{Text: outputText(it.Output)})
		}
	}
	c.Prompt = prompt.String()
	return c, req.Model, nil
}

// outputText is a function call output: a string or a list of text parts.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// writeResponsesStream streams the n-th response as the Responses API
// does: response.created, one output item (an exec_command function call,
// or an assistant message whose text arrives as deltas) added and done,
// response.completed with the usage.
func writeResponsesStream(s *sse, n int, model string, a Action, u Usage) {
	id := fmt.Sprintf("resp_stub_%04d", n)
	seq := 0
	ev := func(name string, v map[string]any) {
		v["type"] = name
		v["sequence_number"] = seq
		seq++
		s.event(name, v)
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "created_at": 1700000000 + n, "status": status,
			"model": model, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{
				"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
				"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": u.Input + u.Output,
			}
		}
		return r
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	var item map[string]any
	if a.Command != "" {
		args, _ := json.Marshal(map[string]any{"cmd": a.Command, "yield_time_ms": 30000})
		callID := fmt.Sprintf("call_stub_%04d", n)
		itemID := fmt.Sprintf("fc_stub_%04d", n)
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "function_call", "id": itemID, "call_id": callID, "name": "exec_command", "arguments": "", "status": "in_progress"}})
		for _, part := range split(string(args), 3) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": part})
		}
		item = map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": "exec_command",
			"arguments": string(args), "status": "completed"}
		ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": 0, "arguments": string(args)})
	} else {
		itemID := fmt.Sprintf("msg_stub_%04d", n)
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": itemID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, part := range split(a.Text, 3) {
			ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": part})
		}
		ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": a.Text})
		content := map[string]any{"type": "output_text", "text": a.Text, "annotations": []any{}}
		ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "part": content})
		item = map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "completed",
			"content": []any{content}}
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp("completed", []any{item})})
}
