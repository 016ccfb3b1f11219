package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
)

// StartOptions are the inputs of grub start.
type StartOptions struct {
	IO     *IOStreams
	Store  func() (*harness.Store, error)
	Now    func() time.Time
	Getenv func(string) string
	Ctx    context.Context

	Goal string
	// GoalFile is --goal-file: the goal is read from this file ("-":
	// stdin) instead of the argument (goal.go).
	GoalFile   string
	Locale     string
	NoCommit   bool
	AllowDirty bool
	Limits     harness.Limits
	Agent      harness.Agent
	Sandbox    harness.Sandbox
	Hooks      harness.Hooks
	Slice      time.Duration // --for: how long this run may go on
	JSON       bool
	// Events is --json's stream of the run's events (nil without --json).
	Events     *eventStream
	Heartbeat  time.Duration
	NoProgress bool // --no-progress
	// Landlock probes the kernel; Reap makes the run a child subreaper.
	Landlock func() (int, bool)
	Reap     bool
	// Worktree runs the task in a new git work tree on the branch
	// grub/<id> (worktree.go).
	Worktree bool
	// Branch makes the branch grub/<id> at HEAD and switches to it before
	// the first commit (base.go).
	Branch bool
	// Detached is Factory.Detached (detach.go).
	Detached *os.File
}

// startLong is the long help of grub start.
var startLong = `Create a task for a goal in .grub/<id>/ and run it in the foreground until it
stops: complete, failed, blocked, out of budget, or paused or stopped by a
request.

The first turn is the initializer: the agent studies the workspace, plans
the goal as a list of verifiable features (feature-list.json, between
--min-features and --max-features) and writes init.sh, a smoke check of the
project. Every later turn must finish exactly one feature. grub referees each
turn: it parses the <loop-state> decision at the end of the agent's message,
restores the feature list if the agent broke its rules, and runs init.sh and
the feature's verify command before it accepts a feature as passing.

Progress goes to stderr, one line per turn start and end; when the task
stops, its status is printed on stdout. With --json, stdout holds only the
run's events as they happen, one JSON object a line (run.started,
turn.started, turn.activity, turn.agent_done, turn.finding, turn.check,
turn.ended, question; schemas/events.schema.json), and always last
run.stopped, with the exit code and the task's status as grub status --json
prints it; the status for people goes to stderr then. The exit code is that
of the final status (see grub --help). Ctrl-C cancels the turn and leaves
the task paused; grub resume continues it.

--detach runs the task in the background instead (resume and answer take
it too): grub prints the task's id on stdout once its first turn starts,
so that grub status right after shows it running, and exits 0; the
runner's output goes to .grub/<id>/runner.log (never committed). A runner
that stops before a turn starts (an agent that cannot run, a dirty work
tree) is the command's outcome: its message and its exit code. grub status
--watch follows it, grub stop ends it.

The default agent is grub's own (--agent openai): it drives any
OpenAI-compatible server with workspace tools (shell, read_file, write_file,
edit_file, list_files, glob, grep). The key comes from $OPENAI_API_KEY and
is never stored; a local server (Ollama, vLLM, LM Studio) needs none.
--agent claude and --agent codex run Claude Code or the Codex CLI headless;
--agent command runs any program instead.

In a git repository grub commits the work tree after every turn, with the
message "grub(<id>) #<n> <feature>: <summary>" and Grub-Task,
Grub-Iteration and Grub-Status trailers (grub history lists them). It
commits to the branch you are on unless --branch, which first makes the
branch grub/<id> at HEAD and switches to it; the start line names the
branch and the commit the task starts from (its base, which grub status
shows), and when the run stops grub prints the git commands to review the
task's commits (git log, git diff <base>..) and to undo them. It refuses a
work tree with uncommitted changes unless --allow-dirty (the first turn's
commit then includes them), commits the existing tree first in a
repository without commits, and never pushes, resets, rebases or amends.
--no-commit turns commits off.

Defaults for these flags can be kept in .grub/config.toml (the project's)
and ~/.config/grub/config.toml (yours), keyed by the long flag names:
max-iter = 40, turn-timeout = "45m". A flag beats GRUB_MODEL and
OPENAI_BASE_URL, which beat the project's file, which beats yours; grub
config shows where each value comes from. resume and edit ignore the
files: a task keeps the settings it started with.

--worktree runs the task in a git work tree of its own, made beside the
repository's folder (<repo>.grub-<id>) on the new branch grub/<id> from HEAD,
so your checkout stays untouched and several tasks run side by side. grub
list, status and the other commands find it from any work tree. When it
completes grub prints the commands to review and merge the branch; it never
merges, pushes or deletes on its own.

` + goalFileHelp + `

Durations are Go durations: 90s, 45m, 2h. --turn-timeout bounds each agent
turn; --init-timeout bounds each run of init.sh and of a verify command.
--for runs for that long only, then leaves the task paused for grub resume
(a CI job's slice); --time-budget ends the task when its time is spent.

` + sandboxHelp + `

` + hooksHelp + `

On Linux grub is a child subreaper while it runs a task: a process a turn
detaches (setsid, a double fork) is re-parented to grub and ended when the
turn ends, and one left by a runner that died is ended by grub resume.`

