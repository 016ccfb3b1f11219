//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// pollInterval is how often KillGroup checks whether a group has gone.
const pollInterval = 20 * time.Millisecond

// groupAttr is a copy of attr (nil: none) that also makes the command
// the leader of a new process group whose id is its pid.
func groupAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	a := syscall.SysProcAttr{}
	if attr != nil {
		a = *attr
	}
	a.Setpgid, a.Pgid = true, 0
	return &a
}

// stopCommand ends a started command and its whole process group.
func stopCommand(cmd *exec.Cmd) error { return KillGroup(cmd.Process.Pid) }

// KillGroup ends process group pgid: SIGTERM to every member, then, if any
// member is still alive after KillGrace, SIGKILL. A group that no longer
// exists is not an error. It refuses pgid values that would signal more
// than one group (pgid ≤ 1) or the caller's own group.
func KillGroup(pgid int) error {
	if pgid <= 1 {
		return fmt.Errorf("proc: refusing to signal process group %d: not a group id", pgid)
	}
	if pgid == syscall.Getpgrp() {
		return fmt.Errorf("proc: refusing to signal process group %d: it is grub's own", pgid)
	}
	if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
		return err
	}
	if waitGone(pgid, KillGrace) {
		return nil
	}
	if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
		return err
	}
	// SIGKILL cannot be caught; this only gives the kernel time to act.
	waitGone(pgid, KillGrace)
	return nil
}

// signalGroup sends sig to every member of group pgid; a group that no
// longer exists is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("proc: send %v to process group %d: %w", sig, pgid, err)
}

// waitGone polls until group pgid has no live member or d has passed, and
// reports whether it is gone.
func waitGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !GroupAlive(pgid) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

// GroupAlive reports whether process group pgid has a member that is
// still running. Members that have exited but were not yet reaped
// (zombies) do not count where the system lets us tell (Linux).
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	// nil or EPERM: the group exists, maybe only as zombies.
	return groupHasLiveMember(pgid)
}

// exitStatus turns a finished process's state into an exit code and, when
// a signal ended it, the signal's name.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String()
	}
	return ps.ExitCode(), ""
}
