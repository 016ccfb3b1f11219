package cli

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/netproxy"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/sandbox"
)

// sandboxHelp is the part of grub start's help that says what each
// sandbox mode allows.
const sandboxHelp = `Sandbox (Linux, Landlock): the built-in agent's shell commands, a command
agent, init.sh and every verify command run through a small launcher (grub
re-executing itself) that confines them; grub itself is never confined.
  --sandbox workspace-write  reads anywhere; writes only in the workspace,
                             the temp directory ($TMPDIR, else /tmp), the
                             build caches (Go build cache and module cache,
                             npm cache, pip cache), /dev/null and the
                             terminals, and the paths given with
                             --sandbox-allow PATH (repeatable)
  --sandbox read-only        reads anywhere; writes only to the temp
                             directory and the devices (review or audit goals)
  --sandbox off              no restriction
In both confining modes the git directory (.git) is read-only for these
commands where user and mount namespaces are available: the agent cannot
commit, move HEAD or plant anything git runs later. --sandbox-allow-git
lets them write it (the agent can commit); its hooks, config and the other
files git takes programs or other folders from stay read-only, and the
referee checks them after every turn either way.
workspace-write is the default where the kernel has Landlock, for --agent
openai and --agent command; where it has none, the default is off, with a
warning, and an explicit mode is an error (exit 2). For --agent claude and
--agent codex the sandbox is opt-in (they have their own permission
systems); when asked for, their folders (~/.claude and ~/.claude.json, or
$CLAUDE_CONFIG_DIR; ~/.codex or $CODEX_HOME) are writable too. --no-network
cuts the network: each command runs in a network namespace of its own,
which reaches nothing but its own loopback over any protocol, and a
seccomp filter refuses every socket but TCP (UDP, Multipath TCP, raw,
packet) and io_uring; below Landlock ABI 9 it refuses Unix sockets too
(socketpair still works). Where namespaces are not available, Landlock
ABI 4 refuses TCP connect and bind and start says what is left open. grub
config shows the paths and the kernel's Landlock ABI.

In both confining modes, where namespaces are available, the credentials
under your home folder are hidden from these commands (an empty folder or
/dev/null in their place): ~/.ssh, ~/.aws, ~/.azure, ~/.config/gcloud,
~/.config/gh, ~/.kube, ~/.docker/config.json, ~/.gnupg, ~/.netrc,
~/.git-credentials, ~/.npmrc, ~/.pypirc, ~/.cargo/credentials* and
~/.config/grub. --sandbox-hide PATH hides more, --sandbox-show PATH lets
one through (both repeatable); grub config lists what is hidden here.

--allow-domain NAME (repeatable; *.example.com, an IP address, NAME:PORT,
presets @go @npm @pypi @crates) lets sandboxed commands reach those hosts
and nothing else: grub runs an HTTP proxy on 127.0.0.1 for the run, points
HTTP_PROXY, HTTPS_PROXY and ALL_PROXY at it (NO_PROXY cleared), and each
command runs in a network namespace of its own whose only way out is the
proxy (Landlock, ABI 4, also lets commands connect to its port only; where
namespaces are not available that rule is all, and start says so). Ports 80 and 443
unless a pattern names one; private, loopback and link-local addresses
only for a name or address listed exactly. Refused hosts are in each
turn's ledger line, the progress log and the report. It works with every
--sandbox mode (with off, the network and the read-only paths are
confined, as with --no-network) and not with --no-network itself.

The shell tool, init.sh and verify commands get your environment without
variables whose names look like secrets (*_API_KEY, *_TOKEN, *SECRET*,
*PASSWORD*); --pass-env NAME (repeatable) lets one through. Agent programs
(claude, codex, command) keep the whole environment: they need their keys.`

// sandboxFlags are the flags that set a task's sandbox, shared by start,
// resume and edit.
type sandboxFlags struct {
	Mode      string
	Allow     []string
	NoNetwork bool
	// AllowDomains is --allow-domain: the network allowlist.
	AllowDomains []string
	PassEnv      []string
	AllowGit     bool
	Hide         []string
	Show         []string
}

