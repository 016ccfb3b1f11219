package controller

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/proc"
)

// A dead runner's agent group is ended only when it is still the agent:
// a group whose leader has another start time than the one on record is
// another process that got the same id (after a reboot), and is left
// alone; a record without a start time (an older grub) is trusted.
func TestAgentGroupLeftChecksTheLeader(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pgid := cmd.Process.Pid
	start, ok := proc.StartTime(pgid)
	if !ok {
		t.Skip("no start time here")
	}
	for _, tc := range []struct {
		start uint64
		want  bool
	}{{start, true}, {start + 1, false}, {0, true}} {
		if got := agentGroupLeft(harness.LockInfo{AgentPGID: pgid, AgentStart: tc.start}); got != tc.want {
			t.Errorf("agentGroupLeft with start %d (the leader's is %d) = %v, want %v", tc.start, start, got, tc.want)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if agentGroupLeft(harness.LockInfo{AgentPGID: pgid, AgentStart: start}) {
		t.Error("a group whose processes are gone is taken as left running")
	}
}
