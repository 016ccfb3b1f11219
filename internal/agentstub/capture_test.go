//go:build realagents

package agentstub

// TestCapture (make capture-real-agents) runs the real programs once per
// case against the stub and writes what they print on standard output to
// $GRUB_CAPTURE_FIXTURES (agent/backend/testdata/real), with a README
// saying the versions, the commands and the exit codes: the fixtures of the
// backends' parsers.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// captureCase is one run of a real program.
type captureCase struct {
	file    string   // the fixture's name under the capture folder
	program string   // "claude" or "codex"
	args    []string // after the program name
	fault   string   // the stub's fault
	env     []string // extra environment
	closed  bool     // point the program at a closed port instead of the stub
	timeout time.Duration
	about   string
}

// The flags grub passes (agent/backend), with the output format varied.
var (
	claudeFlags = []string{"-p", "--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--model", claudeModel}
	codexFlags  = []string{"exec", "--json", "-c", "features.goals=false", "--sandbox", "workspace-write", "--skip-git-repo-check"}
)

func claudeArgs(format string, maxTurns string) []string {
	args := append([]string{}, claudeFlags...)
	args = append(args, "--max-turns", maxTurns, "--output-format", format)
	if format == "stream-json" {
		args = append(args, "--verbose")
	}
	return args
}

var captureCases = []captureCase{
	{file: "claude/success.json", program: "claude", args: claudeArgs("json", "200"),
		about: "an initializer turn: one Bash call writes the feature list and init.sh, then the final message with its loop-state"},
	{file: "claude/success.stream.jsonl", program: "claude", args: claudeArgs("stream-json", "200"),
		about: "the same turn as stream-json: init, assistant tool_use, user tool_result, assistant text, result"},
	{file: "claude/error-500.json", program: "claude", args: claudeArgs("json", "200"), fault: FaultServer,
		env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}, about: "every request answered 500 api_error, no retries"},
	{file: "claude/error-500.stream.jsonl", program: "claude", args: claudeArgs("stream-json", "200"), fault: FaultServer,
		env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}, about: "the same as stream-json"},
	{file: "claude/error-overloaded.json", program: "claude", args: claudeArgs("json", "200"), fault: FaultOverloaded,
		env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}, about: "every request answered 529 overloaded_error, no retries"},
	{file: "claude/error-overloaded.stream.jsonl", program: "claude", args: claudeArgs("stream-json", "200"), fault: FaultOverloaded,
		env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}, about: "the same as stream-json"},
	{file: "claude/max-turns.json", program: "claude", args: claudeArgs("json", "1"),
		about: "--max-turns 1 on a turn that needs two model requests"},
	{file: "claude/max-turns.stream.jsonl", program: "claude", args: claudeArgs("stream-json", "1"),
		about: "the same as stream-json"},
	{file: "codex/success.jsonl", program: "codex", args: append(append([]string{}, codexFlags...), "-"),
		about: "an initializer turn: one exec_command call, then the final message"},
	{file: "codex/error-500.jsonl", program: "codex", args: append(append([]string{}, codexFlags...), "-"), fault: FaultServer,
		about: "every request answered 500, request_max_retries and stream_max_retries 0"},
	{file: "codex/unreachable.jsonl", program: "codex", args: append(append([]string{}, codexFlags...), "-"), closed: true,
		timeout: 60 * time.Second, about: "the provider's base_url is a closed port, Codex's default retries"},
}

// capturePrompt is a real grub prompt (the initializer golden file), for a
// task whose harness folder the capture creates.
func capturePrompt(t *testing.T) (prompt, harness string) {
	t.Helper()
	data, err := os.ReadFile("../../prompts/testdata/golden/initializer-first.en.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := taskRe.FindSubmatch(data)
	if m == nil {
		t.Fatal("the golden prompt names no task")
	}
	return string(data), ".grub/" + string(m[1])
}

func TestCapture(t *testing.T) {
	out := os.Getenv("GRUB_CAPTURE_FIXTURES")
	if out == "" {
		t.Skip("GRUB_CAPTURE_FIXTURES is not set (make capture-real-agents sets it)")
	}
	bins := map[string]string{"claude": realBin(t, "claude"), "codex": realBin(t, "codex")}
	versions := map[string]string{}
	for name, bin := range bins {
		v, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		versions[name] = strings.TrimSpace(string(v))
	}
	prompt, harness := capturePrompt(t)
	var index []string
	for _, c := range captureCases {
		t.Run(c.file, func(t *testing.T) {
			stdout, code := runCapture(t, c, bins[c.program], prompt, harness)
			path := filepath.Join(out, c.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, stdout, 0o644); err != nil {
				t.Fatal(err)
			}
			index = append(index, fmt.Sprintf("| `%s` | %s | `%s %s` | %s | %s |", c.file, c.program, c.program,
				strings.Join(c.args, " "), code, c.about))
		})
	}
	readme := fmt.Sprintf(`# Real output of Claude Code and Codex

Captured by `+"`make capture-real-agents`"+` (internal/agentstub/capture_test.go) from
%s and %s (npm: @anthropic-ai/claude-code, @openai/codex), each run
once against the stub model server of internal/agentstub with the prompt of
prompts/testdata/golden/initializer-first.en.txt on standard input, in an
empty workspace holding its harness folder. Only standard output is kept.
Claude Code used %s (it computes total_cost_usd from that model's prices);
Codex used the model %s through a stub provider in CODEX_HOME/config.toml.
The stub's usage per response is agentstub.UsageFor. Nothing left the
machine (telemetry off, every proxy variable a trap that refuses).

| file | program | command | exit | what |
|---|---|---|---|---|
%s
`, versions["claude"], versions["codex"], claudeModel, codexModel, strings.Join(index, "\n"))
	if err := os.WriteFile(filepath.Join(out, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCapture runs one case and returns its standard output and how it
// ended.
func runCapture(t *testing.T, c captureCase, bin, prompt, harness string) ([]byte, string) {
	t.Helper()
	tr := startTrap(t)
	home, ws := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, harness), 0o755); err != nil {
		t.Fatal(err)
	}
	api := Anthropic
	if c.program == "codex" {
		api = Responses
	}
	_, hs := startStub(t, Config{API: api, Fault: c.fault})
	base := hs.URL
	if c.closed {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base = "http://" + ln.Addr().String()
		ln.Close()
	}
	extra := append([]string{"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + stubKey}, c.env...)
	retries := 0
	if c.closed {
		retries = -1
	}
	codexConfig(t, home, base+"/v1", retries)
	timeout := c.timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, c.args...)
	// codex is a node script that starts the native program: end the
	// whole process group, and stop waiting for output soon after.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir, cmd.Env = ws, hermeticEnv(t, home, tr, extra...)
	cmd.Stdin = strings.NewReader(prompt)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := "0"
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		code = fmt.Sprintf("killed after %s", timeout)
	case errors.As(err, &ee):
		code = fmt.Sprint(ee.ExitCode())
	case err != nil:
		t.Fatal(err)
	}
	t.Logf("%s: exit %s; stderr:\n%s", c.file, code, stderr.String())
	return stdout.Bytes(), code
}
