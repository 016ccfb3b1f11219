package controller

import (
	"fmt"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
)

// applyControl takes the requests other grub processes left in control.json
// and applies them at a turn boundary. It returns a stop for pause and stop,
// and how many requests it took (stale ones included).
func (c *Controller) applyControl() (stop Stop, ok bool, taken int) {
	reqs, err := c.store.TakeControl(c.st.ID)
	if err != nil {
		c.say("ignoring control requests: %v", err)
		return Stop{}, false, 0
	}
	s, ok := c.apply(c.fresh(reqs))
	return s, ok, len(reqs)
}

// fresh drops the requests older than the state they would change: made
// before this run started, or before the state.json it loaded was last
// changed (c.since). Such a request was meant for an earlier run that
// ended before taking it, or was queued while a short-lived command held
// the lock; applying it now would undo what changed since (a later edit,
// a resume after a pause). Each one dropped is said.
func (c *Controller) fresh(reqs []harness.ControlRequest) []harness.ControlRequest {
	var out []harness.ControlRequest
	for _, r := range reqs {
		if r.At.Before(c.since) {
			c.say("dropped a %s request made at %s: it is older than this run or the task's last change (%s), so it no longer applies",
				r.Kind, r.At.UTC().Format(time.RFC3339), c.since.UTC().Format(time.RFC3339))
			continue
		}
		out = append(out, r)
	}
	return out
}

// apply applies control requests to the state, in order.
func (c *Controller) apply(reqs []harness.ControlRequest) (Stop, bool) {
	var stop *Stop
	trusted := false // the user changed settings that need trust
	defer func() {
		if trusted {
			// The user's grub edit: the new settings are the user's, as
			// the ones this run started with were (resume checked them).
			if err := c.store.TrustTask(c.st); err != nil {
				c.say("could not record the new settings as trusted: %v", err)
			}
		}
	}()
	for _, r := range reqs {
		switch r.Kind {
		case harness.ControlPause, harness.ControlPauseNow:
			if stop == nil {
				stop = &Stop{harness.StatusPaused, harness.ReasonPausedByUser}
			}
		case harness.ControlStop:
			stop = &Stop{harness.StatusStopped, harness.ReasonStoppedByUser}
		case harness.ControlEdit:
			c.editGoal(r.Goal)
		case harness.ControlLimits:
			if r.Limits != nil {
				old := c.st.Limits
				r.Limits.Apply(&c.st.Limits)
				c.logEdit(harness.Edit{At: c.now(), OldLimits: old, NewLimits: c.st.Limits})
				c.say("limits changed by user request")
			}
		case harness.ControlSandbox:
			if r.Sandbox != nil {
				old := c.st.Sandbox
				c.st.Sandbox = *r.Sandbox
				trusted = true
				c.logEdit(harness.Edit{At: c.now(), OldLimits: c.st.Limits, NewLimits: c.st.Limits, OldSandbox: &old, NewSandbox: r.Sandbox})
				c.say("sandbox changed by user request to %s; it applies from the task's next run (grub resume)", harness.SandboxSummary(*r.Sandbox))
			}
		case harness.ControlHooks:
			if r.Hooks != nil {
				old := c.st.Hooks
				c.st.Hooks = *r.Hooks
				trusted = true
				c.logEdit(harness.Edit{At: c.now(), OldLimits: c.st.Limits, NewLimits: c.st.Limits, OldHooks: &old, NewHooks: r.Hooks})
				c.say("hooks changed by user request; they apply from the next turn")
			}
		case harness.ControlSteer:
			c.st.Pending.Steer = append(c.st.Pending.Steer, r.Message)
			if err := c.store.AppendEntry(c.st.ID, harness.SteerEntry(c.st, r.Message, c.now())); err != nil {
				c.say("could not write the progress log: %v", err)
			}
		}
	}
	if stop != nil {
		return *stop, true
	}
	return Stop{}, false
}

// editGoal changes the goal and tells the next turn.
func (c *Controller) editGoal(goal string) {
	if goal == "" || goal == c.st.Goal {
		return
	}
	old := c.st.Goal
	if err := c.store.SetGoal(c.st, goal); err != nil {
		c.say("could not write the new goal into the feature list: %v", err)
	}
	c.logEdit(harness.Edit{At: c.now(), Goal: &harness.GoalChange{Old: old, New: goal}, OldLimits: c.st.Limits, NewLimits: c.st.Limits})
	c.say("goal updated")
}

// logEdit writes the progress-log entry of an edit, as grub edit does for
// an idle task.
func (c *Controller) logEdit(e harness.Edit) {
	if err := c.store.AppendProgress(c.st.ID, harness.EditEntry(e)); err != nil {
		c.say("could not write the progress log: %v", err)
	}
}

// checkPauseNow cancels the running turn when a pause --now request made
// during this run waits (a stale one is dropped at the next boundary).
func (c *Controller) checkPauseNow() {
	reqs, err := c.store.PeekControl(c.st.ID)
	if err != nil {
		return
	}
	for _, r := range reqs {
		if r.Kind == harness.ControlPauseNow && !r.At.Before(c.since) {
			c.mu.Lock()
			if c.cancelTurn != nil && !c.pauseNowReq {
				c.pauseNowReq = true
				c.cancelTurn()
			}
			c.mu.Unlock()
			return
		}
	}
}

// heartbeat reports a long turn every Heartbeat, and ticks the display
// every Redraw, until stopped. stop
// returns once the reporting goroutine has ended, so that no report follows
// the end of the turn.
func (c *Controller) heartbeat(feature string) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	start := c.now()
	iter := c.st.CurrentIteration
	ticks, stopTicker := c.clock.NewTicker(c.opts.Heartbeat)
	var redraws <-chan time.Time // nil, never ready, without Redraw
	stopRedraw := func() {}
	if c.opts.Redraw > 0 {
		redraws, stopRedraw = c.clock.NewTicker(c.opts.Redraw)
	}
	go func() {
		defer close(exited)
		defer stopTicker()
		defer stopRedraw()
		for {
			select {
			case <-done:
				return
			case <-ticks:
				c.progress.Heartbeat(termsafe.Line(fmt.Sprintf("turn %d still running (%s%s)", iter, c.now().Sub(start).Round(time.Second), featureSuffix(feature))))
			case now := <-redraws:
				c.progress.Tick(now)
			}
		}
	}()
	return func() { close(done); <-exited }
}
