package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Capabilities and prctl options the syscall package does not name.
const (
	capSysAdmin          = 21
	capNetAdmin          = 12
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	capabilityV3         = 0x20080522
)

// nsAttr is how the launcher starts its second stage: in a new user
// namespace where the user keeps their own uid and gid, with a private
// copy of the mounts (Go's child unshares the mount namespace and makes
// "/" private before exec, so that a kernel or security module that lets
// a user namespace be created but no mount be made in it fails here), and
// with CAP_SYS_ADMIN kept across exec for the bind mounts. Pdeathsig ends
// the second stage if the first dies.
//
// Root keeps the whole uid and gid range mapped, so that it can still
// write files of other users; anyone else maps only their own ids (the
// only mapping an unprivileged process may write).
func nsAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	uids := []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	gids := []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	if uid == 0 {
		uids = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		gids = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	}
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		Unshareflags:               syscall.CLONE_NEWNS,
		UidMappings:                uids,
		GidMappings:                gids,
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{capSysAdmin},
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// InNamespace returns the launcher's command line for argv under p, and
// the attributes to start it with, when the caller is to start it
// directly in its new user and mount namespace (nsAttr, without
// Pdeathsig: the launcher execs the command, which is then the caller's
// own child): when p has read-only paths or paths to hide that exist,
// or asks for a network namespace (Policy.NetNamespace, which the
// attributes then make too: see withNetwork), and Namespaces (and
// NetNamespaces) say they are available. The launcher then runs in one
// stage, one Go process fewer than the two runStaged makes. ok is false
// otherwise: Wrap's command line is the one to run. A caller whose start
// with attr fails falls back to Wrap's, which makes the namespace itself
// or says in one line why it cannot. With NetNamespace and ProxyPort,
// the caller passes the launcher its end of a relay (NewRelay) as file
// descriptor RelayFD on either start.
func InNamespace(self string, p Policy, argv []string) (wrapped []string, attr *syscall.SysProcAttr, ok bool) {
	if !p.Confines() || !(p.NetNamespace || needsNamespace(p)) {
		return nil, nil, false
	}
	if ok, _ := Namespaces(); !ok {
		return nil, nil, false
	}
	if ok, _ := NetNamespaces(); p.NetNamespace && !ok {
		return nil, nil, false
	}
	plain := Wrap(self, p, argv)
	wrapped = append([]string{plain[0], ExecCommand, nsStage}, plain[2:]...)
	attr = nsAttr()
	attr.Pdeathsig = 0
	if p.NetNamespace {
		withNetwork(attr)
	}
	return wrapped, attr, true
}

// Namespaces reports whether the launcher can make paths read-only here:
// whether this process may start a child in a new user and mount
// namespace (it tries once, with /bin/true, and remembers the answer).
// When it cannot, why says so in one line, for the caller to print once;
// the protected paths are then guarded only by the referee's check.
func Namespaces() (ok bool, why string) { return probeOnce() }

var probeOnce = sync.OnceValues(func() (bool, string) {
	if err := tryStart(nsAttr()); err != nil {
		return false, fmt.Sprintf("user and mount namespaces are not available (%v): git's hooks and config and grub's state files are guarded by the referee's check only", err)
	}
	return true, ""
})

// tryStart runs true with attr and reports why it could not.
func tryStart(attr *syscall.SysProcAttr) error {
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	cmd := exec.Command(truePath)
	cmd.SysProcAttr = attr
	// Pdeathsig is tied to the thread that starts the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}

// runStaged is the launcher's first stage when p has read-only paths that
// exist, or asks for a network namespace: it runs the launcher again,
// with args, in a new user and mount namespace (see nsAttr; and network
// namespace, see withNetwork, handing on the relay), passes on SIGTERM,
// SIGINT, SIGHUP and SIGQUIT, and ends as the second stage ended. Both
// stages are in the caller's process group, so a kill of the group
// reaches them both. It returns only when the second stage could not be
// started.
func runStaged(p Policy, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append([]string{ExecCommand, nsStage}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = nsAttr()
	relay := stagedNetwork(p, cmd)
	// The thread that starts the child must live as long as it, for
	// Pdeathsig: this goroutine keeps it until the process exits.
	runtime.LockOSThread()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		signal.Stop(sigs)
		runtime.UnlockOSThread()
		if relay != nil {
			_ = relay.Close() // joinNetwork closes RelayFD itself
		}
		return err
	}
	if relay != nil {
		// The second stage has its own copy: grub sees the relay end
		// when it does.
		_ = relay.Close()
		_ = syscall.Close(RelayFD)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "grub %s: %v\n", ExecCommand, err)
		os.Exit(ExitCannotRun)
	}
	st := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if st.Signaled() {
		// End the way the command did, so that whoever waits for the
		// launcher sees the signal.
		signal.Reset(st.Signal())
		_ = syscall.Kill(os.Getpid(), st.Signal())
		os.Exit(128 + int(st.Signal()))
	}
	os.Exit(st.ExitStatus())
	return nil
}

