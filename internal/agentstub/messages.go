package agentstub

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parseMessagesRequest reads an Anthropic Messages request: the text of
// the user's messages and the tool results, in order.
func parseMessagesRequest(body []byte) (Conversation, string, error) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Conversation{}, "", err
	}
	var c Conversation
	var prompt strings.Builder
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			prompt.WriteString(s + "\n")
			continue
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
			IsError bool            `json:"is_error"`
		}
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return Conversation{}, "", err
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				prompt.WriteString(b.Text + "\n")
			case "tool_result":
				c.Results = append(c.Results, ToolResult{Text: contentText(b.Content), IsError: b.IsError})
			}
		}
	}
	c.Prompt = prompt.String()
	return c, req.Model, nil
}

// contentText is the text of a tool result's content: a string or a list
// of text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// writeMessagesStream streams the n-th response as the Messages API does:
// message_start (with the input usage), one content block (text, or a
// Bash tool_use whose input arrives as JSON deltas), message_delta with
// the stop reason and the final usage, message_stop.
func writeMessagesStream(s *sse, n int, model string, a Action, u Usage) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_stub_%04d", n), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheCreation,
			"cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	}})
	stop := "end_turn"
	if a.Command != "" {
		stop = "tool_use"
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_stub_%04d", n), "name": "Bash", "input": map[string]any{}}})
		input, _ := json.Marshal(map[string]string{"command": a.Command, "description": "Run the stub's scripted step"})
		for _, part := range split(string(input), 3) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range split(a.Text, 3) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part}})
		}
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheCreation,
			"cache_read_input_tokens": u.CacheRead, "output_tokens": u.Output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// split cuts s into at most k pieces of about equal length, on rune
// boundaries, so that clients see real deltas.
func split(s string, k int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return []string{""}
	}
	size := (len(r) + k - 1) / k
	var out []string
	for i := 0; i < len(r); i += size {
		out = append(out, string(r[i:min(i+size, len(r))]))
	}
	return out
}
