package controller

import (
	"context"
	"errors"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
)

// preflight asks the agent, before the run's first turn, whether it can
// work at all (agent.Checker), within agent.CheckTimeout, saying so on the
// progress lines. A setup error pauses the task (stopped is true) without
// spending a turn, writing a log entry or committing; any other error is
// a doubt, said, and the run goes on.
func (c *Controller) preflight(ctx context.Context) (st *harness.State, stopped bool, err error) {
	ch, ok := c.opts.Agent.(agent.Checker)
	if !ok {
		return nil, false, nil
	}
	c.say("checking that the agent can work (at most %s)", agent.CheckTimeout)
	cctx, cancel := context.WithTimeout(ctx, agent.CheckTimeout)
	found, err := ch.Check(cctx)
	cancel()
	var setup *agent.SetupError
	switch {
	case ctx.Err() != nil:
		st, err := c.finish(Stop{harness.StatusPaused, interruptedReason})
		if err == nil {
			err = ErrInterrupted
		}
		return st, true, err
	case errors.As(err, &setup):
		st, err := setupStopped(c.finish(Stop{harness.StatusPaused, setupReason(c.st, setup, "before the first turn")}))
		return st, true, err
	case err != nil:
		c.say("agent check: %v; going on", err)
	case found != "":
		c.say("agent ready: %s", found)
	}
	return nil, false, nil
}

// setupStopped is finish's answer for a run a setup error stopped: the
// error is ErrSetup when the task could be paused.
func setupStopped(st *harness.State, err error) (*harness.State, error) {
	if err == nil {
		err = ErrSetup
	}
	return st, err
}
