// Package agent owns the turn executors (DESIGN.md section 7): the types
// every backend shares (Turn, Result, Usage), and the backends themselves:
// the built-in tool loop, claude, codex and command.
//
// It may import agent/tools, internal/llm, internal/proc, prompts and the
// standard library;
// never controller, harness internals beyond paths, or internal/cli.
package agent
