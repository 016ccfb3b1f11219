//go:build realagents

package agentstub

// The real-client test (make test-real-agents): grub runs a whole task
// with the real Claude Code and the real Codex CLI, each pointed at the
// stub, and the test checks the task completes with the usage and cost the
// stub sent. GRUB_REAL_AGENTS_BIN names the folder holding the `claude` and
// `codex` programs (scripts/install-real-agents.sh prints it).
//
// Nothing leaves the machine: the programs get a fresh HOME, no real key,
// their telemetry, error reporting and update checks off, and every proxy
// variable pointing at a trap that records and refuses any connection,
// which the test requires to stay unused (NO_PROXY lets them reach the
// stub on 127.0.0.1).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// claudeModel is a model whose price Claude Code knows, so that it
	// reports a cost: $3 per million input tokens, $3.75 per million
	// written to the cache, $0.30 per million read from it, $15 per
	// million output tokens.
	claudeModel = "claude-sonnet-4-5"
	// codexModel is a model in Codex's catalogue (no metadata warning).
	codexModel = "gpt-5.5"
	// stubKey is the key the programs send; it is not a key anywhere.
	stubKey = "stub-key-not-a-real-key"
)

// claudeCost is what Claude Code charges for u at claudeModel's prices.
func claudeCost(t Totals) float64 {
	return (float64(t.Input)*3 + float64(t.CacheCreation)*3.75 + float64(t.CacheRead)*0.30 + float64(t.Output)*15) / 1e6
}

func realBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("GRUB_REAL_AGENTS_BIN")
	if dir == "" {
		t.Fatal("GRUB_REAL_AGENTS_BIN is not set: run make test-real-agents (it installs the CLIs and sets it)")
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (run scripts/install-real-agents.sh)", name, err)
	}
	return p
}

var (
	grubOnce sync.Once
	grubPath string
	grubErr  error
)

