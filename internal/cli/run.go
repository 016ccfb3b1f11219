package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/grub-dev/grub/agent/backend"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/netproxy"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/sandbox"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/schemas"
)

// agentFlags are the flags that choose and configure the agent backend,
// shared by start and resume.
type agentFlags struct {
	Kind           string
	Command        string
	Bin            string
	Model          string
	BaseURL        string
	MaxRequests    int
	ContextWindow  int
	RequestTimeout time.Duration
	Args           string // --agent-args, a shell word list
	StallTimeout   time.Duration
}

// DefaultStallTimeout is how long claude or codex may go on reporting
// errors without progress before grub fails the turn (--stall-timeout).
const DefaultStallTimeout = 5 * time.Minute

func (a *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.Kind, "agent", "openai", "agent backend: openai (built in: any OpenAI-compatible server), claude (Claude Code), codex (Codex CLI) or command (any program: see --agent-cmd)")
	fl.StringVar(&a.Bin, "agent-bin", "", "with --agent claude or codex: the program to run (default claude or codex on PATH)")
	fl.StringVar(&a.Command, "agent-cmd", "", "the program to run each turn through sh -c (implies --agent command); the prompt arrives on stdin and its stdout is the final message")
	fl.StringVar(&a.Model, "model", "", "the model name (default $GRUB_MODEL); required with --agent openai, optional with claude and codex")
	fl.StringVar(&a.BaseURL, "base-url", "", "with --agent openai: the server's API base URL, e.g. http://localhost:11434/v1 for Ollama (default $OPENAI_BASE_URL, else OpenAI)")
	fl.IntVar(&a.MaxRequests, "max-requests", backend.DefaultMaxRequests, "with --agent openai: the most model requests in one turn")
	fl.IntVar(&a.ContextWindow, "context-window", backend.DefaultContextWindow, "with --agent openai: the model's context window in tokens; old tool output is elided above 80% of it")
	fl.DurationVar(&a.RequestTimeout, "request-timeout", llm.DefaultRequestTimeout, "with --agent openai: how long one model request may take before it is retried")
	fl.StringVar(&a.Args, "agent-args", "", `with --agent claude or codex: arguments appended to the program's command line, written as in a shell (quotes and backslashes; nothing expanded), e.g. --agent-args '-c model_provider=local'`)
	fl.DurationVar(&a.StallTimeout, "stall-timeout", DefaultStallTimeout, "with --agent claude or codex: fail the turn when the program has reported only errors, without progress, for this long")
}

// runFlags are how a command that runs a task in the foreground (start,
// resume, answer) reports on it.
type runFlags struct {
	JSON       bool
	Heartbeat  time.Duration
	NoProgress bool
	Detach     bool
}

func (r *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&r.JSON, "json", false, "print the run's events on stdout as they happen, one JSON object a line (schemas/events.schema.json): run.started, turn.started, turn.activity, turn.agent_done, turn.finding, turn.check, turn.ended, question, and always last run.stopped, with the exit code and the task's status as grub status --json prints it; the human lines stay on stderr")
	cmd.Flags().DurationVar(&r.Heartbeat, "heartbeat", 30*time.Second, "how often a long turn reports that it is still running")
	registerNoProgress(cmd, &r.NoProgress)
	cmd.Flags().BoolVar(&r.Detach, "detach", false, "run in the background: print the task's id once a turn starts and exit 0; the runner's output goes to .grub/<id>/runner.log")
}

// detaching reports whether this command is to start a detached runner
// (runDetached) rather than run the task itself: --detach, in a grub that
// is not that runner.
func (r *runFlags) detaching(f *Factory) bool { return r.Detach && f.Detached == nil }

