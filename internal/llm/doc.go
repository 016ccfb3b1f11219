// Package llm is grub's client for OpenAI-compatible chat-completions
// servers: OpenAI itself, or a local Ollama, vLLM or LM Studio server. It is
// the only package that imports go-openai; the rest of grub speaks the
// neutral types declared here (Message, ToolCall, ToolDef, Request, Response,
// Usage).
//
// Complete sends one chat-completions request with tool definitions and
// retries what is worth retrying: rate limits (HTTP 429, honouring a
// Retry-After of up to a minute), server errors (5xx), a reply that does not
// arrive within Config.RequestTimeout, transport errors (a refused, reset or
// dropped connection, a truncated body) and empty replies (no choices, or a
// choice with neither text nor tool calls). Backoff is exponential with
// jitter, from 0.5 s up to 10 s, at most Config.MaxRetries (5) retries, each
// counted in Response.Retries. Quota exhaustion (`insufficient_quota`, or
// HTTP 402) is not retried and is reported as an error wrapping ErrQuota.
// Other client errors (400, 401, 403, 404, ...) are not retried either;
// their message says what to check. Those no later request can change (a
// refused key, 401 and 403; an unknown model or URL, 404) and a server
// that still refuses connections after the retries are a *SetupError,
// whose Fix names the flag or variable to change (a 404 from a base URL
// not ending in /v1 says to add it).
//
// Check lists the server's models (GET <base>/models), once and without
// retries: the check grub makes before a run's first turn.
//
// Usage is taken from the reply (prompt_tokens,
// prompt_tokens_details.cached_tokens, completion_tokens). A server that
// sends no usage gets an estimate of one token per four characters, with
// Usage.Estimated set.
//
// Settings such as OPENAI_API_KEY or --base-url are read by the command line
// layer and passed in Config; this package reads no environment.
//
// It imports go-openai and the standard library only. Package llmtest holds
// a fake OpenAI-compatible server for tests.
package llm