// NewCmdStart builds grub start. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdStart(f *Factory, runF func(*StartOptions) error) *cobra.Command {
	opts := &StartOptions{IO: f.IO, Store: f.Store, Now: f.Now, Getenv: f.Getenv, Landlock: f.Landlock, Reap: f.Reap, Detached: f.Detached}
	var (
		sf     sandboxFlags
		af     agentFlags
		rf     runFlags
		hf     hookFlags
		sl     sliceFlag
		limits = limitFlags{forNewTask: true}
	)
	cmd := &cobra.Command{
		Use:   `start ("<goal>" | --goal-file FILE) [flags]`,
		Short: "Create a task for a goal and run it until it stops",
		Long:  startLong,
		Example: `  OPENAI_API_KEY=sk-… grub start "add OAuth login to the API" --model gpt-4.1
  grub start "fix the flaky tests" --base-url http://localhost:11434/v1 --model qwen2.5-coder
  grub start "add OAuth login to the API" --agent claude
  grub start "add OAuth login to the API" --agent command --agent-cmd 'my-agent --headless'
  grub start "port the CLI to cobra" --max-iter 40 --token-budget 2000000 --time-budget 3h
  grub start "修复登录页面" --locale zh --agent command --agent-cmd ./agent.sh`,
		Args: startArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			opts.Events = newEventStream(opts.IO, rf.JSON, opts.Now)
			defer func() { err = opts.Events.stop(err) }()
			if opts.Goal, err = readGoal(opts.IO.In, opts.GoalFile, args); err != nil {
				return err
			}
			opts.Ctx = cmd.Context()
			root, err := f.Root()
			if err != nil {
				return err
			}
			// The defaults files fill what no flag or variable gives (defaults.go).
			defs, err := applyDefaults(cmd.LocalNonPersistentFlags(), root, opts.Getenv)
			if err != nil {
				return err
			}
			if defs.Trust.untrusted() { // before anything runs (trust.go)
				return untrustedConfigError(defs.Trust)
			}
			err = defs.explain(func() error {
				opts.JSON, opts.Heartbeat, opts.NoProgress = rf.JSON, rf.Heartbeat, rf.NoProgress
				if opts.Locale != "en" && opts.Locale != "zh" {
					return usageErrorf("--locale %q: use en or zh", opts.Locale)
				}
				if err := checkBranchFlag(opts); err != nil {
					return err
				}
				var err error
				if opts.Limits, err = limits.limits(cmd); err != nil {
					return err
				}
				if err := af.apply(cmd, &opts.Agent, opts.Getenv); err != nil {
					return err
				}
				if err := checkCostBudget(opts.Limits.CostBudgetUSD, opts.Agent.Kind); err != nil {
					return err
				}
				if err := sf.apply(cmd, &opts.Sandbox); err != nil {
					return err
				}
				if src := defs.From["sandbox"]; src.fromFile() && opts.Sandbox.Mode != "" {
					opts.Sandbox.ModeFrom = src.String() // status names the file, not --sandbox
				}
				return nil
			}())
			if err != nil {
				return err
			}
			if err := hf.apply(cmd, &opts.Hooks); err != nil {
				return err
			}
			if opts.Slice, err = sl.value(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if rf.detaching(f) {
				return runDetached(f, stdinGoal(opts))
			}
			return startRun(opts)
		},
	}
	limits.register(cmd)
	opts.register(cmd)
	af.register(cmd)
	sf.register(cmd)
	rf.register(cmd)
	hf.register(cmd)
	sl.register(cmd)
	return cmd
}

// register binds start's own flags to o (the shared ones register
// themselves: limits, agent, sandbox, run, hooks, slice).
func (o *StartOptions) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.GoalFile, "goal-file", "", "read the goal from this `file` (- for stdin) instead of the argument, such as a PROMPT.md")
	fl.StringVar(&o.Locale, "locale", "en", "language of the prompts: en or zh")
	fl.BoolVar(&o.NoCommit, "no-commit", false, "do not commit after every turn (in a git workspace grub commits each turn by default)")
	fl.BoolVar(&o.Worktree, "worktree", false, "run the task in a new git work tree beside the repository (<repo>.grub-<id>) on the new branch grub/<id> from HEAD; your checkout stays as it is (needs the git program)")
	fl.BoolVar(&o.Branch, "branch", false, "make the branch grub/<id> at HEAD and switch to it before the first commit, so that your branch does not move")
	fl.BoolVar(&o.AllowDirty, "allow-dirty", false, "start even though the work tree has uncommitted changes; the first turn's commit includes them")
}

