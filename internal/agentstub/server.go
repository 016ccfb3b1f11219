package agentstub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// The APIs the stub speaks.
const (
	Anthropic = "anthropic" // POST /v1/messages, as Claude Code calls it
	Responses = "responses" // POST /v1/responses, as the Codex CLI calls it
)

// The faults the stub can inject instead of answering.
const (
	FaultNone       = ""
	FaultServer     = "500"        // 500 with the API's error body
	FaultOverloaded = "overloaded" // Anthropic: 529 overloaded_error; Responses: 503
)

// Config configures a Server.
type Config struct {
	// API is Anthropic or Responses.
	API string
	// Model is the model named in responses; empty means the request's.
	Model string
	// Brain decides what the model does.
	Brain Brain
	// Fault, when set, answers every model request with that failure.
	Fault string
	// Log, when set, gets one line per request.
	Log io.Writer
}

// Totals is what the stub has sent: the number of model responses and the
// sum of their usage. For Anthropic, Input is input_tokens (without the
// cache), CacheCreation and CacheRead the cache's parts; for Responses,
// Input is input_tokens (cached included) and CacheRead the cached part.
type Totals struct {
	Responses     int
	Input         int64
	CacheCreation int64
	CacheRead     int64
	Output        int64
}

// Request is a request the stub received.
type Request struct {
	Method, Path string
	Body         []byte
	Action       Action // what the stub answered (zero for faults and other paths)
	Usage        Usage  // the usage it sent
}

// Usage is the usage of one response.
type Usage struct {
	Input, CacheCreation, CacheRead, Output int64
}

// UsageFor is the usage the stub sends with its n-th response (1-based):
// made up, distinct per response, and small enough to add up by hand.
func UsageFor(api string, n int) Usage {
	k := int64(n)
	if api == Responses {
		// Responses counts cached tokens inside input_tokens.
		return Usage{Input: 1000 + 10*k, CacheRead: 600 + k, Output: 40 + k}
	}
	return Usage{Input: 100 + k, CacheCreation: 300 + 2*k, CacheRead: 2000 + 10*k, Output: 50 + k}
}

// Server is the stub: an http.Handler.
type Server struct {
	cfg Config

	mu     sync.Mutex
	reqs   []Request
	totals Totals
}

// New returns a stub server.
func New(cfg Config) *Server {
	if cfg.Brain.Features == 0 {
		cfg.Brain.Features = 2
	}
	return &Server{cfg: cfg}
}

// Totals returns what the stub has sent so far.
func (s *Server) Totals() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totals
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, format+"\n", args...)
	}
}

// ServeHTTP answers POST /v1/messages (Anthropic) or POST /v1/responses
// (Responses); anything else is a 404, logged.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body}
	want := "/v1/messages"
	if s.cfg.API == Responses {
		want = "/v1/responses"
	}
	if r.Method != http.MethodPost || strings.TrimSuffix(r.URL.Path, "/") != want {
		s.record(req)
		s.logf("%s %s: not served (404)", r.Method, r.URL)
		http.Error(w, `{"error":{"type":"not_found_error","message":"the stub serves only `+want+`"}}`, http.StatusNotFound)
		return
	}
	if s.cfg.Fault != FaultNone {
		s.record(req)
		s.logf("%s %s: fault %s", r.Method, r.URL, s.cfg.Fault)
		s.fail(w)
		return
	}
	var (
		conv  Conversation
		model string
		err   error
	)
	if s.cfg.API == Responses {
		conv, model, err = parseResponsesRequest(body)
	} else {
		conv, model, err = parseMessagesRequest(body)
	}
	if err != nil {
		s.record(req)
		s.logf("%s %s: bad request: %v", r.Method, r.URL, err)
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"the stub could not read the request"}}`, http.StatusBadRequest)
		return
	}
	if s.cfg.Model != "" {
		model = s.cfg.Model
	}
	req.Action = s.cfg.Brain.Decide(conv)

	s.mu.Lock()
	n := s.totals.Responses + 1
	req.Usage = UsageFor(s.cfg.API, n)
	s.totals.Responses = n
	s.totals.Input += req.Usage.Input
	s.totals.CacheCreation += req.Usage.CacheCreation
	s.totals.CacheRead += req.Usage.CacheRead
	s.totals.Output += req.Usage.Output
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	what := "text"
	if req.Action.Command != "" {
		what = "command"
	}
	s.logf("%s %s: response %d (%s) after %d tool results", r.Method, r.URL, n, what, len(conv.Results))
	sse := newSSE(w)
	if s.cfg.API == Responses {
		writeResponsesStream(sse, n, model, req.Action, req.Usage)
	} else {
		writeMessagesStream(sse, n, model, req.Action, req.Usage)
	}
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
}

// fail answers with the configured fault.
func (s *Server) fail(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case s.cfg.API == Anthropic && s.cfg.Fault == FaultOverloaded:
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	case s.cfg.API == Anthropic:
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
	case s.cfg.Fault == FaultOverloaded:
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"type":"server_error","code":"server_is_overloaded","message":"The server is overloaded."}}`)
	default:
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"type":"server_error","code":"server_error","message":"The server had an error while processing your request."}}`)
	}
}

// sse writes server-sent events.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event whose data is v as JSON.
func (s *sse) event(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // the stub's own values always marshal
	}
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data)
	if s.f != nil {
		s.f.Flush()
	}
}
