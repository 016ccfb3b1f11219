package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much of the filesystem a command may write.
type Mode string

const (
	// ModeWorkspaceWrite lets a command read anywhere and write only under
	// Policy.WritablePaths. It is the default.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeReadOnly lets a command read anywhere and write only to the temp
	// directory and the devices every shell needs.
	ModeReadOnly Mode = "read-only"
	// ModeOff does not restrict the filesystem.
	ModeOff Mode = "off"
)

// Modes lists the valid modes, the default first.
var Modes = []Mode{ModeWorkspaceWrite, ModeReadOnly, ModeOff}

// ParseMode parses a --sandbox value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown sandbox mode %q (valid: %s)", s, strings.Join(names, ", "))
}

// Policy is what one command may do.
type Policy struct {
	Mode Mode
	// Workspace is the task's working tree, writable in workspace-write
	// mode. It must be an absolute path then.
	Workspace string
	// Writable lists extra absolute paths writable in workspace-write mode
	// (--sandbox-allow). A path that does not exist is skipped.
	Writable []string
	// NoNetwork refuses TCP connect and bind (--no-network).
	NoNetwork bool
	// ProxyPort, when not 0, is the port of grub's network proxy on
	// 127.0.0.1 (--allow-domain): TCP connect is refused to every other
	// port (Landlock ABI 4; UDP connect and send too from ABI 10), bind
	// stays allowed, and so do connections to the proxy's port.
	ProxyPort int
	// NetNamespace, with NoNetwork or ProxyPort, runs the command in a
	// network namespace of its own (CLONE_NEWNET, with the user and mount
	// namespaces): its only interface is a loopback of its own, which the
	// launcher brings up, and nothing else (the host's loopback
	// listeners included) is reachable over any protocol. With
	// NoNetwork, Landlock then leaves TCP alone, so that a command's own
	// test servers on 127.0.0.1 work. With ProxyPort, the launcher
	// listens on 127.0.0.1:ProxyPort in that namespace and hands the
	// socket to grub over the Unix socket it inherits as file descriptor
	// RelayFD (NewRelay; ReceiveListener), for grub's proxy to accept
	// on; Landlock's port rule stays. Set it only where NetNamespaces
	// says they are available: a launcher that cannot make the namespace
	// says so and runs the command with Landlock alone.
	NetNamespace bool
	// ReadOnly lists absolute paths a command may not change even where
	// the mode lets it write (git's hooks and config, grub's state.json,
	// lock and private folder: see ProtectedPaths). The launcher makes each
	// one that exists, and is not a symbolic link, a read-only bind mount
	// in a user and mount namespace of the command's own. It takes effect
	// only when the policy goes through the launcher (Confines); Resolve
	// drops it, with a warning, where namespaces are not available.
	ReadOnly []string
	// Hide lists absolute paths a command may not read, in the confining
	// modes: the credentials under the user's home (CredentialPaths) and
	// those --sandbox-hide adds. The last element of an entry may be a
	// pattern (filepath.Match: ".cargo/credentials*"). The launcher covers
	// each one that exists, in the command's own user and mount
	// namespace, with an empty read-only tmpfs (a folder) or /dev/null (a
	// file); see masks. Like ReadOnly, it takes effect only through the
	// launcher, and the caller drops it where namespaces are not
	// available.
	Hide []string
	// Show lists absolute paths let through (--sandbox-show): an entry of
	// Hide, or a match of its pattern, that lies in one of them is not
	// covered.
	Show []string
}

// Validate reports a policy the launcher cannot apply: an unknown mode, a
// missing or relative workspace in workspace-write mode, a relative extra
// path.
func (p Policy) Validate() error {
	if _, err := ParseMode(string(p.Mode)); err != nil {
		return err
	}
	if p.Mode == ModeWorkspaceWrite {
		if p.Workspace == "" {
			return errors.New("sandbox mode workspace-write needs a workspace")
		}
		if !filepath.IsAbs(p.Workspace) {
			return fmt.Errorf("sandbox workspace %q is not an absolute path", p.Workspace)
		}
	}
	for _, w := range p.Writable {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("sandbox writable path %q is not an absolute path", w)
		}
	}
	if p.ProxyPort < 0 || p.ProxyPort > 65535 {
		return fmt.Errorf("sandbox proxy port %d is out of range", p.ProxyPort)
	}
	if p.NetNamespace && !p.NoNetwork && p.ProxyPort == 0 {
		return errors.New("a sandbox network namespace needs --no-network or a proxy port")
	}
	for _, r := range p.ReadOnly {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("sandbox read-only path %q is not an absolute path", r)
		}
	}
	for _, h := range append(slices.Clone(p.Hide), p.Show...) {
		if !filepath.IsAbs(h) {
			return fmt.Errorf("sandbox hidden or shown path %q is not an absolute path", h)
		}
	}
	return nil
}

// Confines reports whether the policy restricts anything, that is whether
// commands must go through the launcher.
func (p Policy) Confines() bool { return p.Mode != ModeOff || p.NoNetwork || p.ProxyPort != 0 }

