package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/config"
	"github.com/grub-dev/grub/internal/termsafe"
)

// trustKeys are the keys of a defaults file that run programs as the
// user, weaken the sandbox or send the API key elsewhere, each with why
// (needsTrust lets through the two values that only tighten).
// From the workspace's .grub/config.toml (a repository's file, which
// anyone who can push to it, or a turn of the agent, may write) they
// apply only once the user trusted the file's exact content (grub config
// trust); from the user's own file they apply as they are. Every flag of
// grub start is in this list or in safeKeys (TestEveryStartFlagIsClassified).
var trustKeys = map[string]string{
	"on-turn":           "runs a command outside the sandbox",
	"on-stop":           "runs a command outside the sandbox",
	"agent":             "chooses the program that runs each turn (claude and codex run without grub's sandbox by default; \"openai\" needs no trust)",
	"agent-cmd":         "runs a program each turn",
	"agent-bin":         "runs a program each turn",
	"agent-args":        "passes arguments to the agent's program",
	"sandbox":           "can turn the sandbox off",
	"sandbox-allow":     "lets commands write outside the workspace",
	"sandbox-allow-git": "lets commands write .git, where git finds programs to run (false needs no trust)",
	"no-network":        "can turn network confinement off (true needs no trust)",
	"pass-env":          "passes secrets to the agent's commands",
	"sandbox-show":      "lets sandboxed commands read credentials grub hides",
	"base-url":          "sends the API key to the server it names",
}

// safeKeys are the keys of grub start that need no trust: limits, budgets,
// the model, the prompts' language, how progress is shown.
//
// --json (start's event stream on stdout) is no key at all (notSettings
// in defaults.go): it changes only what grub prints, and a repository's
// file must not change what a program reading grub's stdout gets.
//
// allow-domain is safe: an allowlist only narrows an open network, and
// with --no-network it is refused, never a widening.
var safeKeys = []string{
	"allow-dirty", "allow-domain", "branch", "detach", "context-window", "cost-budget", "for", "heartbeat", "hook-timeout",
	"init-timeout", "locale", "max-blocked", "max-fail", "max-features", "max-init-fail",
	"max-iter", "max-requests", "min-features", "model", "no-commit", "no-progress", "protect", "regression-checks", "sandbox-hide",
	"request-timeout", "stall-timeout", "time-budget", "token-budget", "turn-timeout", "worktree",
}

// trustKeysHelp lists trustKeys for grub config --help.
func trustKeysHelp() string {
	names := make([]string, 0, len(trustKeys))
	for k := range trustKeys {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "  %-14s %s\n", k, trustKeys[k])
	}
	return strings.TrimRight(b.String(), "\n")
}

// workspaceTrust is whether the workspace's defaults file is trusted.
type workspaceTrust struct {
	// File is the file's name (.grub/config.toml); empty when there is
	// none.
	File string `json:"file,omitempty"`
	// Keys are the keys it sets that need trust, sorted.
	Keys    []string `json:"keys"`
	Trusted bool     `json:"trusted"`
}

// untrusted reports whether the file sets keys that need trust and is
// not trusted.
func (w workspaceTrust) untrusted() bool { return len(w.Keys) > 0 && !w.Trusted }

// trustListPath is the user's list of trusted workspace files, next to
// the user's config.toml; "" when the environment names no place.
func trustListPath(getenv func(string) string) string {
	p, _ := config.UserFile(getenv)
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "trusted")
}

// workspaceConfigPath is the absolute path trust records the workspace's
// file by: under the workspace's real path.
func workspaceConfigPath(root string) string {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return filepath.Join(root, config.WorkspaceFile)
}

// needsTrust reports whether a file's setting needs trust: its key is in
// trustKeys, unless its value can only tighten things: agent = "openai"
// (the built-in agent, sandboxed by default), no-network = true and
// sandbox-allow-git = false.
func needsTrust(s config.Setting) bool {
	if _, ok := trustKeys[s.Key]; !ok {
		return false
	}
	v := ""
	if len(s.Values) == 1 {
		v = s.Values[0]
	}
	switch {
	case s.Key == "agent" && v == string(harness.AgentOpenAI), s.Key == "no-network" && v == "true",
		s.Key == "sandbox-allow-git" && v == "false":
		return false
	}
	return true
}

