package llm_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// closedBase is a base URL where nothing listens.
func closedBase(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/v1"
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		server func(*llmtest.Server)
		base   func(srv *llmtest.Server) string
		key    string
		model  string
		found  string   // in what Check found; "" when it fails
		setup  bool     // the error is a *llm.SetupError
		inErr  []string // in the error
	}{
		{name: "listed", server: func(s *llmtest.Server) { s.SetModels("gpt-4.1", "m") }, model: "m", found: `serves the model "m"`},
		{name: "listed with :latest", server: func(s *llmtest.Server) { s.SetModels("qwen2.5-coder:latest") }, model: "qwen2.5-coder", found: `serves the model "qwen2.5-coder"`},
		{name: "no list", model: "m", found: "answers (it lists no models)"},
		{name: "not listed is a doubt", server: func(s *llmtest.Server) { s.SetModels("a", "b", "c", "d", "e", "f") }, model: "m",
			inErr: []string{`does not list the model "m"`, "a, b, c, d, e and 1 more", "check --model"}},
		{name: "wrong key", server: func(s *llmtest.Server) { s.SetKey("sk-right") }, key: "sk-wrong", model: "m", setup: true,
			inErr: []string{"/v1/models: HTTP 401: Incorrect API key provided", "check OPENAI_API_KEY"}},
		{name: "no /v1", base: func(s *llmtest.Server) string { return strings.TrimSuffix(s.URL(), "/v1") }, model: "m", setup: true,
			inErr: []string{"/models: HTTP 404", "does not end in /v1", "try --base-url http://127.0.0.1:"}},
		{name: "no /v1 with a path", base: func(s *llmtest.Server) string { return s.URL() + "/openai" }, model: "m", setup: true,
			inErr: []string{"/v1/openai/models: HTTP 404", "does not end in /v1"}},
		{name: "nothing listens", base: func(*llmtest.Server) string { return closedBase(t) }, model: "m", setup: true,
			inErr: []string{"connection refused", "nothing answers at http://127.0.0.1:", "check --base-url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t)
			if tt.server != nil {
				tt.server(srv)
			}
			base := srv.URL()
			if tt.base != nil {
				base = tt.base(srv)
			}
			c, err := llm.New(llm.Config{BaseURL: base, APIKey: tt.key, Model: tt.model})
			if err != nil {
				t.Fatal(err)
			}
			found, err := c.Check(context.Background())
			if tt.found != "" {
				if err != nil || !strings.Contains(found, tt.found) {
					t.Fatalf("Check = %q, %v; want %q", found, err, tt.found)
				}
				return
			}
			var se *llm.SetupError
			if err == nil || errors.As(err, &se) != tt.setup {
				t.Fatalf("Check = %q, %v (%T); want an error, setup %v", found, err, err, tt.setup)
			}
			for _, w := range tt.inErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A server that does not answer within the check's time is a setup error.
func TestCheckNoAnswerInTime(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := llm.New(llm.Config{BaseURL: "http://" + l.Addr().String() + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Check(ctx)
	var se *llm.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no answer in time") {
		t.Fatalf("err = %v, want a setup error saying there was no answer", err)
	}
}

// Answers that no retry can change are setup errors, said in full: a
// refused key, an unknown model, and a server that refuses connections
// after the retries.
func TestCompleteSetupErrors(t *testing.T) {
	srv := llmtest.Start(t)
	srv.SetModels("test-model")
	srv.SetKey("sk-right")
	for _, tt := range []struct {
		name, key, model string
		inErr            []string
	}{
		{"401", "sk-wrong", "test-model", []string{"HTTP 401: Incorrect API key provided", "; check OPENAI_API_KEY: the server at " + srv.URL() + " refused it"}},
		{"404 model", "sk-right", "nope", []string{"HTTP 404: The model `nope` does not exist", `; check --model (GRUB_MODEL): the server at ` + srv.URL() + ` may not know "nope"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: tt.key, Model: tt.model, Sleep: (&sleeps{}).sleep})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(context.Background(), request)
			var se *llm.SetupError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want a *llm.SetupError", err, err)
			}
			for _, w := range tt.inErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	t.Run("connection refused after the retries", func(t *testing.T) {
		sl := &sleeps{}
		c, err := llm.New(llm.Config{BaseURL: closedBase(t), Model: "m", Sleep: sl.sleep})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Complete(context.Background(), request)
		var se *llm.SetupError
		if !errors.As(err, &se) || resp.Retries != llm.DefaultMaxRetries || !strings.Contains(se.Cause, "after 5 retries") ||
			!strings.Contains(se.Cause, "connection refused") || !strings.Contains(se.Fix, "nothing answers at") {
			t.Fatalf("err = %v (%T), retries %d; want a setup error after the retries", err, err, resp.Retries)
		}
	})
}
