package sandbox

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"unsafe"
)

// The ways out of --no-network a command might try, run by the test
// binary's "__net KIND ADDR" helper inside the sandbox (see TestMain and
// TestNetworkFilter). Each returns nil when the attempt got through.

// ipproto and address families the syscall package does not name.
const (
	ipprotoMPTCP  = 262
	ipprotoSCTP   = 132
	afVsock       = 40
	netlinkAudit  = 9
	sysPidfdOpen  = 434
	sysPidfdGetfd = 438
)

var attempts = map[string]func(addr string) error{
	"tcp4":       func(a string) error { return connectStream(syscall.AF_INET, 0, a) },
	"tcp6":       func(a string) error { return connectStream(syscall.AF_INET6, 0, a) },
	"mapped":     func(a string) error { return connectStream(syscall.AF_INET6, 0, mapped(a)) },
	"mptcp4":     func(a string) error { return connectStream(syscall.AF_INET, ipprotoMPTCP, a) },
	"mptcp6":     func(a string) error { return connectStream(syscall.AF_INET6, ipprotoMPTCP, a) },
	"udp4":       func(a string) error { return sendDatagram(syscall.AF_INET, a) },
	"udp6":       func(a string) error { return sendDatagram(syscall.AF_INET6, a) },
	"unix":       connectUnix,
	"unixgram":   sendUnixgram,
	"tfo":        fastOpen,
	"sctp":       func(string) error { return socket(syscall.AF_INET, syscall.SOCK_STREAM, ipprotoSCTP) },
	"sctp6seq":   func(string) error { return socket(syscall.AF_INET6, syscall.SOCK_SEQPACKET, ipprotoSCTP) },
	"raw":        func(string) error { return socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP) },
	"ping":       func(string) error { return socket(syscall.AF_INET, syscall.SOCK_DGRAM, syscall.IPPROTO_ICMP) },
	"packet":     func(string) error { return socket(syscall.AF_PACKET, syscall.SOCK_RAW, 0) },
	"vsock":      func(string) error { return socket(afVsock, syscall.SOCK_STREAM, 0) },
	"netlink":    func(string) error { return socket(syscall.AF_NETLINK, syscall.SOCK_RAW, netlinkAudit) },
	"route":      func(string) error { return socket(syscall.AF_NETLINK, syscall.SOCK_RAW, 0) },
	"pair":       socketPair,
	"autolisten": listenUnbound,
	"uring":      ioUringSetup,
	"highbits":   highBits,
	"x32":        x32Socket,
	"inherit":    inheritedSocket,
	"steal":      stealSocket,
}

func tryNet(kind, addr string) error {
	try, ok := attempts[kind]
	if !ok {
		return fmt.Errorf("unknown attempt %q", kind)
	}
	return try(addr)
}

func socket(domain, typ, proto int) error {
	fd, err := syscall.Socket(domain, typ, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	return syscall.Close(fd)
}

func sockaddr(family int, addr string) (syscall.Sockaddr, error) {
	ap, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	if family == syscall.AF_INET {
		sa := &syscall.SockaddrInet4{Port: ap.Port}
		copy(sa.Addr[:], ap.IP.To4())
		return sa, nil
	}
	sa := &syscall.SockaddrInet6{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To16())
	return sa, nil
}

// mapped turns 127.0.0.1:port into [::ffff:127.0.0.1]:port.
func mapped(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort("::ffff:127.0.0.1", port)
}

func connectStream(family, proto int, addr string) error {
	sa, err := sockaddr(family, addr)
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, sa); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

func sendDatagram(family int, addr string) error {
	sa, err := sockaddr(family, addr)
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(family, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Sendto(fd, []byte("out"), 0, sa); err != nil {
		return fmt.Errorf("sendto: %w", err)
	}
	return nil
}

func connectUnix(path string) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

func sendUnixgram(path string) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Sendto(fd, []byte("out"), 0, &syscall.SockaddrUnix{Name: path}); err != nil {
		return fmt.Errorf("sendto: %w", err)
	}
	return nil
}

// fastOpen sends with MSG_FASTOPEN on an unconnected TCP socket, which
// connects without connect(2).
func fastOpen(addr string) error {
	sa, err := sockaddr(syscall.AF_INET, addr)
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Sendto(fd, []byte("out"), msgFastOpen, sa); err != nil {
		return fmt.Errorf("sendto: %w", err)
	}
	return nil
}

// socketPair: a connected pair reaches nothing outside and must work.
func socketPair(string) error {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	if _, err := syscall.Write(fds[0], []byte("x")); err != nil {
		return err
	}
	buf := make([]byte, 1)
	_, err = syscall.Read(fds[1], buf)
	return err
}

// listenUnbound listens on a TCP socket it never bound: the kernel binds
// it to an ephemeral port of every address without Landlock's bind check.
func listenUnbound(string) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Listen(fd, 1); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return nil
}

func ioUringSetup(string) error {
	var params [120]byte // struct io_uring_params
	fd, _, errno := syscall.Syscall(425, 1, uintptr(unsafe.Pointer(&params)), 0)
	if errno != 0 {
		return fmt.Errorf("io_uring_setup: %w", errno)
	}
	return syscall.Close(int(fd))
}

// highBits asks for a UDP socket with bits set above the 32 the kernel
// reads of each argument.
func highBits(string) error {
	const high = 1 << 32
	fd, _, errno := syscall.RawSyscall(syscall.SYS_SOCKET, high|syscall.AF_INET, high|syscall.SOCK_DGRAM, high)
	if errno != 0 {
		return fmt.Errorf("socket: %w", errno)
	}
	return syscall.Close(int(fd))
}

// x32Socket asks for a UDP socket through amd64's x32 ABI.
func x32Socket(string) error {
	if runtime.GOARCH != "amd64" {
		return errors.New("x32 is an amd64 ABI")
	}
	fd, _, errno := syscall.RawSyscall(x32SyscallBit|syscall.SYS_SOCKET, syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if errno != 0 {
		return fmt.Errorf("x32 socket: %w", errno)
	}
	return syscall.Close(int(fd))
}

// inheritedSocket writes to file descriptor 3, a connected UDP socket the
// test hands to the launcher.
func inheritedSocket(string) error {
	if _, err := syscall.Write(3, []byte("out")); err != nil {
		return fmt.Errorf("write to the inherited socket: %w", err)
	}
	return nil
}

// stealSocket takes a copy of file descriptor fd of process pid (a
// socket the test holds, outside the sandbox) with pidfd_getfd(2).
func stealSocket(arg string) error {
	var pid, fd int
	if _, err := fmt.Sscanf(arg, "%d:%d", &pid, &fd); err != nil {
		return err
	}
	pidfd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return fmt.Errorf("pidfd_open: %w", errno)
	}
	got, _, errno := syscall.Syscall(sysPidfdGetfd, pidfd, uintptr(fd), 0)
	if errno != 0 {
		return fmt.Errorf("pidfd_getfd: %w", errno)
	}
	return syscall.Close(int(got))
}