// keysNeedingTrust are the keys of f's settings that need trust, sorted.
func keysNeedingTrust(f *config.File) []string {
	var keys []string
	for _, s := range f.Settings {
		if needsTrust(s) && !slices.Contains(keys, s.Key) {
			keys = append(keys, s.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// trustFiles checks the workspace's file (the last of files, when read)
// against the user's trust list: when it sets keys that need trust and
// its content is not trusted, those keys are dropped from it.
func trustFiles(files []*config.File, root string, getenv func(string) string) ([]*config.File, workspaceTrust, error) {
	var w workspaceTrust
	i := slices.IndexFunc(files, func(f *config.File) bool { return f.Name == config.WorkspaceFile })
	if i < 0 {
		return files, w, nil
	}
	f := files[i]
	w.File, w.Keys = f.Name, keysNeedingTrust(f)
	if list := trustListPath(getenv); list != "" {
		ok, err := harness.TrustList{Path: list}.Trusted(workspaceConfigPath(root), f.SHA256)
		if err != nil {
			return nil, w, err
		}
		w.Trusted = ok
	}
	if w.untrusted() {
		files = slices.Clone(files)
		files[i] = f.Without(func(k string) bool { return slices.Contains(w.Keys, k) })
	}
	return files, w, nil
}

// untrustedConfigError is grub start's refusal of an untrusted workspace
// file.
func untrustedConfigError(w workspaceTrust) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(
		"%s sets %s: settings that run programs, weaken the sandbox or send your API key elsewhere; "+
			"grub applies them only once you trust this exact content: read the file, then run grub config trust "+
			"(a changed file needs trusting again; grub config --help lists these keys)",
		w.File, strings.Join(w.Keys, ", "))}
}

// checkTaskTrust refuses to run a task whose settings need trust when
// this user's grub did not make them here (a clone, a copied folder, a
// state.json a turn wrote).
func checkTaskTrust(store *harness.Store, st *harness.State) error {
	tr, err := store.TaskTrusted(st)
	if err != nil && !errors.Is(err, harness.ErrNoPrivate) {
		return err
	}
	switch tr {
	case harness.Trusted:
		return nil
	case harness.Changed:
		return changedTaskError(st.ID, store.TaskTrustSettings(st))
	}
	return untrustedTaskError(st.ID, store.TaskTrustSettings(st))
}

func settingLines(settings []harness.TrustSetting) string {
	lines := make([]string, len(settings))
	for i, s := range settings {
		lines[i] = "\n  " + s.Key + " " + termsafe.Line(fmt.Sprintf("%q", s.Value))
	}
	return strings.Join(lines, "")
}

func untrustedTaskError(id string, settings []harness.TrustSetting) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(
		"task %s has settings that run programs as you or lift the sandbox, and they were not made by your grub here "+
			"(a clone, a copied folder, or a state.json written by someone else):%s\n"+
			"check them (grub status %s), then run grub config trust --task %s, or change them on the command line of grub resume",
		id, settingLines(settings), id, id)}
}

func changedTaskError(id string, settings []harness.TrustSetting) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(
		"the settings of task %s (its agent, sandbox or hooks) changed since your grub recorded them: state.json was written by something else%s\n"+
			"check them (grub status %s), then run grub config trust --task %s",
		id, settingLines(settings), id, id)}
}

// TrustOptions are the inputs of grub config trust and untrust.
type TrustOptions struct {
	IO     *IOStreams
	Store  func() (*harness.Store, error)
	Getenv func(string) string

	Task    string // --task: a task's settings instead of the workspace file
	Untrust bool
}

