package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Fault is a failure a Step injects instead of a normal reply.
type Fault string

// The faults a Step can inject.
const (
	// None sends the Step's reply.
	None Fault = ""
	// RateLimit sends 429 rate_limit_exceeded, with Step.RetryAfter as the
	// Retry-After header when it is set.
	RateLimit Fault = "rate_limit"
	// Quota sends 429 insufficient_quota.
	Quota Fault = "insufficient_quota"
	// ServerError sends 500 with an OpenAI-style error body.
	ServerError Fault = "server_error"
	// Status sends Step.Status (e.g. 400, 401, 404, 503) with an
	// OpenAI-style error body carrying Step.Message and Step.Code.
	Status Fault = "status"
	// Slow holds the reply until the client gives up (or Step.DelayMS
	// passes, then replies normally).
	Slow Fault = "slow"
	// Drop hijacks the connection and closes it without a response.
	Drop Fault = "drop"
	// EmptyChoices sends 200 with an empty choice list.
	EmptyChoices Fault = "empty_choices"
)

// maxSlow bounds a Slow step without DelayMS, so that a client without a
// timeout cannot hang a test forever.
const maxSlow = 2 * time.Minute

// Usage is the usage block of a reply. A Step with a nil Usage sends none.
type Usage struct {
	Prompt     int `json:"prompt"`
	Cached     int `json:"cached"`
	Completion int `json:"completion"`
}

// ToolCall is a tool call in a scripted reply. An empty ID is filled in as
// call_<request number>_<index>.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Step answers one request.
type Step struct {
	Fault        Fault      `json:"fault,omitempty"`
	Content      string     `json:"content,omitempty"`
	ToolCalls    []ToolCall `json:"toolCalls,omitempty"`
	Usage        *Usage     `json:"usage,omitempty"`
	FinishReason string     `json:"finishReason,omitempty"` // default "tool_calls" or "stop"
	RetryAfter   string     `json:"retryAfter,omitempty"`   // for RateLimit
	Status       int        `json:"status,omitempty"`       // for Status
	Code         string     `json:"code,omitempty"`         // for Status
	Message      string     `json:"message,omitempty"`      // for Status
	DelayMS      int        `json:"delayMs,omitempty"`      // for Slow
}

// Text is a Step that answers with content and no tool calls.
func Text(content string, u *Usage) Step { return Step{Content: content, Usage: u} }

// Calls is a Step that asks for tool calls.
func Calls(u *Usage, calls ...ToolCall) Step { return Step{ToolCalls: calls, Usage: u} }

// Call is a tool call with arguments marshalled from args (a string is used
// as is).
func Call(name string, args any) ToolCall {
	if s, ok := args.(string); ok {
		return ToolCall{Name: name, Arguments: s}
	}
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("llmtest.Call(%q): marshal arguments: %v", name, err))
	}
	return ToolCall{Name: name, Arguments: string(b)}
}

// ParseScript decodes a JSON array of Steps (the json tags of Step), for
// scripts kept in test data files.
func ParseScript(data []byte) ([]Step, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var steps []Step
	if err := dec.Decode(&steps); err != nil {
		return nil, fmt.Errorf("llmtest: script: %w", err)
	}
	for i, s := range steps {
		switch s.Fault {
		case None, RateLimit, Quota, ServerError, Status, Slow, Drop, EmptyChoices:
		default:
			return nil, fmt.Errorf("llmtest: script: step %d: unknown fault %q", i, s.Fault)
		}
		if s.Fault == Status && s.Status < 400 {
			return nil, fmt.Errorf("llmtest: script: step %d: fault %q needs a status >= 400", i, s.Fault)
		}
	}
	return steps, nil
}

// Request is a request the server received.
type Request struct {
	N        int // 1-based, in arrival order
	Header   http.Header
	Body     []byte
	Model    string
	Messages []json.RawMessage // exactly as in the body
	Tools    json.RawMessage   // exactly as in the body; nil when absent
	Decoded  []Message
}

// Message is a decoded request message.
type Message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// Fallback, when set before requests arrive, answers requests after
	// the script has run out.
	Fallback func(Request) Step

	srv *httptest.Server

	mu       sync.Mutex
	key      string   // the key requests must carry; "" for any
	models   []string // the models served; nil for any
	script   []Step
	requests []Request
	problems []error
	closed   chan struct{}
	once     sync.Once
}

