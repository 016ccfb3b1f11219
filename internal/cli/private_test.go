package cli

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Without a private folder (neither HOME nor XDG_STATE_HOME names one)
// grub has nowhere to keep a task's control channel: start and resume
// refuse with exit 2 and say what to set, before anything is made;
// commands that only read still work.
func TestNoPrivateFolderIsExit2(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	e.xdgState, e.home = "", ""
	code, _, stderr := e.run("start", "--agent-cmd", "true", "do a thing")
	if code != ExitUsage || !strings.Contains(stderr, "set HOME (or XDG_STATE_HOME) to an absolute path") {
		t.Errorf("start = %d, %q; want exit 2 saying what to set", code, stderr)
	}
	if tasks, _ := e.store.List(); len(tasks) != 1 {
		t.Errorf("start made a task: %d tasks", len(tasks))
	}
	code, _, stderr = e.run("resume", "0a1b2c3d")
	if code != ExitUsage || !strings.Contains(stderr, "XDG_STATE_HOME") {
		t.Errorf("resume = %d, %q; want exit 2", code, stderr)
	}
	if st := e.state("0a1b2c3d"); st.Status != "paused" || st.CurrentIteration != 0 {
		t.Errorf("resume changed the task: %s, iteration %d", st.Status, st.CurrentIteration)
	}
	if code, _, stderr := e.run("status", "0a1b2c3d"); code != 0 {
		t.Errorf("status = %d, %s", code, stderr)
	}
	if _, err := os.Lstat(e.store.Path("0a1b2c3d", "control.json")); err == nil {
		t.Error("a control.json was written in the task folder")
	}
}
