package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Check asks the server for its models (GET <base>/models), once, without
// retries, within ctx: the one request grub makes before a run's first
// turn, which costs no tokens. It returns what it found, in a few words.
//
// A *SetupError means no turn can work: nothing answers at the base URL,
// or none within ctx's deadline; the key is refused (401, 403); the URL
// is not found (404) and does not end in /v1, which the fix suggests.
// Any other error is a doubt, not a verdict: a server without a model
// list (a 404 under /v1), one that answers 5xx, or a list without the
// model (servers accept names they do not list: aliases, Ollama's
// "name" for "name:latest", a proxy's wildcard routes).
func (c *Client) Check(ctx context.Context) (string, error) {
	list, err := c.api.ListModels(ctx)
	if err != nil {
		return "", c.checkError(ctx, err)
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	switch {
	case len(ids) == 0:
		return fmt.Sprintf("%s answers (it lists no models)", c.base), nil
	case listed(ids, c.model):
		return fmt.Sprintf("%s serves the model %q", c.base, c.model), nil
	}
	return "", fmt.Errorf("%s does not list the model %q (it lists %s); if the first request fails, check --model (GRUB_MODEL)",
		c.base, c.model, someOf(ids, 5))
}

// checkError sorts a failed model list into a *SetupError or a doubt.
func (c *Client) checkError(ctx context.Context, err error) error {
	where := c.base + "/models"
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &SetupError{Cause: fmt.Sprintf("GET %s: no answer in time", where), Fix: c.unreachableFix()}
		}
		return fmt.Errorf("GET %s: %w", where, context.Cause(ctx))
	}
	if isUnreachable(err) {
		return &SetupError{Cause: fmt.Sprintf("GET %s: %v", where, err), Fix: c.unreachableFix()}
	}
	status, _, _, msg, ok := httpError(err)
	if !ok {
		return fmt.Errorf("GET %s: %w", where, err)
	}
	cause := fmt.Sprintf("GET %s: HTTP %d: %s", where, status, msg)
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &SetupError{Cause: cause, Fix: c.setupFix(status)}
	case http.StatusNotFound:
		if fix := c.noV1Fix(); fix != "" {
			return &SetupError{Cause: cause, Fix: fix}
		}
	}
	return errors.New(cause)
}

// listed reports whether ids name model, as the server would take it:
// exactly, with Ollama's implied ":latest", or with Gemini's "models/".
func listed(ids []string, model string) bool {
	return slices.ContainsFunc(ids, func(id string) bool {
		return id == model || id == model+":latest" || strings.TrimPrefix(id, "models/") == model
	})
}

// someOf lists up to n of ids, saying how many more there are.
func someOf(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}
