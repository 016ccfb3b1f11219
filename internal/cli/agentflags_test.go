package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// How resume's agent flags change the settings a task recorded.
func TestAgentFlagsOnResume(t *testing.T) {
	env := map[string]string{"GRUB_MODEL": "gpt-4.1", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	openai := harness.Agent{Kind: "openai", Model: "gpt-4.1", BaseURL: "http://x/v1", MaxRequests: 64, ContextWindow: 128000, RequestTimeoutSeconds: 600}
	claude := harness.Agent{Kind: "claude", Bin: "/opt/claude", Model: "sonnet"}
	tests := []struct {
		name    string
		args    []string
		from    harness.Agent
		want    harness.Agent
		wantErr string
	}{
		{"no flags keep everything", nil, claude, claude, ""},
		{"a new program only", []string{"--agent-bin", "/usr/bin/claude"}, claude,
			harness.Agent{Kind: "claude", Bin: "/usr/bin/claude", Model: "sonnet"}, ""},
		{"openai to claude drops the openai settings and GRUB_MODEL", []string{"--agent", "claude"}, openai,
			harness.Agent{Kind: "claude", StallTimeoutSeconds: 300}, ""},
		{"agent args replace those recorded", []string{"--agent-args", `--permission-mode plan --append-system-prompt 'be brief'`},
			harness.Agent{Kind: "claude", Args: []string{"--verbose"}},
			harness.Agent{Kind: "claude", Args: []string{"--permission-mode", "plan", "--append-system-prompt", "be brief"}}, ""},
		{"empty agent args remove them", []string{"--agent-args", ""}, harness.Agent{Kind: "codex", Args: []string{"-c", "x=1"}},
			harness.Agent{Kind: "codex"}, ""},
		{"a new stall timeout", []string{"--stall-timeout", "90s"}, harness.Agent{Kind: "codex", StallTimeoutSeconds: 300},
			harness.Agent{Kind: "codex", StallTimeoutSeconds: 90}, ""},
		{"unbalanced quote in agent args", []string{"--agent-args", `-c 'x=1`}, claude, harness.Agent{}, `--agent-args "-c 'x=1": a single quote (') is not closed`},
		{"agent args for openai", []string{"--agent-args", "-x"}, openai, harness.Agent{}, "--agent-args does not apply to --agent openai (it is for --agent claude or codex)"},
		{"agent args for command", []string{"--agent-args", "-x"}, harness.Agent{Kind: "command", Command: "a"}, harness.Agent{}, "--agent-args does not apply to --agent command"},
		{"stall timeout for openai", []string{"--stall-timeout", "1m"}, openai, harness.Agent{}, "--stall-timeout does not apply to --agent openai"},
		{"stall timeout below a second", []string{"--stall-timeout", "500ms"}, claude, harness.Agent{}, "--stall-timeout 500ms: use whole seconds of at least 1s"},
		{"claude to openai takes GRUB_MODEL and OPENAI_BASE_URL", []string{"--agent", "openai"}, claude,
			harness.Agent{Kind: "openai", Model: "gpt-4.1", BaseURL: "http://127.0.0.1:9/v1", MaxRequests: 64, ContextWindow: 128000, RequestTimeoutSeconds: 600}, ""},
		{"agent-cmd alone switches to command", []string{"--agent-cmd", "my-agent"}, claude,
			harness.Agent{Kind: "command", Command: "my-agent"}, ""},
		{"a flag of another backend", []string{"--max-requests", "9"}, claude, harness.Agent{}, "--max-requests does not apply to --agent claude"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := TestIOStreams()
			f := NewFactory(ios)
			f.Getenv = func(k string) string { return env[k] }
			var got harness.Agent
			var applyErr error
			cmd := NewCmdResume(f, func(o *ResumeOptions) error {
				got = tt.from
				applyErr = o.Agent(&got)
				return nil
			})
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				if applyErr == nil || !strings.Contains(applyErr.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", applyErr, tt.wantErr)
				}
				return
			}
			if applyErr != nil || !harness.SameAgent(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, applyErr, tt.want)
			}
		})
	}
}

// A command agent's whole check before a run: its program is there. A
// line that starts with the shell's own syntax is left to the shell.
func TestCheckCommandProgram(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "agent.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cmd   string
		fails bool
	}{
		{"sh -c 'echo hi'", false},
		{"./agent.sh --headless", false},
		{"exit 1", false},
		{"FOO=1 my-agent", false},
		{"'quoted name' x", false},
		{"cd sub && ./agent", false},
		{"no-such-agent-program --headless", true},
		{"./missing.sh", true},
	} {
		err := checkCommandProgram(tt.cmd, root)
		var usage *UsageError
		if (err != nil) != tt.fails || (err != nil && !errors.As(err, &usage)) {
			t.Errorf("checkCommandProgram(%q) = %v, want a usage error: %v", tt.cmd, err, tt.fails)
		}
	}
}
