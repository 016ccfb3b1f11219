package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/net/bpf"
)

// call is one system call as the filter sees it (struct seccomp_data).
type call struct {
	arch uint32
	nr   uint32
	args [6]uint64
}

// data lays c out for bpf.VM, which loads words big-endian: each 32-bit
// word the filter reads sits at the offset it reads it from (the low half
// of an argument first, as on the little-endian machines it runs on).
func (c call) data() []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNR:], c.nr)
	binary.BigEndian.PutUint32(b[offArch:], c.arch)
	for i, a := range c.args {
		binary.BigEndian.PutUint32(b[argLow(i):], uint32(a))
		binary.BigEndian.PutUint32(b[argLow(i)+4:], uint32(a>>32))
	}
	return b
}

// TestNetworkFilterProgram runs the filter for each architecture it knows
// on the system calls an attacker would try, in BPF's interpreter.
func TestNetworkFilterProgram(t *testing.T) {
	const (
		allow = retAllow
		deny  = retErrno | uint32(syscall.EACCES)
		kill  = retKillProcess
		high  = 1 << 32
		i386  = 0x40000003 // AUDIT_ARCH_I386
	)
	for name, arch := range filterArches {
		sock := func(domain, typ, proto uint64) call {
			return call{arch: arch.audit, nr: arch.socket, args: [6]uint64{domain, typ, proto}}
		}
		type test struct {
			name         string
			c            call
			unix, listen bool
			want         uint32
		}
		tests := []test{
			{"read", call{arch: arch.audit, nr: 0}, false, false, allow},
			{"tcp4", sock(syscall.AF_INET, syscall.SOCK_STREAM, 0), false, false, allow},
			{"tcp6 nonblocking close-on-exec", sock(syscall.AF_INET6, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP), false, false, allow},
			{"udp4", sock(syscall.AF_INET, syscall.SOCK_DGRAM, 0), false, false, deny},
			{"udp6 close-on-exec", sock(syscall.AF_INET6, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0), false, false, deny},
			{"raw", sock(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP), false, false, deny},
			{"mptcp", sock(syscall.AF_INET, syscall.SOCK_STREAM, ipprotoMPTCP), false, false, deny},
			{"sctp stream", sock(syscall.AF_INET6, syscall.SOCK_STREAM, ipprotoSCTP), false, false, deny},
			{"sctp seqpacket", sock(syscall.AF_INET, syscall.SOCK_SEQPACKET, ipprotoSCTP), false, false, deny},
			{"stream with protocol high bits", sock(syscall.AF_INET, syscall.SOCK_STREAM, high|ipprotoMPTCP), false, false, deny},
			{"udp with high bits", sock(high|syscall.AF_INET, high|syscall.SOCK_DGRAM, high), false, false, deny},
			{"unix below ABI 9", sock(syscall.AF_UNIX, syscall.SOCK_STREAM, 0), false, false, deny},
			{"unix from ABI 9", sock(syscall.AF_UNIX, syscall.SOCK_STREAM, 0), true, false, allow},
			{"netlink route", sock(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, netlinkRoute), false, false, allow},
			{"netlink audit", sock(syscall.AF_NETLINK, syscall.SOCK_RAW, netlinkAudit), false, false, deny},
			{"packet", sock(syscall.AF_PACKET, syscall.SOCK_RAW, 0), true, false, deny},
			{"vsock", sock(afVsock, syscall.SOCK_STREAM, 0), true, false, deny},
			{"socketpair unix", call{arch: arch.audit, nr: arch.socketpair, args: [6]uint64{syscall.AF_UNIX, syscall.SOCK_STREAM}}, false, false, allow},
			{"socketpair tipc", call{arch: arch.audit, nr: arch.socketpair, args: [6]uint64{30, syscall.SOCK_RDM}}, false, false, deny},
			{"sendto", call{arch: arch.audit, nr: arch.sendto}, false, false, allow},
			{"sendto fast open", call{arch: arch.audit, nr: arch.sendto, args: [6]uint64{3, 0, 1, msgFastOpen}}, false, false, deny},
			{"sendmsg fast open", call{arch: arch.audit, nr: arch.sendmsg, args: [6]uint64{3, 0, msgFastOpen | syscall.MSG_DONTWAIT}}, false, false, deny},
			{"sendmsg", call{arch: arch.audit, nr: arch.sendmsg, args: [6]uint64{3, 0, syscall.MSG_DONTWAIT}}, false, false, allow},
			{"sendmmsg fast open", call{arch: arch.audit, nr: arch.sendmmsg, args: [6]uint64{3, 0, 1, msgFastOpen}}, false, false, deny},
			{"listen under NoNetwork", call{arch: arch.audit, nr: arch.listen, args: [6]uint64{3, 1}}, true, false, deny},
			{"listen with bind allowed", call{arch: arch.audit, nr: arch.listen, args: [6]uint64{3, 1}}, false, true, allow},
			{"io_uring_setup", call{arch: arch.audit, nr: arch.ioUringSetup}, true, false, deny},
			{"io_uring_enter", call{arch: arch.audit, nr: arch.ioUringEnter}, true, false, deny},
			{"io_uring_register", call{arch: arch.audit, nr: arch.ioUringRegister}, true, false, deny},
			{"another ABI's socketcall", call{arch: i386, nr: 102, args: [6]uint64{1}}, true, false, kill},
			{"another ABI's read", call{arch: i386, nr: 3}, true, false, kill},
		}
		if arch.x32 {
			tests = append(tests, test{"x32 socket", call{arch: arch.audit, nr: x32SyscallBit | arch.socket, args: [6]uint64{syscall.AF_INET, syscall.SOCK_DGRAM}}, true, true, kill})
		}
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				prog, err := networkFilter(arch, filterOptions{unix: tt.unix, listen: tt.listen})
				if err != nil {
					t.Fatal(err)
				}
				vm, err := bpf.NewVM(prog)
				if err != nil {
					t.Fatal(err)
				}
				got, err := vm.Run(tt.c.data())
				if err != nil {
					t.Fatal(err)
				}
				if uint32(got) != tt.want {
					t.Errorf("filter returns %#x, want %#x", got, tt.want)
				}
			})
		}
	}
}

