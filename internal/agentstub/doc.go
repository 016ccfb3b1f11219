// Package agentstub is a stub model server for running the real agent CLIs
// in tests: it speaks the Anthropic Messages API (what Claude Code calls)
// and the OpenAI Responses API (what the Codex CLI calls), streaming
// server-sent events, and plays a small honest coding agent that completes
// a grub task through the CLI's own shell tool.
//
// The stub is the model, not the agent: the CLI runs the commands it asks
// for and sends the results back. What the stub asks for is decided by the
// conversation alone (see Brain): grub's prompt says the task id, the phase
// and the next feature; the tool results already in the conversation say
// how far the turn has got. Every response carries usage, deterministic
// per response number, and the server adds up what it sent (Totals) so that
// a test can check what grub recorded to the token.
//
// It serves `make test-real-agents` (realagents_test.go, build tag
// realagents) and, as a program (cmd/agentstub), capturing the real
// programs' output for agent/backend/testdata/real. It imports only the
// standard library and never reaches the network.
package agentstub
