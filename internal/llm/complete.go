package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Complete sends req and returns the first choice of the reply, retrying
// rate limits, server errors, timeouts, transport errors and empty replies
// (see the package documentation). It returns an error wrapping ErrQuota
// when the quota is exhausted, ctx's error when ctx ends, and otherwise an
// error naming the HTTP status and what to check. The Response returned
// with an error carries the number of retries made.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	oreq := c.convertRequest(req)
	retries := 0
	for {
		resp, header, err := c.attempt(ctx, oreq)
		if err == nil {
			out, ok := convertResponse(resp)
			if ok {
				if out.Usage == (Usage{}) {
					out.Usage = estimateUsage(req, out.Message)
				}
				out.Retries = retries
				return out, nil
			}
			err = errEmptyReply
		}
		if ctx.Err() != nil {
			return Response{Retries: retries}, fmt.Errorf("model request cancelled: %w", context.Cause(ctx))
		}
		wait, cerr := c.classify(err, header)
		if cerr != nil {
			return Response{Retries: retries}, cerr
		}
		if retries >= c.maxRetries {
			cause := fmt.Sprintf("model request failed after %d retries: %v", retries, describe(err))
			if isUnreachable(err) {
				return Response{Retries: retries}, &SetupError{Cause: cause, Fix: c.unreachableFix()}
			}
			return Response{Retries: retries}, errors.New(cause)
		}
		retries++
		if wait <= 0 {
			wait = c.backoff(retries)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return Response{Retries: retries}, fmt.Errorf("model request cancelled while waiting to retry: %w", context.Cause(ctx))
		}
	}
}

// errEmptyReply marks a reply without a usable choice.
var errEmptyReply = errors.New("the server sent an empty reply (no choices, or neither text nor tool calls)")

// errAttemptTimeout marks an attempt that outlived the request timeout.
var errAttemptTimeout = errors.New("no reply within the request timeout")

// attempt sends one request under the per-attempt timeout. It returns the
// response headers, when there was a response, so that a 429's Retry-After
// can be read.
func (c *Client) attempt(ctx context.Context, oreq openai.ChatCompletionRequest) (openai.ChatCompletionResponse, http.Header, error) {
	actx, cancel := context.WithTimeoutCause(ctx, c.timeout, errAttemptTimeout)
	defer cancel()
	resp, err := c.api.CreateChatCompletion(actx, oreq)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		err = fmt.Errorf("%w (%s)", errAttemptTimeout, c.timeout)
	}
	return resp, resp.Header(), err
}

// classify decides what to do with a failed attempt: it returns a wait
// (zero: use the backoff) for an error worth retrying, or a final error:
// a *SetupError for a refused key and an unknown model or URL.
func (c *Client) classify(err error, header http.Header) (time.Duration, error) {
	if errors.Is(err, errEmptyReply) || errors.Is(err, errAttemptTimeout) {
		return 0, nil
	}
	status, code, typ, msg, ok := httpError(err)
	if ok {
		if isQuota(status, code, typ, msg) {
			return 0, fmt.Errorf("%w: HTTP %d: %s", ErrQuota, status, msg)
		}
		switch {
		case status == http.StatusTooManyRequests:
			return retryAfter(header, time.Now()), nil
		case status >= 500, status == http.StatusRequestTimeout, status == http.StatusConflict:
			return retryAfter(header, time.Now()), nil
		}
		cause := fmt.Sprintf("model request rejected: HTTP %d: %s", status, msg)
		if fix := c.setupFix(status); fix != "" {
			return 0, &SetupError{Cause: cause, Fix: fix}
		}
		return 0, fmt.Errorf("%s%s", cause, hint(status))
	}
	if isTransient(err) {
		return 0, nil
	}
	return 0, fmt.Errorf("model request failed: %w", err)
}

// httpError extracts the status and the error body of an HTTP error.
func httpError(err error) (status int, code, typ, msg string, ok bool) {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0 {
		if apiErr.Code != nil {
			code = fmt.Sprint(apiErr.Code)
		}
		return apiErr.HTTPStatusCode, code, apiErr.Type, apiErr.Message, true
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		body := strings.TrimSpace(string(reqErr.Body))
		if len(body) > 500 {
			body = body[:500] + "…"
		}
		if body == "" {
			body = reqErr.HTTPStatus
		}
		return reqErr.HTTPStatusCode, "", "", body, true
	}
	return 0, "", "", "", false
}

func isQuota(status int, code, typ, msg string) bool {
	const q = "insufficient_quota"
	return status == http.StatusPaymentRequired || code == q || typ == q ||
		strings.Contains(msg, q)
}

