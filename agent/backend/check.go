package backend

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/internal/proc"
)

// Check runs `claude --version`; see agent.Checker and checkVersion.
func (c *Claude) Check(ctx context.Context) (string, error) {
	return checkVersion(ctx, c.cfg.Bin, "claude", "Claude Code", c.cfg.ExtraEnv)
}

// Check runs `codex --version`; see agent.Checker and checkVersion.
func (c *Codex) Check(ctx context.Context) (string, error) {
	return checkVersion(ctx, c.cfg.Bin, "codex", "the Codex CLI", c.cfg.ExtraEnv)
}

// checkVersion finds the program (bin, or def) and runs it with
// --version, outside the sandbox and within ctx: a program that is not
// there, does not start, fails or hangs is an *agent.SetupError; what it
// prints first is the version found. It checks that the program runs,
// not that its account works: that shows in the first turn.
func checkVersion(ctx context.Context, bin, def, product string, extraEnv []string) (string, error) {
	path, err := lookupAgentBin(bin, def, product)
	if err != nil {
		return "", &agent.SetupError{Cause: err.Error(), Fix: "install " + product + ", or name the program with --agent-bin"}
	}
	res, err := proc.Run(ctx, proc.Spec{Args: []string{path, "--version"}, Env: extraEnv, MaxOutput: 64 << 10})
	fix := fmt.Sprintf("check that %s is %s and runs (try %s --version yourself), or name another program with --agent-bin", path, product, path)
	switch {
	case err != nil:
		return "", &agent.SetupError{Cause: fmt.Sprintf("%s --version did not start: %v", path, err), Fix: fix}
	case res.Cancelled || res.TimedOut:
		return "", &agent.SetupError{Cause: fmt.Sprintf("%s --version did not finish in time", path), Fix: fix}
	case res.ExitCode != 0:
		return "", &agent.SetupError{Cause: fmt.Sprintf("%s --version %s; %s", path, exitDescription(res), stderrLine(res)), Fix: fix}
	}
	version, _, _ := strings.Cut(string(bytes.TrimSpace(res.Stdout)), "\n")
	if version = strings.TrimSpace(version); version == "" {
		version = "(it printed no version)"
	}
	return fmt.Sprintf("%s runs: %s", path, strings.ToValidUTF8(version, "\uFFFD")), nil
}

// stderrLine is the end of a program's standard error on one line (its
// lines joined by " / "), for a cause that a progress line and a stop
// reason show whole.
func stderrLine(res proc.Result) string {
	var lines []string
	for _, l := range strings.Split(proc.TailString(res.Stderr, stderrTailBytes), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "its standard error was empty"
	}
	return "end of its standard error: " + strings.Join(lines, " / ")
}
