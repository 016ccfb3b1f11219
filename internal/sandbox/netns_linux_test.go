package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The attempts a command makes from inside the sandbox (TestMain's
// "__net KIND ADDR"): each prints what it got, and fails when it could
// not do what it tried.
var netAttempts = map[string]func(arg string) error{
	"tcp4":        func(a string) error { return dialClassic("tcp4", a, false) },
	"tcp6":        func(a string) error { return dialClassic("tcp6", a, false) },
	"tcp-read":    func(a string) error { return dialClassic("tcp", a, true) },
	"mptcp":       func(a string) error { return dialProto(syscall.AF_INET, 262, a) },
	"mptcp6":      func(a string) error { return dialProto(syscall.AF_INET6, 262, a) },
	"sctp":        func(a string) error { return dialProto(syscall.AF_INET, syscall.IPPROTO_SCTP, a) },
	"udp":         sendUDP,
	"udp-connect": connectUDP,
	"bind":        bindTaken,
	"selfserve":   func(string) error { return selfServe() },
	"setns":       enterNetns,
	"fds":         func(string) error { return noSockets() },
	"procnet":     notInProcNet,
}

func netAttempt(args []string) error {
	if len(args) != 2 || netAttempts[args[0]] == nil {
		return fmt.Errorf("usage: __net KIND ADDR, got %q", args)
	}
	return netAttempts[args[0]](args[1])
}

// dialClassic connects with plain TCP (not Multipath TCP, which Go's
// dialer may pick) and, with read, prints what the server sends.
func dialClassic(network, addr string, read bool) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	d.SetMultipathTCP(false)
	c, err := d.Dial(network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if read {
		b, err := io.ReadAll(c)
		fmt.Printf("read %q\n", b)
		return err
	}
	return nil
}

// dialProto connects a stream socket of protocol proto (Multipath TCP,
// SCTP) to addr.
func dialProto(family, proto int, addr string) error {
	ap, err := netipAddrPort(addr)
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	return syscall.Connect(fd, ap)
}

func netipAddrPort(addr string) (syscall.Sockaddr, error) {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		return &syscall.SockaddrInet4{Port: a.Port, Addr: [4]byte(ip4)}, nil
	}
	return &syscall.SockaddrInet6{Port: a.Port, Addr: [16]byte(a.IP.To16())}, nil
}

func sendUDP(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte("attack"))
	return err
}

// connectUDP only connects a UDP socket, which sends nothing but needs
// a route to addr.
func connectUDP(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// bindTaken tries to listen on addr with SO_REUSEADDR and SO_REUSEPORT,
// as a command would to steal connections meant for grub's proxy.
func bindTaken(addr string) error {
	ap, err := netipAddrPort(addr)
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
	if err := syscall.Bind(fd, ap); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return syscall.Listen(fd, 1)
}

// selfServe is a test server of the command's own on 127.0.0.1, and a
// client of it.
func selfServe() error {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			_, _ = c.Write([]byte("pong"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if string(b) != "pong" {
		return fmt.Errorf("own server: read %q, %v", b, err)
	}
	return nil
}

// enterNetns tries to join the network namespace of process pid.
func enterNetns(pid string) error {
	fd, err := syscall.Open("/proc/"+pid+"/ns/net", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer syscall.Close(fd)
	if _, _, e := syscall.Syscall(308 /* SYS_SETNS */, uintptr(fd), syscall.CLONE_NEWNET, 0); e != 0 {
		return fmt.Errorf("setns: %w", e)
	}
	return nil
}

// noSockets fails when the command holds a socket it did not open.
func noSockets() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(link, "socket:") {
			return fmt.Errorf("fd %s is %s", e.Name(), link)
		}
	}
	return nil
}

// notInProcNet fails when /proc/net/tcp or tcp6 lists a socket bound to
// port.
func notInProcNet(port string) error {
	n, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	needle := fmt.Sprintf(":%04X ", n)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // no IPv6
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if fields := strings.Fields(line); len(fields) > 2 && strings.HasSuffix(fields[1]+" ", needle) {
				return fmt.Errorf("%s lists port %d: %s", f, n, line)
			}
		}
	}
	return nil
}