// listeners are loopback servers of each kind a command might try to
// reach, outside the sandbox.
type listeners struct {
	tcp4, tcp6, udp4, udp6 string
	unix, unixgram         string
	udp                    []net.PacketConn
}

func newListeners(t *testing.T) listeners {
	t.Helper()
	var ls listeners
	for _, addr := range []*string{&ls.tcp4, &ls.tcp6} {
		network, at := "tcp4", "127.0.0.1:0"
		if addr == &ls.tcp6 {
			network, at = "tcp6", "[::1]:0"
		}
		var lc net.ListenConfig
		l, err := lc.Listen(context.Background(), network, at)
		if err != nil && network == "tcp6" {
			t.Logf("no IPv6 loopback: %v", err)
			continue
		}
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
		*addr = l.Addr().String()
	}
	for i, at := range []string{"127.0.0.1:0", "[::1]:0"} {
		pc, err := net.ListenPacket("udp", at)
		if err != nil && i == 1 {
			t.Logf("no IPv6 loopback: %v", err)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		ls.udp = append(ls.udp, pc)
	}
	ls.udp4 = ls.udp[0].LocalAddr().String()
	if len(ls.udp) > 1 {
		ls.udp6 = ls.udp[1].LocalAddr().String()
	}
	dir := t.TempDir()
	ls.unix, ls.unixgram = filepath.Join(dir, "s"), filepath.Join(dir, "g")
	ul, err := net.Listen("unix", ls.unix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ug, err := net.ListenPacket("unixgram", ls.unixgram)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ug.Close() })
	return ls
}

// queued reports whether a datagram waits on pc. Loopback delivers a
// datagram within sendto(2), so after the sender ended it is there or
// it never will be.
func queued(t *testing.T, pc net.PacketConn) bool {
	t.Helper()
	raw, err := pc.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var rerr error
	buf := make([]byte, 16)
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if rerr != nil && !errors.Is(rerr, syscall.EAGAIN) {
		t.Fatal(rerr)
	}
	return rerr == nil && n > 0
}

// sysctl reads /proc/sys/name, "" when it cannot.
func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// netRaw reports whether this process holds CAP_NET_RAW (bit 13 of its
// effective capabilities).
func netRaw() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && caps&(1<<13) != 0
		}
	}
	return false
}