// apply checks the agent flags and writes those that were given (and, for
// a new task, the defaults) into s. getenv supplies $GRUB_MODEL and
// $OPENAI_BASE_URL.
func (a *agentFlags) apply(cmd *cobra.Command, s *harness.Agent, getenv func(string) string) error {
	fl := cmd.Flags()
	oldKind := s.Kind
	switch {
	case fl.Changed("agent-cmd") && !fl.Changed("agent"):
		s.Kind = harness.AgentCommand // --agent-cmd alone means --agent command
	case oldKind == "" || fl.Changed("agent"):
		s.Kind = harness.AgentKind(a.Kind)
	}
	// A new task, or a task that changes backend, takes every setting
	// afresh: a model or program chosen for another backend does not carry
	// over. Otherwise only the flags given change the recorded settings.
	fresh := s.Kind != oldKind
	if fresh {
		*s = harness.Agent{Kind: s.Kind}
	}
	// set: the flag's value (or default) is to be recorded for this backend.
	set := func(name string) bool {
		return (fresh || fl.Changed(name)) && slices.Contains(agentOnlyFlags[name], s.Kind)
	}
	if set("agent-cmd") {
		s.Command = a.Command
	}
	if set("agent-bin") {
		s.Bin = a.Bin
	}
	if set("model") {
		s.Model = a.Model
		if s.Model == "" && s.Kind == harness.AgentOpenAI {
			s.Model = getenv("GRUB_MODEL") // the built-in agent's model only
		}
	}
	if set("base-url") {
		s.BaseURL = a.BaseURL
		if s.BaseURL == "" && s.Kind == harness.AgentOpenAI {
			s.BaseURL = getenv("OPENAI_BASE_URL")
		}
	}
	if set("max-requests") {
		if a.MaxRequests < 1 {
			return usageErrorf("--max-requests %d: must be at least 1", a.MaxRequests)
		}
		s.MaxRequests = a.MaxRequests
	}
	if set("context-window") {
		if a.ContextWindow < 1024 {
			return usageErrorf("--context-window %d: must be at least 1024 tokens", a.ContextWindow)
		}
		s.ContextWindow = a.ContextWindow
	}
	if set("request-timeout") {
		if a.RequestTimeout < time.Second || a.RequestTimeout%time.Second != 0 {
			return usageErrorf("--request-timeout %s: use whole seconds of at least 1s, e.g. 90s or 10m", a.RequestTimeout)
		}
		s.RequestTimeoutSeconds = int64(a.RequestTimeout / time.Second)
	}
	if set("agent-args") {
		words, err := splitWords(a.Args)
		if err != nil {
			return usageErrorf("--agent-args %q: %v", a.Args, err)
		}
		s.Args = words
	}
	if set("stall-timeout") {
		if a.StallTimeout < time.Second || a.StallTimeout%time.Second != 0 {
			return usageErrorf("--stall-timeout %s: use whole seconds of at least 1s, e.g. 90s or 5m", a.StallTimeout)
		}
		s.StallTimeoutSeconds = int64(a.StallTimeout / time.Second)
	}
	if err := checkAgentFlags(fl, s.Kind); err != nil {
		return err
	}
	switch s.Kind {
	case harness.AgentCommand:
		if s.Command == "" {
			return usageErrorf("--agent command needs --agent-cmd 'program args': the program grub runs each turn")
		}
	case harness.AgentOpenAI:
		if s.Model == "" {
			return usageErrorf("--agent openai needs a model: pass --model NAME or set GRUB_MODEL")
		}
	case harness.AgentClaude, harness.AgentCodex:
	default:
		return usageErrorf("--agent %q: unknown backend; use openai, claude, codex or command", s.Kind)
	}
	return nil
}

// agentOnlyFlags are the flags that only one kind of backend reads.
var agentOnlyFlags = map[string][]harness.AgentKind{
	"agent-cmd":       {harness.AgentCommand},
	"agent-bin":       {harness.AgentClaude, harness.AgentCodex},
	"base-url":        {harness.AgentOpenAI},
	"max-requests":    {harness.AgentOpenAI},
	"context-window":  {harness.AgentOpenAI},
	"request-timeout": {harness.AgentOpenAI},
	"agent-args":      {harness.AgentClaude, harness.AgentCodex},
	"stall-timeout":   {harness.AgentClaude, harness.AgentCodex},
	"model":           {harness.AgentOpenAI, harness.AgentClaude, harness.AgentCodex},
}

