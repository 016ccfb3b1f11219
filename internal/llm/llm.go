package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of Config.
const (
	// DefaultBaseURL is OpenAI's API, used when Config.BaseURL is empty.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultMaxRetries is how often a failed request is retried.
	DefaultMaxRetries = 5
	// DefaultRequestTimeout bounds one attempt of one request.
	DefaultRequestTimeout = 10 * time.Minute
	// MinBackoff and MaxBackoff bound the default backoff between retries.
	MinBackoff = 500 * time.Millisecond
	MaxBackoff = 10 * time.Second
	// MaxRetryAfter is the longest Retry-After a server may ask for and be
	// obeyed; a longer one falls back to the normal backoff.
	MaxRetryAfter = 60 * time.Second
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message. An assistant message may carry ToolCalls; a
// tool message answers the call named by ToolCallID.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
}

// ToolCall is the model's request to run one tool. Arguments is the JSON
// text the model wrote, unchecked.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolDef describes a tool offered to the model. Parameters is a JSON
// Schema object, sent verbatim.
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one chat-completions request.
type Request struct {
	Messages []Message
	Tools    []ToolDef
}

// Usage is the tokens one request consumed. Prompt counts every input
// token, CachedPrompt the part of them the provider served from its prompt
// cache. Estimated is set when the server reported no usage and the counts
// were estimated from the text.
type Usage struct {
	Prompt       int64
	CachedPrompt int64
	Completion   int64
	Estimated    bool
}

// Response is the model's reply to a Request.
type Response struct {
	Message      Message
	Usage        Usage
	FinishReason string
	// Retries is how many failed attempts were retried before this reply
	// (or before the error Complete returned with it).
	Retries int
}

// ErrQuota is wrapped by the error Complete returns when the provider
// refuses because the account's quota or credit is exhausted. It is not
// retried: waiting does not help.
var ErrQuota = errors.New("the model provider's quota is exhausted (insufficient_quota)")

// SetupError is a refusal or failure that retrying cannot change: the
// server refused the key (401, 403), knows neither the model nor the URL
// (404), or cannot be reached at all. Fix says what to change; it names
// the flag or the variable.
type SetupError struct {
	Cause string
	Fix   string
}

func (e *SetupError) Error() string { return e.Cause + "; " + e.Fix }

// Config configures a Client. Only Model is required; see New.
type Config struct {
	// BaseURL is the API root, e.g. http://localhost:11434/v1 for Ollama;
	// empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. It is required for DefaultBaseURL
	// and optional for any other server.
	APIKey string
	// Model is the model name the server knows.
	Model string
	// RequestTimeout bounds one attempt; zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxRetries is the most retries of one request; zero means
	// DefaultMaxRetries, a negative value means none.
	MaxRetries int
	// Backoff returns the wait before retry number attempt (1-based) when
	// the server did not say how long to wait; nil means exponential
	// backoff with jitter between MinBackoff and MaxBackoff.
	Backoff func(attempt int) time.Duration
	// Sleep waits d or until ctx ends; nil means a timer. Tests inject one
	// that does not wait.
	Sleep func(ctx context.Context, d time.Duration) error
	// HTTPClient sends the requests; nil means a client without a global
	// timeout (RequestTimeout applies per attempt).
	HTTPClient *http.Client
}

// Client sends chat-completions requests. It is safe for concurrent use.
type Client struct {
	api        *openai.Client
	base       string // the API root, without a trailing slash
	model      string
	timeout    time.Duration
	maxRetries int
	backoff    func(int) time.Duration
	sleep      func(context.Context, time.Duration) error
}

// New checks cfg and returns a client. It makes no request.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: no model given: set --model or GRUB_MODEL to a model name the server knows")
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q is not an http(s) URL: set --base-url or OPENAI_BASE_URL to e.g. http://localhost:11434/v1", cfg.BaseURL)
	}
	if cfg.APIKey == "" && base == DefaultBaseURL {
		return nil, errors.New("llm: OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local OpenAI-compatible server")
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = base
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	oc.HTTPClient = hc
	c := &Client{
		api:        openai.NewClientWithConfig(oc),
		base:       base,
		model:      cfg.Model,
		timeout:    cfg.RequestTimeout,
		maxRetries: cfg.MaxRetries,
		backoff:    cfg.Backoff,
		sleep:      cfg.Sleep,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultRequestTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.backoff == nil {
		c.backoff = DefaultBackoff
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	return c, nil
}

// Model returns the model name requests are sent for.
func (c *Client) Model() string { return c.model }

// DefaultBackoff is the wait before retry number attempt (1-based):
// 0.5 s doubled per attempt, capped at 10 s, with the upper half jittered.
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := MaxBackoff
	if attempt <= 6 {
		d = min(MinBackoff<<(attempt-1), MaxBackoff)
	}
	half := d / 2
	return max(half+rand.N(half+1), MinBackoff)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
