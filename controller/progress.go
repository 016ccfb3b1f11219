package controller

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/events"
)

// Progress receives what a run reports while it works: lines for the
// scrollback, and the run's events (package events) for a display that
// shows the turn live (internal/cli draws one line redrawn in place on a
// terminal) and for programs (grub start --json writes each as a line of
// JSON). Its methods may be called from several goroutines at once and
// must not block for long: the agent's backend reports activity from its
// own goroutines.
type Progress interface {
	// Say is a line for the scrollback (without "grub: " or the newline),
	// its outside text already escaped (termsafe.Line).
	Say(line string)
	// Heartbeat is Say for "turn N still running", every
	// Options.Heartbeat during a turn; a live display may drop it.
	Heartbeat(line string)
	// Tick comes every Options.Redraw while a turn runs, with the run's
	// clock's time, so that a live display redraws its elapsed time.
	Tick(now time.Time)
	// Event is one event of the run, its outside text exact (not
	// escaped): run.started once the task is loaded; per turn
	// turn.started (after the turn's start line, before the agent runs),
	// turn.activity (what the agent does now and its usage so far, once
	// per change), turn.agent_done (before the referee's lines), then,
	// once the turn is recorded, its findings and checks, turn.ended and
	// a question. run.stopped is internal/cli's: the exit code is its.
	Event(events.Event)
}

// Lines is the plain display: every scrollback line and heartbeat printed
// on w as "grub: <line>", nothing else. It is what a run uses when
// Options.Events is nil, and what grub prints when standard error is not
// a terminal.
func Lines(w io.Writer) Progress { return &lines{w: w} }

type lines struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lines) Say(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "grub: %s\n", line)
}

func (l *lines) Heartbeat(line string) { l.Say(line) }
func (l *lines) Tick(time.Time)        {}
func (l *lines) Event(events.Event)    {}

// event is an event of type t of the task, now, in the current turn.
func (c *Controller) event(t events.Type) events.Event {
	return events.New(t, c.st.ID, c.now(), c.st.CurrentIteration)
}

// emitRunStarted reports the run's start, once the task is loaded: its
// status as the run found it, its limits with the run's changes.
func (c *Controller) emitRunStarted() {
	st := c.st
	limits := st.Limits
	c.opts.Limits.Apply(&limits)
	e := c.event(events.RunStarted)
	e.Run = &events.Run{Phase: string(st.Phase), Status: string(st.Status), MaxIterations: limits.MaxIterations,
		Agent: string(st.Agent.Kind), Dir: c.store.Dir(st.ID)}
	c.progress.Event(e)
}

// emitTurnStarted reports the turn about to run, which starts at started,
// with the task's totals before it.
func (c *Controller) emitTurnStarted(feature string, started time.Time) {
	st := c.st
	e := events.New(events.TurnStarted, st.ID, started, st.CurrentIteration)
	e.Turn = &events.Turn{MaxIterations: st.Limits.MaxIterations, Phase: string(st.Phase), Feature: feature,
		TokensUsed: st.Usage.TokensUsed, TokenBudget: st.Limits.TokenBudget,
		CostUSD: st.Usage.CostUSD, CostBudgetUSD: st.Limits.CostBudgetUSD}
	c.progress.Event(e)
}

// doing turns what a backend reports during a turn (agent.Turn.Activity
// and Usage, from its own goroutines) into turn.activity events: each
// carries what the agent said it does last and its usage so far.
type doing struct {
	c  *Controller
	mu sync.Mutex
	e  events.Event // the turn's; Activity holds the last report
	u  agent.Usage
}

func (c *Controller) newDoing() *doing {
	e := c.event(events.Activity)
	e.Activity = &events.Doing{}
	return &doing{c: c, e: e}
}

func (d *doing) activity(what string) {
	d.report(func() { d.e.Activity.Text = events.Clip(what) })
}

func (d *doing) usage(u agent.Usage) { d.report(func() { d.u = u }) }

func (d *doing) report(change func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	change()
	e, a := d.e, *d.e.Activity
	a.Tokens = d.u.Tokens()
	if d.u.CostReported {
		cost := d.u.CostUSD
		a.CostUSD = &cost
	}
	e.Activity, e.Time = &a, d.c.now().UTC()
	d.c.progress.Event(e)
}

// Tee is a Progress that hands everything to each of ps in turn: a
// display and grub start --json's stream watch the same run.
func Tee(ps ...Progress) Progress { return tee(ps) }

type tee []Progress

func (t tee) Say(line string) {
	for _, p := range t {
		p.Say(line)
	}
}

func (t tee) Heartbeat(line string) {
	for _, p := range t {
		p.Heartbeat(line)
	}
}

func (t tee) Tick(now time.Time) {
	for _, p := range t {
		p.Tick(now)
	}
}

func (t tee) Event(e events.Event) {
	for _, p := range t {
		p.Event(e)
	}
}