// setupFix is what to change after a refusal that no retry can change
// (401, 403, 404); "" for any other status.
func (c *Client) setupFix(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "check OPENAI_API_KEY: the server at " + c.base + " refused it"
	case http.StatusForbidden:
		return fmt.Sprintf("check that OPENAI_API_KEY may use the model %q on %s", c.model, c.base)
	case http.StatusNotFound:
		if fix := c.noV1Fix(); fix != "" {
			return fix
		}
		return fmt.Sprintf("check --model (GRUB_MODEL): the server at %s may not know %q; and --base-url (OPENAI_BASE_URL)", c.base, c.model)
	}
	return ""
}

// noV1Fix is the hint for a 404 from a base URL whose path does not end
// in /v1, where OpenAI-compatible servers serve the API; "" when it does.
func (c *Client) noV1Fix() string {
	u, err := url.Parse(c.base)
	if err != nil || strings.HasSuffix(u.Path, "/v1") {
		return ""
	}
	return fmt.Sprintf("the base URL %s does not end in /v1, where OpenAI-compatible servers serve the API: try --base-url %s/v1 (or OPENAI_BASE_URL)", c.base, c.base)
}

// unreachableFix is what to change when nothing answers at the base URL.
func (c *Client) unreachableFix() string {
	return "nothing answers at " + c.base + ": start the server, or check --base-url (OPENAI_BASE_URL)"
}

// isUnreachable reports a transport error that says no server is there:
// the connection refused, the host unknown, no route to it.
func isUnreachable(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || (errors.As(err, &dnsErr) && dnsErr.IsNotFound)
}

func hint(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return ": the server refused the request; check that the model supports tool calling and that the context window is large enough (--context-window)"
	}
	return ""
}

// isTransient reports a transport error worth retrying: a refused, reset or
// dropped connection, a network timeout, or a body cut short.
func isTransient(err error) bool {
	var opErr *net.OpError
	var netErr net.Error
	var synErr *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.As(err, &opErr) || (errors.As(err, &netErr) && netErr.Timeout()) ||
		errors.As(err, &synErr)
}

// describe adds a hint to the last error of a request that ran out of
// retries.
func describe(err error) error {
	if status, _, _, msg, ok := httpError(err); ok {
		return fmt.Errorf("HTTP %d: %s", status, msg)
	}
	return err
}

// retryAfter reads Retry-After (seconds or an HTTP date) or OpenAI's
// retry-after-ms. It returns zero when there is none or it asks for more
// than MaxRetryAfter.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	var d time.Duration
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	if d <= 0 || d > MaxRetryAfter {
		return 0
	}
	return d
}

func (c *Client) convertRequest(req Request) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{
		Model:    c.model,
		Messages: make([]openai.ChatCompletionMessage, 0, len(req.Messages)),
	}
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{
			Role:       m.Role,
			Content:    m.Content,
			Name:       m.Name,
			ToolCallID: m.ToolCallID,
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID:   tc.ID,
				Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{
					Name:      tc.Name,
					Arguments: tc.Arguments,
				},
			})
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        t.Name,
				Description: t.Description,
				Parameters:  params,
			},
		})
	}
	return out
}

// convertResponse returns the first choice; ok is false for an empty reply.
func convertResponse(r openai.ChatCompletionResponse) (Response, bool) {
	if len(r.Choices) == 0 {
		return Response{}, false
	}
	ch := r.Choices[0]
	msg := Message{Role: RoleAssistant, Content: ch.Message.Content}
	for _, tc := range ch.Message.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: tc.Function.Arguments,
		})
	}
	if msg.Content == "" && len(msg.ToolCalls) == 0 {
		return Response{}, false
	}
	out := Response{Message: msg, FinishReason: string(ch.FinishReason)}
	out.Usage = Usage{
		Prompt:     int64(r.Usage.PromptTokens),
		Completion: int64(r.Usage.CompletionTokens),
	}
	if d := r.Usage.PromptTokensDetails; d != nil {
		out.Usage.CachedPrompt = int64(d.CachedTokens)
	}
	return out, true
}

// EstimateTokens is grub's rough token count of text: one token per four
// bytes, rounded up.
func EstimateTokens(chars int) int64 { return int64((chars + 3) / 4) }

// RequestChars is the size in bytes of the text of req: every message's
// content and tool calls, and every tool definition.
func RequestChars(req Request) int {
	n := 0
	for _, m := range req.Messages {
		n += MessageChars(m)
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// MessageChars is the size in bytes of m's content and tool calls.
func MessageChars(m Message) int {
	n := len(m.Content)
	for _, tc := range m.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	return n
}

func estimateUsage(req Request, reply Message) Usage {
	return Usage{
		Prompt:     EstimateTokens(RequestChars(req)),
		Completion: EstimateTokens(MessageChars(reply)),
		Estimated:  true,
	}
}