// checkAgentFlags refuses a flag given for a backend the task does not use,
// instead of storing a setting nothing reads.
func checkAgentFlags(fl *pflag.FlagSet, kind harness.AgentKind) error {
	for name, kinds := range agentOnlyFlags {
		if fl.Changed(name) && !slices.Contains(kinds, kind) {
			names := make([]string, len(kinds))
			for i, k := range kinds {
				names[i] = string(k)
			}
			return usageErrorf("--%s does not apply to --agent %s (it is for --agent %s)", name, kind, strings.Join(names, " or "))
		}
	}
	return nil
}

// agentSandbox is what a backend needs of the sandbox: the launcher to put
// in front of the commands it runs for the agent (nil: none) and the
// environment of the built-in agent's shell (nil: grub's own).
type agentSandbox struct {
	Wrap     proc.Wrapper
	ShellEnv []string
	// ExtraEnv is added to the environment of an agent program (command,
	// claude, codex): the network proxy's variables, if any.
	ExtraEnv []string
}

// newAgent builds the backend recorded in the task's state. The API key
// comes from the environment only: it is never stored.
func newAgent(s harness.Agent, root string, getenv func(string) string, sb agentSandbox) (agent.Agent, error) {
	switch s.Kind {
	case harness.AgentCommand:
		if err := checkCommandProgram(s.Command, root); err != nil {
			return nil, err
		}
		c := backend.NewCommand(s.Command)
		c.Wrap, c.ExtraEnv = sb.Wrap, sb.ExtraEnv
		return c, nil
	case harness.AgentClaude, harness.AgentCodex:
		bin, err := agentProgram(s, root)
		if err != nil {
			return nil, err
		}
		stall := time.Duration(s.StallTimeoutSeconds) * time.Second
		if s.Kind == harness.AgentClaude {
			return backend.NewClaude(backend.ClaudeConfig{Bin: bin, Model: s.Model, Wrap: sb.Wrap, ExtraEnv: sb.ExtraEnv, ExtraArgs: s.Args, StallTimeout: stall}), nil
		}
		return backend.NewCodex(backend.CodexConfig{Bin: bin, Model: s.Model, Wrap: sb.Wrap, ExtraEnv: sb.ExtraEnv, ExtraArgs: s.Args, StallTimeout: stall}), nil
	case harness.AgentOpenAI:
		client, err := llm.New(llm.Config{BaseURL: s.BaseURL, APIKey: getenv("OPENAI_API_KEY"), Model: s.Model,
			RequestTimeout: time.Duration(s.RequestTimeoutSeconds) * time.Second})
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		return backend.NewOpenAI(backend.OpenAIConfig{Client: client, MaxRequests: s.MaxRequests, ContextWindow: s.ContextWindow,
			ShellWrap: sb.Wrap, ShellEnv: sb.ShellEnv}), nil
	}
	return nil, fmt.Errorf("agent backend %q is not available in this build", s.Kind)
}

// agentKinds are the backends, in the order messages list them.
var agentKinds = []harness.AgentKind{harness.AgentOpenAI, harness.AgentClaude, harness.AgentCodex, harness.AgentCommand}

// reportsCost tells whether a backend reports what the provider charged
// (agent.Usage.CostReported): Claude Code prints total_cost_usd; the
// built-in agent, Codex and a command report tokens only.
func reportsCost(k harness.AgentKind) bool { return k == harness.AgentClaude }

