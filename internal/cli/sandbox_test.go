package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/netproxy"
	"github.com/grub-dev/grub/internal/sandbox"
)

// runOn runs grub in the workspace as on a kernel whose Landlock ABI is
// abi (0: none).
func (e *testEnv) runOn(abi int, args ...string) (code int, stdout, stderr string) {
	ios, _, out, errOut := TestIOStreams()
	f := NewFactory(ios)
	f.Now = func() time.Time { return e.now }
	f.Getenv = e.getenv
	f.Landlock = func() (int, bool) { return abi, abi > 0 }
	code = execute(context.Background(), f, append([]string{"-C", e.root}, args...))
	return code, out.String(), errOut.String()
}

// TestSandboxUnavailable: where the kernel cannot enforce what was asked
// for explicitly, start, resume and edit refuse with exit 2 before
// anything runs; the default degrades to off with one warning.
func TestSandboxUnavailable(t *testing.T) {
	tests := []struct {
		name string
		abi  int
		args []string
		msg  string
	}{
		{"workspace-write without Landlock", 0, []string{"start", "g", "--agent-cmd", "true", "--sandbox", "workspace-write"}, "--sandbox=workspace-write needs Landlock"},
		{"read-only without Landlock", 0, []string{"start", "g", "--agent-cmd", "true", "--sandbox", "read-only"}, "--sandbox=read-only needs Landlock"},
		{"no-network below ABI 4", 3, []string{"start", "g", "--agent-cmd", "true", "--no-network"}, "--no-network needs Landlock ABI 4"},
		{"edit to workspace-write without Landlock", 0, []string{"edit", "0a1b2c3d", "--sandbox", "workspace-write"}, "needs Landlock"},
		{"resume with read-only without Landlock", 0, []string{"resume", "0a1b2c3d", "--sandbox", "read-only"}, "needs Landlock"},
		{"allow-domain below ABI 4", 3, []string{"start", "g", "--agent-cmd", "true", "--allow-domain", "example.com"}, "--allow-domain needs Landlock ABI 4"},
		{"allow-domain without Landlock, sandbox off", 0, []string{"start", "g", "--agent-cmd", "true", "--sandbox", "off", "--allow-domain", "example.com"}, "--allow-domain needs Landlock ABI 4"},
		{"allow-domain with no-network", 7, []string{"start", "g", "--agent-cmd", "true", "--no-network", "--allow-domain", "example.com"}, "cannot be combined"},
		{"edit to allow-domain below ABI 4", 3, []string{"edit", "0a1b2c3d", "--allow-domain", "@go"}, "--allow-domain needs Landlock ABI 4"},
		{"resume with allow-domain below ABI 4", 3, []string{"resume", "0a1b2c3d", "--allow-domain", "@go"}, "--allow-domain needs Landlock ABI 4"},
		{"bad allow-domain pattern", 7, []string{"start", "g", "--agent-cmd", "true", "--allow-domain", "exa mple.com"}, "not allowed in a host name"},
		{"unknown mode", 7, []string{"start", "g", "--agent-cmd", "true", "--sandbox", "strict"}, `unknown sandbox mode "strict"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.task("0a1b2c3d", time.Minute, nil)
			before := e.stateBytes("0a1b2c3d")
			code, _, errOut := e.runOn(tt.abi, tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %q", code, errOut, tt.msg)
			}
			if string(e.stateBytes("0a1b2c3d")) != string(before) {
				t.Error("a refused sandbox changed the task")
			}
			if tasks, _ := e.store.List(); len(tasks) != 1 {
				t.Errorf("a refused start created a task: %d tasks", len(tasks))
			}
		})
	}
}

func TestSandboxDefaultDegradesWithOneWarning(t *testing.T) {
	e := newTestEnv(t)
	code, _, errOut := e.runOn(0, "start", "g", "--agent-cmd", "exit 3", "--max-init-fail", "1")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (the agent fails); stderr %s", code, errOut)
	}
	if n := strings.Count(errOut, "warning: Landlock is not available here"); n != 1 {
		t.Errorf("%d warnings about Landlock, want 1:\n%s", n, errOut)
	}
	code, out, _ := e.runOn(0, "status")
	if code != 0 || !strings.Contains(out, "sandbox      off (default for --agent command (no Landlock here))") {
		t.Errorf("status (exit %d):\n%s", code, out)
	}
	// Nothing was stored: on a kernel with Landlock the task gets the
	// default there.
	tasks, _ := e.store.List()
	if st := e.state(tasks[0].ID); st.Sandbox.Mode != "" {
		t.Errorf("stored mode %q, want the default (empty)", st.Sandbox.Mode)
	}
}

func TestResolveSandbox(t *testing.T) {
	home := "/home/u"
	getenv := func(k string) string { return map[string]string{"HOME": home, "CODEX_HOME": "/c"}[k] }
	with := func(abi int) landlockProbe { return func() (int, bool) { return abi, abi > 0 } }
	filter, _ := sandbox.FilterSupported()
	tests := []struct {
		name      string
		sb        harness.Sandbox
		kind      harness.AgentKind
		abi       int
		mode      sandbox.Mode
		from      string
		writable  []string
		confines  bool
		warnsAbi0 bool
	}{
		{"openai default", harness.Sandbox{}, harness.AgentOpenAI, 6, sandbox.ModeWorkspaceWrite, "default for --agent openai", nil, true, false},
		{"command default", harness.Sandbox{}, harness.AgentCommand, 6, sandbox.ModeWorkspaceWrite, "default for --agent command", nil, true, false},
		{"claude is opt-in", harness.Sandbox{}, harness.AgentClaude, 6, sandbox.ModeOff, "default for --agent claude", nil, false, false},
		{"claude asked for", harness.Sandbox{Mode: "workspace-write"}, harness.AgentClaude, 6, sandbox.ModeWorkspaceWrite, "--sandbox",
			[]string{"/home/u/.claude", "/home/u/.claude.json"}, true, false},
		{"codex asked for", harness.Sandbox{Mode: "workspace-write", Allow: []string{"/x"}}, harness.AgentCodex, 6, sandbox.ModeWorkspaceWrite, "--sandbox",
			[]string{"/x", "/c"}, true, false},
		// Below ABI 9, or in mode off, --no-network refuses Unix sockets
		// altogether (or, without seccomp, leaves UDP open): start says so.
		{"codex no network only", harness.Sandbox{NoNetwork: true}, harness.AgentCodex, 6, sandbox.ModeOff, "default for --agent codex", nil, true, true},
		{"no network on ABI 9", harness.Sandbox{NoNetwork: true}, harness.AgentCommand, 9, sandbox.ModeWorkspaceWrite, "default for --agent command", nil, true, !filter},
		{"no Landlock", harness.Sandbox{}, harness.AgentOpenAI, 0, sandbox.ModeOff, "default for --agent openai (no Landlock here)", nil, false, true},
		// Below ABI 6 nothing stops a command from signalling grub: start
		// prints the warning once.
		{"no signal scope", harness.Sandbox{}, harness.AgentCommand, 5, sandbox.ModeWorkspaceWrite, "default for --agent command", nil, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := resolveSandbox(tt.sb, tt.kind, "/ws", getenv, with(tt.abi))
			if err != nil {
				t.Fatal(err)
			}
			if s.Policy.Mode != tt.mode || s.From != tt.from || s.Policy.Confines() != tt.confines {
				t.Errorf("mode %s from %q confines %v; want %s from %q confines %v", s.Policy.Mode, s.From, s.Policy.Confines(), tt.mode, tt.from, tt.confines)
			}
			for _, w := range tt.writable {
				if !slices.Contains(s.Policy.Writable, w) {
					t.Errorf("writable %v lacks %s", s.Policy.Writable, w)
				}
			}
			if (s.Warning != "") != tt.warnsAbi0 {
				t.Errorf("warning %q", s.Warning)
			}
			wrap := s.wrapper("/bin/grub")
			if (wrap != nil) != tt.confines {
				t.Fatalf("wrapper set = %v, want %v", wrap != nil, tt.confines)
			}
			if wrap != nil {
				argv := wrap([]string{"sh", "-c", "x"}).Argv
				if argv[0] != "/bin/grub" || argv[1] != sandbox.ExecCommand || !slices.Equal(argv[len(argv)-3:], []string{"sh", "-c", "x"}) {
					t.Errorf("wrapped argv %q", argv)
				}
			}
		})
	}
}

func TestScrubbedEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-1")
	t.Setenv("X_TOKEN", "xt")
	t.Setenv("GRUB_TEST_PLAIN", "p")
	env := sandboxSetup{PassEnv: []string{"X_TOKEN"}}.scrubbedEnv()
	if slices.Contains(env, "OPENAI_API_KEY=sk-1") || !slices.Contains(env, "X_TOKEN=xt") || !slices.Contains(env, "GRUB_TEST_PLAIN=p") {
		t.Errorf("scrubbed environment: %q", env)
	}
}

func TestConfigSandbox(t *testing.T) {
	e := newTestEnv(t)
	for _, abi := range []int{0, 3, 6} {
		code, out, _ := e.runOn(abi, "config", "--json")
		if code != 0 {
			t.Fatalf("config --json exit %d", code)
		}
		var c configOutput
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		s := c.Sandbox
		switch {
		case abi == 0 && (s.Mode != "off" || len(s.Writable) != 0 || s.Warning == ""):
			t.Errorf("no Landlock: %+v", s)
		case abi > 0 && (s.Mode != "workspace-write" || s.LandlockABI != abi || s.NoNetwork != (abi >= 4) || !slices.Contains(s.Writable, e.root)):
			t.Errorf("ABI %d: %+v", abi, s)
		}
		code, out, _ = e.runOn(abi, "config")
		if code != 0 || !strings.Contains(out, "sandbox ") || !strings.Contains(out, "Landlock") {
			t.Errorf("config (ABI %d):\n%s", abi, out)
		}
	}
}

func TestSandboxFlagsRelativeAllow(t *testing.T) {
	var got *StartOptions
	ios, _, _, _ := TestIOStreams()
	f := NewFactory(ios)
	cmd := NewCmdStart(f, func(o *StartOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"g", "--agent-cmd", "x", "--sandbox-allow", "rel", "--sandbox-allow", "/abs", "--pass-env", "GH_TOKEN", "--no-network", "--sandbox", "read-only"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Abs("rel")
	sb := got.Sandbox
	if sb.Mode != "read-only" || !slices.Equal(sb.Allow, []string{want, "/abs"}) || !sb.NoNetwork || !slices.Equal(sb.PassEnv, []string{"GH_TOKEN"}) {
		t.Errorf("sandbox settings %+v", sb)
	}
}

// TestAllowDomainFlags: --allow-domain keeps the patterns as given, once
// each, and ” clears the list.
func TestAllowDomainFlags(t *testing.T) {
	parse := func(args ...string) harness.Sandbox {
		t.Helper()
		var got *StartOptions
		ios, _, _, _ := TestIOStreams()
		cmd := NewCmdStart(NewFactory(ios), func(o *StartOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{"g", "--agent-cmd", "x"}, args...))
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return got.Sandbox
	}
	sb := parse("--allow-domain", "@go", "--allow-domain", "*.Example.com", "--allow-domain", "@go")
	if !slices.Equal(sb.AllowDomains, []string{"@go", "*.Example.com"}) {
		t.Errorf("allow-domain %q", sb.AllowDomains)
	}
	if sb := parse("--allow-domain", ""); sb.AllowDomains != nil {
		t.Errorf("'' left %q", sb.AllowDomains)
	}
	if sameSandbox(harness.Sandbox{AllowDomains: []string{"a.example"}}, harness.Sandbox{}) {
		t.Error("sameSandbox ignores the allowlist")
	}
}

// TestResolveSandboxAllowlist: an allowlist keeps a mode-off agent
// (claude) wrapped once the proxy's port is known, and the port is the
// policy's.
func TestResolveSandboxAllowlist(t *testing.T) {
	sb := harness.Sandbox{AllowDomains: []string{"api.example.com"}}
	setup, err := resolveSandbox(sb, harness.AgentClaude, t.TempDir(), func(string) string { return "" }, func() (int, bool) { return 7, true })
	if err != nil {
		t.Fatal(err)
	}
	if setup.Allow == nil || setup.Policy.Mode != sandbox.ModeOff || setup.wrapper("/grub") != nil {
		t.Fatalf("before the proxy: %+v", setup)
	}
	px, err := netproxy.Start(netproxy.Config{Allow: setup.Allow})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	port := strconv.Itoa(px.Port())
	if p := setup.withProxy(px).Policy; p.ProxyPort != px.Port() || !p.Confines() {
		t.Fatalf("with the proxy: %+v", p)
	}
	if argv := setup.withProxy(px).wrapper("/grub")([]string{"claude"}); !slices.Contains(argv.Argv, "--proxy-port="+port) {
		t.Fatalf("wrapped claude: %q", argv.Argv)
	}
}

// The sandbox view reads the command's environment (Factory.Getenv), not
// the process's.
func TestSandboxViewUsesTheFactoryEnv(t *testing.T) {
	st := &harness.State{Agent: harness.Agent{Kind: harness.AgentClaude}, Sandbox: harness.Sandbox{Mode: "workspace-write"}}
	var asked []string
	getenv := func(k string) string { asked = append(asked, k); return "" }
	v := newSandboxView(st, t.TempDir(), getenv, func() (int, bool) { return 4, true })
	if v.Mode != "workspace-write" || !slices.Contains(asked, "HOME") {
		t.Errorf("view %+v, asked %v; want the factory's environment consulted", v, asked)
	}
}

// --sandbox-allow-git is a sandbox setting like the others: edit stores
// it in state.json (and =false clears it), status shows it, and
// resolveSandbox carries it to the run.
func TestSandboxAllowGit(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	if code, _, errOut := e.run("edit", "--sandbox-allow-git"); code != 0 {
		t.Fatalf("edit --sandbox-allow-git: exit %d: %s", code, errOut)
	}
	st := e.state("0a1b2c3d")
	if !st.Sandbox.AllowGit {
		t.Fatalf("state's sandbox %+v, want allowGit", st.Sandbox)
	}
	v := newSandboxView(st, t.TempDir(), nil, func() (int, bool) { return 4, true })
	if !v.AllowGit || !strings.Contains(v.line(), ".git writable but its hooks and config (--sandbox-allow-git)") {
		t.Errorf("view %+v, line %q", v, v.line())
	}
	setup, err := resolveSandbox(st.Sandbox, harness.AgentCommand, t.TempDir(), func(string) string { return "" }, func() (int, bool) { return 4, true })
	if err != nil || !setup.AllowGit {
		t.Errorf("resolveSandbox: %+v, %v", setup, err)
	}
	if code, _, errOut := e.run("edit", "--sandbox-allow-git=false"); code != 0 {
		t.Fatalf("edit --sandbox-allow-git=false: exit %d: %s", code, errOut)
	}
	if e.state("0a1b2c3d").Sandbox.AllowGit {
		t.Error("allowGit still set after --sandbox-allow-git=false")
	}
}

// TestWarnReadable: without namespaces the run names the credentials
// that exist and stay readable, and says nothing when none exists.
func TestWarnReadable(t *testing.T) {
	home := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Workspace: t.TempDir(), Hide: sandbox.CredentialPaths(home)}
	var b strings.Builder
	warnReadable(&b, p)
	if b.Len() != 0 {
		t.Errorf("nothing to hide, yet: %q", b.String())
	}
	netrc := filepath.Join(home, ".netrc")
	if err := os.WriteFile(netrc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	warnReadable(&b, p)
	if got := b.String(); !strings.Contains(got, "cannot hide credentials") || !strings.Contains(got, netrc) {
		t.Errorf("warning %q; want it to name %s", got, netrc)
	}
}

// TestHiddenPaths: the credentials under $HOME, then the task's own;
// a hidden path holding the workspace and a shown path inside a folder
// hidden as a whole are usage errors.
func TestHiddenPaths(t *testing.T) {
	root := "/w/proj"
	getenv := func(k string) string { return map[string]string{"HOME": "/h"}[k] }
	hide, show, err := hiddenPaths(harness.Sandbox{Hide: []string{"secrets", "/srv/key"}, Show: []string{"/h/.ssh"}}, root, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(hide, "/h/.ssh") || !slices.Contains(hide, "/h/.cargo/credentials*") || !slices.Contains(hide, "/w/proj/secrets") || !slices.Contains(hide, "/srv/key") {
		t.Errorf("hide = %q", hide)
	}
	if !slices.Equal(show, []string{"/h/.ssh"}) {
		t.Errorf("show = %q", show)
	}
	for _, sb := range []harness.Sandbox{{Hide: []string{"/w"}}, {Hide: []string{"."}}, {Show: []string{"/h/.ssh/config"}}} {
		var usage *UsageError
		if _, _, err := hiddenPaths(sb, root, getenv); !errors.As(err, &usage) {
			t.Errorf("%+v: error %v; want a usage error", sb, err)
		}
	}
}
