package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// requireLandlock skips a test the kernel cannot run, saying why.
func requireLandlock(t *testing.T, minABI int) int {
	t.Helper()
	abi, ok := Supported()
	if !ok || abi < minABI {
		t.Skipf("needs Landlock ABI %d; this kernel has %s", minABI, abiName(abi))
	}
	return abi
}

// fixture is a set of directories for one sandboxed command: the
// workspace, a HOME and a TMPDIR of its own, a directory standing for
// /etc and one for a path the user allows, all outside each other.
type fixture struct {
	base, ws, home, tmp, etc, extra string
	env                             []string
	// oneStage starts the launcher as grub does, directly in its
	// namespaces when the policy needs them (InNamespace); otherwise
	// through Wrap's command line, which makes them itself (runStaged).
	oneStage bool
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{
		base:  base,
		ws:    filepath.Join(base, "ws"),
		home:  filepath.Join(base, "home"),
		tmp:   filepath.Join(base, "tmp"),
		etc:   filepath.Join(base, "etc"),
		extra: filepath.Join(base, "extra"),
	}
	for _, d := range []string{f.ws, f.home, f.tmp, f.etc, f.extra} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Only what the command needs: the caches then default under HOME.
	f.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, "TMPDIR=" + f.tmp, "GOENV=off"}
	return f
}

// run runs argv under p through the launcher (this test binary, see
// TestMain) in the workspace, and returns its combined output and exit
// code.
func (f fixture) run(t *testing.T, p Policy, argv ...string) (string, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	full := Wrap(self, p, argv)
	var attr *syscall.SysProcAttr
	if f.oneStage {
		if wrapped, a, ok := InNamespace(self, p, argv); ok {
			full, attr = wrapped, a
		}
	}
	cmd := exec.Command(full[0], full[1:]...)
	cmd.SysProcAttr = attr
	cmd.Dir = f.ws
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("run %q: %v", full, err)
	}
	return string(out), 0
}

// write tries to create path (relative to the workspace when it is
// relative) with the shell, and reports whether the file exists after.
func (f fixture) write(t *testing.T, p Policy, path string) bool {
	t.Helper()
	out, code := f.run(t, p, "sh", "-c", `echo x > "$1"`, "sh", path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.ws, path)
	}
	_, err := os.Stat(path)
	exists := err == nil
	if exists != (code == 0) {
		t.Errorf("write %s: exit %d but file exists=%v; output %q", path, code, exists, out)
	}
	if code != 0 && !strings.Contains(out, "ermission denied") {
		t.Errorf("write %s refused with %q, want permission denied", path, out)
	}
	return exists
}