// checkCostBudget refuses a cost budget for a backend that reports no
// cost: it could never be reached.
func checkCostBudget(budgetUSD float64, k harness.AgentKind) error {
	if budgetUSD <= 0 || reportsCost(k) {
		return nil
	}
	var yes, no []string
	for _, kind := range agentKinds {
		if reportsCost(kind) {
			yes = append(yes, string(kind))
		} else {
			no = append(no, string(kind))
		}
	}
	return usageErrorf("--cost-budget needs a backend that reports cost: %s; %s report none (the task's agent is %s): use --token-budget instead",
		strings.Join(yes, ", "), strings.Join(no, "/"), k)
}

// agentProgram finds the claude or codex program before any turn runs: a
// missing program is a usage error, not a string of failed turns. A
// relative --agent-bin is relative to the workspace root, like --agent-cmd.
func agentProgram(s harness.Agent, root string) (string, error) {
	bin := s.Bin
	if bin == "" {
		bin = string(s.Kind)
	}
	path, err := proc.LookProgram(bin, root)
	if err != nil {
		var notRun *exec.Error
		if errors.As(err, &notRun) {
			bin = notRun.Name // as looked up: a relative path joined to root
		}
		product := map[harness.AgentKind]string{harness.AgentClaude: "Claude Code", harness.AgentCodex: "the Codex CLI"}[s.Kind]
		return "", usageErrorf("--agent %s: cannot run %s (%v): install %s or name the program with --agent-bin", s.Kind, bin, err, product)
	}
	return path, nil
}

// shellWords are the first words of a command line that are the shell's
// own (builtins and keywords), not a program to look up.
var shellWords = map[string]bool{
	".": true, ":": true, "cd": true, "exec": true, "eval": true, "export": true, "set": true,
	"source": true, "if": true, "for": true, "while": true, "until": true, "case": true,
	"time": true, "command": true, "test": true, "true": true, "false": true, "echo": true,
	"printf": true, "read": true, "trap": true, "ulimit": true, "umask": true, "unset": true, "wait": true,
	"exit": true, "return": true, "shift": true, "alias": true, "type": true, "hash": true, "getopts": true,
	"let": true, "local": true, "readonly": true, "declare": true, "typeset": true, "kill": true, "times": true,
}

// checkCommandProgram looks up the program a --agent-cmd line starts, the
// command agent's whole check before a run: a program that is not there is
// a usage error, not a string of failed turns. A line that starts with
// shell syntax (an assignment, a quote, a builtin, a redirection) is left
// to the shell. A relative path is relative to the workspace root, where
// the command runs.
func checkCommandProgram(cmd, root string) error {
	fields := strings.Fields(cmd)
	if len(fields) == 0 || shellWords[fields[0]] || strings.ContainsAny(fields[0], "=$`'\"\\(){}[]<>|&;*?~!#") {
		return nil
	}
	if _, err := proc.LookProgram(fields[0], root); err != nil {
		return usageErrorf("--agent-cmd: cannot run %s (%v): install it, or fix --agent-cmd", fields[0], err)
	}
	return nil
}

// runOptions are what start and resume hand to runTask.
type runOptions struct {
	IO     *IOStreams
	Store  *harness.Store
	ID     string
	Limits harness.LimitChanges
	Now    func() time.Time
	Getenv func(string) string
	// Events is --json's stream (nil without it): the run's events on
	// stdout, and the final status in its run.stopped instead of stdout.
	Events    *eventStream
	Heartbeat time.Duration
	// Landlock probes the kernel (Factory.Landlock); Reap is Factory.Reap.
	Landlock func() (int, bool)
	Reap     bool
	// NoProgress prints plain progress lines even on a terminal.
	NoProgress bool
	// Slice is --for: how long this run may go on (0: until the task stops).
	Slice time.Duration
	// AcceptHistory is resume's --accept-history.
	AcceptHistory bool
	// Detached is Factory.Detached: this run is a detached runner.
	Detached *os.File
}

