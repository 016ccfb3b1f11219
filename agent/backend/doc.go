// Package backend holds grub's agent backends, each an agent.Agent: the
// built-in tool loop over an OpenAI-compatible server (OpenAI), Claude Code
// (Claude), the Codex CLI (Codex) and any program (Command).
//
// It may import agent, agent/tools, internal/llm, internal/proc, prompts
// and the standard library; never controller, harness or internal/cli.
package backend
