// Package controller owns grub's loop (docs/ARCHITECTURE.md, "life of a
// turn", "crash points" and "stop rules"): it takes the task's lock, runs
// the initializer and execution turns through an agent, and referees every
// turn: it parses the loop-state decision, checks the feature list against
// the rules, verifies a claimed feature by running init.sh and the
// feature's verify command, enforces the budgets and stop rules, applies
// control requests, and persists state after every step so that a crash
// loses nothing.
//
// It may import the standard library, harness, featurelist, loopstate,
// prompts, templates, internal/proc and agent (the contract, not its
// backends); it declares the small interfaces it consumes (Committer,
// ChangeDetector). It never imports internal/cli, internal/llm,
// internal/gitx, agent/backend or go-git.
package controller