func requireNetNamespaces(t *testing.T) {
	t.Helper()
	if ok, why := NetNamespaces(); !ok {
		t.Skip(why)
	}
}

// netRun runs argv under p through the launcher (this test binary), as
// grub starts it (oneStage) or through Wrap's command line, with the
// launcher's end of a relay as RelayFD when theirs is set (closed here
// once the launcher started), and returns its output and exit code.
func (f fixture) netRun(t *testing.T, p Policy, oneStage bool, theirs *os.File, argv ...string) (string, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	full := Wrap(self, p, argv)
	var attr *syscall.SysProcAttr
	if oneStage {
		wrapped, a, ok := InNamespace(self, p, argv)
		if p.NetNamespace && !ok {
			t.Fatal("InNamespace would not start a network namespace that NetNamespaces allows")
		}
		if ok {
			full, attr = wrapped, a
		}
	}
	cmd := exec.Command(full[0], full[1:]...)
	cmd.SysProcAttr, cmd.Dir, cmd.Env = attr, f.ws, f.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if theirs != nil {
		cmd.ExtraFiles = []*os.File{theirs}
	}
	err = cmd.Start()
	if theirs != nil {
		theirs.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// hostTCP is a listener of the host's network that never accepts on its
// own: a connection that reached it waits in its backlog.
func hostTCP(t *testing.T, network, addr string) *net.TCPListener {
	t.Helper()
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s here: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*net.TCPListener)
}

// reachedTCP reports whether a connection got into l's backlog before
// the test's own (which it makes now): the first one accepted is the
// command's if it got through.
func reachedTCP(t *testing.T, l *net.TCPListener) bool {
	t.Helper()
	c, err := net.Dial(l.Addr().Network(), l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = l.SetDeadline(time.Now().Add(30 * time.Second)) // a hang fails, it does not time anything
	a, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	return a.RemoteAddr().String() != c.LocalAddr().String()
}

func hostUDP(t *testing.T, network, addr string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenPacket(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s here: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.UDPConn)
}

// reachedUDP reports whether a datagram arrived before the test's own
// (which it sends now: loopback queues datagrams as they are sent).
func reachedUDP(t *testing.T, c *net.UDPConn) bool {
	t.Helper()
	s, err := net.Dial(c.LocalAddr().Network(), c.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write([]byte("marker")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 64)
	n, _, err := c.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n]) != "marker"
}

// canSocket reports whether this machine makes stream sockets of
// protocol proto (Multipath TCP needs net.mptcp.enabled, SCTP a module).
func canSocket(family, proto int) bool {
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, proto)
	if err != nil {
		return false
	}
	syscall.Close(fd)
	return true
}

// TestNoNetworkNamespace: under --no-network in a network namespace of
// the command's own, nothing on the host's loopback is reached, over
// TCP, Multipath TCP and UDP, IPv4 and IPv6 (SCTP too where the kernel
// has it); without a sandbox each attempt does reach it (the control:
// the check sees a connection that got through).
func TestNoNetworkNamespace(t *testing.T) { bothStages(t, testNoNetworkNamespace) }

