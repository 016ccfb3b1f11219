package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/agent/tools"

	"github.com/grub-dev/grub/internal/proc"
)

// This file holds what the three backends that run an outside program
// (command, claude, codex) share: how the program is started for a turn,
// and how its end is turned into an error.

// programSpec is one run of an agent program for a turn.
type programSpec struct {
	// Command is run through `sh -c` when Args is empty.
	Command string
	// Args is executed directly when non-empty: Args[0] with Args[1:].
	Args []string
	// ExtraEnv is added before the GRUB_* variables, which win over it.
	ExtraEnv []string
	// Stdout, if set, also receives the program's standard output as it
	// arrives, beyond what proc keeps.
	Stdout io.Writer
	// Stderr is the same for standard error.
	Stderr io.Writer
	// MaxOutput caps the bytes of each output stream kept in the
	// proc.Result; zero means proc.DefaultMaxOutput.
	MaxOutput int
	// Wrap, when set, puts a launcher (the sandbox) in front of the argv.
	Wrap proc.Wrapper
}

// turnEnv returns extra followed by the GRUB_* variables describing t:
// GRUB_TASK_ID, GRUB_ITERATION, GRUB_PHASE, GRUB_HARNESS_DIR (made
// absolute) and GRUB_PROMPT_FILE.
func turnEnv(t agent.Turn, extra []string) ([]string, error) {
	harnessDir := t.HarnessDir
	if harnessDir != "" {
		abs, err := filepath.Abs(harnessDir)
		if err != nil {
			return nil, fmt.Errorf("harness dir %q: %w", harnessDir, err)
		}
		harnessDir = abs
	}
	env := append([]string(nil), extra...)
	return append(env,
		"GRUB_TASK_ID="+t.TaskID,
		"GRUB_ITERATION="+strconv.Itoa(t.Iteration),
		"GRUB_PHASE="+t.Phase,
		"GRUB_HARNESS_DIR="+harnessDir,
		"GRUB_PROMPT_FILE="+t.PromptFile,
	), nil
}

// runProgram runs p once for t: in t.Workspace, with t.Prompt on its
// standard input and turnEnv in its environment, in its own process group,
// which is killed when t.Timeout expires or ctx is done (t.Started learns
// the group id). Once the program has exited, whatever it left running in
// its group is killed too: the turn is over, and two agents never work at
// once.
//
// A timeout, a cancellation and a non-zero exit are reported in the
// proc.Result (see interruptedError and exitDescription); the error is for
// a program that could not be started.
func runProgram(ctx context.Context, t agent.Turn, p programSpec) (proc.Result, error) {
	env, err := turnEnv(t, p.ExtraEnv)
	if err != nil {
		return proc.Result{}, err
	}
	res, err := proc.Run(ctx, proc.Spec{
		Command:   p.Command,
		Args:      p.Args,
		Dir:       t.Workspace,
		Env:       env,
		Stdin:     strings.NewReader(t.Prompt),
		Timeout:   t.Timeout,
		Started:   t.Started,
		Stdout:    p.Stdout,
		Stderr:    p.Stderr,
		MaxOutput: p.MaxOutput,
		Wrap:      p.Wrap,
	})
	if err != nil {
		return res, err
	}
	if res.Pgid > 0 {
		// An error here cannot be acted on: the group was ours.
		_ = proc.KillGroup(res.Pgid)
	}
	return res, nil
}

// interruptedError returns the error for a run of the program called name
// that timed out (wrapping ErrTimeout) or was cancelled (wrapping ctx's
// error), and nil for a run that ended by itself. lastErr, when not empty,
// is the last error the program reported, which a timeout quotes: it is
// often why the turn made no progress.
func interruptedError(ctx context.Context, name string, res proc.Result, timeout time.Duration, lastErr string) error {
	said := ""
	if lastErr != "" {
		said = fmt.Sprintf(" (its last error: %s)", strconv.Quote(lastErr))
	}
	switch {
	case res.TimedOut:
		return fmt.Errorf("%s timed out after %s%s: %w", name, tools.FormatDuration(timeout), said, agent.ErrTimeout)
	case res.Cancelled:
		cause := ctx.Err()
		if cause == nil {
			cause = context.Canceled
		}
		return fmt.Errorf("%s cancelled: %w", name, cause)
	}
	return nil
}

