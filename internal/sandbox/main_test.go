package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for grub: run with ExecCommand
// it is the launcher, as `grub __sandbox-exec` is, and it has helper
// commands the launcher can exec to try the network and mount_setattr(2).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case ExecCommand:
			os.Exit(Main(os.Args[2:]))
		case "__dial":
			os.Exit(report(dialTCP(os.Args[2])))
		case "__net":
			os.Exit(report(tryNet(os.Args[2], os.Args[3])))
		case "__listen":
			os.Exit(report(listenTCP()))
		case "__netns":
			os.Exit(report(netAttempt(os.Args[2:])))
		case "__ptyioctl":
			os.Exit(report(ptyIoctl()))
		case "__setattr_rw":
			os.Exit(report(makeWritable(os.Args[2])))
		}
	}
	os.Exit(m.Run())
}

func report(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

func dialTCP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// listenTCP binds a classic TCP socket: Landlock does not see Multipath
// TCP, which net.Listen uses by default since Go 1.24.
func listenTCP() error {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	return l.Close()
}
