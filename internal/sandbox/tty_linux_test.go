package sandbox

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// ptyIoctl allocates a pseudo-terminal through /dev/ptmx, opens its other
// end under /dev/pts and asks that terminal for its modes (TCGETS): the
// ioctl a TIOCSTI injection into the user's /dev/pts/N would need too.
func ptyIoctl() error {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("open /dev/ptmx: %w", err)
	}
	defer m.Close()
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		return fmt.Errorf("ioctl TIOCGPTN on /dev/ptmx: %w", e)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		return fmt.Errorf("ioctl TIOCSPTLCK on /dev/ptmx: %w", e)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	s, err := os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer s.Close()
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		return fmt.Errorf("terminal ioctl on %s: %w", name, e)
	}
	return nil
}

// A sandboxed command may allocate a pseudo-terminal but gets no ioctl on
// a terminal under /dev/pts (nor /dev/tty): it could otherwise push
// keystrokes into the user's shell (TIOCSTI). Unsandboxed, the same
// program succeeds.
func TestNoTerminalIoctls(t *testing.T) {
	requireLandlock(t, 5)
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skip("no /dev/ptmx here")
	}
	if err := ptyIoctl(); err != nil {
		t.Skipf("pseudo-terminals do not work here even unsandboxed: %v", err)
	}
	f := newFixture(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, code := f.run(t, Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws}, self, "__ptyioctl")
	if code == 0 || !strings.Contains(out, "terminal ioctl on /dev/pts/") || !strings.Contains(out, "permission denied") {
		t.Errorf("sandboxed terminal ioctl: exit %d, %q; want it refused (permission denied) after allocating the pty", code, out)
	}
}
