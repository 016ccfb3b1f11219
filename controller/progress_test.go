package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/harness"
)

// eventLog is a Progress that writes down every event.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf(format, args...))
}

func (l *eventLog) Say(line string)       { l.add("say %s", line) }
func (l *eventLog) Heartbeat(line string) { l.add("heartbeat %s", line) }
func (l *eventLog) Tick(now time.Time)    { l.add("tick %s", now.Format(time.TimeOnly)) }
func (l *eventLog) Event(e events.Event) {
	switch e.Type {
	case events.TurnStarted:
		s := e.Turn
		l.add("started %s %d/%d %s %q at %s, %d of %d tokens", e.TaskID, e.Iteration, s.MaxIterations, s.Phase, s.Feature, e.Time.Format(time.TimeOnly), s.TokensUsed, s.TokenBudget)
	case events.Activity:
		l.add("activity %q %d", e.Activity.Text, e.Activity.Tokens)
	case events.AgentDone:
		l.add("ended")
	default:
		l.add("event %s", e.Type)
	}
}

// busyAgent reports what it does and its usage before the fake agent
// plays the turn.
type busyAgent struct{ agent.Agent }

func (b busyAgent) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	t.Activity("shell: make test")
	t.Usage(agent.Usage{InputTokens: 10, OutputTokens: 5})
	return b.Agent.RunTurn(ctx, t)
}

// The controller tells its Progress each turn's start, the agent's
// activity and usage, a tick every Redraw on the run's clock while the
// agent works, and the turn's end before the referee's lines.
func TestProgressEvents(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.TokenBudget = 1000 })
	a := r.agent("-features 2 -plan 2:slow -sleep 1s -usage 100,0,20")
	a.OnWait = func(agent.Turn) { r.clock.Advance(time.Second) }
	events := &eventLog{}
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Clock: r.clock,
		Agent: busyAgent{a}, Events: events, Redraw: 250 * time.Millisecond, Heartbeat: 500 * time.Millisecond})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %v", st.Status, err)
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	if len(events.events) == 0 || events.events[0] != "event run.started" {
		t.Fatalf("the run began with %q, want run.started", events.events[:min(len(events.events), 1)])
	}
	first := slices.IndexFunc(events.events, func(e string) bool { return strings.HasPrefix(e, "say turn 2/25 started") })
	if first < 0 {
		t.Fatalf("no start line of turn 2:\n%s", strings.Join(events.events, "\n"))
	}
	got := events.events[first:]
	end := slices.Index(got, "ended")
	if end < 0 {
		t.Fatalf("turn 2 never ended:\n%s", strings.Join(got, "\n"))
	}
	want := []string{
		"say turn 2/25 started: execution, feature feature-1",
		fmt.Sprintf("started %s 2/25 execution \"feature-1\" at 03:04:05, 120 of 1000 tokens", r.id),
		`activity "shell: make test" 0`,
		`activity "shell: make test" 15`,
	}
	if !slices.Equal(got[:len(want)], want) {
		t.Errorf("turn 2 began with\n%s\nwant\n%s", strings.Join(got[:len(want)], "\n"), strings.Join(want, "\n"))
	}
	// The fake agent moves the clock by 1s: 4 redraws at 250ms, 2
	// heartbeats at 500ms, then the end of the turn and its end line.
	ticks, beats := 0, 0
	for _, e := range got[len(want):end] {
		switch {
		case strings.HasPrefix(e, "tick "):
			ticks++
		case strings.HasPrefix(e, "heartbeat turn 2 still running ("):
			beats++
		default:
			t.Errorf("unexpected event during the turn: %q", e)
		}
	}
	if ticks != 4 || beats != 2 {
		t.Errorf("%d ticks and %d heartbeats during a 1s turn, want 4 and 2:\n%s", ticks, beats, strings.Join(got[:end], "\n"))
	}
	// Once the turn is recorded: its checks (init.sh and the flip's
	// verify command), turn.ended, then the end line.
	if after := got[end+1 : end+5]; !slices.Equal(after[:3], []string{"event turn.check", "event turn.check", "event turn.ended"}) ||
		!strings.HasPrefix(after[3], "say turn 2/25 ended after 1s") {
		t.Errorf("after the agent's part of the turn came\n%s\nwant its checks, turn.ended and its end line", strings.Join(after, "\n"))
	}
	for _, e := range got[end:] {
		if strings.HasPrefix(e, "say turn 3/") {
			break
		}
		if strings.HasPrefix(e, "tick ") || strings.HasPrefix(e, "heartbeat ") {
			t.Errorf("%q after the turn ended", e)
		}
	}
}

// Lines prints scrollback lines and heartbeats and nothing else.
func TestLinesPrintsOnlyLines(t *testing.T) {
	var b strings.Builder
	p := Lines(&b)
	p.Event(events.New(events.TurnStarted, "0a1b2c3d", time.Now(), 1))
	p.Say("turn 1/3 started")
	act := events.New(events.Activity, "0a1b2c3d", time.Now(), 1)
	act.Activity = &events.Doing{Text: "shell: \x1b[2J", Tokens: 1}
	p.Event(act)
	p.Tick(time.Now())
	p.Heartbeat("turn 1 still running (30s)")
	p.Event(events.New(events.AgentDone, "0a1b2c3d", time.Now(), 1))
	if want := "grub: turn 1/3 started\ngrub: turn 1 still running (30s)\n"; b.String() != want {
		t.Errorf("Lines printed %q, want %q", b.String(), want)
	}
}
