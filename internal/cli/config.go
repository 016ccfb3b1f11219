package cli

import (
	"fmt"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/internal/sandbox"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/schemas"
)

// ConfigOptions are the inputs of grub config.
type ConfigOptions struct {
	IO       *IOStreams
	Store    func() (*harness.Store, error)
	Getenv   func(string) string
	LookPath func(string) (string, error)
	Landlock func() (int, bool)

	JSON bool
}

// NewCmdConfig builds grub config. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdConfig(f *Factory, runF func(*ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{IO: f.IO, Store: f.Store, Getenv: f.Getenv, LookPath: exec.LookPath, Landlock: f.Landlock}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the settings a new task would get here, and where each comes from",
		Long: `Show what grub start would use in this workspace before you spend a token:
the git repository and whether turns would be committed, the built-in
agent's server and model (from OPENAI_BASE_URL and GRUB_MODEL; the API key
is only reported as set or not, never shown), whether the claude and codex
programs are on PATH, the sandbox a new task's commands would run under
(the mode and where it comes from, the kernel's Landlock ABI and the
paths commands may write), the default limits, and how many tasks the
workspace holds, then every setting grub start takes with its value and
where it comes from: a flag's built-in default, GRUB_MODEL or
OPENAI_BASE_URL, or a line of a defaults file (.grub/config.toml in the
workspace, ~/.config/grub/config.toml or $XDG_CONFIG_HOME/grub/config.toml
for you; see docs/configuration.md). A mistake in a file is reported here
as it would be by grub start (exit 2).

Settings that run programs, weaken the sandbox or send your API key
elsewhere apply from .grub/config.toml (a repository's file: whoever can
push to it wrote it) only once you trusted its exact content with grub
config trust; until then grub start refuses the workspace (exit 2) and grub
config shows them as not applied. A changed file needs trusting again
(grub config untrust takes the trust back). Your own config.toml is
trusted as it is. The keys:

` + trustKeysHelp() + `

A task whose settings run programs or lift the sandbox and that your grub
did not make here (a clone, a copied folder) needs grub config trust --task
<id> before grub resume runs it.

--json prints one object that follows schemas/config-output.schema.json.`,
		Example: `  grub config
  grub -C ~/src/api config --json | jq .agents.openai`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object (schemas/config-output.schema.json)")
	cmd.AddCommand(NewCmdConfigTrust(f, false, nil), NewCmdConfigTrust(f, true, nil))
	return cmd
}

type configOutput struct {
	Workspace string         `json:"workspace"`
	Git       configGit      `json:"git"`
	Agents    configAgents   `json:"agents"`
	Sandbox   configSandbox  `json:"sandbox"`
	Limits    harness.Limits `json:"limits"`
	Tasks     int            `json:"tasks"`
	// Files are the defaults files read (missing ones left out), the
	// user's first; Settings every setting of grub start, by key.
	Files    []string        `json:"files"`
	Settings []configSetting `json:"settings"`
	// Trust says whether .grub/config.toml is trusted (trust.go).
	Trust workspaceTrust `json:"trust"`
}

// configSandbox is the sandbox a new task with the default agent would
// get here.
type configSandbox struct {
	Mode string `json:"mode"`
	From string `json:"from"`
	// LandlockABI is the kernel's Landlock ABI, 0 when it has none.
	LandlockABI int `json:"landlockABI"`
	// NoNetwork says whether --no-network (and --allow-domain) can be
	// enforced here.
	NoNetwork bool `json:"noNetworkAvailable"`
	// AllowDomains is the network allowlist a new task would get.
	AllowDomains []string `json:"allowDomains,omitempty"`
	// Writable are the paths commands may write in that mode.
	Writable []string `json:"writable"`
	// AllowGit: commands may write the git directory
	// (--sandbox-allow-git); false: it is read-only for them.
	AllowGit bool `json:"allowGit"`
	// Hidden are the credential locations (and --sandbox-hide paths)
	// that exist here and that commands cannot read in that mode, minus
	// --sandbox-show's; Readable says they stay readable all the same
	// (no user and mount namespaces here).
	Hidden   []string `json:"hidden"`
	Readable bool     `json:"hiddenReadable,omitempty"`
	// Warning is what a run would warn about, if anything.
	Warning string `json:"warning,omitempty"`
}

type configGit struct {
	Repository bool     `json:"repository"`
	Root       string   `json:"root,omitempty"`
	Conversion []string `json:"conversion,omitempty"`
	Commits    bool     `json:"commits"`
}

type configAgents struct {
	Default     string        `json:"default"`
	DefaultFrom string        `json:"defaultFrom"`
	OpenAI      configOpenAI  `json:"openai"`
	Claude      configProgram `json:"claude"`
	Codex       configProgram `json:"codex"`
}