// NewCmdConfigTrust builds grub config trust (untrust false) or grub
// config untrust.
func NewCmdConfigTrust(f *Factory, untrust bool, runF func(*TrustOptions) error) *cobra.Command {
	opts := &TrustOptions{IO: f.IO, Store: f.Store, Getenv: f.Getenv, Untrust: untrust}
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Trust this workspace's .grub/config.toml as it is now (or a task's settings, --task)",
		Long: `Trust the workspace's .grub/config.toml as it is now: its settings that run
programs, weaken the sandbox or send your API key elsewhere (grub config
--help lists them) apply to grub start only once you did. grub records the
file's SHA-256 with its path in the trusted file next to your config.toml
(~/.config/grub/trusted); a changed file needs trusting again.

With --task <id>, trust a task's settings instead: a task whose settings
run programs or lift the sandbox (hooks, a command agent, --agent-bin,
--agent-args, --base-url, the sandbox off, --sandbox-allow outside the
workspace, --pass-env) resumes only when your grub made those settings on
this machine; one that came with a clone or a copied folder needs this
first. grub status <id> shows them.`,
		Example: `  grub config trust
  grub config trust --task 0a1b2c3d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return trustRun(opts)
		},
	}
	if untrust {
		cmd.Use = "untrust"
		cmd.Short = "Take back the trust given to .grub/config.toml (or to a task's settings, --task)"
		cmd.Long = "Remove this workspace's .grub/config.toml from your trusted files, or with\n--task <id> the trust given to a task's settings."
		cmd.Example = "  grub config untrust\n  grub config untrust --task 0a1b2c3d"
	}
	cmd.Flags().StringVar(&opts.Task, "task", "", "a task's settings instead of the workspace file")
	return cmd
}

func trustRun(opts *TrustOptions) error {
	if opts.Task != "" {
		return trustTaskRun(opts)
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	listPath := trustListPath(opts.Getenv)
	if listPath == "" {
		return &ExitError{Code: ExitUsage, Err: errors.New("grub keeps the trusted files next to your config: set HOME (or XDG_CONFIG_HOME) to an absolute path")}
	}
	list, path := harness.TrustList{Path: listPath}, workspaceConfigPath(store.Root)
	w := opts.IO.ErrOut
	if opts.Untrust {
		found, err := list.Untrust(path)
		if err != nil {
			return err
		}
		if !found {
			fmt.Fprintf(w, "grub: %s was not trusted\n", config.WorkspaceFile)
			return nil
		}
		fmt.Fprintf(w, "grub: %s is no longer trusted\n", config.WorkspaceFile)
		return nil
	}
	keys := settingKeys(NewCmdStart(&Factory{IO: opts.IO}, nil).LocalNonPersistentFlags())
	f, err := config.Load(filepath.Join(store.Root, config.WorkspaceFile), config.WorkspaceFile, keys)
	if err != nil {
		return &UsageError{Err: err}
	}
	if f == nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("there is no %s in %s to trust", config.WorkspaceFile, store.Root)}
	}
	if err := list.Trust(path, f.SHA256); err != nil {
		return err
	}
	applies := "it sets no key that needs trust"
	if k := keysNeedingTrust(f); len(k) > 0 {
		applies = strings.Join(k, ", ") + " now apply"
	}
	fmt.Fprintf(w, "grub: trusted %s as it is now (sha256 %s): %s\n", config.WorkspaceFile, f.SHA256[:12], applies)
	for _, s := range f.Settings {
		if needsTrust(s) {
			fmt.Fprintf(w, "  %s:%d: %s = %s\n", config.WorkspaceFile, s.Line, s.Key, termsafe.Line(fmt.Sprintf("%q", s.Values)))
		}
	}
	return nil
}

func trustTaskRun(opts *TrustOptions) error {
	store, st, err := loadTask(opts.Store, opts.Task)
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	if opts.Untrust {
		if err := store.UntrustTask(st.ID); err != nil {
			return err
		}
		fmt.Fprintf(w, "grub: task %s's settings are no longer trusted\n", st.ID)
		return nil
	}
	settings := store.TaskTrustSettings(st)
	if err := store.TrustTask(st); err != nil {
		return err
	}
	if len(settings) == 0 {
		fmt.Fprintf(w, "grub: task %s has no settings that need trust; it resumes anywhere (its settings are recorded as they are)\n", st.ID)
		return nil
	}
	fmt.Fprintf(w, "grub: trusted the settings of task %s:\n", st.ID)
	for _, s := range settings {
		fmt.Fprintf(w, "  %s %s\n", s.Key, termsafe.Line(fmt.Sprintf("%q", s.Value)))
	}
	return nil
}