func (s *sandboxFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&s.Mode, "sandbox", "", "confine the commands run for the agent: workspace-write, read-only or off; default: workspace-write for --agent openai and command where Landlock is available, off for claude and codex (\"default\" goes back to it)")
	fl.StringArrayVar(&s.Allow, "sandbox-allow", nil, "with --sandbox workspace-write: also let commands write under `path` (repeatable; '' clears the list)")
	fl.BoolVar(&s.NoNetwork, "no-network", false, "cut sandboxed commands off the network: a network namespace of their own that reaches only its own loopback, and a seccomp filter for every socket but TCP (without namespaces, Landlock ABI 4 refuses TCP connect and bind)")
	fl.StringArrayVar(&s.AllowDomains, "allow-domain", nil, "let sandboxed commands reach `host` through grub's proxy, and no other (repeatable; *.example.com, an IP address, host:port, presets "+strings.Join(netproxy.PresetNames(), " ")+"; '' clears the list; Landlock ABI 4)")
	fl.BoolVar(&s.AllowGit, "sandbox-allow-git", false, "let sandboxed commands write the git directory, so that the agent can commit (its hooks and config stay read-only); by default .git is read-only for them")
	fl.StringArrayVar(&s.Hide, "sandbox-hide", nil, "also hide `path` from sandboxed commands, as ~/.ssh, ~/.aws and the other credential locations are by default: an empty folder or /dev/null in its place (the last element may be a pattern; repeatable; '' clears the list)")
	fl.StringArrayVar(&s.Show, "sandbox-show", nil, "let sandboxed commands read `path`, a location grub hides (or a folder holding some) (repeatable; '' clears the list)")
	fl.StringArrayVar(&s.PassEnv, "pass-env", nil, "let the secret-looking variable `NAME` through to the shell tool, init.sh and verify (repeatable; '' clears the list)")
}

// given reports whether any sandbox flag was given.
func (s *sandboxFlags) given(cmd *cobra.Command) bool {
	fl := cmd.Flags()
	return fl.Changed("sandbox") || fl.Changed("sandbox-allow") || fl.Changed("no-network") || fl.Changed("pass-env") || fl.Changed("sandbox-allow-git") ||
		fl.Changed("sandbox-hide") || fl.Changed("sandbox-show") || fl.Changed("allow-domain")
}

// apply writes the sandbox flags that were given into sb: --sandbox
// replaces the mode ("default" clears it), --sandbox-allow, --sandbox-hide,
// --sandbox-show and --pass-env replace their lists, --no-network and
// --sandbox-allow-git set (or, =false, clear) their rules, --allow-domain
// replaces the allowlist (each pattern checked). Relative paths are made
// absolute.
func (s *sandboxFlags) apply(cmd *cobra.Command, sb *harness.Sandbox) error {
	fl := cmd.Flags()
	if fl.Changed("sandbox") {
		sb.ModeFrom = ""
		if s.Mode == "default" {
			sb.Mode = ""
		} else {
			m, err := sandbox.ParseMode(s.Mode)
			if err != nil {
				return usageErrorf("--sandbox: %v", err)
			}
			sb.Mode = string(m)
		}
	}
	for _, l := range []struct {
		flag  string
		given []string
		to    *[]string
	}{{"sandbox-allow", s.Allow, &sb.Allow}, {"sandbox-hide", s.Hide, &sb.Hide}, {"sandbox-show", s.Show, &sb.Show}} {
		if !fl.Changed(l.flag) {
			continue
		}
		paths, err := absPaths(l.flag, l.given)
		if err != nil {
			return err
		}
		*l.to = paths
	}
	if fl.Changed("no-network") {
		sb.NoNetwork = s.NoNetwork
	}
	if fl.Changed("sandbox-allow-git") {
		sb.AllowGit = s.AllowGit
	}
	if fl.Changed("allow-domain") {
		sb.AllowDomains = nil
		for _, d := range s.AllowDomains {
			if d == "" {
				continue
			}
			if err := netproxy.CheckPattern(d); err != nil {
				return &UsageError{Err: err}
			}
			if !slices.Contains(sb.AllowDomains, d) {
				sb.AllowDomains = append(sb.AllowDomains, d)
			}
		}
	}
	if fl.Changed("pass-env") {
		sb.PassEnv = nil
		for _, n := range s.PassEnv {
			if n == "" {
				continue
			}
			if strings.ContainsAny(n, "= ") {
				return usageErrorf("--pass-env %q: give a variable name, not a value", n)
			}
			if !slices.Contains(sb.PassEnv, n) {
				sb.PassEnv = append(sb.PassEnv, n)
			}
		}
	}
	return nil
}