type configOpenAI struct {
	APIKeySet   bool   `json:"apiKeySet"`
	BaseURL     string `json:"baseURL"`
	BaseURLFrom string `json:"baseURLFrom"`
	Model       string `json:"model"`
	ModelFrom   string `json:"modelFrom"`
}

type configProgram struct {
	Found bool   `json:"found"`
	Path  string `json:"path,omitempty"`
	// StallTimeoutSeconds is the --stall-timeout a new task gets.
	StallTimeoutSeconds int64 `json:"stallTimeoutSeconds"`
	// ReportsCost says whether the program reports cost (--cost-budget).
	ReportsCost bool `json:"reportsCost"`
}

func configRun(opts *ConfigOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	out := configOutput{Workspace: store.Root, Files: []string{}}
	startCmd := NewCmdStart(&Factory{IO: opts.IO}, nil)
	fl := startCmd.LocalNonPersistentFlags()
	defs, err := applyDefaults(fl, store.Root, opts.Getenv)
	if err != nil {
		return err
	}
	for _, f := range defs.Files {
		out.Files = append(out.Files, f.Name)
	}
	out.Settings = settingsOf(fl, defs, opts.Getenv)
	out.Trust = defs.Trust
	if out.Trust.Keys == nil {
		out.Trust.Keys = []string{}
	}
	lf := limitFlags{forNewTask: true}
	if out.Limits, err = lf.limits(flagsLike(fl, defs, lf.register)); err != nil {
		return defs.explain(err)
	}
	var sf sandboxFlags
	var newSandbox harness.Sandbox
	if err := defs.explain(sf.apply(flagsLike(fl, defs, sf.register), &newSandbox)); err != nil {
		return err
	}
	if src := defs.From["sandbox"]; src.fromFile() && newSandbox.Mode != "" {
		newSandbox.ModeFrom = src.String()
	}
	kind := harness.AgentKind(fl.Lookup("agent").Value.String())
	repo, err := openRepo(store.Root)
	if err != nil {
		return err
	}
	if repo != nil {
		out.Git = configGit{Repository: true, Root: repo.Root()}
		if out.Git.Conversion, err = repo.Conversion(); err != nil {
			return err
		}
		_, noGit := opts.LookPath("git")
		out.Git.Commits = len(out.Git.Conversion) == 0 || noGit == nil
	}
	o := &out.Agents.OpenAI
	out.Agents.Default, out.Agents.DefaultFrom = string(kind), defs.From["agent"].String()
	o.APIKeySet = opts.Getenv("OPENAI_API_KEY") != ""
	o.BaseURL, o.BaseURLFrom = openAISetting(fl, defs, opts.Getenv, "base-url")
	if o.BaseURL == "" {
		o.BaseURL, o.BaseURLFrom = llm.DefaultBaseURL, "default"
	}
	o.Model, o.ModelFrom = openAISetting(fl, defs, opts.Getenv, "model")
	if o.Model == "" {
		o.ModelFrom = "unset"
	}
	for name, p := range map[string]*configProgram{"claude": &out.Agents.Claude, "codex": &out.Agents.Codex} {
		if path, err := opts.LookPath(name); err == nil {
			*p = configProgram{Found: true, Path: path}
		}
		p.StallTimeoutSeconds = int64(DefaultStallTimeout / time.Second)
		p.ReportsCost = reportsCost(harness.AgentKind(name))
	}
	sb, err := resolveSandbox(newSandbox, kind, store.Root, opts.Getenv, opts.Landlock)
	if err != nil {
		return defs.explain(err)
	}
	out.Sandbox = configSandbox{Mode: string(sb.Policy.Mode), From: sb.From, LandlockABI: sb.ABI,
		NoNetwork: sb.ABI >= sandbox.MinABINetwork, Writable: sb.Policy.WritablePaths(), AllowGit: sb.AllowGit, Warning: sb.Warning,
		AllowDomains: sb.AllowDomains}
	out.Sandbox.Hidden = sandbox.Hidden(sb.Policy)
	if out.Sandbox.Hidden == nil {
		out.Sandbox.Hidden = []string{}
	}
	if ok, _ := sandbox.Namespaces(); !ok && len(out.Sandbox.Hidden) > 0 {
		out.Sandbox.Readable = true
	}
	if out.Sandbox.Writable == nil {
		out.Sandbox.Writable = []string{}
	}
	tasks, damaged, err := store.Scan()
	if err != nil {
		return err
	}
	out.Tasks = len(tasks) + len(damaged)
	if opts.JSON {
		return writeJSON(opts.IO.Out, schemas.ConfigOutput, out)
	}
	return printConfig(opts, out)
}