// runTask runs the controller in the foreground until the task stops, with
// SIGINT and SIGTERM cancelling the turn and leaving the task paused. It
// prints the final status on stdout (with --json, in the last event, run.stopped) and returns
// an error whose exit code is that of the final status.
func runTask(ctx context.Context, o runOptions) error {
	o.Events.forTask(o.Store, o.ID)
	st, err := o.Store.LoadState(o.ID)
	if err != nil {
		return err
	}
	// The control channel and the registration of the task (a task last
	// run by an older grub, or cloned, gets its private folder here).
	if _, err := o.Store.PrivateDir(o.ID); err != nil {
		return err
	}
	if err := checkTaskTrust(o.Store, st); err != nil {
		return err
	}
	sb, err := resolveSandbox(st.Sandbox, st.Agent.Kind, o.Store.Root, o.Getenv, o.Landlock)
	if err != nil {
		return err
	}
	if sb.Warning != "" {
		fmt.Fprintln(o.IO.ErrOut, "grub: warning: "+sb.Warning)
	}
	px, err := startProxy(o.IO.ErrOut, sb)
	if err != nil {
		return err
	}
	if px != nil {
		defer px.Close()
		sb = sb.withProxy(px)
	}
	asb, err := runSandbox(o, sb, px)
	if err != nil {
		return err
	}
	wrap, env := asb.Wrap, asb.ShellEnv
	backend, err := newAgent(st.Agent, o.Store.Root, o.Getenv, asb)
	if err != nil {
		return err
	}
	copts := controller.Options{
		Store:     o.Store,
		TaskID:    o.ID,
		Agent:     backend,
		Progress:  o.IO.ErrOut,
		Now:       o.Now,
		Heartbeat: o.Heartbeat,
		Limits:    o.Limits,
		Wrap:      wrap,
		Env:       env,
		Slice:     o.Slice,
		Refused:   refusedHosts(px),

		AcceptHistory: o.AcceptHistory,
	}
	// The events on a terminal too would share it with the live line,
	// which redraws in place: plain lines then.
	live := liveProgress(o.IO, o.Getenv, o.NoProgress) && !(o.Events != nil && o.IO.OutTTY)
	copts.Events, copts.Redraw = progressFor(o.IO, live)
	if o.Events != nil {
		copts.Events = controller.Tee(copts.Events, o.Events)
	}
	if o.Detached != nil {
		copts.Events = &detachedProgress{Progress: copts.Events, ready: func() { detachedReady(o.Detached, o.Store, o.ID) }}
	}
	if o.Reap && becomeReaper() {
		copts.Reaper = procReaper{}
	}
	if err := wireGit(o, st, &copts); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	final, runErr := controller.Run(ctx, copts)
	if final == nil {
		return runErr
	}
	if err := printFinal(o, final); err != nil {
		return err
	}
	if !sayWorktreeNext(o.IO.ErrOut, o.Store, final) {
		sayReview(o.IO.ErrOut, final)
	}
	switch {
	case errors.Is(runErr, controller.ErrInterrupted):
		return &ExitError{Code: ExitInterrupted} // the controller has said so
	case errors.Is(runErr, controller.ErrSetup):
		// A key, model, URL or program to fix: bad input, as a flag would
		// be; the task is paused, and the controller has said why.
		return &ExitError{Code: ExitUsage}
	case runErr != nil:
		return runErr
	case final.Status == harness.StatusComplete:
		return nil
	}
	// The controller has already said why the task stopped.
	return &ExitError{Code: ExitCodeForStatus(final.Status)}
}

