// Command grub keeps an AI coding agent working on one long goal, one
// verified feature at a time, and referees every turn. main only calls
// os.Exit(cli.Main()); everything else lives in internal/cli and the
// packages it wires. It may import internal/cli and the standard library.
//
// The end-to-end tests of this folder run scripted scenarios
// (testdata/*.txtar) against the real binary with rogpeppe/go-internal's
// testscript, with a fake agent program (internal/fakeagent) and a fake
// OpenAI-compatible server (internal/llm/llmtest) standing in for real ones.
package main