// buildGrub builds grub once for the whole run.
func buildGrub(t *testing.T) string {
	t.Helper()
	grubOnce.Do(func() {
		dir, err := os.MkdirTemp("", "grub-realagents-")
		if err != nil {
			grubErr = err
			return
		}
		grubPath = filepath.Join(dir, "grub")
		out, err := exec.Command("go", "build", "-o", grubPath, "github.com/grub-dev/grub/cmd/grub").CombinedOutput()
		if err != nil {
			grubErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if grubErr != nil {
		t.Fatal(grubErr)
	}
	return grubPath
}

// trap is a proxy that refuses every connection and remembers what was
// asked of it.
type trap struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func startTrap(t *testing.T) *trap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &trap{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			tr.mu.Lock()
			tr.seen = append(tr.seen, strings.TrimSpace(line))
			tr.mu.Unlock()
			_, _ = c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if len(tr.seen) > 0 {
			t.Errorf("something tried to leave the machine through the proxy: %q", tr.seen)
		}
	})
	return tr
}

func (tr *trap) url() string { return "http://" + tr.ln.Addr().String() }

// hermeticEnv is the environment of grub and the programs: a fresh home,
// no key but the stub's, telemetry off, every proxy the trap.
func hermeticEnv(t *testing.T, home string, tr *trap, extra ...string) []string {
	t.Helper()
	env := []string{
		"PATH=" + os.Getenv("PATH"), // git, node, sh
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
		"LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=grub test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=grub test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		// Claude Code: its own config folder, no telemetry, error
		// reports, update checks or other non-essential traffic.
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// Codex: its own home (config.toml there turns analytics and
		// OpenTelemetry off and names the stub provider).
		"CODEX_HOME=" + filepath.Join(home, ".codex"),
		"STUB_API_KEY=" + stubKey,
	}
	for _, v := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"} {
		env = append(env, v+"="+tr.url())
	}
	env = append(env, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	return append(env, extra...)
}

// codexConfig writes $CODEX_HOME/config.toml for a stub at baseURL
// (…/v1). retries 0 makes a failing stub fail at once; a negative value
// leaves Codex's default retries.
func codexConfig(t *testing.T, home, baseURL string, retries int) {
	t.Helper()
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	retryLines := ""
	if retries >= 0 {
		retryLines = fmt.Sprintf("request_max_retries = %d\nstream_max_retries = %d\n", retries, retries)
	}
	cfg := fmt.Sprintf(`model = %q
model_provider = "stub"
check_for_update_on_startup = false

[model_providers.stub]
name = "stub"
base_url = %q
env_key = "STUB_API_KEY"
wire_api = "responses"
%s
[features]
plugins = false

[analytics]
enabled = false

[otel]
exporter = "none"
`, codexModel, baseURL, retryLines)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// teeProgram writes a wrapper around bin that appends its argv (one line
// per run) to <log>.argv and its standard output to log, so that the test
// sees what the real program printed to grub.
func teeProgram(t *testing.T, dir, bin, log string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.Base(bin)+"-tee")
	script := fmt.Sprintf("#!/usr/bin/env bash\nprintf '%%s\\n' \"$*\" >> %q\n%q \"$@\" | tee -a %q\nexit \"${PIPESTATUS[0]}\"\n",
		log+".argv", bin, log)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// newRepo makes a git repository with one commit.
func newRepo(t *testing.T, env []string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("a workspace for the real-agents test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-qm", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// startStub serves the stub on 127.0.0.1, logging to the test.
func startStub(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	cfg.Log = testLog{t}
	s := New(cfg)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log("stub: " + strings.TrimSpace(string(b)))
	return len(b), nil
}

// grubState is what the test reads from state.json.
type grubState struct {
	Status string `json:"status"`
	Usage  struct {
		InputTokens       int64    `json:"inputTokens"`
		CachedInputTokens int64    `json:"cachedInputTokens"`
		OutputTokens      int64    `json:"outputTokens"`
		Requests          int64    `json:"requests"`
		TokensUsed        int64    `json:"tokensUsed"`
		CostUSD           *float64 `json:"costUSD"`
	} `json:"usage"`
}

// runTask runs `grub start` in repo and returns the task's state.
func runTask(t *testing.T, repo string, env []string, args ...string) grubState {
	t.Helper()
	grub := buildGrub(t)
	cmd := exec.Command(grub, append([]string{"start", "write two marker files", "--min-features", "2",
		"--max-iter", "8", "--turn-timeout", "5m"}, args...)...)
	cmd.Dir, cmd.Env = repo, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("grub start: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	states, _ := filepath.Glob(filepath.Join(repo, ".grub", "*", "state.json"))
	if len(states) != 1 {
		t.Fatalf("want one task's state.json, found %v", states)
	}
	data, rerr := os.ReadFile(states[0])
	if rerr != nil {
		t.Fatal(rerr)
	}
	var st grubState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state.json: %v", err)
	}
	if st.Status != "complete" || err != nil {
		t.Fatalf("the task ended %q (grub: %v); want complete", st.Status, err)
	}
	return st
}

// jsonLines decodes every line of path that is a JSON object.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(bytes.TrimSpace(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func num(m map[string]any, path ...string) float64 {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return 0
		}
		v = mm[k]
	}
	f, _ := v.(float64)
	return f
}

// checkStubRequests fails on a request the stub did not serve as a model
// turn (a probe of another path) and on side requests that are not a grub
// turn, which would make the exact totals depend on the program's habits.
func checkStubRequests(t *testing.T, s *Server, path string) {
	t.Helper()
	for _, r := range s.Requests() {
		if r.Path != path {
			t.Errorf("unexpected request %s %s", r.Method, r.Path)
		}
		if r.Action.Text == "OK." {
			t.Errorf("a request that was not a grub turn reached the stub: %.300s", r.Body)
		}
	}
}

func TestClaudeCompletesTask(t *testing.T) {
	claude := realBin(t, "claude")
	tr := startTrap(t)
	stub, hs := startStub(t, Config{API: Anthropic})
	home, logs := t.TempDir(), t.TempDir()
	env := hermeticEnv(t, home, tr, "ANTHROPIC_BASE_URL="+hs.URL, "ANTHROPIC_API_KEY="+stubKey)
	repo := newRepo(t, env)
	out := filepath.Join(logs, "claude.out")
	bin := teeProgram(t, logs, claude, out)

	st := runTask(t, repo, env, "--agent", "claude", "--agent-bin", bin, "--model", claudeModel)
	tot := stub.Totals()
	checkStubRequests(t, stub, "/v1/messages")
	if tot.Responses != 6 {
		t.Errorf("the stub answered %d model requests; want 6 (two per turn, three turns)", tot.Responses)
	}

	// What Claude Code itself reported: one result per turn.
	var results []map[string]any
	for _, m := range jsonLines(t, out) {
		if m["type"] == "result" {
			results = append(results, m)
		}
	}
	if len(results) != 3 {
		t.Fatalf("claude printed %d result objects over the task; want 3", len(results))
	}
	var reported float64 // summed in turn order, as grub sums it
	var in, cc, cr, o float64
	for _, r := range results {
		reported += num(r, "total_cost_usd")
		in += num(r, "usage", "input_tokens")
		cc += num(r, "usage", "cache_creation_input_tokens")
		cr += num(r, "usage", "cache_read_input_tokens")
		o += num(r, "usage", "output_tokens")
	}
	t.Run("claude reports what the stub sent", func(t *testing.T) {
		if int64(in) != tot.Input || int64(cc) != tot.CacheCreation || int64(cr) != tot.CacheRead || int64(o) != tot.Output {
			t.Errorf("claude's results add up to input %v, cache creation %v, cache reads %v, output %v; the stub sent %+v", in, cc, cr, o, tot)
		}
		if want := claudeCost(tot); fmt.Sprintf("%.10f", reported) != fmt.Sprintf("%.10f", want) {
			t.Errorf("claude reported $%.10f in total; %s's prices give $%.10f", reported, claudeModel, want)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		u := st.Usage
		wantIn := tot.Input + tot.CacheCreation + tot.CacheRead
		if u.InputTokens != wantIn || u.CachedInputTokens != tot.CacheRead || u.OutputTokens != tot.Output ||
			u.TokensUsed != wantIn-tot.CacheRead+tot.Output {
			t.Errorf("grub recorded %+v; the stub sent %+v (input %d, cached %d, output %d, used %d)",
				u, tot, wantIn, tot.CacheRead, tot.Output, wantIn-tot.CacheRead+tot.Output)
		}
		if u.Requests != int64(tot.Responses) {
			t.Errorf("grub recorded %d requests; claude made %d model requests", u.Requests, tot.Responses)
		}
	})
	t.Run("cost", func(t *testing.T) {
		if st.Usage.CostUSD == nil {
			t.Fatalf("grub recorded no cost (state.json usage.costUSD); claude reported $%v", reported)
		}
		if *st.Usage.CostUSD != reported {
			t.Errorf("grub recorded $%v; claude reported $%v", *st.Usage.CostUSD, reported)
		}
	})
}

func TestCodexCompletesTask(t *testing.T) {
	codex := realBin(t, "codex")
	tr := startTrap(t)
	stub, hs := startStub(t, Config{API: Responses})
	home, logs := t.TempDir(), t.TempDir()
	env := hermeticEnv(t, home, tr)
	codexConfig(t, home, hs.URL+"/v1", 0)
	repo := newRepo(t, env)
	out := filepath.Join(logs, "codex.out")
	bin := teeProgram(t, logs, codex, out)

	st := runTask(t, repo, env, "--agent", "codex", "--agent-bin", bin)
	tot := stub.Totals()
	checkStubRequests(t, stub, "/v1/responses")
	if tot.Responses != 6 {
		t.Errorf("the stub answered %d model requests; want 6 (two per turn, three turns)", tot.Responses)
	}

	var in, cached, o float64
	completed := 0
	for _, m := range jsonLines(t, out) {
		if m["type"] == "turn.completed" {
			completed++
			in += num(m, "usage", "input_tokens")
			cached += num(m, "usage", "cached_input_tokens")
			o += num(m, "usage", "output_tokens")
		}
	}
	t.Run("codex reports what the stub sent", func(t *testing.T) {
		if completed != 3 {
			t.Errorf("codex printed %d turn.completed events; want 3", completed)
		}
		if int64(in) != tot.Input || int64(cached) != tot.CacheRead || int64(o) != tot.Output {
			t.Errorf("codex's events add up to input %v, cached %v, output %v; the stub sent %+v", in, cached, o, tot)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		u := st.Usage
		if u.InputTokens != tot.Input || u.CachedInputTokens != tot.CacheRead || u.OutputTokens != tot.Output ||
			u.TokensUsed != tot.Input-tot.CacheRead+tot.Output {
			t.Errorf("grub recorded %+v; the stub sent %+v", u, tot)
		}
	})
	t.Run("no cost", func(t *testing.T) {
		if c := st.Usage.CostUSD; c != nil && *c != 0 {
			t.Errorf("grub recorded a cost of $%v; codex reports none", *c)
		}
	})
}

func init() {
	if runtime.GOOS != "linux" {
		fmt.Fprintln(os.Stderr, "agentstub: the real-agents test is written for Linux")
	}
}
