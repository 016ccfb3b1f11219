package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/internal/netproxy"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/sandbox"
)

// TestWithNetNamespace: network rules get a network namespace where the
// probe allows one; where it does not, one warning says what Landlock
// alone leaves open; without network rules nothing is probed.
func TestWithNetNamespace(t *testing.T) {
	yes := func() (bool, string) { return true, "" }
	no := func() (bool, string) { return false, "network namespaces are not available (EPERM)" }
	for _, tt := range []struct {
		name  string
		p     sandbox.Policy
		probe func() (bool, string)
		netns bool
		warns string
	}{
		{"no rules", sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite}, nil, false, ""},
		{"no network", sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, NoNetwork: true}, yes, true, ""},
		{"allowlist", sandbox.Policy{Mode: sandbox.ModeOff, ProxyPort: 4321}, yes, true, ""},
		{"no network, no namespace", sandbox.Policy{NoNetwork: true}, no, false,
			"grub: warning: network namespaces are not available (EPERM): --no-network rests on Landlock alone here, which refuses TCP only: UDP (below Landlock ABI 10), Multipath TCP and SCTP still reach the host's loopback listeners and the outside\n"},
		{"allowlist, no namespace", sandbox.Policy{ProxyPort: 4321}, no, false,
			"grub: warning: network namespaces are not available (EPERM): --allow-domain rests on Landlock's port rule alone here: sandboxed commands can connect to any host on port 4321 (the proxy's), and UDP (below Landlock ABI 10), Multipath TCP and SCTP are not restricted\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			probe := tt.probe
			if probe == nil {
				probe = func() (bool, string) { t.Fatal("probed without network rules"); return false, "" }
			}
			got := sandboxSetup{Policy: tt.p}.withNetNamespace(&w, probe)
			if got.Policy.NetNamespace != tt.netns || w.String() != tt.warns {
				t.Errorf("NetNamespace %v, warning %q; want %v, %q", got.Policy.NetNamespace, w.String(), tt.netns, tt.warns)
			}
		})
	}
}

// relayFixture is a run's sandbox with an allowlist, as runTask makes
// it: the proxy, the setup with its port and network namespace, and the
// wrapper whose launcher is this test binary (see TestMain).
type relayFixture struct {
	px      *netproxy.Proxy
	wrap    proc.Wrapper
	env     []string
	ws      string
	allowed string // the URL of an allowed loopback server
}

func newRelayFixture(t *testing.T) relayFixture {
	t.Helper()
	if abi, ok := sandbox.Supported(); !ok || abi < sandbox.MinABINetwork {
		t.Skip("needs Landlock ABI 4")
	}
	if ok, why := sandbox.NetNamespaces(); !ok {
		t.Skip(why)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	t.Cleanup(up.Close)
	allow, err := netproxy.ParseAllowlist([]string{up.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	px, err := netproxy.Start(netproxy.Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	ws, tmp := t.TempDir(), t.TempDir()
	s := sandboxSetup{Policy: sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Workspace: ws}, Allow: allow}.withProxy(px)
	s = s.withNetNamespace(io.Discard, sandbox.NetNamespaces)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a program built with -race (this one, under go test -race)
	// otherwise waits a second at exit.
	env := netproxy.Env([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "TMPDIR=" + tmp, "GOENV=off", "GORACE=atexit_sleep_ms=0"}, px.URL())
	return relayFixture{px: px, wrap: s.wrapper(self), env: env, ws: ws, allowed: up.URL}
}

func (f relayFixture) run(t *testing.T, argv ...string) string {
	t.Helper()
	res, err := proc.Run(context.Background(), proc.Spec{Args: argv, Dir: f.ws, BaseEnv: f.env, Wrap: f.wrap})
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Stdout) + string(res.Stderr)
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("needs /proc/self/fd")
	}
	return len(ents)
}

// TestRelayedProxyKeepsNoDescriptors: commands in their own network
// namespace reach an allowed server through the run's proxy, and are
// refused another host, through the listener their launcher relayed;
// many launches leave grub no more descriptors open than one did (each
// launch's relay and listener are closed when it ends).
func TestRelayedProxyKeepsNoDescriptors(t *testing.T) {
	f := newRelayFixture(t)
	self, _ := os.Executable()
	if out := f.run(t, self, "__fetch", f.allowed+"/"); out != "200 hello\n" {
		t.Fatalf("the allowed server through the relay: %q", out)
	}
	before := openFDs(t)
	const launches = 50
	for range launches {
		if out := f.run(t, self, "__fetch", "http://example.org/"); !strings.HasPrefix(out, "403 ") {
			t.Fatalf("a refused host through the relay: %q", out)
		}
	}
	if got := f.px.TakeRefused(); len(got) != 1 || got[0].Count != launches {
		t.Errorf("refused %v, want example.org ×%d", got, launches)
	}
	// The proxy closes a connection once it sees the command's end go:
	// a few may still be closing.
	if after := openFDs(t); after > before+8 {
		t.Fatalf("%d descriptors open after %d launches, %d before: the launches leak", after, launches, before)
	}
}

// TestRelayEndsWithTheLaunch: a daemon a command leaves behind finds
// nothing listening once the launch has ended: grub closed the relayed
// listener when the launched process ended.
func TestRelayEndsWithTheLaunch(t *testing.T) {
	f := newRelayFixture(t)
	self, _ := os.Executable()
	goFile, result := filepath.Join(f.ws, "daemon-go"), filepath.Join(f.ws, "daemon-result")
	script := `(while [ ! -e "$1" ]; do sleep 0.05; done; "$3" __fetch "$4" > "$2.tmp" 2>&1; mv "$2.tmp" "$2") </dev/null >/dev/null 2>&1 &`
	res, err := proc.Run(context.Background(), proc.Spec{Args: []string{"sh", "-c", script, "sh", goFile, result, self, f.allowed + "/"},
		Dir: f.ws, BaseEnv: f.env, Wrap: f.wrap})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	defer proc.KillGroup(res.Pgid)
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out, err = os.ReadFile(result); err == nil {
			break
		}
	}
	if !strings.Contains(string(out), "connection refused") {
		t.Fatalf("the daemon's request after the launch ended: %q, want connection refused", out)
	}
}
