package failpoint

import (
	"os"
	"os/exec"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		n    int
	}{
		{"", "", 1},
		{"record.after-log", "record.after-log", 1},
		{" record.after-log@3 ", "record.after-log", 3},
		{"record.after-log@0", "record.after-log", 1},
		{"record.after-log@x", "record.after-log", 1},
	} {
		name, n := parse(tc.in)
		if name != tc.name || n != tc.n {
			t.Errorf("parse(%q) = %q, %d; want %q, %d", tc.in, name, n, tc.name, tc.n)
		}
	}
}

// TestHitExits runs this test binary again with the variable set: the
// second hit of the named failpoint ends it with ExitCode, and other names
// do nothing.
func TestHitExits(t *testing.T) {
	if os.Getenv(Env) != "" {
		Hit(LogAppended + "-not")
		Hit(LogAppended)
		os.Stdout.WriteString("after the first hit\n")
		Hit(LogAppended)
		os.Stdout.WriteString("after the second hit\n")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHitExits$")
	cmd.Env = append(os.Environ(), Env+"="+LogAppended+"@2")
	out, err := cmd.Output()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != ExitCode {
		t.Fatalf("exit %v, want %d; output %q", err, ExitCode, out)
	}
	if string(out) != "after the first hit\n" {
		t.Fatalf("output %q", out)
	}
}

func TestHitUnsetDoesNothing(t *testing.T) {
	if target != "" {
		t.Skip("the variable is set")
	}
	for _, n := range Names {
		Hit(n)
	}
}