// protect is the second stage's work, before Landlock (and after
// joinNetwork): it makes each
// existing read-only path a read-only bind mount of itself, after pinning
// the folders between it and the workspace (each becomes a bind mount of
// itself, which cannot be renamed or removed, so that the protected path
// cannot be moved aside with its parent and replaced), and covers each
// path to hide (masks, mask). A hidden path needs no pins: moving its
// parent aside moves the mount with it, and reveals nothing. It then drops the
// capabilities the mounts and the network needed, so that the command gets none (the
// caller has locked the goroutine to its thread, which must be the one
// that execs: capabilities belong to a thread), and enters the workspace again so that relative paths see the new mounts.
// A mount that fails is named in a warning and left to the referee's
// check; protect never stops the command.
func protect(p Policy, stderr io.Writer) {
	ro := existing(p.ReadOnly)
	for _, dir := range pinsFor(p, ro) {
		if err := syscall.Mount(dir, dir, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			fmt.Fprintf(stderr, "grub %s: warning: cannot pin %s: %v\n", ExecCommand, dir, err)
		}
	}
	for _, path := range ro {
		if err := bindReadOnly(path); err != nil {
			fmt.Fprintf(stderr, "grub %s: warning: cannot make %s read-only (%v); relying on the referee's check\n", ExecCommand, path, err)
		}
	}
	for _, path := range masks(p) {
		if err := mask(path); err != nil {
			fmt.Fprintf(stderr, "grub %s: warning: cannot hide %s (%v); it stays readable\n", ExecCommand, path, err)
		}
	}
	if err := dropCapabilities(); err != nil {
		fmt.Fprintf(stderr, "grub %s: warning: %v; relying on the referee's check\n", ExecCommand, err)
	}
	if wd, err := os.Getwd(); err == nil {
		_ = os.Chdir(wd)
	}
}

// mask covers path: a folder with an empty read-only tmpfs, anything else
// with /dev/null (reads see nothing, writes are thrown away). A mount
// point cannot be renamed or removed, and once the launcher dropped
// CAP_SYS_ADMIN and applied Landlock the command can neither unmount it
// nor mount over it, even in a user namespace of its own (the mounts it
// would get there are locked).
func mask(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return syscall.Mount("tmpfs", path, "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=0500,size=4k")
	}
	return syscall.Mount("/dev/null", path, "", syscall.MS_BIND, "")
}

// bindReadOnly mounts path read-only onto itself. The remount keeps the
// flags the mount it lies in has (nosuid, nodev, noexec): in a user
// namespace the kernel refuses to clear them.
func bindReadOnly(path string) error {
	if err := syscall.Mount(path, path, "", syscall.MS_BIND, ""); err != nil {
		return err
	}
	flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err == nil {
		for _, f := range []uintptr{syscall.MS_NOSUID, syscall.MS_NODEV, syscall.MS_NOEXEC} {
			// ST_NOSUID, ST_NODEV and ST_NOEXEC have MS_'s values.
			if uintptr(st.Flags)&f != 0 {
				flags |= f
			}
		}
	}
	return syscall.Mount("", path, "", flags, "")
}

// dropCapabilities takes CAP_SYS_ADMIN, which the mounts needed, and
// CAP_NET_ADMIN, which bringing the loopback up needed, from the thread
// that will exec the command, so that the command cannot change the
// mounts (Landlock stops mount(2) and umount(2) but not
// mount_setattr(2), which could make a mount writable again) nor its
// network namespace's interfaces. The ambient set that kept them across
// the launcher's own exec is emptied, and they leave the effective,
// permitted and inheritable sets, and for root, who gets the bounding set
// back at exec, the bounding set. A user other than root then runs the
// command with no capability; root keeps the others (a read-only bind
// mount stops root too).
func dropCapabilities() error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("clear the ambient capabilities: %w", e)
	}
	if os.Geteuid() == 0 {
		for _, c := range []uintptr{capSysAdmin, capNetAdmin} {
			if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_CAPBSET_DROP, c, 0, 0, 0, 0); e != 0 {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, e)
			}
		}
	}
	hdr := struct {
		version uint32
		pid     int32
	}{version: capabilityV3}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("read the capabilities: %w", e)
	}
	const bits = 1<<capSysAdmin | 1<<capNetAdmin // in the first word
	data[0].effective &^= bits
	data[0].permitted &^= bits
	data[0].inheritable &^= bits
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("drop CAP_SYS_ADMIN and CAP_NET_ADMIN: %w", e)
	}
	return nil
}

// existing keeps the paths that exist and are not symbolic links (a mount
// would land on the link's target, and the link itself could be
// replaced).
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			out = append(out, p)
		}
	}
	return out
}

// pins lists, outermost first, the workspace and every folder between it
// and a read-only path inside it.
func pins(workspace string, ro []string) []string {
	if workspace == "" {
		return nil
	}
	ws := filepath.Clean(workspace)
	var out []string
	for _, p := range ro {
		rel, err := filepath.Rel(ws, filepath.Dir(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		dir := ws
		out = append(out, dir)
		if rel == "." {
			continue
		}
		for _, part := range strings.Split(rel, "/") {
			dir = filepath.Join(dir, part)
			out = append(out, dir)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if d := len(a) - len(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}

// pinsFor is every folder protect pins for the read-only paths ro under
// p, outermost first: those pins lists, and, for every read-only path,
// each folder above it that a command could rename because its parent
// lies in a path the policy lets it write (outsidePins). grub's private
// folder under $XDG_STATE_HOME in /tmp, say, could otherwise be moved
// aside with its parent and replaced by one the command made, which grub
// would then read.
func pinsFor(p Policy, ro []string) []string {
	out := append(pins(p.Workspace, ro), outsidePins(p.WritablePaths(), ro)...)
	slices.SortFunc(out, func(a, b string) int {
		if d := len(a) - len(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}

// outsidePins lists the strict ancestors of each path of ro whose parent
// lies within one of the writable paths: the folders a command could
// rename (the root never is one).
func outsidePins(writable, ro []string) []string {
	var out []string
	for _, p := range ro {
		for dir := filepath.Dir(filepath.Clean(p)); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			parent := filepath.Dir(dir)
			if slices.ContainsFunc(writable, func(w string) bool { return within(parent, filepath.Clean(w)) }) {
				out = append(out, dir)
			}
		}
	}
	return out
}
