package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Main runs grub with the process's arguments and standard streams and
// returns the exit code. cmd/grub's main passes it to os.Exit.
func Main() int {
	ignoreBrokenPipes()
	f := NewFactory(System())
	f.Reap = true
	f.Detached = detachedFromEnv()
	return execute(context.Background(), f, os.Args[1:])
}

// ignoreBrokenPipes makes a write to a closed stdout or stderr fail with
// EPIPE instead of ending grub with SIGPIPE, Go's default for those two
// descriptors: a run whose progress went to a pipe that closed (grub start
// … 2>&1 | head -3) goes on quietly and stops as it would have, rather
// than dying between two turns and leaving the task "running (no
// runner)". Notify, unlike Ignore, leaves SIGPIPE at its default in the
// programs grub starts.
func ignoreBrokenPipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// Run runs grub with args (without the program name) on the given streams
// and returns the exit code. Errors are printed to ios.ErrOut once, as
// "grub: <message>".
func Run(args []string, ios *IOStreams) int {
	return execute(context.Background(), NewFactory(ios), args)
}

// execute builds a fresh command tree on f, runs it and maps the outcome to
// an exit code.
func execute(ctx context.Context, f *Factory, args []string) int {
	f.Args = args
	root := NewCmdRoot(f)
	root.SetArgs(args)

	// Errors cobra returns before any command's hooks ran (an unknown
	// command, a wrong number of arguments) are usage errors; flag errors
	// are turned into usage errors by the root's FlagErrorFunc.
	started := false
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		started = true
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}

	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, syscall.EPIPE) {
		// Whoever read the output stopped reading (grub log | head): end
		// quietly, with the code a shell shows for it.
		return ExitBrokenPipe
	}
	var usageErr *UsageError
	if errors.As(err, &usageErr) {
		if usageErr.Command == "" && cmd != nil {
			usageErr.Command = cmd.CommandPath()
		}
	} else if !started {
		path := "grub"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		err = &UsageError{Err: err, Command: path}
	}
	printError(f.IO.ErrOut, err)
	return ExitCode(err)
}

// NewCmdRoot builds the grub command and its subcommands on f.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "grub <command>",
		Short: "Keep an AI coding agent working on one goal, one verified feature at a time",
		Long: `grub is a long-horizon goal runner for AI coding agents. You give it one goal;
grub keeps an agent working on it, one verified feature at a time, with a
file-based harness in .grub/<id>/ as the only memory between turns.

A task is named by its 8-character hex id. Wherever a command takes an
optional <id>, leaving it out means the most recently updated task.

Exit codes:
  0    complete (for status, list and the other commands: the command worked)
  1    failed, or an internal error
  2    usage error or bad input (flags, unknown id, invalid harness file),
       or an agent that cannot work: a refused key, an unknown model or
       URL, no server, a program that does not run (task left paused)
  3    blocked
  4    budget_limited or usage_limited
  5    paused or stopped by a request
  75   the task is already running elsewhere (lock held)
  130  interrupted by a signal (task left paused)
  141  the reader of grub's output went away (grub log | head); a run
       whose output's reader goes away still goes on to its end`,
		Example: `  grub status                  # the most recent task, for people
  grub status --json           # one JSON object on stdout, for programs
  grub list                    # every task in this workspace
  grub pause                   # pause at the next turn boundary
  grub edit --goal "new wording of the goal"
  grub -C ~/src/api log        # work on the project in ~/src/api`,
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			_, err := f.Root()
			return err
		},
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetVersionTemplate("grub {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &UsageError{Err: plainFlagError(err), Command: cmd.CommandPath()}
	})
	root.PersistentFlags().StringVarP(&f.WorkDir, "workdir", "C", "",
		"run as if grub was started in `dir` (the workspace root that holds .grub/)")

	root.AddCommand(
		NewCmdStart(f, nil),
		NewCmdResume(f, nil),
		NewCmdStatus(f, nil),
		NewCmdList(f, nil),
		NewCmdPause(f, nil),
		NewCmdStop(f, nil),
		NewCmdRm(f, nil),
		NewCmdEdit(f, nil),
		NewCmdSteer(f, nil),
		NewCmdAnswer(f, nil),
		NewCmdLog(f, nil),
		NewCmdHistory(f, nil),
		NewCmdReport(f, nil),
		NewCmdDemo(f, nil),
		NewCmdConfig(f, nil),
		NewCmdDoctor(f, nil),
		NewCmdDemoAgent(),
		NewCmdSandboxExec(),
		NewCmdVersion(f, nil),
		NewCmdMCP(f),
	)
	registerFlagCompletions(f, root)
	return root
}
