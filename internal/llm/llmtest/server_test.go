package llmtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, s *Server, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	return resp.StatusCode, out
}

func TestServerScriptAndRecord(t *testing.T) {
	s := NewServer(
		Calls(&Usage{Prompt: 10, Cached: 4, Completion: 2}, Call("shell", map[string]string{"command": "ls"})),
		Text("done", nil),
	)
	defer s.Close()
	body := `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}],"tools":[{"type":"function"}]}`
	code, out := post(t, s, body)
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	call := choice["message"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_1_0" || call["function"].(map[string]any)["arguments"] != `{"command":"ls"}` || choice["finish_reason"] != "tool_calls" {
		t.Errorf("reply = %v", out)
	}
	usage := out["usage"].(map[string]any)
	if usage["prompt_tokens"] != 10.0 || usage["prompt_tokens_details"].(map[string]any)["cached_tokens"] != 4.0 {
		t.Errorf("usage = %v", usage)
	}
	_, out = post(t, s, body)
	if _, ok := out["usage"]; ok {
		t.Errorf("a step without usage sent usage: %v", out)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[1].N != 2 || reqs[0].Model != "m" || string(reqs[0].Messages[0]) != `{"role":"system","content":"sys"}` ||
		string(reqs[0].Tools) != `[{"type":"function"}]` || reqs[0].Decoded[1].Content != "hi" || !bytes.Equal(reqs[0].Body, []byte(body)) {
		t.Errorf("recorded = %+v", reqs)
	}
	if err := s.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestServerVerify(t *testing.T) {
	t.Run("unused step", func(t *testing.T) {
		s := NewServer(Text("never asked", nil))
		defer s.Close()
		if err := s.Verify(); err == nil || !strings.Contains(err.Error(), "never requested") {
			t.Fatalf("Verify = %v", err)
		}
	})
	t.Run("request after the script", func(t *testing.T) {
		s := NewServer()
		defer s.Close()
		if code, _ := post(t, s, `{"messages":[]}`); code != 400 {
			t.Errorf("status %d, want 400", code)
		}
		if err := s.Verify(); err == nil || !strings.Contains(err.Error(), "ran out") {
			t.Fatalf("Verify = %v", err)
		}
	})
	t.Run("fallback answers after the script", func(t *testing.T) {
		s := NewServer()
		defer s.Close()
		s.Fallback = func(r Request) Step { return Text("fallback for "+r.Decoded[0].Content, nil) }
		code, out := post(t, s, `{"messages":[{"role":"user","content":"q"}]}`)
		msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		if code != 200 || msg["content"] != "fallback for q" {
			t.Errorf("reply %d %v", code, out)
		}
		if err := s.Verify(); err != nil {
			t.Error(err)
		}
	})
}

func TestServerFaultReplies(t *testing.T) {
	tests := []struct {
		step       Step
		wantStatus int
		wantCode   string
		wantHeader string
	}{
		{Step{Fault: RateLimit, RetryAfter: "3"}, 429, "rate_limit_exceeded", "3"},
		{Step{Fault: Quota}, 429, "insufficient_quota", ""},
		{Step{Fault: ServerError}, 500, "", ""},
		{Step{Fault: Status, Status: 404, Code: "model_not_found"}, 404, "model_not_found", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.step.Fault), func(t *testing.T) {
			s := NewServer(tt.step)
			defer s.Close()
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || out.Error.Code != tt.wantCode || out.Error.Message == "" ||
				resp.Header.Get("Retry-After") != tt.wantHeader {
				t.Errorf("status %d, error %+v, Retry-After %q", resp.StatusCode, out.Error, resp.Header.Get("Retry-After"))
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	steps, err := ParseScript([]byte(`[
		{"fault":"rate_limit","retryAfter":"1"},
		{"toolCalls":[{"name":"shell","arguments":"{\"command\":\"ls\"}"}],"usage":{"prompt":5,"cached":1,"completion":2}},
		{"content":"done"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[0].Fault != RateLimit || steps[1].ToolCalls[0].Name != "shell" || steps[1].Usage.Cached != 1 || steps[2].Content != "done" {
		t.Errorf("steps = %+v", steps)
	}
	for _, bad := range []string{`[{"fault":"meltdown"}]`, `[{"contnet":"typo"}]`, `[{"fault":"status"}]`, `{}`} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) succeeded", bad)
		}
	}
}

// The server answers under /v1 only, lists the models SetModels names,
// and refuses a wrong key and an unknown model before the script runs.
func TestServerPathsKeyAndModels(t *testing.T) {
	s := NewServer(Text("hi", nil))
	defer s.Close()
	resp, err := http.Post(strings.TrimSuffix(s.URL(), "/v1")+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /chat/completions without /v1: status %d, want 404", resp.StatusCode)
	}

	s.SetModels("m")
	s.SetKey("sk-right")
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/models", nil)
	req.Header.Set("Authorization", "Bearer sk-right")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"m"`) {
		t.Errorf("GET /v1/models: %d %s", resp.StatusCode, b)
	}

	if code, out := post(t, s, `{"model":"m","messages":[]}`); code != http.StatusUnauthorized || !strings.Contains(stringify(out), "invalid_api_key") {
		t.Errorf("no key: %d %v, want 401 invalid_api_key", code, out)
	}
	s.SetKey("")
	if code, out := post(t, s, `{"model":"other","messages":[]}`); code != http.StatusNotFound || !strings.Contains(stringify(out), "model_not_found") {
		t.Errorf("unknown model: %d %v, want 404 model_not_found", code, out)
	}
	if code, _ := post(t, s, `{"model":"m","messages":[]}`); code != 200 {
		t.Errorf("known model: %d, want the script's reply", code)
	}
	if err := s.Verify(); err != nil || len(s.Requests()) != 1 {
		t.Errorf("Verify = %v, %d requests recorded; want none refused on the record", err, len(s.Requests()))
	}
}

func stringify(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