func testNoNetworkNamespace(t *testing.T, oneStage bool) {
	requireNetNamespaces(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	policies := []struct {
		name    string
		p       Policy
		reaches bool
	}{
		{"no sandbox (control)", Policy{Mode: ModeOff}, true},
		{"workspace-write", Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, NoNetwork: true, NetNamespace: true}, false},
		{"mode off", Policy{Mode: ModeOff, NoNetwork: true, NetNamespace: true}, false},
	}
	attacks := []struct {
		kind, network, addr string
		family, proto       int
	}{
		{"tcp4", "tcp4", "127.0.0.1:0", syscall.AF_INET, 0},
		{"tcp6", "tcp6", "[::1]:0", syscall.AF_INET6, 0},
		{"mptcp", "tcp4", "127.0.0.1:0", syscall.AF_INET, 262},
		{"mptcp6", "tcp6", "[::1]:0", syscall.AF_INET6, 262},
		{"sctp", "sctp", "127.0.0.1:0", syscall.AF_INET, syscall.IPPROTO_SCTP},
		{"udp", "udp4", "127.0.0.1:0", 0, 0},
		{"udp", "udp6", "[::1]:0", 0, 0},
	}
	for _, a := range attacks {
		for _, pol := range policies {
			t.Run(a.kind+" "+a.network+", "+pol.name, func(t *testing.T) {
				if a.proto != 0 && !canSocket(a.family, a.proto) {
					t.Skipf("this machine makes no sockets of protocol %d", a.proto)
				}
				var addr string
				var reached func() bool
				switch {
				case a.kind == "sctp":
					addr, reached = hostSCTP(t)
				case strings.HasPrefix(a.network, "udp"):
					c := hostUDP(t, a.network, a.addr)
					addr, reached = c.LocalAddr().String(), func() bool { return reachedUDP(t, c) }
				default:
					l := hostTCP(t, a.network, a.addr)
					addr, reached = l.Addr().String(), func() bool { return reachedTCP(t, l) }
				}
				out, code := f.netRun(t, pol.p, oneStage, nil, self, "__netns", a.kind, addr)
				if got := reached(); got != pol.reaches {
					t.Fatalf("the host's listener reached = %v, want %v (exit %d: %s)", got, pol.reaches, code, out)
				}
				if a.kind != "udp" && (code == 0) != pol.reaches {
					t.Errorf("exit %d (%s), want success = %v", code, out, pol.reaches)
				}
			})
		}
	}
}

// TestNoNetworkNamespaceInside: what a command can and cannot do in its
// network namespace under --no-network.
func TestNoNetworkNamespaceInside(t *testing.T) { bothStages(t, testNoNetworkNamespaceInside) }

func testNoNetworkNamespaceInside(t *testing.T, oneStage bool) {
	requireNetNamespaces(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	host := hostTCP(t, "tcp4", "127.0.0.1:0")
	hostPort := strconv.Itoa(host.Addr().(*net.TCPAddr).Port)
	for _, p := range []Policy{
		{Mode: ModeWorkspaceWrite, Workspace: f.ws, NoNetwork: true, NetNamespace: true},
		{Mode: ModeOff, NoNetwork: true, NetNamespace: true},
	} {
		tests := []struct {
			name   string
			argv   []string
			wantOK bool
			want   string
		}{
			// TEST-NET-2: a UDP connect sends nothing, but needs a route.
			// TCP, which Landlock leaves to the namespace here (UDP is
			// the seccomp filter's, refused before it could try).
			{"no route out", []string{self, "__netns", "tcp4", "198.51.100.1:53"}, false, "network is unreachable"},
			{"its own test server on 127.0.0.1", []string{self, "__netns", "selfserve", "-"}, true, ""},
			{"no socket inherited", []string{self, "__netns", "fds", "-"}, true, ""},
			{"the host's sockets not in /proc/net", []string{self, "__netns", "procnet", hostPort}, true, ""},
			{"no way into grub's network namespace", []string{self, "__netns", "setns", strconv.Itoa(os.Getpid())}, false, ""},
		}
		for _, tt := range tests {
			t.Run(describe(p)+": "+tt.name, func(t *testing.T) {
				out, code := f.netRun(t, p, oneStage, nil, tt.argv...)
				if (code == 0) != tt.wantOK || !strings.Contains(out, tt.want) {
					t.Fatalf("exit %d (%s), want success = %v and %q", code, out, tt.wantOK, tt.want)
				}
			})
		}
		t.Run(describe(p)+": a nested network namespace", func(t *testing.T) {
			unshare, err := exec.LookPath("unshare")
			if err != nil {
				t.Skip("needs unshare")
			}
			for _, flags := range []string{"-n", "-rn"} {
				out, code := f.netRun(t, p, oneStage, nil, unshare, flags, self, "__netns", "tcp4", host.Addr().String())
				if code == 0 || reachedTCP(t, host) {
					t.Fatalf("unshare %s: exit %d (%s), and the host's listener reached = %v", flags, code, out, code == 0)
				}
			}
		})
	}
}

// hostSCTP is hostTCP for SCTP, in system calls (Go's standard library
// has no SCTP): its address, and whether a connection got into its
// backlog before the test's own.
func hostSCTP(t *testing.T) (string, func() bool) {
	t.Helper()
	l, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_SCTP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(l) })
	if err := syscall.Bind(l, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(l, 8); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(l)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	return addr, func() bool {
		c, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_SCTP)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(c)
		if err := syscall.Connect(c, sa); err != nil {
			t.Fatal(err)
		}
		own, err := syscall.Getsockname(c)
		if err != nil {
			t.Fatal(err)
		}
		a, peer, err := syscall.Accept(l)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(a)
		return peer.(*syscall.SockaddrInet4).Port != own.(*syscall.SockaddrInet4).Port
	}
}