func printConfig(opts *ConfigOptions, c configOutput) error {
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("workspace", c.Workspace)
	switch {
	case !c.Git.Repository:
		row("git", "not a repository: tasks run without commits")
	case len(c.Git.Conversion) > 0 && !c.Git.Commits:
		row("git", fmt.Sprintf("%s; asks git to convert files on commit (%s) and git is not on PATH: install git, or start tasks with --no-commit", c.Git.Root, termsafe.Line(strings.Join(capList(c.Git.Conversion, 3), "; "))))
	case len(c.Git.Conversion) > 0:
		row("git", fmt.Sprintf("%s; every turn is committed, the files as git converts them (%s) (--no-commit turns it off)", c.Git.Root, termsafe.Line(strings.Join(capList(c.Git.Conversion, 3), "; "))))
	default:
		row("git", c.Git.Root+"; every turn is committed (--no-commit turns it off)")
	}
	o := c.Agents.OpenAI
	row("agent", fmt.Sprintf("%s (%s)", c.Agents.Default, c.Agents.DefaultFrom))
	key := "not set (a local server needs none)"
	if o.APIKeySet {
		key = "set (not shown)"
	}
	row("  OPENAI_API_KEY", key)
	row("  base URL", fmt.Sprintf("%s (%s)", o.BaseURL, o.BaseURLFrom))
	model := "unset: pass --model, set GRUB_MODEL or write model = \"…\" in .grub/config.toml"
	if o.Model != "" {
		model = termsafe.Line(o.Model) + " (" + o.ModelFrom + ")"
	}
	row("  model", model)
	for _, p := range []struct {
		name string
		prog configProgram
	}{{"claude", c.Agents.Claude}, {"codex", c.Agents.Codex}} {
		where := "not on PATH"
		if p.prog.Found {
			where = p.prog.Path
		}
		cost := "reports no cost"
		if p.prog.ReportsCost {
			cost = "reports cost (--cost-budget)"
		}
		row("  "+p.name, fmt.Sprintf("%s; %s; stall timeout %s", where, cost, harness.FormatSeconds(p.prog.StallTimeoutSeconds)))
	}
	row("  agent args", "none unless --agent-args '…' (appended to the claude or codex command line)")
	s := c.Sandbox
	abi := "none (no Landlock: commands run without a sandbox)"
	if s.LandlockABI > 0 {
		abi = fmt.Sprintf("ABI %d", s.LandlockABI)
		if !s.NoNetwork {
			abi += fmt.Sprintf(" (--no-network and --allow-domain need ABI %d)", sandbox.MinABINetwork)
		}
	}
	row("sandbox", fmt.Sprintf("%s (%s; --sandbox to change)", s.Mode, s.From))
	row("  Landlock", abi)
	if len(s.Writable) > 0 {
		row("  writable", strings.Join(s.Writable, "\n\t"))
	}
	if len(s.AllowDomains) > 0 {
		row("  network", "only to "+strings.Join(s.AllowDomains, " ")+", through grub's proxy (--allow-domain)")
	}
	if s.Mode != string(sandbox.ModeOff) {
		git := "read-only for sandboxed commands (--sandbox-allow-git lets the agent commit)"
		if s.AllowGit {
			git = "writable for sandboxed commands, but its hooks and config (--sandbox-allow-git)"
		}
		row("  .git", git)
		hidden := "nothing to hide here (~/.ssh, ~/.aws and the other credential locations do not exist)"
		if len(s.Hidden) > 0 {
			hidden = strings.Join(s.Hidden, "\n\t")
		}
		if s.Readable {
			hidden = "none: without user and mount namespaces these stay readable:\n\t" + hidden
		}
		row("  hidden", hidden)
	}
	l := c.Limits
	row("limits", fmt.Sprintf("%d turns, %d failures in a row (%d for the initializer), %d blocked reports, %d-%d features",
		l.MaxIterations, l.MaxConsecutiveFailures, l.MaxInitializerFailures, l.MaxBlocked, l.MinFeatures, l.MaxFeatures))
	row("timeouts", fmt.Sprintf("%s per turn, %s per init.sh or verify run; no token or time budget unless given",
		harness.FormatSeconds(l.TurnTimeoutSeconds), harness.FormatSeconds(l.InitTimeoutSeconds)))
	row("tasks", fmt.Sprint(c.Tasks))
	row("trust", trustLine(c.Trust))
	printSettings(row, c)
	return tw.Flush()
}

// trustLine says whether the workspace's file is trusted.
func trustLine(w workspaceTrust) string {
	keys := strings.Join(w.Keys, ", ")
	switch {
	case w.File == "":
		return "no " + ".grub/config.toml here"
	case len(w.Keys) == 0:
		return w.File + " sets nothing that needs trust"
	case w.Trusted:
		return w.File + " is trusted as it is (" + keys + " apply)"
	}
	return w.File + " is not trusted: " + keys + " do not apply, and grub start refuses to run (read the file, then grub config trust)"
}
