package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/config"
)

// Every flag of grub start is classified: it needs trust from the
// workspace file (trustKeys) or not (safeKeys). A new flag fails here
// until someone decides.
func TestEveryStartFlagIsClassified(t *testing.T) {
	keys := settingKeys(NewCmdStart(testFactory(), nil).LocalNonPersistentFlags())
	for k := range keys {
		_, trust := trustKeys[k]
		if trust == slices.Contains(safeKeys, k) {
			t.Errorf("grub start --%s: list it in exactly one of trustKeys and safeKeys (trust.go)", k)
		}
	}
	for k := range trustKeys {
		if _, ok := keys[k]; !ok {
			t.Errorf("trustKeys names %s, which is not a key", k)
		}
	}
	for _, k := range []string{"on-turn", "on-stop", "agent-cmd", "agent-bin", "agent-args", "sandbox", "sandbox-allow", "pass-env", "base-url"} {
		if _, ok := trustKeys[k]; !ok {
			t.Errorf("%s must need trust", k)
		}
	}
	if config.WorkspaceFile != harness.GrubDirName+"/"+harness.FileWorkspaceConfig {
		t.Errorf("config.WorkspaceFile %q is not harness's name", config.WorkspaceFile)
	}
}

// A base-url from an untrusted workspace file never receives the API key:
// start refuses before any request.
func TestUntrustedBaseURLGetsNoRequest(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	e := newTestEnv(t)
	if err := os.MkdirAll(filepath.Join(e.root, ".grub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "base-url = \"" + srv.URL + "/v1\"\nmodel = \"m\"\n"
	if err := os.WriteFile(filepath.Join(e.root, ".grub", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, errOut := TestIOStreams()
	f := NewFactory(ios)
	f.Now = func() time.Time { return e.now }
	f.Getenv = func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-secret"
		}
		return e.getenv(k)
	}
	code := execute(context.Background(), f, []string{"-C", e.root, "start", "a goal", "--max-iter", "1", "--sandbox", "off"})
	if code != ExitUsage || !strings.Contains(errOut.String(), "sets base-url") {
		t.Errorf("exit %d, stderr %q; want 2 naming base-url", code, errOut)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the untrusted file's server got %d requests", n)
	}
	if tasks, _ := e.store.List(); len(tasks) != 0 {
		t.Errorf("a refused start created %d tasks", len(tasks))
	}
}

// A planted task (no trust record) with a hook is refused by resume, and
// one without such settings resumes.
func TestPlantedTaskNeedsTrust(t *testing.T) {
	e := newTestEnv(t)
	e.plant("0a1b2c3d", time.Hour, func(st *harness.State) {
		st.Agent = harness.Agent{Kind: harness.AgentCommand, Command: "false"}
		st.Hooks.OnTurn = "touch " + filepath.Join(e.home, "RAN")
	})
	code, _, errOut := e.run("resume", "0a1b2c3d")
	if code != ExitUsage || !strings.Contains(errOut, "grub config trust --task 0a1b2c3d") || !strings.Contains(errOut, "on-turn") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the hook and the trust command", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.home, "RAN")); err == nil {
		t.Error("the planted hook ran")
	}
	code, _, errOut = e.run("config", "trust", "--task", "0a1b2c3d")
	if code != 0 {
		t.Fatalf("trust: exit %d, %s", code, errOut)
	}
	if tr, err := e.store.TaskTrusted(e.state("0a1b2c3d")); tr != harness.Trusted || err != nil {
		t.Errorf("after grub config trust --task: trusted %v, %v", tr, err)
	}
	e.plant("0a1b2c3e", time.Hour, nil) // the built-in agent, no hook: nothing to trust
	if tr, err := e.store.TaskTrusted(e.state("0a1b2c3e")); tr != harness.Trusted || err != nil {
		t.Errorf("a task without settings that need trust: trusted %v, %v", tr, err)
	}
}

// Only the values that tighten need no trust.
func TestNeedsTrustValues(t *testing.T) {
	tests := []struct {
		key, value string
		want       bool
	}{
		{"agent", "openai", false},
		{"agent", "claude", true},
		{"agent", "command", true},
		{"no-network", "true", false},
		{"no-network", "false", true},
		{"sandbox-allow-git", "false", false},
		{"sandbox-allow-git", "true", true},
		{"sandbox", "read-only", true},
		{"on-turn", "", true},
		{"max-iter", "40", false},
		{"model", "gpt", false},
	}
	for _, tt := range tests {
		if got := needsTrust(config.Setting{Key: tt.key, Values: []string{tt.value}}); got != tt.want {
			t.Errorf("%s = %q: needs trust %v, want %v", tt.key, tt.value, got, tt.want)
		}
	}
}
