package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/grub-dev/grub/harness"
)

// defaultsEnv is a workspace and a home with their defaults files.
type defaultsEnv struct {
	root, home string
	env        map[string]string
}

func newDefaultsEnv(t *testing.T, workspace, user string) *defaultsEnv {
	t.Helper()
	d := &defaultsEnv{root: t.TempDir(), home: t.TempDir()}
	d.env = map[string]string{"HOME": d.home}
	write := func(path, text string) {
		if text == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(d.root, ".grub", "config.toml"), workspace)
	write(filepath.Join(d.home, ".config", "grub", "config.toml"), user)
	if workspace != "" {
		d.trust(t)
	}
	return d
}

// trust records the workspace file as it is now as trusted, as grub config
// trust does.
func (d *defaultsEnv) trust(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.root, ".grub", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	list := harness.TrustList{Path: trustListPath(func(k string) string { return d.env[k] })}
	if err := list.Trust(workspaceConfigPath(d.root), hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
}

// start parses grub start's flags in the environment and returns the
// options start would run with.
func (d *defaultsEnv) start(t *testing.T, args ...string) (*StartOptions, error) {
	t.Helper()
	f := testFactory()
	f.WorkDir = d.root
	f.Getenv = func(k string) string { return d.env[k] }
	var got *StartOptions
	err := runCmd(t, NewCmdStart(f, func(o *StartOptions) error { got = o; return nil }), append(args, "a goal"))
	return got, err
}

func TestDefaultsPrecedence(t *testing.T) {
	const user = "agent = \"openai\"\nmodel = \"user-model\"\nmax-iter = 11\nmax-fail = 4\ntoken-budget = 1000\nlocale = \"zh\"\n"
	const workspace = "model = \"team-model\"\nmax-iter = 22\n"
	tests := []struct {
		name      string
		workspace string
		user      string
		env       map[string]string
		args      []string
		model     string
		maxIter   int
		maxFail   int
	}{
		{name: "built-in defaults", env: map[string]string{}, args: []string{"--model", "m"}, model: "m", maxIter: 25, maxFail: 3},
		{name: "user file over defaults", user: user, model: "user-model", maxIter: 11, maxFail: 4},
		{name: "workspace file over user file", user: user, workspace: workspace, model: "team-model", maxIter: 22, maxFail: 4},
		{name: "environment over files", user: user, workspace: workspace, env: map[string]string{"GRUB_MODEL": "env-model"}, model: "env-model", maxIter: 22, maxFail: 4},
		{name: "flags over everything", user: user, workspace: workspace, env: map[string]string{"GRUB_MODEL": "env-model"},
			args: []string{"--model", "flag-model", "--max-iter", "33"}, model: "flag-model", maxIter: 33, maxFail: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDefaultsEnv(t, tt.workspace, tt.user)
			for k, v := range tt.env {
				d.env[k] = v
			}
			got, err := d.start(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got.Agent.Model != tt.model || got.Limits.MaxIterations != tt.maxIter || got.Limits.MaxConsecutiveFailures != tt.maxFail {
				t.Errorf("model %q, max-iter %d, max-fail %d; want %q, %d, %d", got.Agent.Model, got.Limits.MaxIterations,
					got.Limits.MaxConsecutiveFailures, tt.model, tt.maxIter, tt.maxFail)
			}
		})
	}
}

func TestDefaultsKinds(t *testing.T) {
	d := newDefaultsEnv(t, `agent = "claude"
agent-args = "-c model_provider=local"
turn-timeout = "45m"
time-budget = "2h"
cost-budget = 12.5
no-network = true
sandbox = "read-only"
sandbox-allow = ["cache", "/srv/shared"]
pass-env = ["GH_TOKEN", "NPM_TOKEN"]
no-commit = true
heartbeat = "1m"
`, "model = \"opus\"\n")
	got, err := d.start(t)
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent.Kind != harness.AgentClaude || got.Agent.Model != "opus" || !slices.Equal(got.Agent.Args, []string{"-c", "model_provider=local"}) {
		t.Errorf("agent = %+v", got.Agent)
	}
	l := got.Limits
	if l.TurnTimeoutSeconds != 45*60 || l.TimeBudgetSeconds != 7200 || l.CostBudgetUSD != 12.5 {
		t.Errorf("limits = %+v", l)
	}
	sb := got.Sandbox
	if sb.Mode != "read-only" || !sb.NoNetwork || !slices.Equal(sb.Allow, []string{filepath.Join(d.root, "cache"), "/srv/shared"}) ||
		!slices.Equal(sb.PassEnv, []string{"GH_TOKEN", "NPM_TOKEN"}) {
		t.Errorf("sandbox = %+v", sb)
	}
	if !got.NoCommit || got.Heartbeat.String() != "1m0s" {
		t.Errorf("no-commit %v, heartbeat %s", got.NoCommit, got.Heartbeat)
	}

	// A flag still wins over the file, for lists and booleans too.
	got, err = d.start(t, "--no-network=false", "--pass-env", "X_TOKEN", "--sandbox", "off")
	if err != nil {
		t.Fatal(err)
	}
	if got.Sandbox.NoNetwork || !slices.Equal(got.Sandbox.PassEnv, []string{"X_TOKEN"}) || got.Sandbox.Mode != "off" {
		t.Errorf("sandbox = %+v", got.Sandbox)
	}
}

// A file's agent-cmd alone means agent = "command", as the flag does; a
// file's model does not break a backend that takes none, and --agent-cmd
// on the command line still implies command over a file's agent.
func TestDefaultsAgentCmd(t *testing.T) {
	d := newDefaultsEnv(t, "agent-cmd = \"./agent.sh\"\n", "model = \"gpt-4.1\"\nbase-url = \"http://127.0.0.1:9/v1\"\n")
	got, err := d.start(t)
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent.Kind != harness.AgentCommand || got.Agent.Command != "./agent.sh" || got.Agent.Model != "" || got.Agent.BaseURL != "" {
		t.Errorf("agent = %+v", got.Agent)
	}
	got, err = d.start(t, "--agent", "openai")
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent.Kind != harness.AgentOpenAI || got.Agent.Model != "gpt-4.1" || got.Agent.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("agent = %+v", got.Agent)
	}

	d = newDefaultsEnv(t, "agent = \"claude\"\n", "")
	if got, err = d.start(t, "--agent-cmd", "x"); err != nil || got.Agent.Kind != harness.AgentCommand {
		t.Errorf("--agent-cmd over a file's agent: %+v, %v", got, err)
	}
}