// wireGit gives the controller the workspace's repository: the committer,
// the change check, the history check and the guard over .git, as the
// task asks (none outside git, no commits with --no-commit).
func wireGit(o runOptions, st *harness.State, copts *controller.Options) error {
	repo, err := openRepo(o.Store.Root)
	if err != nil {
		return err
	}
	switch {
	case repo == nil:
		fmt.Fprintln(o.IO.ErrOut, "grub: the workspace is not a git repository: running without commits")
		return nil
	case st.NoCommit:
		copts.Changes = gitChanges{repo}
	default:
		if err := checkConversion(repo); err != nil {
			return err
		}
		copts.Committer, copts.Changes = gitCommitter{repo, o.Store}, gitChanges{repo}
		copts.History = gitHistory{repo, o.Store, o.ID}
	}
	copts.GitGuard = gitGuard{repo}
	return nil
}

// runSandbox is what the commands of a run get from its sandbox: the
// launcher (nil when the policy confines nothing), the scrubbed
// environment of the shell tool, init.sh and verify, and, with a
// network proxy, its variables for agent programs too.
func runSandbox(o runOptions, sb sandboxSetup, px *netproxy.Proxy) (agentSandbox, error) {
	var wrap proc.Wrapper
	sb = sb.withNetNamespace(o.IO.ErrOut, sandbox.NetNamespaces)
	if sb.Policy.Confines() {
		self, err := os.Executable()
		if err != nil {
			return agentSandbox{}, fmt.Errorf("the sandbox needs grub's own executable: %w", err)
		}
		if ok, why := sandbox.Namespaces(); ok {
			wrap = sb.protectingWrapper(self, o.Store, o.ID)
		} else {
			fmt.Fprintln(o.IO.ErrOut, "grub: warning: "+why+"; .git is not read-only for sandboxed commands here, and what in it can run programs is guarded by the referee's check only")
			warnPrivateWritable(o.IO.ErrOut, sb.Policy, o.Store.Private)
			warnReadable(o.IO.ErrOut, sb.Policy)
			sb.Policy.Hide, sb.Policy.Show = nil, nil
			wrap = sb.wrapper(self)
		}
	}
	env := sb.scrubbedEnv()
	asb := agentSandbox{Wrap: wrap, ShellEnv: env}
	if px != nil {
		env = netproxy.Env(env, px.URL())
		asb.ShellEnv, asb.ExtraEnv = env, netproxy.Vars(px.URL())
	}
	return asb, nil
}

// startProxy starts the network allowlist's proxy for a run whose
// sandbox has an allowlist (nil, nil without one) and says so on w. It
// lives as long as the run: a crash drops it, and the next run starts
// another, on another port.
func startProxy(w io.Writer, sb sandboxSetup) (*netproxy.Proxy, error) {
	if sb.Allow == nil {
		return nil, nil
	}
	px, err := netproxy.Start(netproxy.Config{Allow: sb.Allow})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "grub: network: sandboxed commands reach only %s, through grub's proxy at %s\n",
		termsafe.Line(strings.Join(sb.AllowDomains, " ")), px.URL())
	return px, nil
}

// refusedHosts is the controller's view of what px refused in a turn
// (nil without a proxy).
func refusedHosts(px *netproxy.Proxy) func() []harness.RefusedHost {
	if px == nil {
		return nil
	}
	return func() []harness.RefusedHost {
		var out []harness.RefusedHost
		for _, r := range px.TakeRefused() {
			out = append(out, harness.RefusedHost{Host: r.Host, Count: r.Count})
		}
		return out
	}
}

func printFinal(o runOptions, st *harness.State) error {
	v, err := loadTaskView(o.Store, st)
	if err != nil {
		return err
	}
	v.Sandbox = newSandboxView(st, o.Store.Root, o.Getenv, o.Landlock)
	if o.Events != nil {
		// stdout holds only events: the status goes in run.stopped, and
		// for people on stderr.
		task, err := encodeJSON(schemas.StatusOutput, newStatusOutput(v), false)
		if err != nil {
			return err
		}
		o.Events.stopped(st, task[:len(task)-1])
		return printStatus(o.IO.ErrOut, v, o.Now())
	}
	return printStatus(o.IO.Out, v, o.Now())
}
