package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		got, err := ParseMode(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "on", "Workspace-Write", "readonly"} {
		_, err := ParseMode(bad)
		if err == nil || !strings.Contains(err.Error(), "valid: workspace-write, read-only, off") {
			t.Errorf("ParseMode(%q) error = %v, want one listing the valid modes", bad, err)
		}
	}
}

func TestWritablePaths(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	// GOENV=off keeps a go env file on this machine out of the test.
	home := map[string]string{"HOME": "/h", "GOENV": "off"}
	tests := []struct {
		name string
		p    Policy
		env  map[string]string
		want []string
	}{
		{
			"workspace-write defaults",
			Policy{Mode: ModeWorkspaceWrite, Workspace: "/w"},
			home,
			[]string{"/w", "/tmp", "/h/.cache/go-build", "/h/go/pkg/mod", "/h/.npm", "/h/.cache/pip"},
		},
		{
			"workspace-write from the environment",
			Policy{Mode: ModeWorkspaceWrite, Workspace: "/w/", Writable: []string{"/extra", "/w"}},
			map[string]string{"HOME": "/h", "GOENV": "off", "TMPDIR": "/t", "GOCACHE": "/gc", "GOPATH": "/gp1:/gp2", "npm_config_cache": "/npm", "XDG_CACHE_HOME": "/xdg"},
			[]string{"/w", "/t", "/gc", "/gp1/pkg/mod", "/npm", "/xdg/pip", "/extra"},
		},
		{
			"GOMODCACHE wins over GOPATH, GOCACHE=off and relative caches are dropped",
			Policy{Mode: ModeWorkspaceWrite, Workspace: "/w"},
			map[string]string{"GOENV": "off", "GOCACHE": "off", "GOMODCACHE": "/mc", "GOPATH": "/gp", "PIP_CACHE_DIR": "rel"},
			[]string{"/w", "/tmp", "/mc"},
		},
		{
			"read-only",
			Policy{Mode: ModeReadOnly, Workspace: "/w", Writable: []string{"/extra"}},
			home,
			[]string{"/tmp"},
		},
		{"off", Policy{Mode: ModeOff, Workspace: "/w"}, home, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.writablePaths(env(tt.env))
			var want []string
			if tt.want != nil {
				want = append(tt.want, Devices...)
			}
			if !slices.Equal(got, want) {
				t.Errorf("writable paths\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestWritablePathsReadsGoEnvFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "env")
	if err := os.WriteFile(file, []byte("GOCACHE=/from-file/cache\nGOMODCACHE=/from-file/mod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": "/h", "GOENV": file, "GOMODCACHE": "/env/mod"}
	got := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w"}.writablePaths(func(k string) string { return vars[k] })
	for _, want := range []string{"/from-file/cache", "/env/mod"} {
		if !slices.Contains(got, want) {
			t.Errorf("writable paths %q lack %s", got, want)
		}
	}
	if slices.Contains(got, "/from-file/mod") {
		t.Errorf("the environment should win over the go env file: %q", got)
	}
}

func TestResolve(t *testing.T) {
	ws := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w"}
	noNet := Policy{Mode: ModeOff, NoNetwork: true}
	tests := []struct {
		name        string
		p           Policy
		explicit    bool
		abi         int
		wantMode    Mode
		wantWarning string
		wantErr     bool
	}{
		{"default with Landlock", ws, false, 7, ModeWorkspaceWrite, "", false},
		{"default without Landlock degrades", ws, false, 0, ModeOff, "without a sandbox", false},
		{"explicit without Landlock is refused", ws, true, 0, "", "", true},
		{"read-only explicit without Landlock is refused", Policy{Mode: ModeReadOnly}, true, 0, "", "", true},
		{"off needs nothing", Policy{Mode: ModeOff}, true, 0, ModeOff, "", false},
		{"old ABI warns about truncate", ws, true, 2, ModeWorkspaceWrite, "truncate", false},
		{"a proxy port below ABI 4 is refused", Policy{Mode: ModeOff, ProxyPort: 8080}, false, 3, "", "", true},
		{"a proxy port with ABI 4", Policy{Mode: ModeOff, ProxyPort: 8080}, false, 4, ModeOff, "signalling grub", false},
		{"old ABI warns about signals too", ws, true, 2, ModeWorkspaceWrite, "; Landlock ABI 2 cannot stop sandboxed commands from signalling", false},
		{"no network on ABI 4 warns about signals", noNet, false, 4, ModeOff, "signalling grub", false},
		{"ABI 5 warns about signals", ws, false, 5, ModeWorkspaceWrite, "signalling grub", false},
		{"ABI 6 has the signal scope", ws, false, 6, ModeWorkspaceWrite, "", false},
		{"no network on ABI 3 is refused", noNet, false, 3, "", "", true},
		{"no network without Landlock is refused", noNet, false, 0, "", "", true},
		{"bad policy", Policy{Mode: ModeWorkspaceWrite, Workspace: "rel"}, false, 7, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warning, err := resolve(tt.p, tt.explicit, tt.abi)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("resolve = %+v, want an error", got)
				}
				if tt.p.Validate() == nil && !errors.Is(err, ErrUnavailable) {
					t.Errorf("error %v does not wrap ErrUnavailable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Mode != tt.wantMode {
				t.Errorf("mode = %q, want %q", got.Mode, tt.wantMode)
			}
			if (tt.wantWarning == "") != (warning == "") || !strings.Contains(warning, tt.wantWarning) {
				t.Errorf("warning = %q, want one containing %q", warning, tt.wantWarning)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	argv := []string{"sh", "-c", "echo --mode=off"}
	off := Policy{Mode: ModeOff, Workspace: "/w"}
	if got := Wrap("/bin/grub", off, argv); !slices.Equal(got, argv) {
		t.Errorf("Wrap with mode off = %q, want the command unchanged", got)
	}
	proxied := Policy{Mode: ModeOff, ProxyPort: 8080}
	got := Wrap("/bin/grub", proxied, argv)
	if want := []string{"/bin/grub", ExecCommand, "--mode=off", "--proxy-port=8080", "--"}; !slices.Equal(got[:len(want)], want) {
		t.Errorf("Wrap with a proxy port = %q", got)
	}
	if back, _, err := parseArgs(got[2:]); err != nil || back.ProxyPort != 8080 {
		t.Errorf("parseArgs(Wrap(proxy port)) = %+v, %v", back, err)
	}
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w s", Writable: []string{"/a", "/b=c"}, NoNetwork: true}
	got = Wrap("/bin/grub", p, argv)
	want := []string{"/bin/grub", ExecCommand, "--mode=workspace-write", "--workspace=/w s", "--allow=/a", "--allow=/b=c", "--no-network", "--", "sh", "-c", "echo --mode=off"}
	if !slices.Equal(got, want) {
		t.Fatalf("Wrap =\n %q\nwant\n %q", got, want)
	}
	back, cmd, err := parseArgs(got[2:])
	if err != nil {
		t.Fatal(err)
	}
	if back.Mode != p.Mode || back.Workspace != p.Workspace || !slices.Equal(back.Writable, p.Writable) || back.NoNetwork != p.NoNetwork || !slices.Equal(cmd, argv) {
		t.Errorf("parseArgs(Wrap(p)) = %+v %q, want %+v %q", back, cmd, p, argv)
	}
}

// TestLauncherRefusesBadPolicy calls the launcher in this process: every
// case fails before it would restrict or exec anything.
func TestLauncherRefusesBadPolicy(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown mode", []string{"--mode=bogus", "--", "true"}, ExitCannotRun, `unknown sandbox mode "bogus" (valid: workspace-write, read-only, off)`},
		{"no mode", []string{"--workspace=/w", "--", "true"}, ExitCannotRun, "no --mode"},
		{"unknown flag", []string{"--mode=off", "--network=no", "--", "true"}, ExitCannotRun, "flag provided but not defined: -network"},
		{"relative workspace", []string{"--mode=workspace-write", "--workspace=w", "--", "true"}, ExitCannotRun, `workspace "w" is not an absolute path`},
		{"no workspace", []string{"--mode=workspace-write", "--", "true"}, ExitCannotRun, "needs a workspace"},
		{"relative extra path", []string{"--mode=workspace-write", "--workspace=/w", "--allow=x", "--", "true"}, ExitCannotRun, `"x" is not an absolute path`},
		{"no command", []string{"--mode=read-only", "--"}, ExitCannotRun, "no command to run"},
		{"command not found", []string{"--mode=read-only", "--", "grub-no-such-command"}, ExitNotFound, "executable file not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := launch(tt.args, &stderr)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
			msg := stderr.String()
			if !strings.HasPrefix(msg, "grub "+ExecCommand+": ") || !strings.Contains(msg, tt.msg) {
				t.Errorf("stderr = %q, want a grub %s message containing %q", msg, ExecCommand, tt.msg)
			}
		})
	}
}
