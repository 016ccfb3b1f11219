// Package llmtest is a fake OpenAI-compatible chat-completions server for
// tests: it answers POST <URL>/chat/completions over real HTTP (httptest)
// from a script of Steps, records every request it receives, and injects
// the faults a real provider produces: a 429 rate limit with Retry-After,
// a 500, a reply slower than the client's timeout, a dropped connection,
// an empty choice list, a 429 insufficient_quota, or any status with an
// OpenAI-style error body. A reply may carry usage with
// prompt_tokens_details.cached_tokens, or no usage at all.
//
// It serves under /v1 only (<URL> ends in /v1; any other path is a plain
// 404, as a real server answers a base URL without /v1), and GET
// <URL>/models lists the models SetModels names. SetKey makes it refuse
// a wrong key (401 invalid_api_key) and SetModels a chat request for a
// model it does not list (404 model_not_found), before the script is
// consulted.
//
// Steps are consumed in order, one per request. When the script runs out,
// the Fallback function (if set) answers; otherwise the request gets a 400
// and the server records the mistake. Start registers a cleanup that fails
// the test when a scripted step was never used or a request was not
// expected (Verify).
//
// It imports only the standard library, so any package's tests can use it,
// including internal/llm's own.
package llmtest
