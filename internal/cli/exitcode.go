package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

// grub's exit codes, the same for every command that runs or shows a
// task (grub --help lists them).
const (
	ExitOK          = 0   // complete; for status/list etc.: the command worked
	ExitFailed      = 1   // failed, or an internal error
	ExitUsage       = 2   // usage error or bad input: flags, unknown id, invalid harness file; an agent that cannot work (task paused)
	ExitBlocked     = 3   // blocked
	ExitBudget      = 4   // budget_limited or usage_limited
	ExitPaused      = 5   // paused or stopped by a request
	ExitLocked      = 75  // the task is already running elsewhere (lock held)
	ExitInterrupted = 130 // interrupted by a signal (task left paused)
	ExitBrokenPipe  = 141 // the reader of stdout or stderr went away (128 + SIGPIPE)
)

// ExitError makes a command exit with Code. When Err is nil nothing is
// printed: the command has already said what there was to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a mistake in how grub was called: a bad flag, a missing or
// extra argument, a value out of range. It exits with 2 and the message is
// followed by a hint to read the command's help.
type UsageError struct {
	Err error
	// Command is the command path ("grub edit") the hint names; empty for
	// errors found before a command was chosen.
	Command string
}

func (e *UsageError) Error() string { return e.Err.Error() }

func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf builds a UsageError from a format.
func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCodeForStatus is the exit code of a task status: complete 0, failed 1,
// blocked 3, budget_limited and usage_limited 4, paused and stopped 5, and
// running 75 (a controller is still running it). A running task whose
// runner died is not a status of its own: grub status --exit-status reports
// it as 1, see statusExitCode.
func ExitCodeForStatus(s harness.Status) int {
	switch s {
	case harness.StatusComplete:
		return ExitOK
	case harness.StatusFailed:
		return ExitFailed
	case harness.StatusBlocked:
		return ExitBlocked
	case harness.StatusBudgetLimited, harness.StatusUsageLimited:
		return ExitBudget
	case harness.StatusPaused, harness.StatusStopped:
		return ExitPaused
	case harness.StatusRunning:
		return ExitLocked
	default:
		return ExitFailed
	}
}

// ExitCode maps an error returned by a command to grub's exit code. It is
// the only place that does so.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var (
		exitErr   *ExitError
		lockedErr *harness.LockedError
		usageErr  *UsageError
		schemaErr *schemas.Error
		notFound  *harness.NotFoundError
		damaged   *harness.DamagedError
		notReg    *harness.NotRegularError
	)
	switch {
	case errors.As(err, &exitErr):
		return exitErr.Code
	case errors.Is(err, controller.ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &lockedErr):
		return ExitLocked
	case errors.As(err, &usageErr),
		errors.As(err, &schemaErr),
		errors.As(err, &notFound),
		errors.As(err, &damaged),
		errors.As(err, &notReg),
		errors.Is(err, harness.ErrNoTasks),
		errors.Is(err, harness.ErrNoPrivate):
		return ExitUsage
	default:
		return ExitFailed
	}
}

// printError writes err to w as "grub: <message>", once, followed for a
// usage error by a hint to read the help. A silent ExitError prints nothing.
func printError(w io.Writer, err error) {
	var exitErr *ExitError
	if errors.As(err, &exitErr) && exitErr.Err == nil {
		return
	}
	fmt.Fprintf(w, "grub: %s\n", err)
	var usageErr *UsageError
	if errors.As(err, &usageErr) {
		cmd := usageErr.Command
		if cmd == "" {
			cmd = "grub"
		}
		fmt.Fprintf(w, "run '%s --help' for usage\n", cmd)
	}
}
