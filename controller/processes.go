package controller

import (
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
