//go:build linux

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
)

// A resume right after a kill -9, while a child the killed runner started
// (between fork and exec) still holds the lock's file for a moment: the
// record names a runner of this host that is gone, so resume's probe
// (store.Holder) sees no runner and its lock waits for the file, instead
// of exiting 75 "already running" (make chaos hit it on a loaded machine).
func TestResumeWaitsOutAGoneRunnersChild(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) {
		st.Phase = harness.PhaseInitializer
		st.CurrentIteration = 4
		st.Limits.MaxIterations = 4
		st.Agent = harness.Agent{Kind: "command", Command: "false"}
	})
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	path := e.store.Path("0a1b2c3d", harness.FileLock)
	record := fmt.Sprintf(`{"pid":%d,"host":%q,"startedAt":"2026-01-01T00:00:00Z","role":"runner"}`+"\n", gone.Process.Pid, e.store.HostName())
	if err := os.WriteFile(path, []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	// The killed runner's child's copy of the open file, holding the flock
	// for a moment more.
	child, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(child.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(300 * time.Millisecond); child.Close() }()
	code, _, errOut := e.run("resume", "0a1b2c3d", "--max-iter", "4")
	if code == ExitLocked || strings.Contains(errOut, "already running") {
		t.Fatalf("resume while a gone runner's child holds the lock for 300ms: exit %d\n%s", code, errOut)
	}
}
