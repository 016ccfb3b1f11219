package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
)

// testClock is a controller.Clock that moves only when the test says;
// each tick and timer that falls due is delivered, in time order, before
// Advance returns.
type testClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*testTicker
	timers  []testTimer
}

type testTicker struct {
	every   time.Duration
	next    time.Time
	c       chan time.Time
	stopped chan struct{}
	once    sync.Once
}

type testTimer struct {
	at time.Time
	c  chan time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &testTicker{every: d, next: c.now.Add(d), c: make(chan time.Time), stopped: make(chan struct{})}
	c.tickers = append(c.tickers, t)
	return t.c, func() { t.once.Do(func() { close(t.stopped) }) }
}

func (c *testClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, testTimer{c.now.Add(d), ch})
	return ch
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due time.Time
		var tick *testTicker
		for _, t := range c.tickers {
			select {
			case <-t.stopped:
				continue
			default:
			}
			if !t.next.After(end) && (tick == nil || t.next.Before(due)) {
				due, tick = t.next, t
			}
		}
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		if len(c.timers) > 0 && !c.timers[0].at.After(end) && (tick == nil || !c.timers[0].at.After(due)) {
			tm := c.timers[0]
			c.timers = c.timers[1:]
			c.now = tm.at
			c.mu.Unlock()
			tm.c <- tm.at
			continue
		}
		if tick == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		tick.next = tick.next.Add(tick.every)
		c.now = due
		c.mu.Unlock()
		select {
		case tick.c <- due:
		case <-tick.stopped:
		}
	}
}

// busyAgent says what it does and what it spent, as the built-in agent
// does, before the fake agent plays the turn.
type busyAgent struct{ agent.Agent }

func (b busyAgent) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	t.Activity("shell: go test ./... \x1b[2J")
	t.Usage(agent.Usage{InputTokens: 1500, OutputTokens: 200})
	return b.Agent.RunTurn(ctx, t)
}

// runShown runs a three-turn task (turn 2 takes 3s on the fake clock)
// with the display grub picks for ios, and returns what it printed once
// the run is over (done is called to collect it).
func runShown(t *testing.T, ios *IOStreams, getenv func(string) string, noProgress bool) {
	t.Helper()
	store, err := harness.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store.Private = t.TempDir()
	clock := &testClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	st := &harness.State{Goal: "two markers", Status: harness.StatusRunning, Phase: harness.PhaseInitializer,
		CreatedAt: clock.now, UpdatedAt: clock.now, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: harness.AgentCommand}}
	st.Limits.MinFeatures, st.Limits.TokenBudget = 2, 100000
	if err := store.Create(st); err != nil {
		t.Fatal(err)
	}
	fa, err := fakeagent.New("-features", "2", "-plan", "2:slow", "-sleep", "3s")
	if err != nil {
		t.Fatal(err)
	}
	fa.After = clock.After
	fa.OnWait = func(agent.Turn) { clock.Advance(3 * time.Second) }
	events, redraw := progressFor(ios, liveProgress(ios, getenv, noProgress))
	final, err := controller.Run(context.Background(), controller.Options{Store: store, TaskID: st.ID, Agent: busyAgent{fa},
		Clock: clock, Events: events, Redraw: redraw, Heartbeat: time.Second})
	if err != nil || final.Status != harness.StatusComplete {
		t.Fatalf("run: %v, %v", final.Status, err)
	}
}

// screen plays terminal output the way a terminal shows it (text, \r, \n,
// erase to the end of the line) and returns its lines; each state of the
// last line just before a \n or an erase is recorded in drawn.
func screen(out string) (lines []string, drawn []string) {
	var cur []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], clearToEOL):
			drawn = append(drawn, string(cur))
			cur = cur[:min(col, len(cur))]
			i += len(clearToEOL)
		case out[i] == '\r':
			col = 0
			i++
		case out[i] == '\n':
			lines = append(lines, string(cur))
			cur, col = nil, 0
			i++
		default:
			r, n := utf8.DecodeRuneInString(out[i:])
			if col < len(cur) {
				cur[col] = r
			} else {
				cur = append(cur, r)
			}
			col++
			i += n
		}
	}
	return append(lines, string(cur)), drawn
}

func TestLiveLineOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 110}); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&got, ptmx); close(copied) }()
	ios := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: tty, ErrTTY: isTerminal(tty), ErrWidth: func() int { return termWidth(tty) }}
	if !ios.ErrTTY || termWidth(tty) != 110 {
		t.Fatalf("the pty's tty side: terminal %v, width %d; want a terminal 110 columns wide", ios.ErrTTY, termWidth(tty))
	}
	runShown(t, ios, func(string) string { return "" }, false)
	tty.Close()
	<-copied
	out := strings.ReplaceAll(got.String(), "\r\n", "\n") // the tty's ONLCR

	if n := strings.Count(out, carriageReturn); n < 5 {
		t.Errorf("%d carriage returns, want the live line redrawn at every tick:\n%q", n, out)
	}
	if !strings.Contains(out, clearToEOL) {
		t.Errorf("the live line is never cleared:\n%q", out)
	}
	lines, drawn := screen(out)
	// The scrollback holds the plain lines and nothing of the live line,
	// which is gone once the run is over.
	var start, end bool
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "grub: ") {
			t.Errorf("scrollback line %q: a live line was left behind", l)
		}
		start = start || strings.HasPrefix(l, "grub: turn 2/25 started: execution, feature feature-1")
		end = end || strings.HasPrefix(l, "grub: turn 2/25 ended after 3s")
	}
	if !start || !end || lines[len(lines)-1] != "" {
		t.Errorf("the scrollback lacks turn 2's start or end line, or ends with a live line:\n%s", strings.Join(lines, "\n"))
	}
	// The last state of the live line in turn 2: everything shown, the
	// agent's escape sequence escaped, cut to the terminal's width.
	var last string
	for _, d := range drawn {
		if strings.Contains(d, "turn 2/25") {
			last = d
		}
		if n := utf8.RuneCountInString(d); n > 109 {
			t.Errorf("a live line of %d runes on a 110-column terminal: %q", n, d)
		}
	}
	for _, part := range []string{"turn 2/25", "feature-1", "3s", "1,700/100,000 tokens", "shell: go test ./... \\x1b[2J"} {
		if !strings.Contains(last, part) {
			t.Errorf("the last live line of turn 2 %q lacks %q", last, part)
		}
	}
	if strings.Contains(out, "still running") {
		t.Errorf("heartbeat lines in the scrollback of a live display:\n%s", out)
	}
}

func TestPlainLinesInAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&got, r); close(copied) }()
	ios := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: w, ErrTTY: isTerminal(w), ErrWidth: func() int { return termWidth(w) }}
	runShown(t, ios, func(string) string { return "" }, false)
	w.Close()
	<-copied
	checkPlain(t, got.String())
}

// --no-progress and TERM=dumb ask for the plain lines on a terminal too.
func TestPlainLinesOnATerminalWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        map[string]string
		noProgress bool
	}{
		{"--no-progress", nil, true},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer ptmx.Close()
			var got bytes.Buffer
			copied := make(chan struct{})
			go func() { io.Copy(&got, ptmx); close(copied) }()
			ios := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: tty, ErrTTY: isTerminal(tty), ErrWidth: func() int { return termWidth(tty) }}
			runShown(t, ios, func(k string) string { return tc.env[k] }, tc.noProgress)
			tty.Close()
			<-copied
			checkPlain(t, strings.ReplaceAll(got.String(), "\r\n", "\n"))
		})
	}
}

// NO_COLOR asks for no colour, and the live line has none: it stays.
func TestNoColorKeepsTheLiveLine(t *testing.T) {
	ios := &IOStreams{ErrTTY: true}
	if !liveProgress(ios, func(k string) string { return map[string]string{"NO_COLOR": "1", "TERM": "xterm"}[k] }, false) {
		t.Error("NO_COLOR turned the live line off")
	}
}

func checkPlain(t *testing.T, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("plain progress holds a carriage return or an escape:\n%q", out)
	}
	for _, want := range []string{"grub: turn 2/25 started: execution, feature feature-1\n", "grub: turn 2 still running (", "grub: turn 2/25 ended after 3s"} {
		if !strings.Contains(out, want) {
			t.Errorf("plain progress lacks %q:\n%s", want, out)
		}
	}
}

func TestFitLineAndFormats(t *testing.T) {
	if got := fitLine("abcdef", 5); got != "abc…" {
		t.Errorf("fitLine = %q", got)
	}
	if got := fitLine("abcd", 5); got != "abcd" {
		t.Errorf("fitLine = %q", got)
	}
	if got := fitLine("abcdef", 0); got != "abcdef" {
		t.Errorf("fitLine without a width = %q", got)
	}
	// Wide characters take two cells: six of them are 12 cells, cut to
	// fit 7 columns without the last one.
	if got := fitLine("中文中文中文", 7); got != "中文…" {
		t.Errorf("fitLine of wide characters = %q, want 中文…", got)
	}
	if got := fitLine("中文", 5); got != "中文" {
		t.Errorf("fitLine of 4 cells in 5 columns = %q", got)
	}
	for d, want := range map[time.Duration]string{0: "0s", 59 * time.Second: "59s", 187 * time.Second: "3m07s", 2*time.Hour + 5*time.Minute + 9*time.Second: "2h05m09s"} {
		if got := formatElapsed(d); got != want {
			t.Errorf("formatElapsed(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// The live line is cut to the terminal's width as it is now, and the
// agent's text in it is escaped.
func TestLiveLineFitsTheWidth(t *testing.T) {
	var b bytes.Buffer
	width := 40
	l := newLiveLine(&b, func() int { return width })
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	started := events.New(events.TurnStarted, "0a1b2c3d", start, 3)
	started.Turn = &events.Turn{MaxIterations: 9, Feature: "login\x1b]0;x\x07"}
	l.Event(started)
	l.Event(activity("editing main.go"))
	width = 200
	l.Tick(start.Add(65 * time.Second))
	_, drawn := screen(b.String())
	if got := drawn[1]; got != "grub 0a1b2c3d · turn 3/9 · login\\x1b]0…" {
		t.Errorf("on 40 columns: %q", got)
	}
	if got, want := drawn[2], "grub 0a1b2c3d · turn 3/9 · login\\x1b]0;x\\x07 · 1m05s · 0 tokens · editing main.go"; got != want {
		t.Errorf("on 200 columns: %q, want %q", got, want)
	}
	l.Event(events.New(events.AgentDone, "0a1b2c3d", start, 3))
	l.Event(activity("after the end"))
	if lines, _ := screen(b.String()); len(lines) != 1 || lines[0] != "" {
		t.Errorf("after the turn the screen shows %q, want an empty line", lines)
	}
}

// activity is a turn.activity event saying what.
func activity(what string) events.Event {
	e := events.New(events.Activity, "0a1b2c3d", time.Time{}, 3)
	e.Activity = &events.Doing{Text: what}
	return e
}