// stalledError returns the error for a run that its stallWatch ended
// (runCtx's cause is errStalled while ctx itself is not done), and nil for
// any other run. It wraps ErrUsageLimited when the last error speaks of a
// usage limit.
func stalledError(ctx, runCtx context.Context, name string, res proc.Result, stall *stallWatch) error {
	if !res.Cancelled || ctx.Err() != nil || !errors.Is(context.Cause(runCtx), errStalled) {
		return nil
	}
	last := stall.lastError()
	if isUsageLimitMessage(last) {
		return fmt.Errorf("%s: %w: %s", name, agent.ErrUsageLimited, last)
	}
	return fmt.Errorf("%s made no progress for %s, only reporting errors; the last: %s (is its model provider reachable? see --stall-timeout)",
		name, tools.FormatDuration(stall.limit), strconv.Quote(last))
}

// finishTranscript records a turn's error in its transcript and closes
// it; a transcript that could not be written fails a turn that had no
// other error.
func finishTranscript(tr *transcript, streamErr error, name string, out agent.Result, err error) (agent.Result, error) {
	if err != nil {
		if werr := tr.write(TranscriptEntry{Type: EntryError, Error: err.Error()}, false); werr != nil && streamErr == nil {
			streamErr = werr
		}
	}
	if cerr := tr.close(); cerr != nil && streamErr == nil {
		streamErr = cerr
	}
	out.Transcript = tr.path
	if err == nil && streamErr != nil {
		err = fmt.Errorf("%s: %w", name, streamErr)
	}
	return out, err
}

// exitDescription says how a program that ended by itself ended: "exited
// with code 3", or the signal that ended it.
func exitDescription(res proc.Result) string {
	if res.Signal != "" {
		return fmt.Sprintf("was ended by signal %q (exit code %d)", res.Signal, res.ExitCode)
	}
	return fmt.Sprintf("exited with code %d", res.ExitCode)
}

// lookupAgentBin resolves the program of the claude or codex backend: bin,
// or def when bin is empty, looked up in PATH when it has no slash. A name
// with a slash is made absolute, so that it means the same file once the
// program runs in the workspace. product names what to install.
func lookupAgentBin(bin, def, product string) (string, error) {
	if bin == "" {
		bin = def
	}
	path, err := proc.LookProgram(bin, "")
	var notRun *exec.Error
	switch {
	case err == nil:
		return path, nil
	case !errors.As(err, &notRun):
		return "", fmt.Errorf("%s backend: %w", def, err)
	case errors.Is(err, exec.ErrNotFound) && !strings.ContainsRune(bin, filepath.Separator):
		return "", fmt.Errorf("%s not found in PATH: install %s or pass --agent-bin", bin, product)
	}
	return "", fmt.Errorf("%s backend: cannot run %q: %w; check --agent-bin", def, bin, err)
}

// usageLimitPhrases are the (lower-case) phrases by which Claude Code,
// Codex and the APIs behind them say that an account's usage limit, rate
// limit or quota stopped the work: "Claude AI usage limit reached|…",
// "5-hour limit reached ∙ resets 2am", "You've hit your usage limit",
// "rate_limit_error", "insufficient_quota", "Credit balance is too low".
var usageLimitPhrases = []string{
	"usage limit",
	"usage_limit",
	"hit your limit",
	"5-hour limit",
	"weekly limit",
	"out of extra usage",
	"rate limit",
	"rate_limit",
	"ratelimit",
	"quota",
	"too many requests",
	"credit balance is too low",
	"out of credits",
}

// isUsageLimitMessage reports whether an agent program's error message
// says a usage limit, rate limit or quota stopped it. It is only asked
// about messages already known to be errors, never about an agent's
// answer.
func isUsageLimitMessage(msg string) bool {
	lower := strings.ToLower(msg)
	for _, p := range usageLimitPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// addTokens adds two non-negative token counts, saturating instead of
// overflowing on absurd input.
func addTokens(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// outputHead quotes the start of a program's output for an error message.
func outputHead(b []byte) string {
	const limit = 200
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if len(s) > limit {
		// Cutting may split a rune; dropping the invalid remnant fixes it.
		s = strings.ToValidUTF8(s[:limit], "") + "…"
	}
	return strconv.Quote(s)
}