func TestWorkspaceWrite(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	f := newFixture(t)
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, Writable: []string{f.extra}}
	tests := []struct {
		path string
		want bool
	}{
		{"in-workspace", true},
		{filepath.Join(f.tmp, "temp"), true},
		{filepath.Join(f.home, ".cache", "go-build", "entry"), true}, // created by the launcher
		{filepath.Join(f.home, "go", "pkg", "mod", "entry"), true},
		{filepath.Join(f.home, ".npm", "entry"), true},
		{filepath.Join(f.home, ".cache", "pip", "entry"), true},
		{filepath.Join(f.extra, "allowed"), true},
		{"/dev/null", true},
		{filepath.Join(f.home, ".bashrc"), false},
		{filepath.Join(f.etc, "passwd"), false},
		{"../escape", false},
		{filepath.Join(f.base, "beside-the-workspace"), false},
	}
	for _, tt := range tests {
		if got := f.write(t, p, tt.path); got != tt.want {
			t.Errorf("workspace-write: writing %s allowed=%v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestWorkspaceWriteEverydayWork runs what commands do in a workspace:
// make and remove directories, move files between directories (Landlock's
// "refer" right), and fail to leave through a symlink or a move.
func TestWorkspaceWriteEverydayWork(t *testing.T) {
	requireLandlock(t, 2)
	f := newFixture(t)
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws}
	script := `set -e
mkdir -p a/b c
echo x > a/b/f
mv a/b/f c/f
ln c/f a/hardlink
ln -s c/f link
cat link > /dev/null
echo y > "$TMPDIR/t" && mv "$TMPDIR/t" a/t
rm -r a
echo done`
	if out, code := f.run(t, p, "sh", "-c", script); code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("everyday work in the workspace failed (exit %d): %s", code, out)
	}
	if err := os.Symlink(f.etc, filepath.Join(f.ws, "to-etc")); err != nil {
		t.Fatal(err)
	}
	if f.write(t, p, "to-etc/through-symlink") {
		t.Error("a symlink in the workspace let a command write outside it")
	}
	if out, code := f.run(t, p, "mv", "c/f", f.etc+"/moved"); code == 0 {
		t.Errorf("moving a file out of the workspace worked: %s", out)
	}
}

func TestReadOnly(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	f := newFixture(t)
	p := Policy{Mode: ModeReadOnly, Workspace: f.ws, Writable: []string{f.extra}}
	tests := []struct {
		path string
		want bool
	}{
		{"in-workspace", false},
		{filepath.Join(f.extra, "allowed"), false},
		{filepath.Join(f.home, "file"), false},
		{filepath.Join(f.tmp, "temp"), true},
		{"/dev/null", true},
	}
	for _, tt := range tests {
		if got := f.write(t, p, tt.path); got != tt.want {
			t.Errorf("read-only: writing %s allowed=%v, want %v", tt.path, got, tt.want)
		}
	}
	if out, code := f.run(t, p, "cat", "/etc/hostname", "/proc/self/status"); code != 0 {
		t.Errorf("read-only cannot read: %s", out)
	}
}

func TestOffWritesAnywhere(t *testing.T) {
	f := newFixture(t)
	p := Policy{Mode: ModeOff, Workspace: f.ws}
	for _, path := range []string{filepath.Join(f.home, ".bashrc"), filepath.Join(f.etc, "passwd"), "../escape"} {
		if !f.write(t, p, path) {
			t.Errorf("mode off: writing %s was refused", path)
		}
	}
}

func TestNoNetwork(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	addr := l.Addr().String()
	tests := []struct {
		name   string
		p      Policy
		argv   []string
		wantOK bool
	}{
		{"connect, network allowed", Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws}, []string{self, "__dial", addr}, true},
		{"connect, no network", Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, NoNetwork: true}, []string{self, "__dial", addr}, false},
		{"connect, no network with mode off", Policy{Mode: ModeOff, NoNetwork: true}, []string{self, "__dial", addr}, false},
		{"bind, network allowed", Policy{Mode: ModeReadOnly}, []string{self, "__listen"}, true},
		{"bind, no network", Policy{Mode: ModeReadOnly, NoNetwork: true}, []string{self, "__listen"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := f.run(t, tt.p, tt.argv...)
			if ok := code == 0; ok != tt.wantOK {
				t.Fatalf("exit %d (%s), want success=%v", code, out, tt.wantOK)
			}
			if !tt.wantOK && !strings.Contains(out, "permission denied") {
				t.Errorf("refused with %q, want permission denied", out)
			}
		})
	}
}

// TestProxyPort: with a proxy port (--allow-domain), a command connects
// to that port and no other, and may still listen (the rule does not
// handle bind).
func TestProxyPort(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	serve := func() (net.Listener, int) {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return l, l.Addr().(*net.TCPAddr).Port
	}
	proxy, port := serve()
	other, _ := serve()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	ws := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, ProxyPort: port}
	off := Policy{Mode: ModeOff, ProxyPort: port}
	tests := []struct {
		name   string
		p      Policy
		argv   []string
		wantOK bool
	}{
		{"connect to the proxy", ws, []string{self, "__dial", proxy.Addr().String()}, true},
		{"connect elsewhere", ws, []string{self, "__dial", other.Addr().String()}, false},
		{"connect elsewhere, mode off", off, []string{self, "__dial", other.Addr().String()}, false},
		{"connect to the proxy, mode off", off, []string{self, "__dial", proxy.Addr().String()}, true},
		{"bind", ws, []string{self, "__listen"}, true},
		{"bind, mode off", off, []string{self, "__listen"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := f.run(t, tt.p, tt.argv...)
			if ok := code == 0; ok != tt.wantOK {
				t.Fatalf("exit %d (%s), want success=%v", code, out, tt.wantOK)
			}
			if !tt.wantOK && !strings.Contains(out, "permission denied") {
				t.Errorf("refused with %q, want permission denied", out)
			}
		})
	}
}

// TestLauncherFailsClosed: a confining policy the launcher cannot apply
// (here a workspace that does not exist) stops the command with
// ExitCannotRun and a message, rather than running it unconfined.
func TestLauncherFailsClosed(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	f := newFixture(t)
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: filepath.Join(f.base, "gone") + "/"}
	out, code := f.run(t, p, "sh", "-c", "echo ran")
	if code != ExitCannotRun || strings.Contains(out, "ran") || !strings.Contains(out, "cannot apply the sandbox (mode workspace-write)") {
		t.Errorf("exit %d, output %q; want %d and a message saying the sandbox could not be applied", code, out, ExitCannotRun)
	}
}