// absPaths makes a path flag's values absolute, without duplicates and
// without the empty value (which clears the list).
func absPaths(flag string, given []string) ([]string, error) {
	var out []string
	for _, p := range given {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, usageErrorf("--%s %s: %v", flag, p, err)
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out, nil
}

// sandboxSetup is how one run confines the commands grub runs for the
// agent: the policy resolved against this kernel and who it applies to.
type sandboxSetup struct {
	Policy sandbox.Policy
	// From says where the mode comes from: "--sandbox", or the default
	// and why.
	From string
	// ABI is the kernel's Landlock ABI (0: none).
	ABI int
	// Warning is the one line to print at the start of a run, if any.
	Warning string
	// PassEnv are the secret-looking variables let through.
	PassEnv []string
	// AllowGit lets commands write the git directory (only the guarded
	// files in it stay read-only); false: all of it is read-only.
	AllowGit bool
	// Allow is the network allowlist (--allow-domain), nil without one;
	// the run starts the proxy and sets Policy.ProxyPort (withProxy).
	Allow *netproxy.Allowlist
	// Proxy is the run's proxy (withProxy), which also serves the
	// listener each launcher makes in its network namespace
	// (relayedLaunch); nil without an allowlist.
	Proxy *netproxy.Proxy
	// AllowDomains are the patterns Allow was parsed from.
	AllowDomains []string
}

// landlockProbe reports the kernel's Landlock ABI; tests replace
// sandbox.Supported to simulate another kernel.
type landlockProbe func() (abi int, ok bool)

// defaultMode is the sandbox mode of a task that asked for none.
func defaultMode(kind harness.AgentKind) sandbox.Mode {
	if kind == harness.AgentClaude || kind == harness.AgentCodex {
		return sandbox.ModeOff // opt-in: they have their own permission systems
	}
	return sandbox.ModeWorkspaceWrite
}

// resolveSandbox resolves a task's sandbox settings for a run in root on
// this kernel. An explicit mode (or --no-network) the kernel cannot
// enforce is a usage error (exit 2); a default one degrades to off with
// a warning.
func resolveSandbox(sb harness.Sandbox, kind harness.AgentKind, root string, getenv func(string) string, probe landlockProbe) (sandboxSetup, error) {
	explicit := sb.Mode != ""
	mode := defaultMode(kind)
	from := "default for --agent " + string(kind)
	if explicit {
		mode, from = sandbox.Mode(sb.Mode), "--sandbox"
		if sb.ModeFrom != "" {
			from = sb.ModeFrom
		}
	}
	p := sandbox.Policy{Mode: mode, Workspace: root, Writable: allowPaths(root, sb.Allow), NoNetwork: sb.NoNetwork}
	if mode != sandbox.ModeOff {
		hide, show, err := hiddenPaths(sb, root, getenv)
		if err != nil {
			return sandboxSetup{}, err
		}
		p.Hide, p.Show = hide, show
	}
	if mode == sandbox.ModeWorkspaceWrite {
		p.Writable = append(p.Writable, agentConfigPaths(kind, getenv)...)
		if sb.AllowGit {
			p.Writable = append(p.Writable, outsideGitDirs(root)...)
		}
	}
	if probe == nil {
		probe = sandbox.Supported
	}
	abi, ok := probe()
	if !ok {
		abi = 0
	}
	allow, err := checkAllowlist(sb, abi)
	if err != nil {
		return sandboxSetup{}, err
	}
	resolved, warning, err := sandbox.ResolveABI(p, explicit, abi)
	if err != nil {
		return sandboxSetup{}, &UsageError{Err: err}
	}
	if resolved.Mode != mode {
		from += " (no Landlock here)"
	}
	return sandboxSetup{Policy: resolved, From: from, ABI: abi, Warning: warning, PassEnv: sb.PassEnv, AllowGit: sb.AllowGit,
		Allow: allow, AllowDomains: sb.AllowDomains}, nil
}

// checkAllowlist parses the task's --allow-domain list (nil without
// one). It is a usage error with --no-network (which refuses every
// connection, the proxy's too: the two cannot both hold) and where
// Landlock lacks ABI 4 (without the network rule the proxy could be
// gone around, and an allowlist that only asks is no allowlist).
func checkAllowlist(sb harness.Sandbox, abi int) (*netproxy.Allowlist, error) {
	if len(sb.AllowDomains) == 0 {
		return nil, nil
	}
	if sb.NoNetwork {
		return nil, usageErrorf("--allow-domain and --no-network cannot be combined: --no-network refuses every connection, --allow-domain lets the listed hosts through grub's proxy (give --no-network=false, or --allow-domain '' to clear the list)")
	}
	if abi < sandbox.MinABINetwork {
		return nil, usageErrorf("--allow-domain needs Landlock ABI %d (Linux 6.7 or later) to keep sandboxed commands to grub's proxy; this system has %s: %w",
			sandbox.MinABINetwork, abiText(abi), sandbox.ErrUnavailable)
	}
	allow, err := netproxy.ParseAllowlist(sb.AllowDomains)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return allow, nil
}

func abiText(abi int) string {
	if abi < 1 {
		return "none"
	}
	return fmt.Sprintf("ABI %d", abi)
}

// withProxy is the setup for a run whose network proxy is px: the
// policy lets commands connect to its port only, and the launchers'
// listeners are served by it. Without an allowlist it is s unchanged.
func (s sandboxSetup) withProxy(px *netproxy.Proxy) sandboxSetup {
	if s.Allow != nil {
		s.Policy.ProxyPort, s.Proxy = px.Port(), px
	}
	return s
}

// hiddenPaths are the paths a task's sandboxed commands may not read (the
// credential locations under the home folder, $HOME and the one the
// user database gives when they differ, and the task's --sandbox-hide
// paths) and those let through (--sandbox-show). A hidden path that holds
// the workspace is a usage error, and so is a shown path inside a folder
// hidden as a whole (the launcher hides the folder, not what it holds).
func hiddenPaths(sb harness.Sandbox, root string, getenv func(string) string) (hide, show []string, err error) {
	own := allowPaths(root, sb.Hide)
	for _, h := range own {
		if rel, err := filepath.Rel(h, root); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return nil, nil, usageErrorf("--sandbox-hide %s: it holds the workspace, which sandboxed commands need", h)
		}
	}
	hide = append(sandbox.CredentialPaths(getenv("HOME"), passwdHome(getenv)), own...)
	show = allowPaths(root, sb.Show)
	if s, h, ok := sandbox.ShownInside(hide, show); ok {
		return nil, nil, usageErrorf("--sandbox-show %s: it lies in %s, which is hidden as a whole; show %s instead", s, h, h)
	}
	return hide, show, nil
}

