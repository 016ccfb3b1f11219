//go:build linux

package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/proc/proctest"
)

// cmdScript returns a shell command line running testdata/<name> with sh,
// so the scripts need no executable bit.
func cmdScript(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return "sh '" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// cmdTestTurn returns a turn in a fresh workspace whose harness dir exists
// and whose prompt file holds prompt.
func cmdTestTurn(t *testing.T, prompt string) agent.Turn {
	t.Helper()
	ws := t.TempDir()
	harness := filepath.Join(ws, ".grub", "t1")
	if err := os.MkdirAll(harness, 0o755); err != nil {
		t.Fatal(err)
	}
	promptFile := filepath.Join(harness, "prompt.md")
	if err := os.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	return agent.Turn{
		TaskID:     "t1",
		Iteration:  7,
		Phase:      "execution",
		Prompt:     prompt,
		Workspace:  ws,
		HarnessDir: harness,
		PromptFile: promptFile,
		Timeout:    time.Minute,
	}
}

// cmdOutputLines parses NAME=value lines.
func cmdOutputLines(out string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(out) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		m[k] = v
	}
	return m
}

// Not parallel: it changes the working directory to check that a relative
// harness dir reaches the program as an absolute path.
func TestCommandEnvironment(t *testing.T) {
	turn := cmdTestTurn(t, "the prompt text")
	c := NewCommand(cmdScript(t, "env.sh"))
	t.Chdir(turn.Workspace)
	turn.HarnessDir = filepath.Join(".grub", "t1")
	c.ExtraEnv = []string{"GRUB_TEST_EXTRA=extra value", "GRUB_TASK_ID=overridden"}

	res, err := c.RunTurn(context.Background(), turn)
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	wsReal, err := filepath.EvalSymlinks(turn.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	harnessAbs := filepath.Join(turn.Workspace, ".grub", "t1")
	got := cmdOutputLines(res.FinalMessage)
	want := map[string]string{
		"TASK":             "t1",
		"ITERATION":        "7",
		"PHASE":            "execution",
		"HARNESS":          harnessAbs,
		"PROMPT_FILE":      turn.PromptFile,
		"PROMPT_FILE_TEXT": "the prompt text",
		"EXTRA":            "extra value",
		"PWD":              wsReal,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestCommandTurnOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		script      string
		prompt      string
		wantMessage string
		wantUsage   agent.Usage
		wantErr     []string // substrings of the error; nil means no error
	}{
		{
			name:        "prompt on stdin becomes the final message",
			script:      "echo_prompt.sh",
			prompt:      "Work on F3.\nEmit loop-state.\n",
			wantMessage: "Work on F3.\nEmit loop-state.\n",
			wantUsage:   agent.Usage{},
		},
		{
			name:        "non-zero exit names the code and quotes stderr",
			script:      "fail.sh",
			wantMessage: "half an answer\n",
			wantUsage:   agent.Usage{},
			wantErr:     []string{"exited with code 3", "first complaint\nmodel endpoint unreachable", "fail.sh"},
		},
		{
			name:        "usage lines are summed",
			script:      "usage.sh",
			wantMessage: "done\n",
			wantUsage:   agent.Usage{InputTokens: 1200, CachedInputTokens: 401, OutputTokens: 57, Requests: 3},
		},
		{
			name:        "malformed usage line is an error and the rest still counts",
			script:      "bad_usage.sh",
			wantMessage: "done\n",
			wantUsage:   agent.Usage{InputTokens: 10, OutputTokens: 5},
			wantErr:     []string{"stderr line 2", `unknown field "inputs"`, `GRUB_USAGE {"input":N`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, tc.prompt)
			res, err := NewCommand(cmdScript(t, tc.script)).RunTurn(context.Background(), turn)
			if tc.wantErr == nil && err != nil {
				t.Fatalf("RunTurn: %v", err)
			}
			if tc.wantErr != nil {
				if err == nil {
					t.Fatal("RunTurn succeeded, want an error")
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if errors.Is(err, agent.ErrTimeout) {
					t.Errorf("error %q wraps ErrTimeout", err)
				}
			}
			if res.FinalMessage != tc.wantMessage {
				t.Errorf("FinalMessage = %q, want %q", res.FinalMessage, tc.wantMessage)
			}
			if res.Usage != tc.wantUsage {
				t.Errorf("Usage = %+v, want %+v", res.Usage, tc.wantUsage)
			}
		})
	}
}

func TestCommandSetupErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cmd  string
		ws   func(t *testing.T, turn *agent.Turn)
		want string
	}{
		{name: "empty command", cmd: "  ", want: "--agent-cmd"},
		{name: "missing workspace", cmd: "true", ws: func(t *testing.T, turn *agent.Turn) {
			turn.Workspace = filepath.Join(turn.Workspace, "gone")
		}, want: "gone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turn := cmdTestTurn(t, "p")
			if tc.ws != nil {
				tc.ws(t, &turn)
			}
			_, err := NewCommand(tc.cmd).RunTurn(context.Background(), turn)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestCommandTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	turn := cmdTestTurn(t, "p")
	turn.Timeout = 1500 * time.Millisecond
	var pgid int
	turn.Started = func(p int) { pgid = p }

	_, err := NewCommand(cmdScript(t, "hang.sh")).RunTurn(context.Background(), turn)
	if !errors.Is(err, agent.ErrTimeout) {
		t.Fatalf("error = %v, want one wrapping ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "agent command timed out after 1.5s") {
		t.Errorf("error %q does not say how long the turn ran", err)
	}
	if pgid <= 0 {
		t.Fatalf("Started got pgid %d", pgid)
	}
	proctest.WaitGone(t, proctest.WaitPID(t, filepath.Join(turn.HarnessDir, "child.pid")))
	if proc.GroupAlive(pgid) {
		t.Errorf("process group %d alive after the timeout", pgid)
	}
}

func TestCommandCancelKillsGroup(t *testing.T) {
	t.Parallel()
	turn := cmdTestTurn(t, "p")
	pidfile := filepath.Join(turn.HarnessDir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(pidfile); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	var pgid int
	turn.Started = func(p int) { pgid = p }

	_, err := NewCommand(cmdScript(t, "hang.sh")).RunTurn(ctx, turn)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want one wrapping context.Canceled", err)
	}
	if errors.Is(err, agent.ErrTimeout) {
		t.Errorf("error %q wraps agent.ErrTimeout on a cancel", err)
	}
	proctest.WaitGone(t, proctest.WaitPID(t, pidfile))
	if proc.GroupAlive(pgid) {
		t.Errorf("process group %d alive after cancel", pgid)
	}
}

// TestCommandHugeOutputKeepsDecision: 50 MB of output, then the decision.
// The start and the end of the output reach the referee, with the cut
// marked, and memory stays bounded by the capture cap.
func TestCommandHugeOutputKeepsDecision(t *testing.T) {
	t.Parallel()
	turn := cmdTestTurn(t, "go")
	cmd := `head -c 50000000 /dev/zero | tr '\0' x; echo; echo '<loop-state>{"status":"continue","summary":"s","nextStep":"n"}</loop-state>'`
	res, err := NewCommand(cmd).RunTurn(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(res.FinalMessage, `<loop-state>{"status":"continue","summary":"s","nextStep":"n"}</loop-state>`+"\n") {
		t.Errorf("the decision at the end was lost")
	}
	if res.OutputCut <= 0 || !strings.Contains(res.FinalMessage, fmt.Sprintf("[grub: %d bytes of output cut here]", res.OutputCut)) {
		t.Errorf("OutputCut %d, and the message does not say so", res.OutputCut)
	}
	if len(res.FinalMessage) > 9<<20 {
		t.Errorf("kept %d bytes", len(res.FinalMessage))
	}
}
