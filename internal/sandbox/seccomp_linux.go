//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
)

// The network filter: a seccomp program the launcher installs after
// Landlock and before exec (applySeccomp), closing what Landlock's TCP
// rules leave open. Under it a command may create only:
//
//   - AF_INET and AF_INET6 stream sockets of plain TCP (protocol 0 or
//     IPPROTO_TCP), which Landlock governs: no UDP, ICMP or raw sockets,
//     no Multipath TCP (IPPROTO_MPTCP, which Landlock does not see), no
//     SCTP, DCCP or other protocols;
//   - AF_NETLINK sockets of NETLINK_ROUTE, which reach the kernel only
//     (Go's net.Interfaces and glibc's getaddrinfo read addresses with it);
//   - AF_UNIX sockets only where Landlock refuses connecting to pathname
//     sockets (unixLeftToLandlock); below Landlock ABI 9 socket(AF_UNIX)
//     is refused, so a tool that talks to a local server over a Unix
//     socket (ssh-agent, Docker, a database) fails;
//   - with socketpair(2), AF_UNIX pairs, which reach nothing outside.
//
// Every other family (AF_PACKET, AF_VSOCK, which reaches a virtual
// machine's host, AF_BLUETOOTH, AF_XDP, …) is refused, and so are
// io_uring (its IORING_OP_SOCKET makes sockets seccomp never sees),
// sendto, sendmsg and sendmmsg with MSG_FASTOPEN (a TCP Fast Open send
// connects without connect(2), and Landlock does not see it) and, under
// NoNetwork, listen(2) (see filterOptions.listen). A refused call fails
// with EACCES, as Landlock's refusals do. A system call of another ABI
// (the 32-bit ones on amd64, with their socketcall(2), and x32's) ends
// the process.
//
// The filter reads only the low 32 bits of each argument, as the kernel
// does for these int arguments, so that high bits set by the caller
// cannot make a refused call look like another.

// filterArch is what the filter needs to know of a CPU architecture: its
// AUDIT_ARCH value and the numbers of the system calls it inspects.
type filterArch struct {
	audit uint32
	// x32 marks amd64, whose x32 ABI shares AUDIT_ARCH_X86_64 and sets
	// bit 30 in the system call number.
	x32                                                   bool
	socket, socketpair, listen, sendto, sendmsg, sendmmsg uint32
	ioUringSetup, ioUringEnter, ioUringRegister           uint32
	seccomp                                               uintptr
}

// filterArches are the architectures grub's filter knows. io_uring's
// numbers are the same everywhere since Linux 5.1.
var filterArches = map[string]filterArch{
	"amd64": {audit: 0xc000003e, x32: true, socket: 41, socketpair: 53, listen: 50, sendto: 44, sendmsg: 46, sendmmsg: 307,
		ioUringSetup: 425, ioUringEnter: 426, ioUringRegister: 427, seccomp: 317},
	"arm64": {audit: 0xc00000b7, socket: 198, socketpair: 199, listen: 201, sendto: 206, sendmsg: 211, sendmmsg: 269,
		ioUringSetup: 425, ioUringEnter: 426, ioUringRegister: 427, seccomp: 277},
}

// seccomp(2) operations, flags and return actions.
const (
	seccompSetModeFilter   = 1
	seccompGetActionAvail  = 2
	seccompFilterFlagTsync = 1

	retKillProcess = 0x80000000
	retErrno       = 0x00050000
	retAllow       = 0x7fff0000

	prSetNoNewPrivs = 38
	msgFastOpen     = 0x20000000
	sockTypeMask    = 0xf
	netlinkRoute    = 0
	ipprotoTCP      = 6
	x32SyscallBit   = 0x40000000
)

// Offsets in struct seccomp_data: nr, arch, then the six arguments as
// 64-bit words; the low half comes first on little-endian machines, the
// only ones filterArches lists.
const (
	offNR   = 0
	offArch = 4
	offArgs = 16
)

func argLow(i int) uint32 { return uint32(offArgs + 8*i) }

// networkFilter assembles the filter for arch.
func networkFilter(arch filterArch, opt filterOptions) ([]bpf.Instruction, error) {
	var a asm
	a.load(offArch)
	a.jumpEq(arch.audit, "", "kill")
	a.load(offNR)
	if arch.x32 {
		a.jumpGE(x32SyscallBit, "kill", "")
	}
	a.jumpEq(arch.socket, "socket", "")
	a.jumpEq(arch.socketpair, "socketpair", "")
	if !opt.listen {
		a.jumpEq(arch.listen, "deny", "")
	}
	a.jumpEq(arch.sendto, "flags3", "")
	a.jumpEq(arch.sendmmsg, "flags3", "")
	a.jumpEq(arch.sendmsg, "flags2", "")
	a.jumpEq(arch.ioUringSetup, "deny", "")
	a.jumpEq(arch.ioUringEnter, "deny", "")
	a.jumpEq(arch.ioUringRegister, "deny", "")
	a.ret(retAllow)

	a.label("socket")
	a.load(argLow(0))
	a.jumpEq(syscall.AF_INET, "inet", "")
	a.jumpEq(syscall.AF_INET6, "inet", "")
	a.jumpEq(syscall.AF_NETLINK, "netlink", "")
	if opt.unix {
		a.jumpEq(syscall.AF_UNIX, "allow", "")
	}
	a.ret(retErrno | uint32(syscall.EACCES))

	a.label("inet")
	a.load(argLow(1))
	a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
	a.jumpEq(syscall.SOCK_STREAM, "", "deny")
	a.load(argLow(2))
	a.jumpEq(0, "allow", "")
	a.jumpEq(ipprotoTCP, "allow", "deny")

	a.label("netlink")
	a.load(argLow(2))
	a.jumpEq(netlinkRoute, "allow", "deny")

	a.label("socketpair")
	a.load(argLow(0))
	a.jumpEq(syscall.AF_UNIX, "allow", "deny")

	a.label("flags3")
	a.load(argLow(3))
	a.jumpSet(msgFastOpen, "deny", "allow")
	a.label("flags2")
	a.load(argLow(2))
	a.jumpSet(msgFastOpen, "deny", "allow")

	a.label("allow")
	a.ret(retAllow)
	a.label("deny")
	a.ret(retErrno | uint32(syscall.EACCES))
	a.label("kill")
	a.ret(retKillProcess)
	return a.program()
}

