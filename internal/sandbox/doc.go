// Package sandbox confines the commands grub runs for the agent, and
// cleans the environment they get.
//
// The confinement is Linux's Landlock LSM. It is never applied to grub
// itself: grub re-executes its own binary through a hidden subcommand
// ([ExecCommand]), and that small launcher ([Main]) restricts itself and
// then execs the command, which inherits the restriction together with
// everything it starts. [Wrap] builds the launcher's command line from a
// [Policy].
//
// Modes ([Mode]):
//
//   - workspace-write: reads anywhere; writes only under the paths
//     [Policy.WritablePaths] lists (the workspace, the temp directory,
//     the Go, npm and pip caches, a few devices, and paths the user adds).
//   - read-only: reads anywhere; writes only to the temp directory and
//     the devices.
//   - off: no filesystem restriction.
//
// Every confining policy keeps the command from signalling a process
// outside the sandbox, grub above all, and from connecting to abstract
// Unix sockets outside it (Landlock's scopes, ABI 6).
//
// Policy.NoNetwork and Policy.ProxyPort are kept, where the kernel
// allows it ([NetNamespaces]), by a network namespace of the command's
// own (Policy.NetNamespace: CLONE_NEWNET with the user and mount
// namespaces, in the one-stage start and in the second stage alike). A
// new network namespace has one interface, its own loopback, and no
// route out: neither the host's loopback listeners nor the outside are
// reachable from it, over TCP, UDP, Multipath TCP, SCTP or any other
// protocol, and the host's abstract Unix sockets are not there either.
// The launcher brings that loopback up (CAP_NET_ADMIN in its user
// namespace, dropped with CAP_SYS_ADMIN before Landlock), so that under
// NoNetwork a command's own test servers on 127.0.0.1 work: Landlock
// then leaves TCP alone. Under ProxyPort (--allow-domain) the launcher
// also listens on 127.0.0.1:ProxyPort in the namespace (before the
// command starts, without SO_REUSEPORT: nothing else can bind the port)
// and hands that socket to grub over the Unix socket it inherits as
// [RelayFD] ([NewRelay], [ReceiveListener]); grub's proxy accepts on it
// in grub's process and dials out from the host's network, and closes it
// when the launched process ends, so that a daemon the command leaves
// behind finds nothing listening. The launcher closes its copies of both
// before Landlock and exec: the command holds neither. Landlock's port
// rule stays, as defence in depth. A launcher given a network namespace
// and a proxy port but no relay refuses to run the command. Pathname
// Unix sockets are files, not the network: Landlock refuses connecting
// to them from ABI 9 under both rules. /proc/PID/net of a process
// outside still shows the host's sockets: a list, not a way to them.
//
// Under Policy.NoNetwork and Policy.ProxyPort, in any mode and with or
// without a network namespace, a seccomp filter, which the launcher
// installs after Landlock and right before exec (applySeccomp; the
// filter is in seccomp_linux.go), refuses what Landlock does not see:
//
//   - sockets other than plain TCP for AF_INET and AF_INET6 (UDP, ICMP,
//     raw, Multipath TCP, SCTP);
//   - every other address family but AF_NETLINK's route family
//     (AF_PACKET, AF_VSOCK, …);
//   - AF_UNIX below Landlock ABI 9 or in mode off, which cannot refuse
//     connecting to pathname Unix sockets (a Docker or SSH agent socket):
//     tools that talk to a local daemon then fail, while socketpair(2)
//     still works;
//   - under NoNetwork without a network namespace, listen(2): a TCP
//     socket that listens unbound gets an ephemeral port on every
//     address, past Landlock's bind rule (so no server, TCP or Unix, runs
//     there; in a namespace of its own a command's servers reach only its
//     own loopback and may listen);
//   - sends with MSG_FASTOPEN: a TCP Fast Open send connects without
//     connect(2), and Landlock lets it through;
//   - io_uring, whose operations make sockets seccomp does not see;
//   - system calls of another ABI (32-bit and x32 ones on amd64), which
//     end the process.
//
// The launcher also marks the sockets it inherited (fd 3 and up)
// close-on-exec. Where the kernel or the architecture (other than amd64
// and arm64) has no seccomp filter ([FilterSupported]), only TCP is
// refused. [Resolve]'s warning says what the network mode cannot enforce
// on this kernel, for the caller to print once.
//
// Where network namespaces are not available, the rules are Landlock's
// and the filter's, and the caller says so once. Policy.NoNetwork then
// refuses TCP connect and bind (Landlock ABI 4 and later); Landlock alone
// would not be a complete network cut-off (UDP, DNS included, is only
// refused from ABI 10, connecting to pathname Unix sockets only from ABI
// 9, and Landlock does not see Multipath TCP or SCTP sockets at all),
// which is what the filter is for; where the kernel has no seccomp
// filters those gaps stay open.
// Policy.ProxyPort then refuses TCP connect to every port but that of
// grub's network proxy on 127.0.0.1 (package netproxy, run by grub
// outside the sandbox), and UDP connect and send from ABI 10; bind is not
// refused, so commands may still listen. Landlock's network rules name
// ports, not addresses: a listener on the proxy's port number at another
// address is reachable too, and the gaps of NoNetwork (UDP below ABI 10,
// MPTCP, SCTP) are the same. Pathname Unix sockets are refused from ABI
// 9, as under NoNetwork.
//
// Reading is not restricted, but for the credentials ([Policy.Hide]): in
// the confining modes the launcher covers each location of
// [Credentials] under the user's home ([CredentialPaths]: ~/.ssh, ~/.aws,
// ~/.config/gh, ~/.netrc, ~/.config/grub and the others) and each path
// the user adds, when it exists, with an empty read-only tmpfs (a folder)
// or /dev/null (a file) in the command's mount namespace, the mount on a
// symbolic link's target; [Policy.Show] lets some through. A mount point
// cannot be removed or renamed, and once the launcher dropped
// CAP_SYS_ADMIN and applied Landlock the command can neither unmount it
// nor mount over it, even in a user namespace of its own (the mounts it
// gets there are locked); Landlock also keeps it out of the /proc/PID/root
// of processes outside the sandbox, whose mounts differ. A location made
// after the command started is not covered. The environment is what
// ScrubEnv cleans.
//
// Where the kernel has no Landlock, [Resolve] turns the default mode into
// off with one warning, and refuses an explicit request it cannot honour
// (an error wrapping [ErrUnavailable]); the launcher itself never runs a
// command unconfined when it was asked to confine it.
//
// Read-only paths ([Policy.ReadOnly], from [ProtectedPaths] and
// [WholeGitDirs]): the git directory as a whole by default (or, when the
// task lets the agent commit, git's hooks and config and the other files
// git takes programs or other folders from), grub's own state.json and
// lock, and grub's private folder (the control queues, outside the
// workspace but perhaps under a writable path), which a command must not
// change even inside a writable workspace (a planted hook or
// core.fsmonitor would run later with the user's rights).
// When the policy lists some that exist, or credentials to hide that
// exist, the launcher must run in a user and mount namespace of its own.
// grub starts it directly in them ([InNamespace]: the clone flags, id
// maps and CAP_SYS_ADMIN on the exec.Cmd, which internal/proc's Launch
// carries), so that one Go process mounts, restricts itself and execs
// the command, a direct child of grub in grub's process group; where
// that start is refused, or for a caller that runs Wrap's command line,
// the launcher runs in two stages: the first starts the second in a new user namespace (the user keeps
// their uid and gid) and mount namespace, passes signals on and ends as
// it ends, both in the caller's process group; the second makes each path
// a read-only bind mount of itself, makes every folder between it and the
// workspace a bind mount too (a mount point cannot be renamed, so the
// path cannot be moved aside with its parent), covers the credentials,
// drops CAP_SYS_ADMIN, applies Landlock (which forbids mount changes from then on) and execs
// the command. Writing such a file fails with "Read-only file system",
// renaming over it or removing it with "Device or resource busy". A path
// that does not exist, or is a symbolic link, is skipped at each run and
// left to the referee's check, as are all of them where namespaces are
// not available: [Namespaces] probes once, [Resolve] then drops the paths
// with a warning for the caller to print once, and a launcher that still
// cannot make the namespace or a mount says so in one line on stderr and
// runs the command with Landlock alone. The caller likewise drops
// Policy.Hide where namespaces are not available, naming the credentials
// that stay readable ([Hidden]).
//
// The launcher runs from the initialiser of package
// internal/sandbox/launch, which cmd/grub imports, so that a launch
// initialises only this package and what it imports (see that package).
//
// [ScrubEnv] removes variables whose names look like secrets
// ([SecretName]) from a command's environment.
//
// sandbox is the only package that imports
// github.com/landlock-lsm/go-landlock and golang.org/x/net/bpf (which
// assembles the seccomp filter); apart from them, it imports only the
// standard library.
package sandbox