func startRun(opts *StartOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	// The task's control channel lives in the private folder.
	if store.Private == "" {
		return harness.ErrNoPrivate
	}
	// A backend that cannot run is a usage error before anything exists.
	if _, err := newAgent(opts.Agent, store.Root, opts.Getenv, agentSandbox{}); err != nil {
		return err
	}
	// So is a sandbox this system cannot enforce.
	if _, err := resolveSandbox(opts.Sandbox, opts.Agent.Kind, store.Root, opts.Getenv, opts.Landlock); err != nil {
		return err
	}
	id, err := harness.NewID()
	if err != nil {
		return err
	}
	if opts.Worktree {
		if store, err = startWorktree(ctxOr(opts.Ctx), opts.IO.ErrOut, store, id); err != nil {
			return err
		}
	}
	var base *harness.GitBase
	if !opts.NoCommit {
		repo, err := openRepo(store.Root)
		if err != nil {
			return err
		}
		if repo == nil && opts.Branch {
			return usageErrorf("grub start --branch needs a git repository: %s is not in one", store.Root)
		}
		if repo != nil {
			note, carried, err := prepareRepo(ctxOr(opts.Ctx), repo, id, opts.AllowDirty)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(opts.IO.ErrOut, "grub: "+note)
			}
			if base, err = startBase(repo, id, opts.Branch); err != nil {
				return err
			}
			base.Carried = carried
		}
	}
	now := opts.Now().UTC()
	st := &harness.State{
		ID: id, Goal: opts.Goal, Locale: opts.Locale, Status: harness.StatusRunning, Phase: harness.PhaseInitializer,
		CreatedAt: now, UpdatedAt: now, Limits: opts.Limits, Agent: opts.Agent, NoCommit: opts.NoCommit,
		Sandbox: opts.Sandbox, Hooks: opts.Hooks, Base: base,
	}
	if err := store.Create(st); err != nil {
		return err
	}
	opts.Events.forTask(store, st.ID)
	// The task's settings are this user's: resume trusts them here (trust.go).
	if err := store.TrustTask(st); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "grub: task %s created in %s\n", st.ID, store.Rel(store.Dir(st.ID)))
	if base != nil {
		sayBase(opts.IO.ErrOut, base)
	}
	return runTask(ctxOr(opts.Ctx), runOptions{IO: opts.IO, Store: store, ID: st.ID, Now: opts.Now, Getenv: opts.Getenv, Events: opts.Events, Heartbeat: opts.Heartbeat, NoProgress: opts.NoProgress,
		Landlock: opts.Landlock, Reap: opts.Reap, Slice: opts.Slice, Detached: opts.Detached})
}

// startArgs checks start's arguments: one goal, or --goal-file.
func startArgs(cmd *cobra.Command, args []string) error {
	switch {
	case cmd.Flags().Changed("goal-file") && len(args) > 0:
		return &UsageError{Err: fmt.Errorf("grub start takes the goal from --goal-file or from an argument, not both"), Command: cmd.CommandPath()}
	case cmd.Flags().Changed("goal-file"):
		return nil
	case len(args) != 1:
		return &UsageError{Err: fmt.Errorf("grub start takes one goal, in quotes: grub start \"add OAuth login to the API\" (or from a file: --goal-file PROMPT.md)"), Command: cmd.CommandPath()}
	}
	return nil
}

// stdinGoal is the goal a detached runner reads on its stdin: the one
// this grub read already from --goal-file -, else none.
func stdinGoal(opts *StartOptions) string {
	if opts.GoalFile == "-" {
		return opts.Goal
	}
	return ""
}

// checkBranchFlag refuses --branch where it has no meaning: --worktree
// makes a branch of its own, --no-commit commits nothing.
func checkBranchFlag(opts *StartOptions) error {
	switch {
	case !opts.Branch:
		return nil
	case opts.Worktree:
		return usageErrorf("--branch and --worktree: --worktree already runs the task on the new branch grub/<id>; give one of them")
	case opts.NoCommit:
		return usageErrorf("--branch and --no-commit: with --no-commit grub commits nothing, so there is no branch to make; give one of them")
	}
	return nil
}

func ctxOr(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