// passwdHome is the current user's home folder in the user database, for
// tools (ssh) that read it rather than $HOME; "" when it is $HOME, or
// when the environment is a test's (no $HOME).
func passwdHome(getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" {
		return ""
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == home {
		return ""
	}
	return u.HomeDir
}

// outsideGitDirs are the git directories of the work tree at root that lie
// outside it (a linked work tree's, and the common directory it shares
// with the main one): writable with --sandbox-allow-git, so that the
// agent can commit there too.
func outsideGitDirs(root string) []string {
	dirs, err := gitx.GitDirs(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range dirs {
		if rel, err := filepath.Rel(root, d); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			out = append(out, d)
		}
	}
	return out
}

// agentConfigPaths are the folders and files Claude Code or the Codex CLI
// write as they work (sessions, history, settings, credentials refresh),
// writable when they run in the workspace-write sandbox.
func agentConfigPaths(kind harness.AgentKind, getenv func(string) string) []string {
	home := getenv("HOME")
	var paths []string
	add := func(p string) {
		if filepath.IsAbs(p) {
			paths = append(paths, p)
		}
	}
	switch kind {
	case harness.AgentClaude:
		if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
			add(d)
		} else if home != "" {
			add(filepath.Join(home, ".claude"))
		}
		if home != "" {
			add(filepath.Join(home, ".claude.json"))
			add(filepath.Join(home, ".claude.json.backup"))
		}
	case harness.AgentCodex:
		if d := getenv("CODEX_HOME"); d != "" {
			add(d)
		} else if home != "" {
			add(filepath.Join(home, ".codex"))
		}
	}
	return paths
}

// wrapper returns the function that puts the launcher (self, grub's own
// executable) in front of a command under the setup's policy, or nil when
// the policy confines nothing.
func (s sandboxSetup) wrapper(self string) proc.Wrapper {
	if !s.Policy.Confines() {
		return nil
	}
	p := s.Policy
	return func(argv []string) proc.Launch { return s.launch(self, p, argv) }
}

// launch is the launcher's command line for argv under p, and, where it
// can start directly in its user and mount namespace, the attributes
// that make them (with the command line to fall back to).
func launch(self string, p sandbox.Policy, argv []string) proc.Launch {
	plain := sandbox.Wrap(self, p, argv)
	if wrapped, attr, ok := sandbox.InNamespace(self, p, argv); ok {
		return proc.Launch{Argv: wrapped, Attr: attr, Plain: plain}
	}
	return proc.Launch{Argv: plain}
}

