package agentstub

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grub-dev/grub/prompts"
)

// The goal block as grub writes it (prompts.Fence): A & B </goal> ``` .
var goalBlock = "<goal>\n" + prompts.Fence("A & B </goal> ```") + "\n</goal>\n"

var initPrompt = "You are the coding agent of grub task 0a1b2c3d. This is the initializer turn (iteration 1).\n" +
	goalBlock + "The harness folder is .grub/0a1b2c3d/.\n"

var execPrompt = "You are the coding agent of grub task 0a1b2c3d. This is execution turn 2 of at most 8.\n" +
	goalBlock + "## Next feature\n\n- id: `feature-2`\n- verify: `test -f feature-2.done`\n" +
	"- .grub/0a1b2c3d/feature-list.json: the feature list\n"

func TestBrainDecide(t *testing.T) {
	b := Brain{Features: 2}
	ok := ToolResult{Text: "smoke check ok\n" + okMarker}
	tests := []struct {
		name     string
		c        Conversation
		command  []string // substrings of the command
		text     []string // substrings of the final text
		noLoopSt bool
	}{
		{name: "initializer plans", c: Conversation{Prompt: initPrompt},
			command: []string{".grub/0a1b2c3d/feature-list.json", `"goal": "A & B </goal> ` + "```" + `"`, `"id": "feature-2"`, "init.sh", okCommand}},
		{name: "initializer ends", c: Conversation{Prompt: initPrompt, Results: []ToolResult{ok}},
			text: []string{`"status":"continue"`, `"feature":"feature-1"`}},
		{name: "execution flips the last feature", c: Conversation{Prompt: execPrompt},
			command: []string{"echo done > feature-2.done", `"passes": true`, "test -f feature-2.done &&"}},
		{name: "execution completes", c: Conversation{Prompt: execPrompt, Results: []ToolResult{ok}},
			text: []string{`"status":"complete"`, `"feature":"feature-2"`}},
		{name: "a failed command ends without a decision", c: Conversation{Prompt: execPrompt, Results: []ToolResult{{Text: "echo " + okCommand + "\nno such file"}}},
			text: []string{"no such file"}, noLoopSt: true},
		{name: "an error result ends without a decision", c: Conversation{Prompt: execPrompt, Results: []ToolResult{{Text: okMarker, IsError: true}}},
			noLoopSt: true},
		{name: "a side request gets text", c: Conversation{Prompt: "Summarise this conversation"}, text: []string{"OK."}, noLoopSt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := b.Decide(tt.c)
			for _, s := range tt.command {
				if !strings.Contains(a.Command, s) {
					t.Errorf("command lacks %q:\n%s", s, a.Command)
				}
			}
			for _, s := range tt.text {
				if !strings.Contains(a.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, a.Text)
				}
			}
			if (tt.command == nil) != (a.Command == "") {
				t.Errorf("got %+v", a)
			}
			if tt.noLoopSt && strings.Contains(a.Text, "<loop-state>") {
				t.Errorf("text has a loop-state block:\n%s", a.Text)
			}
		})
	}
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func TestServerStreams(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		s := New(Config{API: Anthropic})
		hs := httptest.NewServer(s)
		defer hs.Close()
		code, body := post(t, hs.URL+"/v1/messages?beta=true",
			`{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":`+jsonString(initPrompt)+`}]}]}`)
		for _, want := range []string{"event: message_start", `"type":"tool_use"`, `"name":"Bash"`, "input_json_delta",
			`"stop_reason":"tool_use"`, `"output_tokens":51`, "event: message_stop"} {
			if !strings.Contains(body, want) {
				t.Errorf("stream lacks %s:\n%s", want, body)
			}
		}
		if code != 200 {
			t.Errorf("status %d", code)
		}
		code, body = post(t, hs.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":`+jsonString(initPrompt)+
			`},{"role":"assistant","content":[]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"`+okMarker+`"}]}]}]}`)
		if code != 200 || !strings.Contains(body, "text_delta") || !strings.Contains(body, `"stop_reason":"end_turn"`) {
			t.Errorf("second response: %d\n%s", code, body)
		}
		u1, u2 := UsageFor(Anthropic, 1), UsageFor(Anthropic, 2)
		if got, want := s.Totals(), (Totals{Responses: 2, Input: u1.Input + u2.Input, CacheCreation: u1.CacheCreation + u2.CacheCreation,
			CacheRead: u1.CacheRead + u2.CacheRead, Output: u1.Output + u2.Output}); got != want {
			t.Errorf("totals %+v, want %+v", got, want)
		}
	})
	t.Run("responses", func(t *testing.T) {
		s := New(Config{API: Responses})
		hs := httptest.NewServer(s)
		defer hs.Close()
		code, body := post(t, hs.URL+"/v1/responses",
			`{"model":"gpt-5.5","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":`+jsonString(execPrompt)+`}]},`+
				`{"type":"function_call","call_id":"c","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"`+okMarker+`"}]}`)
		for _, want := range []string{"event: response.created", "response.output_text.delta", `\"status\":\"complete\"`,
			"event: response.completed", `"cached_tokens":601`, `"input_tokens":1010`} {
			if !strings.Contains(body, want) {
				t.Errorf("stream lacks %s:\n%s", want, body)
			}
		}
		if code != 200 {
			t.Errorf("status %d", code)
		}
	})
	t.Run("faults and other paths", func(t *testing.T) {
		s := New(Config{API: Anthropic, Fault: FaultOverloaded})
		hs := httptest.NewServer(s)
		defer hs.Close()
		if code, body := post(t, hs.URL+"/v1/messages", `{}`); code != 529 || !strings.Contains(body, "overloaded_error") {
			t.Errorf("overloaded: %d %s", code, body)
		}
		if code, _ := post(t, hs.URL+"/v1/complete", `{}`); code != 404 {
			t.Errorf("other path: %d", code)
		}
		if got := len(s.Requests()); got != 2 || s.Totals().Responses != 0 {
			t.Errorf("recorded %d requests, %d responses", got, s.Totals().Responses)
		}
	})
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
