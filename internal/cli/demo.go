package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// DemoOptions are the inputs of grub demo.
type DemoOptions struct {
	IO     *IOStreams
	Now    func() time.Time
	Getenv func(string) string
	Ctx    context.Context

	Dir        string // where to run; a new temporary folder when empty
	Landlock   func() (int, bool)
	Reap       bool
	NoProgress bool // --no-progress
}

// NewCmdDemo builds grub demo. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv, Landlock: f.Landlock, Reap: f.Reap}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch grub referee the built-in agent driven by a scripted FAKE model, without a key",
		Long: `Run a whole task in a new git repository with grub's built-in agent (its
real tool loop, tools and retries) talking to a scripted FAKE model: a
server on loopback that answers from a script. No real model, no key, no
network. The initializer plans four features and writes init.sh with the
agent's tools, then one execution turn per feature, each committed. The
script cheats on purpose: it claims "complete" early, edits a feature's
description, and claims a feature whose verify command fails. grub
downgrades the claim, rolls back the edit, reverts the unverified feature,
tells the agent why in its next prompt, and finishes the task.

Afterwards, look around the folder it names:
  grub -C <folder> history
  grub -C <folder> log
  cat <folder>/.grub/*/turns/0004.prompt.md
`,
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
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "run the demo in this folder (created if missing, made a git repository if it is not one; it must not hold a .grub folder yet)")
	registerNoProgress(cmd, &opts.NoProgress)
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
	dir, err := demoDir(opts.Dir)
	if err != nil {
		return err
	}
	ctx := ctxOr(opts.Ctx)
	repo, err := gitx.Init(dir)
	if err != nil {
		return err
	}
	store, err := harness.Open(dir)
	if err != nil {
		return err
	}
	if opts.Getenv != nil {
		store.Private = harness.PrivateRoot(opts.Getenv)
	}
	if store.Private == "" {
		return harness.ErrNoPrivate
	}
	id, err := harness.NewID()
	if err != nil {
		return err
	}
	if _, _, err := prepareRepo(ctx, repo, id, true); err != nil {
		return err
	}
	model := &demoModel{dir: harness.GrubDirName + "/" + id}
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.SetFallback(model.reply)

	limits := harness.DefaultLimits()
	limits.MinFeatures, limits.MaxIterations = demoFeatures, 15
	limits.TurnTimeoutSeconds, limits.InitTimeoutSeconds = 60, 60
	now := opts.Now().UTC()
	st := &harness.State{
		ID: id, Goal: demoGoal, Locale: "en",
		Status: harness.StatusRunning, Phase: harness.PhaseInitializer, CreatedAt: now, UpdatedAt: now,
		Limits: limits,
		Agent:  harness.Agent{Kind: harness.AgentOpenAI, Model: "scripted-fake-model", BaseURL: srv.URL()},
	}
	if err := store.Create(st); err != nil {
		return err
	}
	if err := store.TrustTask(st); err != nil { // its base URL is the demo's own server
		return err
	}
	w := opts.IO.ErrOut
	fmt.Fprintf(w, "grub demo: grub's built-in agent works on task %s in %s, driven by a scripted FAKE model on %s (no real model, no key)\n", st.ID, dir, srv.URL())
	fmt.Fprintln(w, "grub demo: the script will claim completion early, edit a description and claim an unverified feature; watch grub catch each one")
	// The scripted server needs no key: never send the user's to it.
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return ""
		}
		return opts.Getenv(k)
	}
	err = runTask(ctx, runOptions{IO: opts.IO, Store: store, ID: st.ID, Now: opts.Now, Getenv: getenv, Heartbeat: 30 * time.Second,
		Landlock: opts.Landlock, Reap: opts.Reap, NoProgress: opts.NoProgress})
	page := filepath.Join(dir, "report.html")
	rerr := reportRun(&ReportOptions{IO: opts.IO, Store: func() (*harness.Store, error) { return store, nil }, Now: opts.Now, ID: st.ID, HTML: page})
	if rerr != nil {
		fmt.Fprintf(w, "grub demo: could not write the report: %v\n", rerr)
	}
	fmt.Fprintf(w, "grub demo: done; open %s in a browser, or see grub -C %s history, grub -C %s log, and the prompts in %s/.grub/%s/turns/\n", page, dir, dir, dir, st.ID)
	return err
}

// demoDir is the demo's folder: dir (created if missing), or a new
// temporary folder. One that already holds tasks is refused.
func demoDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "grub-demo-")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, harness.GrubDirName)); err == nil {
		return "", usageErrorf("--dir %s already holds a .grub folder; pick an empty folder for the demo", dir)
	}
	return dir, nil
}