// relayed serves, as grub's proxy would, the listener a launcher sends
// over ours: every connection gets reply. stop closes the listener and
// ours and reports whether a listener came.
func relayed(t *testing.T, ours *os.File, reply string) (stop func() bool) {
	t.Helper()
	got := make(chan net.Listener, 1)
	go func() {
		f, err := ReceiveListener(ours)
		if err != nil {
			got <- nil
			return
		}
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			got <- nil
			return
		}
		got <- l
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(reply))
			c.Close()
		}
	}()
	return func() bool {
		ours.Close()
		l := <-got
		if l != nil {
			l.Close()
		}
		return l != nil
	}
}

// serveReply answers every connection to l with reply, until l closes.
func serveReply(l net.Listener, reply string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte(reply))
		c.Close()
	}
}

// TestProxyRelay: with --allow-domain in a network namespace of its
// own, the command reaches grub's proxy only through the listener its
// launcher made in that namespace and handed over. The host has a
// listener on the proxy's port number too (standing for grub's proxy
// on the host's loopback): the command never reaches it, nor another
// host listener, nor ::1; it cannot bind the proxy's port (the launcher
// bound it before the command started), holds no socket of the relay,
// and cannot join grub's network namespace.
func TestProxyRelay(t *testing.T) { bothStages(t, testProxyRelay) }

