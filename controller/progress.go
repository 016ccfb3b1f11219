package controller

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/grub-dev/grub/agent"
)

// Progress receives what a run reports while it works: lines for the
// scrollback, and the events of a running turn for a display that shows
// the turn live (internal/cli draws one line redrawn in place on a
// terminal). Its methods may be called from several goroutines at once and
// must not block for long: the agent's backend calls Activity and Usage.
type Progress interface {
	// Say is a line for the scrollback (without "grub: " or the newline),
	// its outside text already escaped (termsafe.Line).
	Say(line string)
	// Heartbeat is Say for "turn N still running", every
	// Options.Heartbeat during a turn; a live display may drop it.
	Heartbeat(line string)
	// TurnStarted comes after the turn's start line, before the agent runs.
	TurnStarted(TurnStatus)
	// Activity is what the agent is doing now (agent.Turn.Activity): the
	// agent's text, not escaped.
	Activity(what string)
	// Usage is the turn's usage so far (agent.Turn.Usage), from backends
	// that see it during the turn.
	Usage(turn agent.Usage)
	// Tick comes every Options.Redraw while a turn runs, with the run's
	// clock's time, so that a live display redraws its elapsed time.
	Tick(now time.Time)
	// TurnEnded comes when the agent's part of the turn is over, before
	// the referee's lines.
	TurnEnded()
}

// TurnStatus is a turn as it starts, with the task's totals before it.
type TurnStatus struct {
	TaskID        string
	Iteration     int
	MaxIterations int
	Phase         string
	Feature       string // the feature the prompt proposes; "" in the initializer
	Started       time.Time
	// TokensUsed and CostUSD are the task's totals before the turn
	// (CostUSD nil while no backend reported a cost); TokenBudget and
	// CostBudgetUSD the budgets (0: none).
	TokensUsed    int64
	TokenBudget   int64
	CostUSD       *float64
	CostBudgetUSD float64
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

func (l *lines) Heartbeat(line string)  { l.Say(line) }
func (l *lines) TurnStarted(TurnStatus) {}
func (l *lines) Activity(string)        {}
func (l *lines) Usage(agent.Usage)      {}
func (l *lines) Tick(time.Time)         {}
func (l *lines) TurnEnded()             {}

// turnStatus describes the turn about to run.
func (c *Controller) turnStatus(feature string, started time.Time) TurnStatus {
	st := c.st
	return TurnStatus{
		TaskID: st.ID, Iteration: st.CurrentIteration, MaxIterations: st.Limits.MaxIterations,
		Phase: string(st.Phase), Feature: feature, Started: started,
		TokensUsed: st.Usage.TokensUsed, TokenBudget: st.Limits.TokenBudget,
		CostUSD: st.Usage.CostUSD, CostBudgetUSD: st.Limits.CostBudgetUSD,
	}
}
