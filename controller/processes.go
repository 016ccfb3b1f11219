package controller

import (
	"fmt"
	"slices"
	"time"

	"github.com/grub-dev/grub/harness"
)

// defaultProcessScan is how often a turn's processes are put on record in
// the lock (Options.ProcessScan).
const defaultProcessScan = 500 * time.Millisecond

// watchProcesses puts grub's descendants (the agent, what it started, a
// daemon it detached with setsid, init.sh and verify commands) on record
// in the lock file every Options.ProcessScan while a turn runs and is
// refereed, writing the lock only when the set changed, so that the next
// runner ends them (endLeftAgent) if this one dies. What starts and
// detaches within the last interval before a kill -9 is not on record:
// that window is the scan interval. stop returns once the scanner has
// ended; endOrphans clears the record after the turn.
//
// The scan runs on the wall clock, not Options.Clock: it watches real
// processes, and a fake clock's hours must not become thousands of scans.
func (c *Controller) watchProcesses() (stop func()) {
	if c.opts.Reaper == nil {
		return func() {}
	}
	every := c.opts.ProcessScan
	if every <= 0 {
		every = defaultProcessScan
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		var last []harness.ProcessRef
		for {
			if refs := c.opts.Reaper.Descendants(); !slices.Equal(refs, last) {
				if c.lock.SetProcesses(refs) == nil {
					last = refs
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}

// Who left the processes endTurnProcesses ends, for its lines.
const (
	leftByTurn   = "the turn"
	leftByChecks = "init.sh or a verify command"
)

// endTurnProcesses ends every process below grub, whatever its session
// (what the agent left, a setsid daemon, a double fork, what init.sh or a
// verify command started), and looks again: each gets SIGTERM, then after
// proc.KillGrace SIGKILL, a process started meanwhile included, until none
// is left. It runs before the referee reads the work tree (who is
// leftByTurn) and again after the verification, before the commit
// (leftByChecks), so that nothing the turn started acts after grub looked.
// Where some process could not be ended (a tree that forks faster than
// it is killed), the turn fails and ended is false: what it changed is not
// to be accepted.
func (c *Controller) endTurnProcesses(out *outcome, who string) (ended bool) {
	if c.opts.Reaper == nil {
		return true
	}
	pids, err := c.opts.Reaper.EndOrphans()
	if len(pids) > 0 {
		when := "before the referee looked"
		if who == leftByChecks {
			when = "before the commit"
		}
		if who == leftByTurn {
			c.say("turn %d left %d process(es) running; ended them %s: %v", c.st.CurrentIteration, len(pids), when, pids)
		} else {
			c.say("turn %d: %s left %d process(es) running; ended them %s: %v", c.st.CurrentIteration, who, len(pids), when, pids)
		}
	}
	left := c.opts.Reaper.Descendants()
	if err == nil && len(left) == 0 {
		return true
	}
	why := fmt.Sprintf("%d still alive", len(left))
	if err != nil {
		why = err.Error()
	}
	out.failAs(harness.FindingTampering, "%s left processes that grub could not end (%s); the turn's work was not accepted", who, why)
	return false
}