// Devices are the device files and directories a command may write in
// any confining mode: the bit bucket and friends that shells and build
// tools open for writing, the controlling terminal and pseudo-terminals,
// and POSIX shared memory (/dev/shm, used by Python's multiprocessing and
// semaphores). Reading any of /dev is allowed like the rest of the
// filesystem.
//
// No terminal a command opens gets ioctls (Landlock ABI 5 and later):
// with them a command could open /dev/tty or the user's /dev/pts/N and
// push keystrokes into the user's shell with TIOCSTI (which kernels with
// dev.tty.legacy_tiocsti=1 still allow the terminal's owner), or change
// its modes. Only IoctlDevices keep them.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}

// IoctlDevices are the Devices whose files keep ioctl rights: /dev/ptmx,
// whose ioctls (TIOCGPTN, TIOCSPTLCK) allocate a new pseudo-terminal and
// act on its master only, never on a terminal the command did not make.
// The new terminal's other end, under /dev/pts, gets none, so a tool that
// sets its modes (tcsetattr) fails inside the sandbox: the price of
// keeping the user's terminals out of reach.
var IoctlDevices = []string{"/dev/ptmx"}

// WritablePaths returns, in order, the paths a command may write under
// the policy, computed from the current environment without running any
// tool:
//
// workspace-write:
//   - the workspace;
//   - the temp directory (os.TempDir: $TMPDIR, else /tmp);
//   - the Go build cache: $GOCACHE, else GOCACHE from `go env -w`'s file,
//     else <user cache dir>/go-build ($XDG_CACHE_HOME, else $HOME/.cache);
//   - the Go module cache: $GOMODCACHE, else GOMODCACHE from `go env -w`'s
//     file, else <first GOPATH entry>/pkg/mod, GOPATH defaulting to
//     $HOME/go;
//   - the npm cache: $npm_config_cache, else $HOME/.npm;
//   - the pip cache: $PIP_CACHE_DIR, else <user cache dir>/pip;
//   - the extra paths (Policy.Writable);
//   - the devices ([Devices]).
//
// read-only: the temp directory and the devices. off: none (nil).
//
// Paths are cleaned and duplicates dropped; a cache whose location cannot
// be worked out (no $HOME) is left out. In workspace-write mode the
// launcher creates missing caches before it restricts itself, so that a
// tool's first run can use them; other missing paths, except the
// workspace and the temp directory, are skipped.
func (p Policy) WritablePaths() []string {
	return p.writablePaths(os.Getenv)
}

func (p Policy) writablePaths(getenv func(string) string) []string {
	var paths []string
	switch p.Mode {
	case ModeWorkspaceWrite:
		paths = append(paths, p.Workspace, tempDir(getenv))
		paths = append(paths, cachePaths(getenv)...)
		paths = append(paths, p.Writable...)
	case ModeReadOnly:
		paths = append(paths, tempDir(getenv))
	default:
		return nil
	}
	paths = append(paths, Devices...)
	return dedupe(paths)
}

// tempDir is os.TempDir read through getenv.
func tempDir(getenv func(string) string) string {
	if d := getenv("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

// cachePaths returns the build caches in the order WritablePaths
// documents.
func cachePaths(getenv func(string) string) []string {
	home := getenv("HOME")
	userCache := getenv("XDG_CACHE_HOME")
	if userCache == "" && home != "" {
		userCache = filepath.Join(home, ".cache")
	}
	goenv := goEnvFile(getenv, home)
	lookupGo := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return goenv[name]
	}

	var paths []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			paths = append(paths, p)
		}
	}
	switch c := lookupGo("GOCACHE"); {
	case c == "off":
	case c != "":
		add(c)
	case userCache != "":
		add(filepath.Join(userCache, "go-build"))
	}
	if c := lookupGo("GOMODCACHE"); c != "" {
		add(c)
	} else {
		gopath := lookupGo("GOPATH")
		if first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator)); first != "" {
			add(filepath.Join(first, "pkg", "mod"))
		} else if home != "" {
			add(filepath.Join(home, "go", "pkg", "mod"))
		}
	}
	if c := getenv("npm_config_cache"); c != "" {
		add(c)
	} else if home != "" {
		add(filepath.Join(home, ".npm"))
	}
	if c := getenv("PIP_CACHE_DIR"); c != "" {
		add(c)
	} else if userCache != "" {
		add(filepath.Join(userCache, "pip"))
	}
	return paths
}

// goEnvFile reads the settings `go env -w` stores ($GOENV, else
// <user config dir>/go/env), so that a cache moved there is found without
// running go. A missing or unreadable file gives an empty map.
func goEnvFile(getenv func(string) string, home string) map[string]string {
	file := getenv("GOENV")
	if file == "off" {
		return nil
	}
	if file == "" {
		dir := getenv("XDG_CONFIG_HOME")
		if dir == "" {
			if home == "" {
				return nil
			}
			dir = filepath.Join(home, ".config")
		}
		file = filepath.Join(dir, "go", "env")
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && k != "" && !strings.HasPrefix(k, "#") {
			vars[k] = v
		}
	}
	return vars
}

func dedupe(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
