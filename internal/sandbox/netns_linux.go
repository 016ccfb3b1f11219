package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"
)

// withNetwork makes attr (nsAttr's) start the process in a new network
// namespace too, owned by its new user namespace, and keep
// CAP_NET_ADMIN across exec, for bringing the namespace's loopback up.
// A new network namespace has a loopback interface, down, and nothing
// else: no route leads out of it.
func withNetwork(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	attr.AmbientCaps = append(attr.AmbientCaps, capNetAdmin)
}

// NetNamespaces reports whether the launcher can run a command in a
// network namespace of its own here (Policy.NetNamespace): whether this
// process may start a child in new user, mount and network namespaces
// (it tries once, with /bin/true, and remembers the answer). When it
// cannot, why says so in one line.
func NetNamespaces() (ok bool, why string) { return netProbeOnce() }

var netProbeOnce = sync.OnceValues(func() (bool, string) {
	attr := nsAttr()
	withNetwork(attr)
	if err := tryStart(attr); err != nil {
		return false, fmt.Sprintf("network namespaces are not available (%v)", err)
	}
	return true, ""
})

// stagedNetwork readies the first stage's start of the second (cmd) for
// p's network namespace: the clone flag and the capability, and a copy
// of the relay handed on as RelayFD. It returns that copy, for the
// first stage to close once the second has started (nil: none).
func stagedNetwork(p Policy, cmd *exec.Cmd) *os.File {
	if !p.NetNamespace {
		return nil
	}
	withNetwork(cmd.SysProcAttr)
	if p.ProxyPort == 0 {
		return nil
	}
	// A duplicate, so that no *os.File (whose finalizer closes its
	// descriptor) ever owns RelayFD itself.
	dup, _, e := syscall.Syscall(syscall.SYS_FCNTL, RelayFD, syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return nil // the second stage finds no relay and says so
	}
	relay := os.NewFile(dup, "relay")
	cmd.ExtraFiles = []*os.File{relay}
	return relay
}

// joinNetwork is the launcher's work in a network namespace of its own
// (p.NetNamespace, staged): it brings the loopback up and, with a proxy
// port, listens on 127.0.0.1:ProxyPort there and sends that socket to
// grub over the relay (RelayFD). It closes its copies of both before it
// returns, so that the command holds neither: grub's proxy accepts on
// the socket, in grub's process, and dials out from the host's network.
// ownNet reports that the command runs in that namespace, loopback up.
//
// Not staged (the namespaces could not be made, and runStaged's warning
// said so), it only closes the relay: the command reaches the proxy on
// the host's loopback, held to its port by Landlock. A loopback that
// will not come up under NoNetwork is a warning: the command then runs
// with Landlock's TCP rule, in a namespace that reaches nothing anyway.
// An error means the command must not run: with a proxy port it would
// have no way to the proxy.
func joinNetwork(p Policy, staged bool, stderr io.Writer) (ownNet bool, err error) {
	if !p.NetNamespace {
		return false, nil
	}
	if p.ProxyPort != 0 {
		if err := checkRelay(RelayFD); err != nil {
			return false, fmt.Errorf("no relay to grub on file descriptor %d: %w", RelayFD, err)
		}
		defer syscall.Close(RelayFD)
	}
	if !staged {
		return false, nil
	}
	if err := loopbackUp(); err != nil {
		if p.ProxyPort != 0 {
			return false, fmt.Errorf("bring the loopback up: %w", err)
		}
		fmt.Fprintf(stderr, "grub %s: warning: cannot bring the network namespace's loopback up (%v): TCP is refused\n", ExecCommand, err)
		return false, nil
	}
	if p.ProxyPort != 0 {
		if err := sendListener(RelayFD, p.ProxyPort); err != nil {
			return false, err
		}
	}
	return true, nil
}

// checkRelay makes sure fd is a relay's end (a Unix sequenced-packet
// socket) before the launcher sends anything on it or closes it.
func checkRelay(fd int) error {
	domain, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_DOMAIN)
	if err != nil {
		return err
	}
	typ, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE)
	if err != nil {
		return err
	}
	if domain != syscall.AF_UNIX || typ != syscall.SOCK_SEQPACKET {
		return errors.New("not a relay socket")
	}
	return nil
}

// ifreqFlags is struct ifreq with its ifr_flags member.
type ifreqFlags struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// loopbackUp sets lo's IFF_UP (the kernel gives it 127.0.0.1 and ::1
// then). It needs CAP_NET_ADMIN in the namespace's user namespace.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr ifreqFlags
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	ifr.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	return nil
}

// sendListener listens on 127.0.0.1:port (without SO_REUSEPORT, so that
// no other socket can bind the port while it is open) and sends the
// socket over relay, closing its own copy.
func sendListener(relay, port int) error {
	ln, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("listen for grub's proxy: %w", err)
	}
	defer syscall.Close(ln)
	if err := syscall.Bind(ln, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("listen for grub's proxy on 127.0.0.1:%d: %w", port, err)
	}
	if err := syscall.Listen(ln, 1024); err != nil {
		return fmt.Errorf("listen for grub's proxy: %w", err)
	}
	if err := syscall.Sendmsg(relay, []byte{1}, syscall.UnixRights(ln), nil, syscall.MSG_NOSIGNAL); err != nil {
		return fmt.Errorf("hand the listener to grub: %w", err)
	}
	return nil
}

// NewRelay makes the Unix socket over which a launcher in a network
// namespace of its own (Policy.NetNamespace with ProxyPort) hands grub
// the listener it made there. ours stays with the caller, non-blocking
// (ReceiveListener waits on Go's poller, and closing ours ends the
// wait); theirs goes to the launcher as file descriptor RelayFD
// (exec.Cmd.ExtraFiles[0]), and the caller closes its copy once the
// launcher has started. Both are close-on-exec in the caller: no other
// child inherits them.
func NewRelay() (ours, theirs *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("relay: %w", err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("relay: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "relay"), os.NewFile(uintptr(fds[1]), "relay (the launcher's end)"), nil
}

// ReceiveListener waits on ours (NewRelay's) for the socket the launcher
// sends and returns it: close-on-exec, listening on 127.0.0.1:ProxyPort
// in the launcher's network namespace (net.FileListener makes it a
// net.Listener). It fails with io.EOF when the launcher ended, or
// execed the command, without sending one (it could not make the
// namespace: the command then uses the proxy on the host's loopback),
// and with another error once ours is closed. Anything
// but one listening Internet socket is refused, and closed.
func ReceiveListener(ours *os.File) (*os.File, error) {
	rc, err := ours.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4*4)) // room for more than the one fd it takes
	var n, oobn, flags int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, flags, _, rerr = syscall.Recvmsg(int(fd), buf, oob, syscall.MSG_CMSG_CLOEXEC)
		return rerr != syscall.EAGAIN
	})
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, fmt.Errorf("relay: %w", rerr)
	}
	fds := rights(oob[:oobn])
	if n == 0 && len(fds) == 0 {
		return nil, io.EOF
	}
	if len(fds) != 1 || flags&syscall.MSG_CTRUNC != 0 || !listening(fds[0]) {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, errors.New("relay: the launcher sent no listening socket")
	}
	return os.NewFile(uintptr(fds[0]), "relayed listener"), nil
}

// rights are the file descriptors in a message's control data.
func rights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// listening reports whether fd is an IPv4 socket that listens.
func listening(fd int) bool {
	domain, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_DOMAIN)
	if err != nil || domain != syscall.AF_INET {
		return false
	}
	acc, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN)
	return err == nil && acc == 1
}
