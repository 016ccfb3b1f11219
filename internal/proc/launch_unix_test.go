//go:build unix

package proc

import (
	"context"
	"strings"
	"syscall"
	"testing"
)

// TestRunLaunchFallsBack: a launch whose attributes the system refuses
// (here a chroot into a folder that does not exist, as a kernel refuses
// a user namespace) runs its plain command line instead, still in a
// process group of its own; one that starts runs with them.
func TestRunLaunchFallsBack(t *testing.T) {
	refused := &syscall.SysProcAttr{Chroot: "/nonexistent-grub-test-root"}
	res, err := Run(context.Background(), Spec{Command: "echo original",
		Wrap: func(argv []string) Launch {
			return Launch{Argv: append([]string{"env", "WRAPPED=attr"}, argv...), Attr: refused,
				Plain: []string{"sh", "-c", `echo "plain $(ps -o pgid= -p $$ | tr -d ' ') $$"`}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(res.Stdout))
	if len(f) != 3 || f[0] != "plain" || f[1] != f[2] {
		t.Errorf("stdout %q: want the plain command, leading its own group", res.Stdout)
	}
	res, err = Run(context.Background(), Spec{Command: `echo "$WRAPPED"`,
		Wrap: func(argv []string) Launch {
			return Launch{Argv: append([]string{"env", "WRAPPED=attr"}, argv...), Attr: &syscall.SysProcAttr{},
				Plain: []string{"echo", "plain"}}
		}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "attr" {
		t.Errorf("a launch the system accepts: %q, %v; want it run with its attributes", res.Stdout, err)
	}
}