// TestNetworkFilter: under NoNetwork, in a confining mode and in mode
// off, none of the ways out reaches a loopback listener or gets a socket
// that could: each is refused with "permission denied" (a call of another
// ABI ends the process), while a socketpair and a route netlink socket
// still work. Without NoNetwork the same attempts that can get through
// here do, so each refusal is the sandbox's.
func TestNetworkFilter(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	if ok, why := FilterSupported(); !ok {
		t.Skip(why)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ls := newListeners(t)
	f := newFixture(t)
	type attempt struct {
		kind, addr string
		// open: gets through without NoNetwork on this machine (raw and
		// packet sockets with CAP_NET_RAW), checked where known.
		open bool
		// allowed: still works under NoNetwork.
		allowed bool
	}
	attempts := []attempt{
		{"tcp4", ls.tcp4, true, false},
		{"tcp6", ls.tcp6, true, false},
		{"mapped", ls.tcp4, true, false},
		{"mptcp4", ls.tcp4, sysctl("net/mptcp/enabled") == "1", false},
		{"mptcp6", ls.tcp6, sysctl("net/mptcp/enabled") == "1", false},
		{"udp4", ls.udp4, true, false},
		{"udp6", ls.udp6, true, false},
		{"unix", ls.unix, true, false},
		{"unixgram", ls.unixgram, true, false},
		{"tfo", ls.tcp4, sysctl("net/ipv4/tcp_fastopen") == "1" || sysctl("net/ipv4/tcp_fastopen") == "3", false},
		{"highbits", "", true, false},
		{"uring", "", sysctl("kernel/io_uring_disabled") == "0", false},
		{"sctp", "", false, false},
		{"sctp6seq", "", false, false},
		{"raw", "", netRaw(), false},
		{"ping", "", false, false},
		{"packet", "", netRaw(), false},
		{"vsock", "", false, false},
		{"netlink", "", false, false},
		{"route", "", true, true},
		{"pair", "", true, true},
		{"autolisten", "", true, false},
	}
	// A port nothing listens on stands for the allowlist's proxy: the
	// filter's refusals are the same, and an unbound socket may still
	// listen there (the allowlist leaves bind alone).
	free, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyPort := free.Addr().(*net.TCPAddr).Port
	free.Close()
	policies := []struct {
		name      string
		p         Policy
		noNetwork bool
	}{
		{"allowlist", Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, ProxyPort: proxyPort}, true},
		{"network allowed", Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws}, false},
		{"no network", Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, NoNetwork: true}, true},
		{"no network, mode off", Policy{Mode: ModeOff, NoNetwork: true}, true},
		{"no network, read-only paths", Policy{Mode: ModeReadOnly, NoNetwork: true, ReadOnly: []string{f.etc}}, true},
	}
	for _, pol := range policies {
		for _, a := range attempts {
			t.Run(pol.name+"/"+a.kind, func(t *testing.T) {
				if !pol.noNetwork && !a.open {
					t.Skip("not open here even without the sandbox's network rules")
				}
				if a.addr == "" && strings.HasSuffix(a.kind, "6") {
					t.Skip("no IPv6 loopback here")
				}
				out, code := f.run(t, pol.p, self, "__net", a.kind, a.addr)
				wantOK := !pol.noNetwork || a.allowed || (pol.p.ProxyPort != 0 && a.kind == "autolisten")
				if ok := code == 0; ok != wantOK {
					t.Fatalf("exit %d (%s), want success=%v", code, out, wantOK)
				}
				if !wantOK && !strings.Contains(out, "permission denied") {
					t.Errorf("refused with %q, want permission denied", out)
				}
				for i, udp := range []string{ls.udp4, ls.udp6}[:len(ls.udp)] {
					if a.addr != udp {
						continue
					}
					if got := queued(t, ls.udp[i]); got != wantOK {
						t.Errorf("datagram arrived: %v, want %v", got, wantOK)
					}
				}
			})
		}
	}
}