// protectingWrapper is wrapper for a task whose protected files the
// launcher makes read-only (in a user and mount namespace of its own):
// the whole git directory (unless --sandbox-allow-git), git's hooks and
// config and the other files the referee's guard lists, the task's
// state.json, turn ledger (turns.jsonl), accepted list files and lock,
// and grub's private folder
// (the control channels and the registered tasks), a second wall where
// it lies under a path commands may write ($XDG_STATE_HOME in /tmp). The
// list is read again for every command, so a config include or hooks
// folder the referee restored is covered from then on.
func (s sandboxSetup) protectingWrapper(self string, store *harness.Store, id string) proc.Wrapper {
	if !s.Policy.Confines() {
		return nil
	}
	root := store.Root
	files := []string{store.Path(id, harness.FileState), store.Path(id, harness.FileTurnLedger), store.Path(id, harness.FileAcceptedList),
		store.Path(id, harness.FileAcceptedChanges), store.Path(id, harness.FileLock)}
	if store.Private != "" {
		files = append(files, store.Private)
	}
	return func(argv []string) proc.Launch {
		p := s.Policy
		guarded, err := gitx.GuardedPaths(root)
		if err != nil {
			guarded = nil // not a repository: grub's own files only
		}
		p.ReadOnly = sandbox.ProtectedPaths(root, guarded, files)
		if !s.AllowGit {
			dirs, err := gitx.GitDirs(root)
			if err == nil {
				p.ReadOnly = append(p.ReadOnly, sandbox.WholeGitDirs(root, dirs)...)
			}
		}
		return s.launch(self, p, argv)
	}
}

// warnPrivateWritable warns, when the private folder cannot be made
// read-only (no namespaces), that it lies in a path commands may write:
// a command could then queue control requests for the task.
func warnPrivateWritable(w io.Writer, p sandbox.Policy, private string) {
	if private == "" {
		return
	}
	for _, dir := range p.WritablePaths() {
		if rel, err := filepath.Rel(dir, private); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			fmt.Fprintf(w, "grub: warning: grub's private folder %s lies in %s, which sandboxed commands may write, and cannot be made read-only here: the agent could queue control requests; set XDG_STATE_HOME to a folder outside it\n", private, dir)
			return
		}
	}
}

// warnReadable names, when the launcher cannot hide anything (no
// namespaces), the credential locations that exist and stay readable by
// sandboxed commands.
func warnReadable(w io.Writer, p sandbox.Policy) {
	if readable := sandbox.Hidden(p); len(readable) > 0 {
		fmt.Fprintf(w, "grub: warning: without a mount namespace grub cannot hide credentials: sandboxed commands can read %s\n", strings.Join(readable, " "))
	}
}

// scrubbedEnv is the environment of the shell tool, init.sh and verify:
// grub's own without secret-looking variables, except those passed.
func (s sandboxSetup) scrubbedEnv() []string {
	return sandbox.ScrubEnv(os.Environ(), s.PassEnv)
}

// describe is the sandbox in one line, for status and the start of a run.
func (s sandboxSetup) describe() string {
	d := string(s.Policy.Mode) + " (" + s.From + ")"
	if s.Policy.NoNetwork {
		d += ", no network"
	}
	if len(s.AllowDomains) > 0 {
		d += ", network only to " + strings.Join(s.AllowDomains, " ")
	}
	if len(s.PassEnv) > 0 {
		d += ", passing " + strings.Join(s.PassEnv, " ")
	}
	if s.AllowGit {
		d += ", .git writable"
	}
	if len(s.Policy.Show) > 0 {
		d += ", showing " + strings.Join(s.Policy.Show, " ")
	}
	return d
}

// NewCmdSandboxExec builds the hidden command that is the sandbox
// launcher: grub __sandbox-exec [policy] -- command [args...]. grub runs
// it itself (sandbox.Wrap), never a user.
func NewCmdSandboxExec() *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.ExecCommand,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Main returns only when it could not run the command; it has
			// said why on stderr.
			return &ExitError{Code: sandbox.Main(args)}
		},
	}
}

// procReaper ends what turns leave behind, grub being a child subreaper.
type procReaper struct{}

func (procReaper) Descendants() []harness.ProcessRef {
	kids, err := proc.Descendants()
	if err != nil {
		return nil
	}
	refs := make([]harness.ProcessRef, 0, len(kids))
	for pid, start := range kids {
		refs = append(refs, harness.ProcessRef{PID: pid, Start: start})
	}
	slices.SortFunc(refs, func(a, b harness.ProcessRef) int { return a.PID - b.PID })
	return refs
}

// EndOrphans ends every child of grub: at a turn's end grub manages no
// process of its own.
func (procReaper) EndOrphans() ([]int, error) { return proc.KillOrphans(nil) }

// becomeReaper makes grub a child subreaper for a run, so that what a turn
// detaches is re-parented to grub and ended with the turn. It reports
// false where the system has no subreapers (only Linux has them).
func becomeReaper() bool {
	return proc.BecomeSubreaper() == nil
}