// asm builds a classic BPF program with named forward jump targets ("" is
// the next instruction).
type asm struct {
	ins    []bpf.Instruction
	jumps  map[int][2]string
	labels map[string]int
}

func (a *asm) op(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *asm) load(off uint32) { a.op(bpf.LoadAbsolute{Off: off, Size: 4}) }

func (a *asm) ret(v uint32) { a.op(bpf.RetConstant{Val: v}) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *asm) jump(cond bpf.JumpTest, v uint32, yes, no string) {
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[len(a.ins)] = [2]string{yes, no}
	a.op(bpf.JumpIf{Cond: cond, Val: v})
}

func (a *asm) jumpEq(v uint32, yes, no string)  { a.jump(bpf.JumpEqual, v, yes, no) }
func (a *asm) jumpGE(v uint32, yes, no string)  { a.jump(bpf.JumpGreaterOrEqual, v, yes, no) }
func (a *asm) jumpSet(v uint32, yes, no string) { a.jump(bpf.JumpBitsSet, v, yes, no) }

// program resolves the jumps' labels into skips.
func (a *asm) program() ([]bpf.Instruction, error) {
	skip := func(at int, name string) (uint8, error) {
		if name == "" {
			return 0, nil
		}
		to, ok := a.labels[name]
		if !ok || to <= at || to-at-1 > 255 {
			return 0, fmt.Errorf("seccomp filter: bad jump from %d to %q", at, name)
		}
		return uint8(to - at - 1), nil
	}
	for at, targets := range a.jumps {
		j := a.ins[at].(bpf.JumpIf)
		var err error
		if j.SkipTrue, err = skip(at, targets[0]); err != nil {
			return nil, err
		}
		if j.SkipFalse, err = skip(at, targets[1]); err != nil {
			return nil, err
		}
		a.ins[at] = j
	}
	return a.ins, nil
}

// FilterSupported reports whether the launcher can install the network
// filter here: a kernel with seccomp filters that can end a process
// (Linux 4.14), on an architecture filterArches lists. why says what is
// missing.
func FilterSupported() (ok bool, why string) { return filterOnce() }

var filterOnce = sync.OnceValues(func() (bool, string) {
	arch, ok := filterArches[runtime.GOARCH]
	if !ok {
		return false, "grub has no seccomp filter for " + runtime.GOARCH
	}
	action := uint32(retKillProcess)
	_, _, errno := syscall.Syscall(syscall.SYS_PRCTL, syscall.PR_GET_SECCOMP, 0, 0)
	if errno != 0 {
		return false, "the kernel has no seccomp"
	}
	_, _, errno = syscall.Syscall(arch.seccomp, seccompGetActionAvail, 0, uintptr(unsafe.Pointer(&action)))
	if errno != 0 {
		return false, "the kernel's seccomp cannot filter system calls (" + errno.Error() + ")"
	}
	return true, ""
})

// applySeccomp installs the network filter on every thread of the
// launcher when p asks for it (networkFiltered), so that the command it
// execs and everything that command starts inherit it, and marks the
// sockets it inherited (file descriptors from 3 up) close-on-exec, so that
// none opened outside reaches the command. Where FilterSupported says
// the kernel or the architecture cannot, it does nothing: Resolve warned
// at start.
func applySeccomp(p Policy, ownNet bool) error {
	if !networkFiltered(p) {
		return nil
	}
	if ok, _ := FilterSupported(); !ok {
		return nil
	}
	arch := filterArches[runtime.GOARCH]
	abi, _ := Supported()
	prog, err := networkFilter(arch, filterFor(p, abi, ownNet))
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	if err := closeInheritedSockets(); err != nil {
		return err
	}
	// no_new_privs is a condition of installing a filter without
	// CAP_SYS_ADMIN; Landlock set it already, on every thread. TSYNC then
	// puts the filter on every thread, so that whichever execs has it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); errno != 0 {
		return fmt.Errorf("seccomp filter: no_new_privs: %w", errno)
	}
	fprog := struct {
		n      uint16
		filter *bpf.RawInstruction
	}{uint16(len(raw)), &raw[0]}
	r, _, errno := syscall.RawSyscall(arch.seccomp, seccompSetModeFilter, seccompFilterFlagTsync, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(raw)
	if errno != 0 {
		return fmt.Errorf("seccomp filter: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp filter: thread %d could not take it", r)
	}
	return nil
}

// closeInheritedSockets marks every socket among the launcher's file
// descriptors from 3 up close-on-exec: a socket connected or bound
// outside the sandbox (a Unix socket to a daemon, a UDP socket) would
// otherwise let the command send through it. Standard input, output and
// error are the caller's choice and stay.
func closeInheritedSockets() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open files: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			continue
		}
		syscall.CloseOnExec(fd)
	}
	return nil
}
