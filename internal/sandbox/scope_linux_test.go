package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// signalProbe is a shell script that tries to signal $VICTIM (a process
// outside the sandbox, standing for grub) with SIGSTOP and SIGKILL, and
// $SELF (this test process) with signal 0, then starts a child and ends
// it with SIGTERM; each line of its output says what happened.
const signalProbe = `
kill -STOP "$VICTIM" 2>&1 && echo "stop sent"
kill -KILL "$VICTIM" 2>&1 && echo "kill sent"
kill -0 "$SELF" 2>&1 && echo "self reached"
sleep 100 & child=$!
kill -TERM "$child" && echo "child signalled"
wait "$child"; echo "child status $?"
`

// TestSignalScope: a sandboxed command, through one stage or two, cannot
// signal a process outside the sandbox (kill fails with EPERM; the
// process is neither stopped nor killed), while it can still end its own
// child.
func TestSignalScope(t *testing.T) {
	requireLandlock(t, MinABIScope)
	for _, tt := range []struct {
		name   string
		staged bool
	}{
		{"one stage", false},
		{"two stages", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f fixture
			p := Policy{Mode: ModeWorkspaceWrite}
			if tt.staged {
				requireNamespaces(t)
				rf := newRepoFixture(t)
				f, p = rf.fixture, rf.p
			} else {
				f = newFixture(t)
			}
			p.Workspace = f.ws
			victim := exec.Command("sleep", "100")
			if err := victim.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
			f.env = append(f.env, "VICTIM="+strconv.Itoa(victim.Process.Pid), "SELF="+strconv.Itoa(os.Getpid()))
			out, code := f.run(t, p, "sh", "-c", signalProbe)
			for _, bad := range []string{"stop sent", "kill sent", "self reached"} {
				if strings.Contains(out, bad) {
					t.Errorf("the sandboxed command could signal outside the sandbox (%s); output:\n%s", bad, out)
				}
			}
			if n := strings.Count(out, "not permitted"); n != 3 {
				t.Errorf("%d refusals with EPERM, want 3; output:\n%s", n, out)
			}
			if !strings.Contains(out, "child signalled") || !strings.Contains(out, "child status 143") || code != 0 {
				t.Errorf("the command could not end its own child (exit %d); output:\n%s", code, out)
			}
			if state := procState(victim.Process.Pid); state != "S" && state != "R" {
				t.Errorf("the process outside is in state %q after the command, want it running", state)
			}
		})
	}
}

// TestFirstStagePassesSignalsOn: the launcher's first stage is outside
// the second's Landlock domain, so the SIGTERM it passes on still reaches
// the command, whose trap runs.
func TestFirstStagePassesSignalsOn(t *testing.T) {
	requireLandlock(t, MinABIScope)
	requireNamespaces(t)
	f := newRepoFixture(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `trap 'echo got TERM; exit 3' TERM; echo ready; while :; do sleep 0.05; done`
	full := Wrap(self, f.p, []string{"sh", "-c", script})
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Dir, cmd.Env = f.ws, f.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	r := bufio.NewReader(stdout)
	if line, _ := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the command said %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // the first stage only
		t.Fatal(err)
	}
	line, _ := r.ReadString('\n')
	_ = cmd.Wait()
	if line != "got TERM\n" || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("after SIGTERM to the first stage the command said %q and the launcher exited %v; want the trap's line and exit 3", line, cmd.ProcessState)
	}
}

// procState is the state letter of process pid from /proc, "" when gone.
func procState(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}