// NewServer starts a server answering from steps. Close it when done.
func NewServer(steps ...Step) *Server {
	s := &Server{script: append([]Step(nil), steps...), closed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Start is NewServer for a test: the server is closed when the test ends,
// and the test fails if Verify reports a problem.
func Start(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s := NewServer(steps...)
	t.Cleanup(func() {
		s.Close()
		if err := s.Verify(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// URL is the base URL to give a client, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// SetFallback sets Fallback safely while the server may already be
// answering (requests from another process give the race detector no
// happens-before edge with a plain field write).
func (s *Server) SetFallback(f func(Request) Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Fallback = f
}

// SetKey makes the server refuse, as OpenAI does (401 invalid_api_key),
// every request whose Authorization header is not "Bearer " + key; ""
// takes any.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// SetModels makes the server list these models (GET /v1/models) and
// refuse a chat request for any other, as OpenAI does (404
// model_not_found); with none set it lists none and takes any model.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
}

// Remaining is the number of scripted steps not used yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Verify reports scripted steps that were never used and requests the
// server could not answer.
func (s *Server) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := append([]error(nil), s.problems...)
	if n := len(s.script); n > 0 {
		errs = append(errs, fmt.Errorf("llmtest: %d scripted step(s) never requested (the first: %+v)", n, s.script[0]))
	}
	return errors.Join(errs...)
}

// Close shuts the server down, releasing slow replies.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.srv.Close()
}

func (s *Server) problem(w http.ResponseWriter, format string, args ...any) {
	err := fmt.Errorf("llmtest: "+format, args...)
	s.mu.Lock()
	s.problems = append(s.problems, err)
	s.mu.Unlock()
	writeError(w, http.StatusBadRequest, "invalid_request_error", "llmtest", err.Error(), "")
}

// serve answers under /v1 only, as OpenAI-compatible servers do: any
// other path is a plain 404, which a client with a base URL without /v1
// gets.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		if s.authorized(w, r) {
			s.listModels(w)
		}
		return
	case r.URL.Path != "/v1/chat/completions":
		http.NotFound(w, r)
		return
	case r.Method != http.MethodPost:
		s.problem(w, "unexpected %s %s: only POST /v1/chat/completions is served", r.Method, r.URL.Path)
		return
	case !s.authorized(w, r):
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.problem(w, "read request body: %v", err)
		return
	}
	var raw struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		s.problem(w, "request body is not JSON: %v", err)
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body, Model: raw.Model, Messages: raw.Messages, Tools: raw.Tools}
	for i, m := range raw.Messages {
		var dm Message
		if err := json.Unmarshal(m, &dm); err != nil {
			s.problem(w, "message %d: %v", i, err)
			return
		}
		req.Decoded = append(req.Decoded, dm)
	}

	if !s.serves(raw.Model) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("The model `%s` does not exist or you do not have access to it. (llmtest)", raw.Model), "")
		return
	}
	s.mu.Lock()
	req.N = len(s.requests) + 1
	s.requests = append(s.requests, req)
	var step Step
	var have bool
	if len(s.script) > 0 {
		step, s.script, have = s.script[0], s.script[1:], true
	}
	fallback := s.Fallback
	s.mu.Unlock()
	if !have {
		if fallback == nil {
			s.problem(w, "request %d arrived after the script ran out", req.N)
			return
		}
		step = fallback(req)
	}
	s.answer(w, r, req.N, step)
}

// authorized checks the request's key against SetKey's and answers 401
// when it is wrong.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key == "" || r.Header.Get("Authorization") == "Bearer "+key {
		return true
	}
	writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided. (llmtest)", "")
	return false
}

// serves reports whether a chat request for model is taken.
func (s *Server) serves(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.models == nil || slices.Contains(s.models, model)
}

func (s *Server) listModels(w http.ResponseWriter) {
	s.mu.Lock()
	data := []any{}
	for _, id := range s.models {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "llmtest"})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, n int, step Step) {
	switch step.Fault {
	case None:
	case RateLimit:
		if step.RetryAfter != "" {
			w.Header().Set("Retry-After", step.RetryAfter)
		}
		writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded", "Rate limit reached for requests (llmtest)", "")
		return
	case Quota:
		writeError(w, http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details. (llmtest)", "")
		return
	case ServerError:
		writeError(w, http.StatusInternalServerError, "server_error", "", "The server had an error while processing your request. (llmtest)", "")
		return
	case Status:
		msg := step.Message
		if msg == "" {
			msg = http.StatusText(step.Status) + " (llmtest)"
		}
		writeError(w, step.Status, "invalid_request_error", step.Code, msg, "")
		return
	case Slow:
		wait := maxSlow
		if step.DelayMS > 0 {
			wait = time.Duration(step.DelayMS) * time.Millisecond
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		case <-t.C:
		}
	case Drop:
		hj, ok := w.(http.Hijacker)
		if !ok {
			s.problem(w, "request %d: the response writer cannot hijack the connection", n)
			return
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			s.problem(w, "request %d: hijack: %v", n, err)
			return
		}
		_ = conn.Close()
		return
	case EmptyChoices:
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-llmtest-" + strconv.Itoa(n), "object": "chat.completion",
			"created": 0, "model": "llmtest", "choices": []any{},
		})
		return
	default:
		s.problem(w, "request %d: unknown fault %q", n, step.Fault)
		return
	}
	writeJSON(w, http.StatusOK, reply(n, step))
}

func reply(n int, step Step) map[string]any {
	msg := map[string]any{"role": "assistant", "content": step.Content}
	finish := "stop"
	if len(step.ToolCalls) > 0 {
		finish = "tool_calls"
		calls := make([]map[string]any, len(step.ToolCalls))
		for i, c := range step.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", n, i)
			}
			calls[i] = map[string]any{
				"id": id, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments},
			}
		}
		msg["tool_calls"] = calls
	}
	if step.FinishReason != "" {
		finish = step.FinishReason
	}
	out := map[string]any{
		"id": "chatcmpl-llmtest-" + strconv.Itoa(n), "object": "chat.completion",
		"created": 0, "model": "llmtest",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if u := step.Usage; u != nil {
		out["usage"] = map[string]any{
			"prompt_tokens":         u.Prompt,
			"completion_tokens":     u.Completion,
			"total_tokens":          u.Prompt + u.Completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached},
		}
	}
	return out
}

func writeError(w http.ResponseWriter, status int, typ, code, msg, param string) {
	e := map[string]any{"message": msg, "type": typ}
	if code != "" {
		e["code"] = code
	}
	if param != "" {
		e["param"] = param
	}
	writeJSON(w, status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
