//go:build unix

package proc

import (
	"context"
	"io"
	"os"
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

// TestRunLaunchFilesAndDone: a launch's Files reach the process as
// file descriptors 3 and on, on either start, and Run keeps no copy (the
// pipe's reader sees the end once the process is gone); Done is called
// once, after the process ended, and also when nothing could start.
func TestRunLaunchFilesAndDone(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var attr *syscall.SysProcAttr
		if fallback {
			attr = &syscall.SysProcAttr{Chroot: "/nonexistent-grub-test-root"}
		}
		done := 0
		res, err := Run(context.Background(), Spec{Command: "echo through-3 >&3; echo out",
			Wrap: func(argv []string) Launch {
				return Launch{Argv: argv, Attr: attr, Plain: argv, Files: []*os.File{w}, Done: func() { done++ }}
			}})
		if err != nil || strings.TrimSpace(string(res.Stdout)) != "out" {
			t.Fatalf("fallback=%v: %q, %v", fallback, res.Stdout, err)
		}
		got, err := io.ReadAll(r) // ends only when no copy of w is left
		r.Close()
		if err != nil || string(got) != "through-3\n" {
			t.Errorf("fallback=%v: read %q, %v from the process's fd 3", fallback, got, err)
		}
		if done != 1 {
			t.Errorf("fallback=%v: Done called %d times, want 1", fallback, done)
		}
	}
	done := 0
	_, err := Run(context.Background(), Spec{Args: []string{"true"},
		Wrap: func(argv []string) Launch {
			return Launch{Argv: []string{"/nonexistent-grub-test-program"}, Done: func() { done++ }}
		}})
	if err == nil || done != 1 {
		t.Errorf("a launch that cannot start: err %v, Done called %d times; want an error and 1", err, done)
	}
}