func TestDefaultsErrors(t *testing.T) {
	tests := []struct {
		name, workspace, user string
		want                  []string
	}{
		{name: "unknown key", workspace: "model = \"m\"\n\nmax-iters = 40\n",
			want: []string{".grub/config.toml:3: max-iters: unknown key; did you mean max-iter?"}},
		{name: "unknown key in the user file", user: "modle = \"m\"\n",
			want: []string{"~/.config/grub/config.toml:1: modle: unknown key; did you mean model?"}},
		{name: "string for a number", workspace: "model = \"m\"\nmax-iter = \"forty\"\n",
			want: []string{`.grub/config.toml:2: max-iter: expected an integer, e.g. 40, got the string "forty"`}},
		{name: "bad duration", workspace: "model = \"m\"\nturn-timeout = \"45 minutes\"\n",
			want: []string{`.grub/config.toml:2: turn-timeout: "45 minutes" is not valid: expected a duration in quotes`}},
		{name: "out of range", workspace: "model = \"m\"\nmax-iter = 0\n",
			want: []string{".grub/config.toml:2: max-iter: --max-iter 0: must be at least 1"}},
		{name: "unknown sandbox mode", user: "model = \"m\"\nsandbox = \"strict\"\n",
			want: []string{"~/.config/grub/config.toml:2: sandbox: --sandbox: ", "strict"}},
		{name: "unknown backend", workspace: "agent = \"gpt\"\n",
			want: []string{`.grub/config.toml:1: agent: --agent "gpt": unknown backend; use openai, claude, codex or command`}},
		{name: "bad locale", workspace: "model = \"m\"\nlocale = \"fr\"\n",
			want: []string{`.grub/config.toml:2: locale: --locale "fr": use en or zh`}},
		{name: "not TOML", workspace: "model = \"m\"\nmax-iter: 40\n",
			want: []string{".grub/config.toml:2: not valid TOML"}},
		{name: "json is not a setting", workspace: "json = true\n",
			want: []string{".grub/config.toml:1: json: unknown key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDefaultsEnv(t, tt.workspace, tt.user)
			_, err := d.start(t)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
	// An error about a flag given on the command line is not attributed to
	// a file.
	d := newDefaultsEnv(t, "model = \"m\"\nmax-iter = 5\n", "")
	if _, err := d.start(t, "--max-iter", "0"); err == nil || strings.Contains(err.Error(), "config.toml") {
		t.Errorf("err = %v", err)
	}
}

// Every flag of grub start but --help and --json is a key, with a kind.
func TestSettingKeysFollowStartFlags(t *testing.T) {
	cmd := NewCmdStart(testFactory(), nil)
	keys := settingKeys(cmd.LocalNonPersistentFlags())
	for _, name := range []string{"agent", "model", "base-url", "agent-cmd", "agent-bin", "agent-args", "max-iter", "max-fail",
		"token-budget", "cost-budget", "time-budget", "turn-timeout", "init-timeout", "min-features", "max-features",
		"sandbox", "sandbox-allow", "no-network", "pass-env", "locale", "no-commit"} {
		if _, ok := keys[name]; !ok {
			t.Errorf("no key %s", name)
		}
	}
	for _, name := range []string{"json", "help", "workdir", "goal-file"} {
		if _, ok := keys[name]; ok {
			t.Errorf("%s is a key", name)
		}
	}
	n := 0
	cmd.LocalNonPersistentFlags().VisitAll(func(*pflag.Flag) { n++ })
	if n != len(keys)+2 { // --json, --goal-file
		t.Errorf("%d flags, %d keys", n, len(keys))
	}
}

// TestConfigShowsEnvironmentValues: a setting an environment variable
// gives is listed with that variable's value, not the flag's empty default.
func TestConfigShowsEnvironmentValues(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	store, err := harness.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GRUB_MODEL": "env-model", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	var out bytes.Buffer
	opts := &ConfigOptions{IO: &IOStreams{Out: &out, ErrOut: io.Discard}, Store: func() (*harness.Store, error) { return store, nil },
		Getenv: func(k string) string { return env[k] }, LookPath: func(string) (string, error) { return "", errors.New("none") },
		Landlock: func() (int, bool) { return 0, false }, JSON: true}
	if err := configRun(opts); err != nil {
		t.Fatal(err)
	}
	var got configOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"model": "env-model", "base-url": "http://127.0.0.1:9/v1"}
	for _, s := range got.Settings {
		if w, ok := want[s.Key]; ok {
			if s.Value != w || s.From != envSettings[s.Key] {
				t.Errorf("setting %s = %v (%s), want %q (%s)", s.Key, s.Value, s.From, w, envSettings[s.Key])
			}
			delete(want, s.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("settings missing: %v", want)
	}
}