func testProxyRelay(t *testing.T, oneStage bool) {
	requireLandlock(t, MinABINetwork)
	requireNetNamespaces(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	decoy := hostTCP(t, "tcp4", "127.0.0.1:0")
	go serveReply(decoy, "host")
	port := decoy.Addr().(*net.TCPAddr).Port
	other := hostTCP(t, "tcp4", "127.0.0.1:0")
	proxy := "127.0.0.1:" + strconv.Itoa(port)
	for _, p := range []Policy{
		{Mode: ModeWorkspaceWrite, Workspace: f.ws, ProxyPort: port, NetNamespace: true},
		{Mode: ModeOff, ProxyPort: port, NetNamespace: true},
	} {
		tests := []struct {
			name   string
			argv   []string
			wantOK bool
			want   string
		}{
			{"the relayed listener", []string{self, "__netns", "tcp-read", proxy}, true, `read "relay"`},
			{"the proxy's port on ::1", []string{self, "__netns", "tcp-read", "[::1]:" + strconv.Itoa(port)}, false, ""},
			{"another host listener", []string{self, "__netns", "tcp4", other.Addr().String()}, false, ""},
			{"Multipath TCP to the host listener", []string{self, "__netns", "mptcp", other.Addr().String()}, false, ""},
			{"bind the proxy's port", []string{self, "__netns", "bind", proxy}, false, "address already in use"},
			{"no socket inherited", []string{self, "__netns", "fds", "-"}, true, ""},
			{"no way into grub's network namespace", []string{self, "__netns", "setns", strconv.Itoa(os.Getpid())}, false, ""},
			// TCP at the proxy's port number, which Landlock lets
			// through: the namespace has no route (UDP is the seccomp
			// filter's, refused before it could try).
			{"no route out", []string{self, "__netns", "tcp4", "198.51.100.1:" + strconv.Itoa(port)}, false, "network is unreachable"},
		}
		for _, tt := range tests {
			t.Run(describe(p)+": "+tt.name, func(t *testing.T) {
				ours, theirs, err := NewRelay()
				if err != nil {
					t.Fatal(err)
				}
				stop := relayed(t, ours, "relay")
				out, code := f.netRun(t, p, oneStage, theirs, tt.argv...)
				if !stop() {
					t.Errorf("the launcher sent no listener (%s)", out)
				}
				if (code == 0) != tt.wantOK || !strings.Contains(out, tt.want) || strings.Contains(out, "host") {
					t.Fatalf("exit %d (%s), want success = %v and %q, never the host's listener", code, out, tt.wantOK, tt.want)
				}
				if reachedTCP(t, other) {
					t.Fatal("the other host listener was reached")
				}
			})
		}
	}
}

// TestProxyRelayFailsClosed: a launcher asked for a network namespace
// with a proxy port but given no relay refuses to run the command (it
// would have no way to the proxy), and so does one whose relay is not
// a Unix socket.
func TestProxyRelayFailsClosed(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	requireNetNamespaces(t)
	f := newFixture(t)
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, ProxyPort: 9, NetNamespace: true}
	for _, oneStage := range []bool{false, true} {
		for _, notRelay := range []bool{false, true} {
			var relay *os.File
			if notRelay {
				var err error
				if relay, err = os.Open(os.DevNull); err != nil {
					t.Fatal(err)
				}
			}
			out, code := f.netRun(t, p, oneStage, relay, "sh", "-c", "echo ran")
			if code != ExitCannotRun || strings.Contains(out, "ran\n") || !strings.Contains(out, "no relay to grub") {
				t.Errorf("one stage %v, /dev/null for a relay %v: exit %d (%s); want %d and a message", oneStage, notRelay, code, out, ExitCannotRun)
			}
		}
	}
}

// TestReceiveListener: the end of the relay takes one listening socket
// and nothing else; the launcher's end closing without sending is EOF,
// and closing ours ends the wait.
func TestReceiveListener(t *testing.T) {
	send := func(t *testing.T, fds ...int) error {
		ours, theirs, err := NewRelay()
		if err != nil {
			t.Fatal(err)
		}
		defer ours.Close()
		if err := syscall.Sendmsg(int(theirs.Fd()), []byte{1}, syscall.UnixRights(fds...), nil, 0); err != nil {
			t.Fatal(err)
		}
		theirs.Close()
		f, err := ReceiveListener(ours)
		if err == nil {
			f.Close()
		}
		return err
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lf, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cf, err := c.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	if err := send(t, int(lf.Fd())); err != nil {
		t.Errorf("a listening socket: %v", err)
	}
	if err := send(t, int(cf.Fd())); err == nil {
		t.Error("a connected socket was taken for a listener")
	}
	if err := send(t, int(lf.Fd()), int(lf.Fd())); err == nil {
		t.Error("two sockets were taken")
	}
	ours, theirs, err := NewRelay()
	if err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	if _, err := ReceiveListener(ours); !errors.Is(err, io.EOF) {
		t.Errorf("the other end closed: %v, want EOF", err)
	}
	ours.Close()
	ours, theirs, err = NewRelay()
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	errs := make(chan error, 1)
	go func() { _, err := ReceiveListener(ours); errs <- err }()
	ours.Close()
	if err := <-errs; err == nil || errors.Is(err, io.EOF) {
		t.Errorf("ours closed: %v, want an error that is not EOF", err)
	}
}