// TestNetworkFilterOtherABI: a system call through amd64's x32 ABI, which
// a filter that reads only the number would take for the 64-bit one, ends
// the process with SIGSYS under NoNetwork. Without it the kernel answers
// (ENOSYS where x32 is not built in), so the end is the filter's.
func TestNetworkFilterOtherABI(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	if ok, why := FilterSupported(); !ok {
		t.Skip(why)
	}
	if _, ok := filterArches[runtime.GOARCH]; !ok || !filterArches[runtime.GOARCH].x32 {
		t.Skip("x32 is an amd64 ABI")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	for _, noNet := range []bool{false, true} {
		full := Wrap(self, Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, NoNetwork: noNet}, []string{self, "__net", "x32", ""})
		cmd := exec.Command(full[0], full[1:]...)
		cmd.Env = f.env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("no network %v: %v (%s), want a failure", noNet, err, out)
		}
		ws := exit.Sys().(syscall.WaitStatus)
		if killed := ws.Signaled() && ws.Signal() == syscall.SIGSYS; killed != noNet {
			t.Errorf("no network %v: %v (%s); killed by SIGSYS: %v, want %v", noNet, err, out, killed, noNet)
		}
	}
}

// TestNetworkFilterNewNamespace: in a user and network namespace of its
// own (unshare -rn), where a process holds CAP_NET_RAW, a command still
// gets no packet socket under NoNetwork: the filter is inherited into
// every namespace.
func TestNetworkFilterNewNamespace(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	if ok, why := FilterSupported(); !ok {
		t.Skip(why)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1)")
	}
	if err := exec.Command(unshare, "-rn", "true").Run(); err != nil {
		t.Skipf("unshare -rn: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{unshare, "-rn", self, "__net", "packet", ""}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("unconfined: %v (%s), want a packet socket in the new namespace", err, out)
	}
	// Mode off: unshare -r writes its uid_map, under /proc.
	f := newFixture(t)
	out, code := f.run(t, Policy{Mode: ModeOff, NoNetwork: true}, argv...)
	if code == 0 || !strings.Contains(out, "socket: permission denied") {
		t.Errorf("no network: exit %d (%s), want permission denied", code, out)
	}
}

// TestInheritedSocketsClosed: a UDP socket connected outside and handed
// to the launcher as file descriptor 3 does not reach the command under
// NoNetwork (the launcher marks it close-on-exec), and does without it.
func TestInheritedSocketsClosed(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	if ok, why := FilterSupported(); !ok {
		t.Skip(why)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ls := newListeners(t)
	f := newFixture(t)
	conn, err := net.Dial("udp", ls.udp4)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sock, err := conn.(*net.UDPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	for _, noNet := range []bool{false, true} {
		full := Wrap(self, Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, NoNetwork: noNet}, []string{self, "__net", "inherit", ""})
		cmd := exec.Command(full[0], full[1:]...)
		cmd.Env = f.env
		cmd.ExtraFiles = []*os.File{sock}
		out, err := cmd.CombinedOutput()
		if (err == nil) == noNet {
			t.Errorf("no network %v: %v (%s), want success=%v", noNet, err, out, !noNet)
		}
		if noNet && !strings.Contains(string(out), "bad file descriptor") {
			t.Errorf("no network: %s, want bad file descriptor", out)
		}
		if got := queued(t, ls.udp[0]); got == noNet {
			t.Errorf("no network %v: datagram arrived: %v", noNet, got)
		}
	}
}

// TestStealSocket: a sandboxed command cannot take a copy of a socket a
// process outside the sandbox holds (pidfd_getfd(2), which needs the
// right to ptrace that process: Landlock refuses it outside its domain),
// while the same call unconfined can where the user may ptrace.
func TestStealSocket(t *testing.T) {
	requireLandlock(t, MinABINetwork)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ls := newListeners(t)
	conn, err := net.Dial("udp", ls.udp4)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sock, err := conn.(*net.UDPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	target := strconv.Itoa(os.Getpid()) + ":" + strconv.Itoa(int(sock.Fd()))
	f := newFixture(t)
	if out, err := exec.Command(self, "__net", "steal", target).CombinedOutput(); err != nil {
		t.Skipf("pidfd_getfd unconfined: %v (%s)", err, out)
	}
	for _, p := range []Policy{{Mode: ModeWorkspaceWrite, Workspace: f.ws}, {Mode: ModeOff, NoNetwork: true}} {
		out, code := f.run(t, p, self, "__net", "steal", target)
		if code == 0 || !strings.Contains(out, "operation not permitted") {
			t.Errorf("%s: exit %d (%s), want operation not permitted", describe(p), code, out)
		}
	}
}
