package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
	"github.com/grub-dev/grub/internal/proc"
)

// demoPlan is what the demo's FAKE agent does: honest work, with a cheat
// or two for the referee to catch.
const demoPlan = "-features 4 -plan 2:complete-early,3:edit-description,5:verify-fail"

// DemoOptions are the inputs of grub demo.
type DemoOptions struct {
	IO     *IOStreams
	Now    func() time.Time
	Getenv func(string) string
	Ctx    context.Context

	Dir        string // where to run; a new temporary folder when empty
	Executable func() (string, error)
	Landlock   func() (int, bool)
	Reap       bool
}

// NewCmdDemo builds grub demo. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv, Executable: os.Executable, Landlock: f.Landlock, Reap: f.Reap}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch grub referee a scripted FAKE agent, without a model or a key",
		Long: `Run a whole task in a new folder with a scripted FAKE agent (no model, no key,
no network), to see what grub does: the initializer plans four features and
writes init.sh, then one execution turn per feature. The fake agent cheats
on purpose: it claims "complete" early, edits a feature's description, and
claims a feature whose verify command fails. grub downgrades the claim,
rolls back the edit, reverts the unverified feature, tells the agent why in
its next prompt, and finishes the task.

Afterwards, look around the folder it names:
  grub -C <folder> status
  grub -C <folder> log
  cat <folder>/.grub/*/turns/0004.prompt.md`,
		Example: `  grub demo
  grub demo --dir /tmp/grub-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return demoRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "run the demo in this folder (created if missing; it must not hold a .grub folder yet)")
	return cmd
}

// NewCmdDemoAgent builds the hidden command that plays the demo's FAKE
// agent (internal/fakeagent) when grub demo's task runs it.
func NewCmdDemoAgent() *cobra.Command {
	return &cobra.Command{
		Use:                "demo-agent",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := fakeagent.MainArgs(args); code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}

func demoRun(opts *DemoOptions) error {
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "grub-demo-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(dir + "/.grub"); err == nil {
		return usageErrorf("--dir %s already holds a .grub folder; pick an empty folder for the demo", dir)
	}
	self, err := opts.Executable()
	if err != nil {
		return err
	}
	store, err := harness.Open(dir)
	if err != nil {
		return err
	}
	limits := harness.DefaultLimits()
	limits.MinFeatures, limits.MaxIterations = 4, 15
	limits.TurnTimeoutSeconds, limits.InitTimeoutSeconds = 60, 60
	now := opts.Now().UTC()
	st := &harness.State{
		Goal: "demo: leave four marker files, one per feature", Locale: "en",
		Status: harness.StatusRunning, Phase: harness.PhaseInitializer, CreatedAt: now, UpdatedAt: now,
		Limits: limits, NoCommit: true,
		Agent: harness.Agent{Kind: harness.AgentCommand, Command: proc.ShellQuote(self) + " demo-agent " + demoPlan},
	}
	if err := store.Create(st); err != nil {
		return err
	}
	w := opts.IO.ErrOut
	fmt.Fprintf(w, "grub demo: a FAKE agent works on task %s in %s\n", st.ID, dir)
	fmt.Fprintln(w, "grub demo: it will claim completion early, edit a description and claim an unverified feature; watch grub catch each one")
	err = runTask(ctxOr(opts.Ctx), runOptions{IO: opts.IO, Store: store, ID: st.ID, Now: opts.Now, Getenv: opts.Getenv, Heartbeat: 30 * time.Second,
		Landlock: opts.Landlock, Reap: opts.Reap})
	fmt.Fprintf(w, "grub demo: done; see grub -C %s log, and the prompts in %s/.grub/%s/turns/\n", dir, dir, st.ID)
	return err
}
