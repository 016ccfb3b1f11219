package cli

import (
	"fmt"
	"github.com/mattn/go-runewidth"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/templates"
)

// How the live line is drawn. golang.org/x/term reports whether a stream
// is a terminal and its width, but has no sequence to redraw a line: its
// EscapeCodes are colours only. The live line needs two, both plain ANSI
// understood by every terminal emulator since the VT100: a carriage
// return, and "erase to the end of the line" (EL, CSI K).
const (
	carriageReturn = "\r"
	clearToEOL     = "\x1b[K"
)

// redrawEvery is how often the live line's elapsed time is redrawn.
const redrawEvery = time.Second

// liveProgress reports whether a run shows the live line: standard error
// is a terminal that can redraw (not TERM=dumb), and --no-progress does
// not ask for plain lines. NO_COLOR does not turn it off: it asks for no
// colour, and the live line has none.
func liveProgress(io *IOStreams, getenv func(string) string, noProgress bool) bool {
	return io.ErrTTY && !noProgress && getenv("TERM") != "dumb"
}

// progressFor is the display of a run on ios: the live line, or the plain
// lines printed as grub always has, and how often the controller must tick
// it (0: never).
func progressFor(ios *IOStreams, live bool) (controller.Progress, time.Duration) {
	if !live {
		return controller.Lines(ios.ErrOut), 0
	}
	return newLiveLine(ios.ErrOut, ios.ErrWidth), redrawEvery
}

// liveLine is the display of a run on a terminal: the scrollback lines as
// the plain display prints them, and below them, while a turn runs, one
// line redrawn in place: task, turn k/N, feature, elapsed time, tokens (and
// cost) against the budget, and what the agent is doing now. Before a
// scrollback line is printed the live line is cleared, and it is drawn
// again under it.
type liveLine struct {
	mu    sync.Mutex
	w     io.Writer
	width func() int // the terminal's columns; 0 when unknown

	active bool         // a turn runs: the line is shown
	drawn  bool         // the line is on the screen
	turn   events.Event // the turn's turn.started
	now    events.Doing // the last turn.activity: what the agent does now, its usage so far
	at     time.Time    // the clock's time at the last tick
}

func newLiveLine(w io.Writer, width func() int) *liveLine {
	if width == nil {
		width = func() int { return 0 }
	}
	return &liveLine{w: w, width: width}
}

func (l *liveLine) Say(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	fmt.Fprintf(l.w, "grub: %s\n", line)
	l.draw()
}

// Heartbeat is dropped: the live line shows the elapsed time.
func (l *liveLine) Heartbeat(string) {}

// Event draws the line from the run's events: a turn's start shows it,
// the agent's activity updates it, the end of the agent's part clears it.
func (l *liveLine) Event(e events.Event) {
	switch e.Type {
	case events.TurnStarted:
		l.mu.Lock()
		defer l.mu.Unlock()
		l.active, l.turn, l.now, l.at = true, e, events.Doing{Text: "starting"}, e.Time
		l.draw()
	case events.Activity:
		l.update(func() {
			if e.Activity.Text != "" {
				l.now.Text = e.Activity.Text
			}
			l.now.Tokens, l.now.CostUSD = e.Activity.Tokens, e.Activity.CostUSD
		})
	case events.AgentDone:
		l.mu.Lock()
		defer l.mu.Unlock()
		l.clear()
		l.active = false
	}
}

func (l *liveLine) Tick(now time.Time) { l.update(func() { l.at = now }) }

// update changes the line's state and draws it, while a turn runs.
func (l *liveLine) update(change func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.active {
		return
	}
	change()
	l.draw()
}

func (l *liveLine) clear() {
	if l.drawn {
		io.WriteString(l.w, carriageReturn+clearToEOL)
		l.drawn = false
	}
}

func (l *liveLine) draw() {
	if !l.active {
		return
	}
	io.WriteString(l.w, carriageReturn+fitLine(l.text(), l.width())+clearToEOL)
	l.drawn = true
}

// text is the line's content, before it is cut to the terminal's width.
// The agent's words are escaped (termsafe.Line): they are outside text.
func (l *liveLine) text() string {
	t := l.turn.Turn
	parts := []string{"grub " + l.turn.TaskID, fmt.Sprintf("turn %d/%d", l.turn.Iteration, t.MaxIterations)}
	if t.Feature != "" {
		parts = append(parts, termsafe.Line(t.Feature))
	} else {
		parts = append(parts, t.Phase)
	}
	parts = append(parts, formatElapsed(l.at.Sub(l.turn.Time)))
	tokens := fmt.Sprintf("%s tokens", groupDigits(t.TokensUsed+l.now.Tokens))
	if t.TokenBudget > 0 {
		tokens = fmt.Sprintf("%s/%s tokens", groupDigits(t.TokensUsed+l.now.Tokens), groupDigits(t.TokenBudget))
	}
	parts = append(parts, tokens)
	if t.CostUSD != nil || l.now.CostUSD != nil || t.CostBudgetUSD > 0 {
		spent := 0.0
		if l.now.CostUSD != nil {
			spent = *l.now.CostUSD
		}
		if t.CostUSD != nil {
			spent += *t.CostUSD
		}
		cost := templates.FormatUSD(spent)
		if t.CostBudgetUSD > 0 {
			cost += "/" + templates.FormatUSD(t.CostBudgetUSD)
		}
		parts = append(parts, cost)
	}
	parts = append(parts, termsafe.Line(l.now.Text))
	return strings.Join(parts, " · ")
}

// fitLine cuts s to fit in width columns without touching the last one (a
// terminal that wraps there would scroll). It counts cells, as the
// terminal does: a wide character (中, most emoji) takes two, a combining
// mark none.
func fitLine(s string, width int) string {
	if width <= 1 || runewidth.StringWidth(s) < width {
		return s
	}
	return runewidth.Truncate(s, width-1, "…")
}

// formatElapsed shows a duration in whole seconds: 45s, 3m07s, 2h05m09s.
func formatElapsed(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s%3600/60, s%60)
}

// groupDigits writes n with thousands separators: 1,234,567.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// registerNoProgress adds --no-progress to a command that runs a task.
func registerNoProgress(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "no-progress", false, "print plain progress lines instead of the live line, even on a terminal (as when TERM=dumb or standard error is not a terminal)")
}
