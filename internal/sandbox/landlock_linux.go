package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Supported reports the Landlock ABI version the running kernel offers,
// and whether it offers any (ok is false when Landlock is not built in or
// not enabled at boot).
func Supported() (abi int, ok bool) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return 0, false
	}
	return v, true
}

func landlockMissing() string {
	return "the kernel lacks it or it is not enabled at boot; see /sys/kernel/security/lsm"
}

// abiRefer is the first ABI that handles the "refer" right (moving and
// linking files between directories).
const abiRefer = 2

// enforce restricts the calling process, and everything it execs, to p.
//
// Filesystem (modes workspace-write and read-only): every access right the
// kernel knows is handled; "/" gets read, read-dir and execute; each
// writable path gets every right (on directories also moving and linking
// files in and out, where the ABI has it); of the devices only
// IoctlDevices also get ioctl (never a terminal: see Devices).
// Without NoNetwork, connecting to pathname Unix sockets (ABI 9) stays
// allowed everywhere.
//
// NoNetwork: TCP bind and connect (ABI 4, UDP too from ABI 10) are
// handled with no port allowed, unless ownNet says the launcher is in a
// network namespace of its own (Policy.NetNamespace): that namespace
// reaches nothing but its own loopback, where a command's test servers
// may listen and be reached.
//
// ProxyPort: TCP connect (ABI 4; UDP connect and send from ABI 10) is
// handled, and allowed to that port only; bind is not handled, so
// commands may still listen. Landlock's rule is a port, not an address:
// a listener on the same port number elsewhere (another host, or
// loopback's other addresses) is reachable too. Connecting to pathname
// Unix sockets (ABI 9) is refused as under NoNetwork: a Docker socket
// is a way out.
//
// Always (ABI 6, Linux 6.12): the signal scope, so that nothing the
// command starts can signal a process outside its Landlock domain (grub
// above all: a kill -STOP would hang the run, a kill -9 end it before
// the referee's checks), and the abstract Unix socket scope, so that it
// cannot connect to an abstract socket a process outside listens on.
// Inside the domain signals still work: a command ends its own children.
// Outside it they still arrive: grub ends the command's process group,
// and the launcher's unconfined first stage passes signals on to the
// second (see runStaged). Below ABI 6 BestEffort drops both scopes and
// Resolve's warning says so.
//
// It refuses, rather than running unconfined, when the kernel cannot do
// what p asks.
func enforce(p Policy, ownNet bool) error {
	if !p.Confines() {
		return nil
	}
	abi, _ := Supported()
	if p.Mode != ModeOff && abi < MinABIFilesystem {
		return fmt.Errorf("Landlock is not available (%s)", landlockMissing())
	}
	refuseAll := p.NoNetwork && !ownNet
	if (refuseAll || p.ProxyPort != 0) && abi < MinABINetwork {
		return fmt.Errorf("restricting the network needs Landlock ABI %d, the kernel has %s", MinABINetwork, abiName(abi))
	}

	var cfg landlock.Config
	var rules []landlock.Rule
	if p.Mode != ModeOff {
		cfg.HandledAccessFS = landlock.V11.HandledAccessFS
		read := landlock.RODirs("/")
		if !p.NoNetwork && p.ProxyPort == 0 {
			read = read.WithResolveUnix()
		}
		rules = append(rules, read)
		if p.Mode == ModeWorkspaceWrite {
			createCaches()
		}
		for _, path := range p.WritablePaths() {
			rule, err := writeRule(p, path, abi)
			if err != nil {
				return err
			}
			rules = append(rules, rule)
		}
	}
	switch {
	case refuseAll:
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	case p.ProxyPort != 0:
		// Connect only: a rule that handled bind too would refuse every
		// listening socket (a test server, a language server).
		cfg.HandledAccessNet = ll.AccessNetConnectTCP | ll.AccessNetConnectSendUDP
		rules = append(rules, landlock.ConnectTCP(uint16(p.ProxyPort)))
	}
	cfg.Scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
	// BestEffort drops the rights this kernel's ABI does not know; the
	// checks above make sure what is left still does the job. "refer" is
	// only asked for where the ABI has it, since asking for it on ABI 1
	// would make BestEffort restrict nothing at all.
	return cfg.BestEffort().Restrict(rules...)
}

// writeRule is the rule that makes path writable. The workspace and the
// temp directory must exist; a missing cache, extra path or device is
// skipped.
func writeRule(p Policy, path string, abi int) (landlock.Rule, error) {
	required := path == filepath.Clean(p.Workspace) || path == filepath.Clean(tempDir(os.Getenv))
	fi, err := os.Stat(path)
	if err != nil {
		if required {
			return nil, fmt.Errorf("writable path: %w", err)
		}
		return landlock.RWFiles(path).IgnoreIfMissing(), nil
	}
	var rule landlock.FSRule
	if fi.IsDir() {
		rule = landlock.RWDirs(path)
		if abi >= abiRefer {
			rule = rule.WithRefer()
		}
	} else {
		rule = landlock.RWFiles(path)
	}
	if slices.Contains(IoctlDevices, path) {
		rule = rule.WithIoctlDev()
	}
	return rule.IgnoreIfMissing(), nil
}

// createCaches makes the build caches' directories, so that a tool that
// would create its cache on first use finds it there rather than failing
// to create it under a parent the sandbox does not let it write.
// Failures are ignored: the cache is then skipped, as a missing path.
func createCaches() {
	for _, c := range cachePaths(os.Getenv) {
		_ = os.MkdirAll(c, 0o755)
	}
}
