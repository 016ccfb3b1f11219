package backend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"
)

// TestAgentProgramsGetExtraEnv: claude, codex and a command agent get
// ExtraEnv (the network proxy's variables) in their environment, later
// entries winning over grub's own.
func TestAgentProgramsGetExtraEnv(t *testing.T) {
	t.Setenv("NO_PROXY", "*")
	extra := []string{"HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY="}
	for name, run := range map[string]func(bin string, turn agent.Turn) error{
		"claude": func(bin string, turn agent.Turn) error {
			_, err := NewClaude(ClaudeConfig{Bin: bin, ExtraEnv: extra}).RunTurn(context.Background(), turn)
			return err
		},
		"codex": func(bin string, turn agent.Turn) error {
			_, err := NewCodex(CodexConfig{Bin: bin, ExtraEnv: extra}).RunTurn(context.Background(), turn)
			return err
		},
		"command": func(bin string, turn agent.Turn) error {
			c := NewCommand(bin)
			c.ExtraEnv = extra
			_, err := c.RunTurn(context.Background(), turn)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			turn := cmdTestTurn(t, "work\n")
			out := filepath.Join(turn.Workspace, "env.txt")
			bin := filepath.Join(t.TempDir(), "agent.sh")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"HTTPS_PROXY=$HTTPS_PROXY NO_PROXY=[$NO_PROXY]\" > "+out+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			_ = run(bin, turn) // the program prints no result: only its environment matters here
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := "HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=[]"; strings.TrimSpace(string(got)) != want {
				t.Errorf("environment %q, want %q", got, want)
			}
		})
	}
}
